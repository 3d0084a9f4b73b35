// The readers' fast paths against the general ones they stand in for: structure files read
// straight into the structs (readLayerStructure, readModelStructure) against the tree reader
// (parseJson, then fromJson), and statistic values against std::from_chars.
// SPDX-License-Identifier: GPL-3.0-or-later
#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "probe/format/json_input.h"
#include "probe/format/statistic_csv.h"
#include "probe/format/structure_json.h"

using namespace probe::format;

namespace {

// What a reader made of a text: the structure written back, or its message.
struct Outcome {
    bool ok = false;
    std::string text;  // toJson().dump(), or the message
};

template <typename Structure>
Outcome byTree(const std::string& text) {
    auto parsed = parseJson(text, "x.json", kStructureJsonLimits);
    if (!parsed.ok()) return {false, "json: " + parsed.error.toString()};
    std::string error;
    auto structure = Structure::fromJson(*parsed.value, &error);
    if (!structure) return {false, "structure: " + error};
    return {true, structure->toJson().dump()};
}

template <typename Read>
Outcome byEvents(const Read& read) {
    if (read.jsonError) {
        EXPECT_FALSE(read.value);
        return {false, "json: " + read.jsonError->toString()};
    }
    if (!read.value) return {false, "structure: " + read.error};
    EXPECT_TRUE(read.error.empty());
    return {true, read.value->toJson().dump()};
}

void expectSameAsTree(const std::string& text) {
    const Outcome layerTree = byTree<StructureNode>(text);
    const Outcome layerEvents = byEvents(readLayerStructure(text, "x.json"));
    EXPECT_EQ(layerEvents.ok, layerTree.ok) << text;
    EXPECT_EQ(layerEvents.text, layerTree.text) << text;
    const Outcome modelTree = byTree<ModelStructure>(text);
    const Outcome modelEvents = byEvents(readModelStructure(text, "x.json"));
    EXPECT_EQ(modelEvents.ok, modelTree.ok) << text;
    EXPECT_EQ(modelEvents.text, modelTree.text) << text;
}

}  // namespace

TEST(StructureEvents, WrittenStructuresReadAsTheTreeReadsThem) {
    StructureNode layer;
    layer.opName = "Prefill_layer_2";
    layer.opType = "Prefill_layer";
    layer.inTensors = {"Prefill_layer_2_input_0", "w"};
    layer.outTensors = {"Prefill_layer_2_output_0"};
    layer.internalTensors = {"t0"};
    for (int i = 0; i < 3; ++i) {
        StructureNode child;
        child.opName = "Attention_2_" + std::to_string(i);
        child.opType = "SelfAttention";
        child.param = nlohmann::ordered_json{
            {"zeta", i}, {"alpha", {1.5, true, nullptr, "s"}}, {"nested", {{"b", 1}, {"a", -2}}}};
        StructureNode kernel;
        kernel.opName = "mm_2_" + std::to_string(i) + "_0";
        kernel.opType = "aten::mm";
        child.nodes.push_back(kernel);
        layer.nodes.push_back(child);
    }
    const std::string layerText = layer.toJson().dump();
    auto read = readLayerStructure(layerText, "layer.json");
    ASSERT_TRUE(read.value) << read.error;
    ASSERT_EQ(read.value->nodes.size(), 3u);
    EXPECT_EQ(read.value->nodes[2].nodes.at(0).opName, "mm_2_2_0");
    EXPECT_EQ(read.value->nodes[1].param["nested"]["a"], -2);
    expectSameAsTree(layerText);
    expectSameAsTree(layer.toJson().dump(2));  // indented

    ModelStructure model;
    model.modelName = "M";
    model.weightTensors = {"w0", "w1"};
    model.inTensors = {"M_input_0"};
    model.nodes = {layer, layer};
    const std::string modelText = model.toJson().dump();
    auto readModel = readModelStructure(modelText, "model.json");
    ASSERT_TRUE(readModel.value) << readModel.error;
    EXPECT_EQ(readModel.value->modelName, "M");
    EXPECT_EQ(readModel.value->weightTensors, model.weightTensors);
    EXPECT_EQ(readModel.value->nodes.size(), 2u);
    expectSameAsTree(modelText);
}

// Texts that are not plain structure files, one way or another.
std::vector<std::string> oddTexts() {
    return {
        // not objects
        "[]", "7", "\"text\"", "null", "[{\"opName\": \"a\"}]",
        // fields of the wrong type, read leniently or refused
        "{\"opName\": 7, \"opType\": [1], \"modelName\": {}}",
        "{\"opName\": \"a\", \"inTensors\": \"x\"}", "{\"inTensors\": [\"a\", 1, \"b\"]}",
        "{\"outTensors\": {\"a\": 1}}", "{\"internalTensors\": null}",
        "{\"weightTensors\": 5, \"inTensors\": [\"a\"]}", "{\"weightTensors\": [[\"a\"]]}",
        "{\"nodes\": 7}", "{\"nodes\": [7]}", "{\"nodes\": [[]]}", "{\"nodes\": {}}",
        "{\"nodes\": [{\"opName\": \"c\", \"inTensors\": 3}]}",
        "{\"nodes\": [{\"opName\": \"ok\"}, {\"nodes\": [1]}, {\"inTensors\": 1}]}",
        "{\"inTensors\": 1, \"nodes\": [{\"outTensors\": 2}]}",
        "{\"nodes\": [{\"outTensors\": 2}], \"inTensors\": 1}",
        "{\"nodes\": [{\"nodes\": [{\"nodes\": [{\"internalTensors\": [{}]}]}]}]}",
        // parameters of every kind
        "{\"opName\": \"p\", \"param\": {\"b\": [1, {\"y\": 2, \"x\": [null, false]}], \"a\": "
        "1e300}}",
        "{\"param\": [1, 2, [3, [4]]]}", "{\"param\": -12345678901234}",
        "{\"param\": 18446744073709551615}", "{\"param\": null}", "{\"param\": {}}",
        "{\"param\": {\"k\": 1, \"k\": 2}}",
        // repeated keys: the last one wins, as in the tree
        "{\"opName\": \"a\", \"opName\": \"b\"}", "{\"opName\": \"a\", \"opName\": 1}",
        "{\"inTensors\": 1, \"inTensors\": [\"x\"]}", "{\"inTensors\": [\"x\"], \"inTensors\": 1}",
        "{\"nodes\": [7], \"nodes\": [{\"opName\": \"n\"}]}",
        "{\"nodes\": [{\"opName\": \"n\"}], \"nodes\": 3}",
        "{\"param\": {\"a\": 1}, \"param\": \"\"}",
        // unknown keys with any value
        "{\"extra\": {\"nodes\": 7, \"inTensors\": [1]}, \"more\": [[{\"a\": []}]], \"opName\": "
        "\"u\"}",
        // not JSON, or beyond the limits
        "", "{", "{\"opName\": ", "{\"nodes\": [}", "{\"a\": 1e999}", "{\"a\": \"\xff\"}",
        std::string(300, '[') + std::string(300, ']'),
        // the fast scanner gives up past the start (an escape, a number it leaves to nlohmann):
        // what it handed over already is forgotten, and the text read again from the start
        "{\"opName\": \"a\", \"nodes\": [{\"opName\": \"b\"}, {\"opName\": \"c\\u0041\\n\"}]}",
        "{\"nodes\": [{\"opName\": \"b\", \"param\": {\"n\": 123456789012345678901}}]}",
        "{\"nodes\": [{\"opName\": \"b\"}, {\"inTensors\": [\"x\", \"\\t\"]}], \"opType\": \"t\"}",
        "{\"nodes\": [{\"opName\": \"b\"}], \"opName\": \"\\\"q\\\"\", \"x\": 1,}"};
}

TEST(StructureEvents, OddTextsReadAsTheTreeReadsThem) {
    for (const auto& text : oddTexts()) expectSameAsTree(text);
}

// Without the tensor names or the child nodes, a file reads the same otherwise, and a broken one
// is refused with the same message: the reader that keeps less checks as much.
TEST(StructureEvents, ReadersThatKeepLessCheckAsMuch) {
    std::vector<std::string> texts = oddTexts();
    StructureNode layer;
    layer.opName = "L_1";
    layer.opType = "Layer";
    layer.inTensors = {"L_1_input_0"};
    layer.outTensors = {"L_1_output_0", "extra"};
    for (int i = 0; i < 3; ++i) {
        StructureNode child;
        child.opName = "C_1_" + std::to_string(i);
        child.internalTensors = {"t" + std::to_string(i)};
        child.param = nlohmann::ordered_json{{"k", i}};
        child.nodes.resize(static_cast<size_t>(i));
        layer.nodes.push_back(child);
    }
    ModelStructure model;
    model.modelName = "M";
    model.weightTensors = {"w"};
    model.nodes = {layer, layer};
    texts.push_back(layer.toJson().dump());
    texts.push_back(model.toJson().dump(1));
    auto stripped = [](StructureNode node, const StructureReadOptions& options) {
        std::function<void(StructureNode&)> strip = [&](StructureNode& n) {
            if (!options.tensorNames) n.inTensors = n.outTensors = n.internalTensors = {};
            if (!options.children) n.nodes.clear();
            for (auto& child : n.nodes) strip(child);
        };
        strip(node);
        return node.toJson().dump();
    };
    int read = 0;
    for (const bool tensorNames : {false, true}) {
        for (const bool children : {false, true}) {
            StructureReadOptions options;
            options.tensorNames = tensorNames;
            options.children = children;
            for (const auto& text : texts) {
                const auto whole = readLayerStructure(text, "x.json");
                const auto part = readLayerStructure(text, "x.json", options);
                EXPECT_EQ(byEvents(part).ok, byEvents(whole).ok) << text;
                EXPECT_EQ(part.error, whole.error) << text;
                EXPECT_EQ(part.jsonError.has_value(), whole.jsonError.has_value()) << text;
                if (part.jsonError && whole.jsonError) {
                    EXPECT_EQ(part.jsonError->toString(), whole.jsonError->toString());
                }
                if (whole.value && part.value) {
                    EXPECT_EQ(part.value->toJson().dump(), stripped(*whole.value, options)) << text;
                    ++read;
                }
                const auto wholeModel = readModelStructure(text, "x.json");
                const auto partModel = readModelStructure(text, "x.json", options);
                EXPECT_EQ(partModel.error, wholeModel.error) << text;
                EXPECT_EQ(partModel.value.has_value(), wholeModel.value.has_value()) << text;
                if (wholeModel.value && partModel.value) {
                    EXPECT_EQ(partModel.value->modelName, wholeModel.value->modelName);
                    EXPECT_EQ(partModel.value->weightTensors.empty(),
                              !tensorNames || wholeModel.value->weightTensors.empty());
                    // A model's nodes are its root's children.
                    ASSERT_EQ(partModel.value->nodes.size(),
                              children ? wholeModel.value->nodes.size() : 0u);
                    for (size_t i = 0; i < partModel.value->nodes.size(); ++i)
                        EXPECT_EQ(partModel.value->nodes[i].toJson().dump(),
                                  stripped(wholeModel.value->nodes[i], options));
                }
            }
        }
    }
    EXPECT_GT(read, 20);
}

namespace {

// What readModelStructure made of a text, written out: the model, or the message.
std::string outcomeOf(const StructureRead<ModelStructure>& read) {
    if (read.jsonError) return "json: " + read.jsonError->toString();
    if (!read.value) return "structure: " + read.error;
    return read.value->toJson().dump();
}

// The model read in parts (cut when it can be) on two threads, the parts taken in turn.
StructureRead<ModelStructure> readInParts(const std::string& text, bool* cut = nullptr) {
    const auto parts = cutModelText(text);
    if (cut) *cut = parts.has_value();
    StructureReadOptions options;
    options.tensorNames = false;
    auto onTwoThreads = [](size_t count, const std::function<void(size_t)>& read) {
        std::atomic<size_t> next{0};
        auto loop = [&] {
            for (size_t i; (i = next.fetch_add(1)) < count;) read(i);
        };
        std::thread other(loop);
        loop();
        other.join();
    };
    return readModelStructure(text, "m.json", parts ? *parts : ModelTextParts{}, options,
                              onTwoThreads);
}

StructureRead<ModelStructure> readWhole(const std::string& text) {
    StructureReadOptions options;
    options.tensorNames = false;
    return readModelStructure(text, "m.json", options);
}

// A model of `layers` top-level nodes whose texts hold what a cut could trip over: brackets,
// quotes and backslashes in names, nested nodes and parameters.
ModelStructure awkwardModel(int layers) {
    ModelStructure model;
    model.modelName = "M{\"]";
    model.weightTensors = {"w]", "w}"};
    for (int i = 0; i < layers; ++i) {
        StructureNode layer;
        layer.opName = "layer_" + std::to_string(i) + (i % 3 ? "" : "\\\"}]");
        layer.opType = i % 4 ? "Layer" : "[{\\";
        layer.param = i % 2 ? nlohmann::ordered_json("")
                            : nlohmann::ordered_json{{"k}", i}, {"v", {1, "]", {{"x", "\"{"}}}}};
        for (int c = 0; c < 1 + i % 5; ++c) {
            StructureNode child;
            child.opName =
                "child_" + std::to_string(i) + "_" + std::to_string(c) + std::string(200, 'n');
            child.inTensors = {"in]" + std::to_string(c)};
            child.nodes.resize(static_cast<size_t>(c % 3));
            layer.nodes.push_back(child);
        }
        model.nodes.push_back(layer);
    }
    return model;
}

}  // namespace

// The model's text cut at its top-level nodes: each part is the text of one node as written.
TEST(ModelInParts, TheCutFindsEveryTopLevelNode) {
    const ModelStructure model = awkwardModel(40);
    for (const int indent : {-1, 0, 3}) {
        const std::string text = model.toJson().dump(indent);
        const auto parts = cutModelText(text);
        ASSERT_TRUE(parts) << indent;
        ASSERT_EQ(parts->nodes.size(), model.nodes.size());
        for (size_t i = 0; i < model.nodes.size(); ++i) {
            auto node = nlohmann::ordered_json::parse(parts->nodes[i]);
            EXPECT_EQ(node.dump(), model.nodes[i].toJson().dump()) << i;
        }
        // The shell is the model without its nodes.
        ModelStructure empty = model;
        empty.nodes.clear();
        EXPECT_EQ(nlohmann::ordered_json::parse(parts->shell).dump(), empty.toJson().dump());
    }
    // Texts that are not cut: read whole.
    for (const std::string text :
         {"", "[]", "{}", "{\"nodes\": []}", "{\"nodes\": 7}", "{\"nodes\": [7]}",
          "{\"nod\\u0065s\": [{}]}", "{\"nodes\": [{}], \"nodes\": [{}]}", "{\"nodes\": [{},]}",
          "{\"nodes\": [{} {}]}", "{\"nodes\": [{}", "{\"a\": \"x"})
        EXPECT_FALSE(cutModelText(text)) << text;
}

// Read in parts on two threads, a model reads exactly as when read whole: the same nodes, or the
// same message (with its line and column) when anything in it is wrong, wherever that is.
TEST(ModelInParts, ReadsAsTheWholeTextReads) {
    int cutAndRead = 0, refused = 0;
    auto expectSame = [&](const std::string& text) {
        bool cut = false;
        const auto inParts = readInParts(text, &cut);
        const auto whole = readWhole(text);
        EXPECT_EQ(outcomeOf(inParts), outcomeOf(whole)) << text.substr(0, 300);
        if (cut && whole.value) ++cutAndRead;
        if (cut && !whole.value) ++refused;
    };
    for (const auto& text : oddTexts()) expectSame(text);
    // Big enough for several groups of nodes (each a separate read).
    const ModelStructure model = awkwardModel(600);
    const std::string text = model.toJson().dump();
    ASSERT_GT(text.size(), 4u * (64u << 10));
    expectSame(text);
    expectSame(model.toJson().dump(1));
    ASSERT_EQ(readInParts(text).value->nodes.size(), 600u);
    // Damaged at places all over the text, between groups and inside them: a byte removed, a
    // comma or bracket put in, a node made something else.
    std::mt19937_64 random(5);
    for (int n = 0; n < 60; ++n) {
        std::string damaged = text;
        const size_t at = 1 + random() % (text.size() - 2);
        switch (n % 4) {
            case 0:
                damaged.erase(at, 1);
                break;
            case 1:
                damaged.insert(at, 1, ",]}["[random() % 4]);
                break;
            case 2: {  // a separator between two top-level nodes, or a node's key
                const size_t seam = text.find("]},{\"opName\":\"layer_", at);
                if (seam == std::string::npos) continue;
                damaged.replace(seam + 2, 1, random() % 2 ? " " : ",,");
                break;
            }
            default: {
                const size_t key = text.find("\"inTensors\":[", at);
                if (key == std::string::npos) continue;
                damaged.replace(key + 12, 1, "7,[");
                break;
            }
        }
        expectSame(damaged);
    }
    EXPECT_GT(cutAndRead, 2);
    EXPECT_GT(refused, 15);
}

// Statistic rows with fields of every length up to a few words: each field read back whole (the
// commas are looked for eight bytes at a time).
TEST(StatisticRows, FieldsOfEveryLengthAreSplitWhereTheCommasAre) {
    std::mt19937_64 random(7);
    auto word = [&](size_t length) {
        std::string out;
        for (size_t i = 0; i < length; ++i)
            out += "abcdefghijklmnopqrstuvwxyz0123456789_./:x"[random() % 41];
        return out;
    };
    // A value as written (six decimals) and read back.
    auto written = [](std::optional<double> value) -> std::optional<double> {
        if (!value) return std::nullopt;
        bool ok = false;
        return parseStatValue(formatStatValue(value), &ok);
    };
    std::vector<std::string> scratch;
    int checked = 0;
    for (int n = 0; n < 3000; ++n) {
        StatRow row;
        row.devicePid = word(1 + random() % 12);
        row.round = static_cast<int64_t>(random() % 100000);
        row.opName = word(1 + random() % 40);
        row.opType = word(random() % 20);
        row.opId = word(1 + random() % 17);
        row.isOutput = random() % 2;
        row.index = word(1 + random() % 9);
        row.dtype = word(1 + random() % 10);
        row.format = word(random() % 4);
        row.shape = word(random() % 25);
        if (random() % 3) {  // else all four N/A (task tensor's rows)
            row.max = static_cast<double>(random() % 2000000) / 1e6 - 1.0;
            row.min = -static_cast<double>(random() % 1000) / 1e3;
            row.mean = static_cast<double>(random() % 1000) / 1e4;
            row.norm = static_cast<double>(random() % 100000000) / 1e2;
        }
        row.tensorPath = random() % 2 ? word(1 + random() % 60) : std::string();
        const std::string line = formatStatRow(row);
        StatRowView view;
        std::string error;
        ASSERT_TRUE(parseStatRow(line, view, scratch, &error)) << line << error;
        EXPECT_EQ(view.devicePid, row.devicePid);
        EXPECT_EQ(view.round, row.round);
        EXPECT_EQ(view.opName, row.opName);
        EXPECT_EQ(view.opType, row.opType);
        EXPECT_EQ(view.opId, row.opId);
        EXPECT_EQ(view.isOutput, row.isOutput);
        EXPECT_EQ(view.index, row.index);
        EXPECT_EQ(view.dtype, row.dtype);
        EXPECT_EQ(view.format, row.format);
        EXPECT_EQ(view.shape, row.shape);
        EXPECT_EQ(view.max, written(row.max)) << line;
        EXPECT_EQ(view.min, written(row.min)) << line;
        EXPECT_EQ(view.mean, written(row.mean)) << line;
        EXPECT_EQ(view.norm, written(row.norm)) << line;
        EXPECT_EQ(view.tensorPath, row.tensorPath);
        // One comma more or less is a malformed row, wherever it is.
        std::string extra = line, missing = line;
        const size_t at = random() % (line.size() - 1);
        extra.insert(at, ",");
        const size_t comma = line.find(',', at);
        missing.erase(comma == std::string::npos ? line.find(',') : comma, 1);
        EXPECT_FALSE(parseStatRow(extra, view, scratch, &error)) << extra;
        EXPECT_FALSE(parseStatRow(missing, view, scratch, &error)) << missing;
        EXPECT_EQ(error.rfind("expected 15 columns, found 14", 0), 0u) << missing << error;
        ++checked;
    }
    EXPECT_EQ(checked, 3000);
}

// Lines without a quote opening a field are split at every comma (eight bytes at a time); a
// quote inside a field is a character like any other, and a field opening with one is unquoted.
// Checked against the rule itself on lines of every length and column count.
TEST(StatisticRows, UnquotedLinesAreSplitAtEveryCommaAndQuotedFieldsUnquoted) {
    std::mt19937_64 random(11);
    bool strayQuotes = false;         // in this line's fields
    auto text = [&](size_t length) {  // no comma; a quote anywhere but first
        std::string out;
        for (size_t i = 0; i < length; ++i)
            out += (strayQuotes && i > 0 && random() % 5 == 0) ? '"' : 'a';
        return out;
    };
    std::vector<std::string> scratch;
    int splitChecked = 0, quotedChecked = 0;
    for (int n = 0; n < 4000; ++n) {
        const size_t columns = 10 + random() % 10;  // 10..19
        strayQuotes = random() % 4 == 0;
        std::vector<std::string> fields;
        const bool notApplicable = random() % 4 == 0;  // all four statistics, or none
        for (size_t c = 0; c < columns; ++c) {
            if (c == 1)
                fields.push_back(std::to_string(random() % 1000));
            else if (c == 5)
                fields.push_back(random() % 2 ? "input" : "output");
            else if (c >= 10 && c <= 13)
                fields.push_back(notApplicable ? "N/A" : "1.500000");
            else
                fields.push_back(text(random() % 21));
        }
        std::string line;
        for (size_t c = 0; c < columns; ++c) line += (c ? "," : "") + fields[c];
        // Now and then a field written quoted instead (a comma and a doubled quote inside).
        const bool quoted = columns == 15 && random() % 3 == 0;
        if (quoted) {
            fields[2] = "x,\"" + fields[2];
            std::string written = "\"";
            for (char c : fields[2]) written += c == '"' ? std::string("\"\"") : std::string(1, c);
            written += '"';
            line.clear();
            for (size_t c = 0; c < columns; ++c)
                line += (c ? "," : "") + (c == 2 ? written : fields[c]);
        }
        if (random() % 2) line += random() % 2 ? "\n" : "\r\n";
        StatRowView view;
        std::string error;
        const bool ok = parseStatRow(line, view, scratch, &error);
        if (columns > 15) {
            EXPECT_FALSE(ok) << line;
            EXPECT_EQ(error, "more than 15 columns") << line;
        } else if (columns < 15) {
            EXPECT_FALSE(ok) << line;
            EXPECT_EQ(error, "expected 15 columns, found " + std::to_string(columns)) << line;
        } else {
            ASSERT_TRUE(ok) << line << ": " << error;
            EXPECT_EQ(view.devicePid, fields[0]);
            EXPECT_EQ(view.opName, fields[2]) << line;
            EXPECT_EQ(view.opType, fields[3]);
            EXPECT_EQ(view.opId, fields[4]);
            EXPECT_EQ(view.index, fields[6]);
            EXPECT_EQ(view.dtype, fields[7]);
            EXPECT_EQ(view.format, fields[8]);
            EXPECT_EQ(view.shape, fields[9]);
            EXPECT_EQ(view.max.has_value(), fields[10] != "N/A");
            EXPECT_EQ(view.tensorPath, fields[14] == "N/A" ? "" : fields[14]);
            ++(quoted ? quotedChecked : splitChecked);
        }
    }
    EXPECT_GT(splitChecked, 100);
    EXPECT_GT(quotedChecked, 50);
}

// Lines of every length from empty to a few hundred bytes, shorter than one sixteen-byte load or
// ending anywhere in one, with commas anywhere (runs of empty fields too) and now and then a
// quote: split as a byte-by-byte reading of the rule says (a field opening with a quote is
// unquoted; elsewhere a quote is a character), with a scratch or (lines without a quote)
// without.
TEST(StatisticRows, LinesOfEveryLengthSplitAsTheRuleSays) {
    std::mt19937_64 random(23);
    // The fields by the rule, or nullopt for an unterminated quote.
    auto splitByRule = [](const std::string& line) -> std::optional<std::vector<std::string>> {
        std::vector<std::string> fields;
        size_t pos = 0;
        while (true) {
            std::string field;
            if (pos < line.size() && line[pos] == '"') {
                size_t i = pos + 1;
                for (;; ++i) {
                    if (i >= line.size()) return std::nullopt;
                    if (line[i] == '"') {
                        if (i + 1 < line.size() && line[i + 1] == '"') {
                            field += '"';
                            ++i;
                        } else {
                            break;
                        }
                    } else {
                        field += line[i];
                    }
                }
                fields.push_back(field);
                pos = i + 1;
                if (pos == line.size()) return fields;
                if (line[pos] != ',') return std::nullopt;  // refused either way
                ++pos;
                continue;
            }
            const size_t comma = std::min(line.find(',', pos), line.size());
            fields.push_back(line.substr(pos, comma - pos));
            if (comma == line.size()) return fields;
            pos = comma + 1;
        }
    };
    std::vector<std::string> scratch;
    int accepted = 0, refused = 0, withoutQuotes = 0;
    for (int n = 0; n < 20000; ++n) {
        const size_t length = random() % 3 == 0 ? random() % 20 : random() % 300;
        const int commaOdds = 1 + static_cast<int>(random() % 12);
        const bool quotes = random() % 5 == 0;
        std::string line;
        for (size_t i = 0; i < length; ++i) {
            const auto r = random() % 64;
            line += quotes && r == 0 ? '"' : static_cast<int>(r % commaOdds) == 0 ? ',' : 'a';
        }
        // Most lines with 15 columns whose fixed fields are valid: rows, not only refusals.
        if (random() % 2) {
            std::vector<std::string> fields(15);
            for (auto& f : fields) f = line.substr(0, random() % (line.size() + 1));
            for (auto& f : fields) f.erase(std::remove(f.begin(), f.end(), ','), f.end());
            fields[1] = std::to_string(random() % 100);
            fields[5] = random() % 2 ? "input" : "output";
            const char* const value = random() % 2 ? "N/A" : "0.250000";  // all four, or none
            for (int v = 10; v < 14; ++v) fields[v] = value;
            line.clear();
            for (size_t c = 0; c < fields.size(); ++c) line += (c ? "," : "") + fields[c];
        }
        const auto byRule = splitByRule(line);
        StatRowView view;
        std::string error;
        const bool ok = parseStatRow(line, view, scratch, &error);
        // Without a scratch: the same, or nothing for a line holding a quote.
        StatRowView unquotedView;
        std::string unquotedError;
        const auto unquoted = parseUnquotedStatRow(line, unquotedView, &unquotedError);
        if (line.find('"') != std::string::npos) {
            // Left to parseStatRow, unless refused for columns past 15 before the first quote.
            if (unquoted) {
                EXPECT_FALSE(*unquoted) << line;
                EXPECT_FALSE(ok) << line;
                EXPECT_EQ(unquotedError, "more than 15 columns") << line;
                EXPECT_EQ(error, "more than 15 columns") << line;
            }
        } else {
            ++withoutQuotes;
            EXPECT_EQ(unquoted, std::optional<bool>(ok)) << line;
            EXPECT_EQ(unquotedError, error) << line;
            if (ok) {
                EXPECT_EQ(unquotedView.opName, view.opName) << line;
                EXPECT_EQ(unquotedView.shape, view.shape) << line;
                EXPECT_EQ(unquotedView.tensorPath, view.tensorPath) << line;
                EXPECT_EQ(unquotedView.max, view.max) << line;
            }
        }
        if (!byRule || byRule->size() != 15) {
            EXPECT_FALSE(ok) << line;
            if (byRule && byRule->size() > 15) {
                EXPECT_EQ(error, "more than 15 columns") << line;
            }
            if (byRule && byRule->size() < 15) {
                EXPECT_EQ(error, "expected 15 columns, found " + std::to_string(byRule->size()))
                    << line;
            }
            ++refused;
            continue;
        }
        const auto& f = *byRule;
        const bool valid = !f[1].empty() &&
                           f[1].find_first_not_of("0123456789") == std::string::npos &&
                           (f[5] == "input" || f[5] == "output") &&
                           (std::all_of(f.begin() + 10, f.begin() + 14,
                                        [](const std::string& v) { return v == "N/A"; }) ||
                            std::all_of(f.begin() + 10, f.begin() + 14,
                                        [](const std::string& v) { return v == "0.250000"; }));
        if (!valid) {
            EXPECT_FALSE(ok) << line;
            ++refused;
            continue;
        }
        ASSERT_TRUE(ok) << line << ": " << error;
        EXPECT_EQ(view.devicePid, f[0]) << line;
        EXPECT_EQ(view.opName, f[2]) << line;
        EXPECT_EQ(view.opType, f[3]) << line;
        EXPECT_EQ(view.opId, f[4]) << line;
        EXPECT_EQ(view.isOutput, f[5] == "output") << line;
        EXPECT_EQ(view.index, f[6]) << line;
        EXPECT_EQ(view.dtype, f[7]) << line;
        EXPECT_EQ(view.format, f[8]) << line;
        EXPECT_EQ(view.shape, f[9]) << line;
        EXPECT_EQ(view.tensorPath, f[14] == "N/A" ? "" : f[14]) << line;
        ++accepted;
    }
    EXPECT_GT(accepted, 3000);
    EXPECT_GT(refused, 3000);
    EXPECT_GT(withoutQuotes, 10000);
}

TEST(StatisticValues, ReadAsFromCharsReadsThemBitForBit) {
    std::mt19937_64 random(42);
    std::vector<std::string> texts = {
        "0.000000", "-0.000000", "1", "-1", "007.5", "1.", ".5", "-", "1e5", "1.5e-3",
        "9007199254740993.0", "9007199254740992", "123456789012345678901",
        "0.1234567890123456789012345", "1.2.3", "12a", "--1",
        // the six-decimal shape, and near misses of it
        "12.345678", "-12.345678", ".123456", "-.123456", "1.12345a", "1a.123456", "1-.123456",
        "1.2.123456", "--1.123456", "+1.123456", "1234567890123.123456", "12345678901234.123456",
        "9007199254.740992", "9007199254.740993", "0000000000001.000001", "1.12345:", "1.1234/5",
        "1.\xff"
        "23456",
        "1.12345\xfa"};
    for (int i = 0; i < 20000; ++i) {
        const double magnitude = std::pow(10.0, static_cast<double>(random() % 30) - 12.0);
        const double value = (static_cast<double>(random() % 2000001) / 1e6 - 1.0) * magnitude;
        texts.push_back(formatStatValue(value));  // as the runtime writes them
        char buffer[64];
        std::snprintf(buffer, sizeof buffer, "%.*f", static_cast<int>(random() % 24), value);
        texts.push_back(buffer);
    }
    int checked = 0;
    for (const auto& text : texts) {
        double expected = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), expected);
        const bool valid = ec == std::errc() && end == text.data() + text.size();
        bool ok = false;
        const auto value = parseStatValue(text, &ok);
        EXPECT_EQ(ok, valid) << text;
        if (!valid || !ok) continue;
        ASSERT_TRUE(value) << text;
        uint64_t got = 0, want = 0;
        std::memcpy(&got, &*value, sizeof got);
        std::memcpy(&want, &expected, sizeof want);
        EXPECT_EQ(got, want) << text;
        ++checked;
    }
    EXPECT_GT(checked, 40000);
}

// A number beyond a double's range is still a number: 1e999 (how a spreadsheet may save an
// infinity) is read as infinity, not refused as "not a number"; below the range, as zero.
TEST(StatisticValues, BeyondADoublesRangeAreInfinityOrZero) {
    bool ok = false;
    auto value = parseStatValue("1e999", &ok);
    ASSERT_TRUE(ok);
    ASSERT_TRUE(value);
    EXPECT_TRUE(std::isinf(*value) && *value > 0);
    value = parseStatValue("-1e999", &ok);
    ASSERT_TRUE(ok);
    ASSERT_TRUE(value);
    EXPECT_TRUE(std::isinf(*value) && *value < 0);
    value = parseStatValue("1e-999", &ok);
    ASSERT_TRUE(ok);
    ASSERT_TRUE(value);
    EXPECT_EQ(*value, 0.0);
    value = parseStatValue("1e999x", &ok);  // still not a number
    EXPECT_FALSE(ok);
    EXPECT_FALSE(value);

    // And in a whole row: its Max is +inf, its Min -inf, as the NaN/Inf badges will say.
    StatRowView row;
    std::vector<std::string> scratch;
    std::string error;
    ASSERT_TRUE(parseStatRow("1_2,0,a,T,0_0,output,0,float,nd,2,1e999,-1e999,0.5,1e999,N/A", row,
                             scratch, &error))
        << error;
    ASSERT_TRUE(row.max && row.min && row.norm);
    EXPECT_TRUE(std::isinf(*row.max) && *row.max > 0);
    EXPECT_TRUE(std::isinf(*row.min) && *row.min < 0);
}

// The Execution Count read without from_chars (plain digits, what the runtime writes) gives
// from_chars' number, and every other text (a sign, 19 digits and more, past int64, not a number)
// is still read or refused as from_chars reads or refuses it. A number outside 0..2^31-1 is
// refused as out of range (readers keep rounds in 32 bits: 2^31 was read as round -2^31).
TEST(StatRowParsing, ExecutionCountIsReadAsFromCharsReadsIt) {
    const std::vector<std::string> rounds = {"0",
                                             "7",
                                             "007",
                                             "42",
                                             "2147483647",
                                             "2147483648",
                                             "123456789012345678",
                                             "999999999999999999",
                                             "1000000000000000000",
                                             "9223372036854775807",
                                             "9223372036854775808",
                                             "-1",
                                             "-0",
                                             "+1",
                                             "",
                                             "1a",
                                             "a1",
                                             "1.0",
                                             " 1",
                                             "1 ",
                                             "12345678901234567890123"};
    const std::string rest =
        ",layers.0,Decoder,0,input,0,float,nd,2x3,1.000000,0.000000,"
        "0.500000,2.000000,N/A";
    int read = 0, refused = 0;
    for (const auto& round : rounds) {
        const std::string line = "0_4242," + round + rest;
        int64_t expected = 0;
        const auto [end, ec] = std::from_chars(round.data(), round.data() + round.size(), expected);
        const bool number =
            !round.empty() && ec == std::errc() && end == round.data() + round.size();
        const bool valid = number && expected >= 0 && expected <= INT32_MAX;
        StatRowView view;
        std::string error;
        const auto ok = parseUnquotedStatRow(line, view, &error);
        ASSERT_TRUE(ok.has_value()) << line;  // no quote in it
        EXPECT_EQ(*ok, valid) << round;
        if (valid) {
            EXPECT_EQ(view.round, expected) << round;
            ++read;
        } else {
            EXPECT_EQ(error, (number ? "Execution Count out of range (0 to 2147483647): "
                                     : "Execution Count is not a number: ") +
                                 round)
                << round;
            ++refused;
        }
        std::vector<std::string> scratch;
        StatRowView general;
        EXPECT_EQ(parseStatRow(line, general, scratch, nullptr), valid) << round;
        if (valid) {
            EXPECT_EQ(general.round, expected) << round;
        }
    }
    EXPECT_EQ(read, 6);      // 0, 7, 007, 42, 2147483647, -0
    EXPECT_EQ(refused, 15);  // 2^31 and more, -1 among them
}
