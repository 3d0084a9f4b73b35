// SPDX-License-Identifier: GPL-3.0-or-later
#include "probe/format/structure_json.h"

#include <algorithm>
#include <cstdint>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace probe::format {
namespace {

bool readStrings(const nlohmann::json& j, const char* key, std::vector<std::string>& out,
                 std::string* error) {
    auto it = j.find(key);
    if (it == j.end()) return true;
    if (!it->is_array()) {
        if (error) *error = std::string(key) + " is not an array";
        return false;
    }
    for (const auto& item : *it) {
        if (!item.is_string()) {
            if (error) *error = std::string(key) + " holds a non-string";
            return false;
        }
        out.push_back(item.get<std::string>());
    }
    return true;
}

}  // namespace

nlohmann::ordered_json StructureNode::toJson() const {
    nlohmann::ordered_json j;
    j["opName"] = opName;
    j["opType"] = opType;
    j["param"] = param;
    j["inTensors"] = inTensors;
    j["outTensors"] = outTensors;
    j["internalTensors"] = internalTensors;
    auto children = nlohmann::ordered_json::array();
    for (const auto& node : nodes) children.push_back(node.toJson());
    j["nodes"] = std::move(children);
    return j;
}

std::optional<StructureNode> StructureNode::fromJson(const nlohmann::json& j, std::string* error) {
    if (!j.is_object()) {
        if (error) *error = "node is not an object";
        return std::nullopt;
    }
    StructureNode node;
    if (auto it = j.find("opName"); it != j.end() && it->is_string())
        node.opName = it->get<std::string>();
    if (auto it = j.find("opType"); it != j.end() && it->is_string())
        node.opType = it->get<std::string>();
    if (auto it = j.find("param"); it != j.end()) node.param = nlohmann::ordered_json(*it);
    if (!readStrings(j, "inTensors", node.inTensors, error) ||
        !readStrings(j, "outTensors", node.outTensors, error) ||
        !readStrings(j, "internalTensors", node.internalTensors, error))
        return std::nullopt;
    if (auto it = j.find("nodes"); it != j.end()) {
        if (!it->is_array()) {
            if (error) *error = "nodes is not an array";
            return std::nullopt;
        }
        for (const auto& child : *it) {
            auto parsed = fromJson(child, error);
            if (!parsed) return std::nullopt;
            node.nodes.push_back(std::move(*parsed));
        }
    }
    return node;
}

nlohmann::ordered_json ModelStructure::toJson() const {
    nlohmann::ordered_json j;
    j["modelName"] = modelName;
    j["weightTensors"] = weightTensors;
    j["inTensors"] = inTensors;
    j["outTensors"] = outTensors;
    j["internalTensors"] = internalTensors;
    auto children = nlohmann::ordered_json::array();
    for (const auto& node : nodes) children.push_back(node.toJson());
    j["nodes"] = std::move(children);
    return j;
}

std::optional<ModelStructure> ModelStructure::fromJson(const nlohmann::json& j,
                                                       std::string* error) {
    if (!j.is_object()) {
        if (error) *error = "model is not an object";
        return std::nullopt;
    }
    ModelStructure model;
    if (auto it = j.find("modelName"); it != j.end() && it->is_string())
        model.modelName = it->get<std::string>();
    if (!readStrings(j, "weightTensors", model.weightTensors, error) ||
        !readStrings(j, "inTensors", model.inTensors, error) ||
        !readStrings(j, "outTensors", model.outTensors, error) ||
        !readStrings(j, "internalTensors", model.internalTensors, error))
        return std::nullopt;
    if (auto it = j.find("nodes"); it != j.end() && it->is_array()) {
        for (const auto& child : *it) {
            auto parsed = StructureNode::fromJson(child, error);
            if (!parsed) return std::nullopt;
            model.nodes.push_back(std::move(*parsed));
        }
    }
    return model;
}

namespace {

using Json = nlohmann::json;

// The keys a structure file's readers keep; any other key's value is skipped.
enum class Field : uint8_t {
    Other,
    OpName,
    OpType,
    ModelName,
    Param,
    WeightTensors,  // the four string lists, in the order fromJson checks them
    InTensors,
    OutTensors,
    InternalTensors,
    Nodes
};
constexpr int kStringLists = 4;
const char* const kListNames[kStringLists] = {"weightTensors", "inTensors", "outTensors",
                                              "internalTensors"};

int listOf(Field field) {
    return static_cast<int>(field) - static_cast<int>(Field::WeightTensors);
}
bool isList(Field field) {
    return field >= Field::WeightTensors && field <= Field::InternalTensors;
}

// Builds StructureNode / ModelStructure from the parser's events. Keys repeated in one object
// are read as fromJson reads the tree nlohmann keeps of them (the last one wins), and the
// problem reported is the one fromJson finds first (a node's own lists, then its children in
// order), so that both readers always agree.
class StructureEvents : public nlohmann::json_sax<Json>, public JsonStringViews {
public:
    // A node (or the model) whose closing brace is still to come.
    struct OpenNode {
        StructureNode node;
        std::string modelName;  // the model's own fields (a model reuses the node's lists)
        std::vector<std::string> weightTensors;
        std::string listErrors[kStringLists];
        std::string nodesError;  // "nodes is not an array", or the first child's problem
        Field pending = Field::Other;
        bool isModel = false;

        // fromJson's first problem with this node, "" when there is none.
        const std::string& problem() const {
            for (const auto& e : listErrors)
                if (!e.empty()) return e;
            return nodesError;
        }
    };

    StructureEvents(bool model, const StructureReadOptions& options)
        : model_(model), options_(options) {}

    bool null() override {
        return scalar(nullptr, [] { return Json(nullptr); });
    }
    bool boolean(bool v) override {
        return scalar(nullptr, [v] { return Json(v); });
    }
    bool number_integer(number_integer_t v) override {
        return scalar(nullptr, [v] { return Json(v); });
    }
    bool number_unsigned(number_unsigned_t v) override {
        return scalar(nullptr, [v] { return Json(v); });
    }
    bool number_float(number_float_t v, const string_t&) override {
        return scalar(nullptr, [v] { return Json(v); });
    }
    bool string(string_t& v) override {
        const std::string_view text = v;
        return scalar(&text, [&v] { return Json(std::move(v)); });
    }
    // The fast scanner's strings: only a parameter's keys are wanted as strings.
    Taken stringView(std::string_view text, bool isKey) override {
        bool ok;
        if (isKey) {
            if (frames_.back().kind == Kind::Param) return Taken::No;
            ok = keyNamed(text);
        } else {
            ok = scalar(&text, [text] { return Json(std::string(text)); });
        }
        return ok ? Taken::Yes : Taken::Stop;
    }
    bool binary(binary_t&) override { return false; }  // JSON text has none

    bool start_object(std::size_t) override {
        if (frames_.empty()) {
            openNode(model_);
            return true;
        }
        Frame& top = frames_.back();
        switch (top.kind) {
            case Kind::Skip:
                ++top.depth;
                return true;
            case Kind::Param:
                startParamContainer(Json::object());
                return true;
            case Kind::Strings:
                noteListError(top.field, " holds a non-string");
                return skip();
            case Kind::Nodes:
                openNode(false);
                return true;
            case Kind::Node:
                break;
        }
        const Field field = takePending();
        if (field == Field::Param) {
            if (!keepsFields()) return skip();
            beginParam(Json::object());
            return true;
        }
        notAnArray(field);
        return skip();
    }
    bool start_array(std::size_t) override {
        if (frames_.empty()) {
            rootNotObject_ = true;
            return skip();
        }
        Frame& top = frames_.back();
        switch (top.kind) {
            case Kind::Skip:
                ++top.depth;
                return true;
            case Kind::Param:
                startParamContainer(Json::array());
                return true;
            case Kind::Strings:
                noteListError(top.field, " holds a non-string");
                return skip();
            case Kind::Nodes:
                noteChildError("node is not an object");
                return skip();
            case Kind::Node:
                break;
        }
        const Field field = takePending();
        if (field == Field::Param) {
            if (!keepsFields()) return skip();
            beginParam(Json::array());
        } else if (isList(field)) {
            frames_.push_back({Kind::Strings, field, 0});
        } else if (field == Field::Nodes) {
            frames_.push_back({Kind::Nodes, field, 0});
        } else {
            return skip();
        }
        return true;
    }
    bool key(string_t& name) override {
        if (frames_.back().kind == Kind::Param) {
            paramKey_ = std::move(name);
            return true;
        }
        return keyNamed(name);
    }
    // A key outside the parameters.
    bool keyNamed(std::string_view name) {
        if (frames_.back().kind != Kind::Node) return true;
        OpenNode& node = open_.back();
        node.pending = fieldOf(name, node.isModel);
        // A repeated key replaces what the earlier one said.
        switch (node.pending) {
            case Field::OpName:
                node.node.opName.clear();
                break;
            case Field::OpType:
                node.node.opType.clear();
                break;
            case Field::ModelName:
                node.modelName.clear();
                break;
            case Field::Nodes:
                node.node.nodes.clear();
                node.nodesError.clear();
                break;
            default:
                if (isList(node.pending)) {
                    list(node, node.pending).clear();
                    node.listErrors[listOf(node.pending)].clear();
                }
                break;
        }
        return true;
    }
    bool end_object() override { return endContainer(); }
    bool end_array() override { return endContainer(); }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
        return false;  // parseJsonEvents says where and why
    }

    // Back to the state before the first event (a parse that gave up is read again).
    void restart() { *this = StructureEvents(model_, options_); }

    // After the parse: what the root was.
    bool rootNotObject() const { return rootNotObject_ || !done_; }
    OpenNode* root() { return done_ ? &root_ : nullptr; }

private:
    enum class Kind : uint8_t { Node, Strings, Nodes, Skip, Param };
    struct Frame {
        Kind kind;
        Field field;  // Strings: which list
        int depth;    // Skip: containers open inside the skipped value
    };

    // By length first: every key of every node of a big model comes here.
    static Field fieldOf(std::string_view name, bool model) {
        using namespace std::string_view_literals;
        switch (name.size()) {
            case 5:
                if (name == "nodes"sv) return Field::Nodes;
                if (!model && name == "param"sv) return Field::Param;
                break;
            case 6:
                if (!model && name == "opName"sv) return Field::OpName;
                if (!model && name == "opType"sv) return Field::OpType;
                break;
            case 9:
                if (name == "inTensors"sv) return Field::InTensors;
                if (model && name == "modelName"sv) return Field::ModelName;
                break;
            case 10:
                if (name == "outTensors"sv) return Field::OutTensors;
                break;
            case 13:
                if (model && name == "weightTensors"sv) return Field::WeightTensors;
                break;
            case 15:
                if (name == "internalTensors"sv) return Field::InternalTensors;
                break;
            default:
                break;
        }
        return Field::Other;
    }
    static std::vector<std::string>& list(OpenNode& node, Field field) {
        switch (field) {
            case Field::WeightTensors:
                return node.weightTensors;
            case Field::InTensors:
                return node.node.inTensors;
            case Field::OutTensors:
                return node.node.outTensors;
            default:
                return node.node.internalTensors;
        }
    }
    Field takePending() {
        const Field field = open_.back().pending;
        open_.back().pending = Field::Other;
        return field;
    }
    bool skip() {
        frames_.push_back({Kind::Skip, Field::Other, 1});
        return true;
    }
    void openNode(bool isModel) {
        open_.emplace_back();
        open_.back().isModel = isModel;
        frames_.push_back({Kind::Node, Field::Other, 0});
    }
    void noteListError(Field field, const char* what) {
        std::string& error = open_.back().listErrors[listOf(field)];
        if (error.empty()) error = std::string(kListNames[listOf(field)]) + what;
    }
    // The first problem of `node`'s children (the open node's, when not given).
    static void noteChildError(OpenNode& node, const std::string& problem) {
        if (node.nodesError.empty()) node.nodesError = problem;
    }
    void noteChildError(const std::string& problem) { noteChildError(open_.back(), problem); }
    // A value other than an array where `field` wants one.
    void notAnArray(Field field) {
        if (isList(field))
            noteListError(field, " is not an array");
        else if (field == Field::Nodes && !open_.back().isModel)  // a model's are then ignored
            noteChildError("nodes is not an array");
    }

    template <typename Make>
    bool scalar(const std::string_view* text, Make&& make) {
        if (frames_.empty()) {
            rootNotObject_ = true;
            return true;
        }
        Frame& top = frames_.back();
        switch (top.kind) {
            case Kind::Skip:
                return true;
            case Kind::Param:
                putParam(make());
                return true;
            case Kind::Strings:
                if (!text)
                    noteListError(top.field, " holds a non-string");
                else if (options_.tensorNames && open_.back().listErrors[listOf(top.field)].empty())
                    list(open_.back(), top.field).emplace_back(*text);
                return true;
            case Kind::Nodes:
                noteChildError("node is not an object");
                return true;
            case Kind::Node:
                break;
        }
        OpenNode& node = open_.back();
        const Field field = takePending();
        switch (field) {
            case Field::OpName:
                if (text && keepsFields()) node.node.opName.assign(*text);
                break;
            case Field::OpType:
                if (text && keepsFields()) node.node.opType.assign(*text);
                break;
            case Field::ModelName:
                if (text) node.modelName.assign(*text);
                break;
            case Field::Param:
                if (keepsFields()) node.node.param = nlohmann::ordered_json(make());
                break;
            default:
                notAnArray(field);
                break;
        }
        return true;
    }

    // The parameters are kept whole, as nlohmann's tree of them (keys sorted, the last of a
    // repeated key kept), then ordered as fromJson orders them.
    void beginParam(Json container) {
        paramRoot_ = std::move(container);
        paramStack_.assign(1, &paramRoot_);
        frames_.push_back({Kind::Param, Field::Param, 0});
    }
    Json& paramSlot() {
        Json& parent = *paramStack_.back();
        if (parent.is_object()) return parent[paramKey_];
        parent.push_back(nullptr);
        return parent.back();
    }
    void putParam(Json&& value) { paramSlot() = std::move(value); }
    void startParamContainer(Json container) {
        Json& slot = paramSlot();
        slot = std::move(container);
        paramStack_.push_back(&slot);
    }

    bool endContainer() {
        Frame& top = frames_.back();
        switch (top.kind) {
            case Kind::Skip:
                if (--top.depth == 0) frames_.pop_back();
                return true;
            case Kind::Param:
                paramStack_.pop_back();
                if (paramStack_.empty()) {
                    frames_.pop_back();
                    open_.back().node.param = nlohmann::ordered_json(paramRoot_);
                    paramRoot_ = nullptr;
                }
                return true;
            case Kind::Strings:
            case Kind::Nodes:
                frames_.pop_back();
                return true;
            case Kind::Node:
                break;
        }
        frames_.pop_back();
        if (open_.size() == 1) {
            root_ = std::move(open_.back());
            open_.pop_back();
            done_ = true;
            return true;
        }
        // Handed to its parent where it lies (a hundred thousand nodes: no move of the whole).
        OpenNode& closed = open_.back();
        OpenNode& parent = open_[open_.size() - 2];
        const std::string& problem = closed.problem();
        if (!problem.empty()) {
            noteChildError(parent, problem);
        } else if (options_.children && parent.nodesError.empty()) {  // after a failure the
            parent.node.nodes.push_back(std::move(closed.node));      // node is not used
        }
        open_.pop_back();
        return true;
    }
    // Whether the open node's name, type and parameters are kept: not for the children of a
    // file that is only checked (they are dropped when they close).
    bool keepsFields() const { return options_.children || open_.size() == 1; }

    bool model_;
    StructureReadOptions options_;
    std::vector<Frame> frames_;
    std::vector<OpenNode> open_;
    OpenNode root_;
    bool done_ = false;
    bool rootNotObject_ = false;
    Json paramRoot_;
    std::vector<Json*> paramStack_;
    std::string paramKey_;
};

// Parses `text` into events; the root node as the reader found it, or the reason it is none.
template <typename Structure>
StructureEvents::OpenNode* readStructure(std::string_view text, const std::string& source,
                                         StructureEvents& events, StructureRead<Structure>& read,
                                         const char* notAnObject) {
    JsonError error;
    // The handler can start over (a fresh one), so the text is scanned once, not checked first.
    auto restart = [&events] { events.restart(); };
    if (!parseJsonEvents(text, source, kStructureJsonLimits, events, &error, restart)) {
        read.jsonError = std::move(error);
        return nullptr;
    }
    StructureEvents::OpenNode* root = events.root();
    if (events.rootNotObject() || !root) {
        read.error = notAnObject;
        return nullptr;
    }
    if (!root->problem().empty()) {
        read.error = root->problem();
        return nullptr;
    }
    return root;
}

}  // namespace

StructureRead<StructureNode> readLayerStructure(std::string_view text, const std::string& source,
                                                const StructureReadOptions& options) {
    StructureRead<StructureNode> read;
    StructureEvents events(false, options);
    if (auto* root = readStructure(text, source, events, read, "node is not an object"))
        read.value = std::move(root->node);
    return read;
}

StructureRead<ModelStructure> readModelStructure(std::string_view text, const std::string& source,
                                                 const StructureReadOptions& options) {
    StructureRead<ModelStructure> read;
    StructureEvents events(true, options);
    if (auto* root = readStructure(text, source, events, read, "model is not an object")) {
        ModelStructure model;
        model.modelName = std::move(root->modelName);
        model.weightTensors = std::move(root->weightTensors);
        model.inTensors = std::move(root->node.inTensors);
        model.outTensors = std::move(root->node.outTensors);
        model.internalTensors = std::move(root->node.internalTensors);
        model.nodes = std::move(root->node.nodes);
        read.value = std::move(model);
    }
    return read;
}

namespace {

bool isJsonSpace(char c) {
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

// Past the array or object opening at `p` (its matching bracket), or null when it does not
// close. Brackets in strings do not count. Sixteen bytes are looked at a time: in a structure
// file most are names, where only quotes and backslashes matter.
const char* containerEnd(const char* p, const char* const end) {
    int depth = 0;
    bool inString = false;
    const char* escaped = nullptr;  // the byte after a backslash in a string
    auto closesAt = [&](const char* at) {
        if (at == escaped) return false;
        const char c = *at;
        if (inString) {
            if (c == '\\')
                escaped = at + 1;
            else if (c == '"')
                inString = false;
            return false;
        }
        if (c == '"')
            inString = true;
        else if (c == '{' || c == '[')
            ++depth;
        else if (c == '}' || c == ']')
            return --depth == 0;
        return false;  // (a backslash outside strings is not JSON: the parse says so)
    };
#if defined(__SSE2__)
    // '[' and '{' are 0x5B and 0x7B, ']' and '}' 0x5D and 0x7D: with bit 0x20 set, 0x7B and 0x7D.
    const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\'),
                  opening = _mm_set1_epi8(0x7B), closing = _mm_set1_epi8(0x7D),
                  fold = _mm_set1_epi8(0x20);
    for (; end - p >= 16; p += 16) {
        const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
        const __m128i folded = _mm_or_si128(bytes, fold);
        const __m128i marks = _mm_or_si128(
            _mm_or_si128(_mm_cmpeq_epi8(bytes, quote), _mm_cmpeq_epi8(bytes, backslash)),
            _mm_or_si128(_mm_cmpeq_epi8(folded, opening), _mm_cmpeq_epi8(folded, closing)));
        for (auto mask = static_cast<uint32_t>(_mm_movemask_epi8(marks)); mask != 0;
             mask &= mask - 1) {
            const char* at = p + __builtin_ctz(mask);
            if (closesAt(at)) return at + 1;
        }
    }
#endif
    for (; p != end; ++p)
        if (closesAt(p)) return p + 1;
    return nullptr;
}

// Past the value starting at `p`, or null; scalars end where a separator or space begins.
const char* valueEnd(const char* p, const char* const end) {
    if (*p == '{' || *p == '[') return containerEnd(p, end);
    if (*p == '"') {
        for (++p; p != end; ++p) {
            if (*p == '\\') {
                if (++p == end) return nullptr;
            } else if (*p == '"') {
                return p + 1;
            }
        }
        return nullptr;
    }
    while (p != end && *p != ',' && *p != '}' && *p != ']' && !isJsonSpace(*p)) ++p;
    return p;
}

// A group of top-level nodes is read as the children of a node of its own, which puts them as
// deep as in the model: {"nodes":[<their text, separators included>]}.
constexpr std::string_view kGroupOpening = "{\"nodes\":[", kGroupClosing = "]}";
// Groups are about this size at least (a read has a fixed cost), and this many at most.
constexpr size_t kGroupBytes = 64u << 10;
constexpr size_t kMaxGroups = 64;

}  // namespace

std::optional<ModelTextParts> cutModelText(std::string_view text) {
    const char* const begin = text.data();
    const char* const end = begin + text.size();
    const char* p = begin;
    auto skipSpace = [&] {
        while (p != end && isJsonSpace(*p)) ++p;
    };
    skipSpace();
    if (p == end || *p != '{') return std::nullopt;
    ++p;
    const char *open = nullptr, *close = nullptr;
    std::vector<std::string_view> nodes;
    while (true) {
        skipSpace();
        if (p == end || *p != '"') return std::nullopt;
        const char* keyStart = ++p;
        while (p != end && *p != '"' && *p != '\\') ++p;
        // An escaped key could be "nodes" spelled otherwise: not cut.
        if (p == end || *p != '"') return std::nullopt;
        const std::string_view key(keyStart, static_cast<size_t>(p - keyStart));
        ++p;
        skipSpace();
        if (p == end || *p != ':') return std::nullopt;
        ++p;
        skipSpace();
        if (p == end) return std::nullopt;
        if (key == "nodes") {
            if (open || *p != '[') return std::nullopt;  // a repeated key, or not an array
            open = p++;
            skipSpace();
            // The separators between nodes are checked here: those between two groups are in
            // neither group's text.
            if (p != end && *p != ']') {
                while (true) {
                    if (p == end || *p != '{') return std::nullopt;
                    const char* nodeEnd = containerEnd(p, end);
                    if (!nodeEnd) return std::nullopt;
                    nodes.emplace_back(p, static_cast<size_t>(nodeEnd - p));
                    p = nodeEnd;
                    skipSpace();
                    if (p == end) return std::nullopt;
                    if (*p == ']') break;
                    if (*p != ',') return std::nullopt;
                    ++p;
                    skipSpace();
                }
            }
            if (p == end) return std::nullopt;
            close = p++;
        } else {
            p = valueEnd(p, end);
            if (!p) return std::nullopt;
        }
        skipSpace();
        if (p == end) return std::nullopt;
        if (*p == '}') break;
        if (*p != ',') return std::nullopt;
        ++p;
    }
    if (!open || nodes.empty()) return std::nullopt;
    ModelTextParts parts;
    parts.shell.reserve(text.size() - static_cast<size_t>(close - open) + 1);
    parts.shell.append(begin, open + 1).append(close, end);
    parts.nodes = std::move(nodes);
    return parts;
}

StructureRead<ModelStructure> readModelStructure(std::string_view text, const std::string& source,
                                                 const ModelTextParts& parts,
                                                 const StructureReadOptions& options,
                                                 const ForEachIndex& forEach) {
    // Without children there is nothing to read side by side.
    if (!options.children || parts.nodes.empty() || text.size() > kStructureJsonLimits.maxBytes)
        return readModelStructure(text, source, options);
    // Consecutive nodes grouped: the text between them (commas, spaces) goes with the group.
    struct Group {
        std::string_view text;
        StructureRead<StructureNode> read;
    };
    std::vector<Group> groups;
    const size_t total = static_cast<size_t>(parts.nodes.back().data() + parts.nodes.back().size() -
                                             parts.nodes.front().data());
    const size_t groupBytes = std::max(kGroupBytes, total / kMaxGroups + 1);
    for (size_t first = 0; first < parts.nodes.size();) {
        size_t last = first;
        const char* start = parts.nodes[first].data();
        while (last + 1 < parts.nodes.size() &&
               static_cast<size_t>(parts.nodes[last].data() + parts.nodes[last].size() - start) <
                   groupBytes)
            ++last;
        const char* stop = parts.nodes[last].data() + parts.nodes[last].size();
        groups.push_back({std::string_view(start, static_cast<size_t>(stop - start)), {}});
        first = last + 1;
    }
    StructureRead<ModelStructure> shell;
    forEach(groups.size() + 1, [&](size_t i) {
        if (i == 0) {
            shell = readModelStructure(parts.shell, source, options);
            return;
        }
        Group& group = groups[i - 1];
        std::string wrapped;
        wrapped.reserve(kGroupOpening.size() + group.text.size() + kGroupClosing.size());
        wrapped.append(kGroupOpening).append(group.text).append(kGroupClosing);
        group.read = readLayerStructure(wrapped, source, options);
    });
    bool whole = shell.value.has_value() && shell.value->nodes.empty();
    for (const auto& group : groups) whole = whole && group.read.value.has_value();
    if (!whole) return readModelStructure(text, source, options);  // says what is wrong, where
    size_t count = 0;
    for (const auto& group : groups) count += group.read.value->nodes.size();
    auto& nodes = shell.value->nodes;
    nodes.reserve(count);
    for (auto& group : groups)
        for (auto& node : group.read.value->nodes) nodes.push_back(std::move(node));
    return shell;
}

std::string safeFileComponent(const std::string& name) {
    std::string out = name;
    for (auto& c : out)
        if (c == '/' || c == '\0') c = '_';
    if (out.empty() || out == "." || out == "..") out = "_" + out;
    return out;
}

}  // namespace probe::format
