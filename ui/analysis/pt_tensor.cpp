// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/pt_tensor.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>

#include <zip.h>

#include "probe/format/file_util.h"
#include "probe/format/tensor_bin.h"

namespace probe::analysis {
namespace {

using format::DType;

// Bounds: a tensor's data.pkl is about 150 bytes; these leave ample room and no more.
constexpr size_t kMaxPickleBytes = 64 * 1024;
constexpr size_t kMaxStringBytes = 4096;
constexpr size_t kMaxStackDepth = 256;
constexpr size_t kMaxMemoEntries = 4096;
constexpr size_t kMaxValueNodes = 4096;  // nodes of one value (memo copies cannot blow up)
constexpr size_t kMaxDims = 64;
// A view never needs more bytes than its storage, except an expanded one (stride 0): those are
// gathered up to this size.
constexpr uint64_t kMaxExpandedBytes = 64ull << 20;

struct Value {
    enum class Kind { None, Bool, Int, String, Global, Tuple, Dict, Storage, Tensor };
    Kind kind = Kind::None;
    int64_t integer = 0;                    // Bool, Int
    std::string text;                       // String; Global: "module name"
    std::vector<Value> items;               // Tuple
    std::shared_ptr<PickledTensor> tensor;  // Storage (dtype, key, elements) and Tensor
    size_t nodes = 1;
};

const char* kindName(Value::Kind kind) {
    switch (kind) {
        case Value::Kind::None:
            return "None";
        case Value::Kind::Bool:
            return "a bool";
        case Value::Kind::Int:
            return "an int";
        case Value::Kind::String:
            return "a string";
        case Value::Kind::Global:
            return "a class or function";
        case Value::Kind::Tuple:
            return "a tuple";
        case Value::Kind::Dict:
            return "a dict";
        case Value::Kind::Storage:
            return "a storage";
        case Value::Kind::Tensor:
            return "a tensor";
    }
    return "?";
}

// torch's legacy storage class names, which the pickle uses to say the dtype.
std::optional<DType> storageDType(const std::string& name) {
    static const std::map<std::string, DType> kStorages = {
        {"FloatStorage", DType::Float},
        {"DoubleStorage", DType::Double},
        {"HalfStorage", DType::Float16},
        {"BFloat16Storage", DType::BF16},
        {"LongStorage", DType::Int64},
        {"IntStorage", DType::Int32},
        {"ShortStorage", DType::Int16},
        {"CharStorage", DType::Int8},
        {"ByteStorage", DType::UInt8},
        {"BoolStorage", DType::Bool},
        {"ComplexFloatStorage", DType::Complex64},
        {"ComplexDoubleStorage", DType::Complex128},
    };
    auto it = kStorages.find(name);
    if (it == kStorages.end()) return std::nullopt;
    return it->second;
}

constexpr const char* kRebuildTensor = "torch._utils _rebuild_tensor_v2";
constexpr const char* kRebuildParameter = "torch._utils _rebuild_parameter";
constexpr const char* kOrderedDict = "collections OrderedDict";

class PickleMachine {
public:
    explicit PickleMachine(std::string_view bytes) : in_(bytes) {}

    std::optional<PickledTensor> run(std::string* error) {
        if (in_.size() > kMaxPickleBytes)
            return fail(error, "the pickle is larger than a tensor's ever is");
        while (pos_ < in_.size()) {
            const size_t at = pos_;
            const uint8_t op = static_cast<uint8_t>(in_[pos_++]);
            if (op == '.') {  // STOP
                if (stack_.size() != 1 || stack_.back().kind != Value::Kind::Tensor)
                    return fail(error,
                                "the pickle does not end with one tensor: it is not a file "
                                "torch.save wrote for a "
                                "single tensor");
                return *stack_.back().tensor;
            }
            if (!step(op)) {
                if (why_.empty()) why_ = "malformed";
                return fail(error, why_ + " (at byte " + std::to_string(at) + ")");
            }
        }
        return fail(error, "the pickle ends without a STOP opcode (truncated)");
    }

private:
    static std::optional<PickledTensor> fail(std::string* error, const std::string& why) {
        if (error) *error = why;
        return std::nullopt;
    }
    bool bad(std::string why) {
        why_ = std::move(why);
        return false;
    }
    bool need(size_t n) {
        if (in_.size() - pos_ < n) return bad("the pickle is truncated");
        return true;
    }
    uint64_t readLittle(size_t n) {
        uint64_t v = 0;
        for (size_t i = 0; i < n; ++i)
            v |= uint64_t(static_cast<uint8_t>(in_[pos_ + i])) << (8 * i);
        pos_ += n;
        return v;
    }
    bool push(Value v) {
        if (stack_.size() >= kMaxStackDepth)
            return bad("the pickle nests deeper than a tensor's does");
        if (v.nodes > kMaxValueNodes)
            return bad("the pickle builds a larger structure than a tensor's");
        stack_.push_back(std::move(v));
        return true;
    }
    bool pop(Value& out) {
        const size_t floor = marks_.empty() ? 0 : marks_.back();
        if (stack_.size() <= floor) return bad("the pickle pops from an empty stack");
        out = std::move(stack_.back());
        stack_.pop_back();
        return true;
    }
    bool line(std::string& out) {
        const size_t end = in_.find('\n', pos_);
        if (end == std::string_view::npos) return bad("the pickle is truncated");
        if (end - pos_ > 256) return bad("a GLOBAL opcode's name is malformed");
        out.assign(in_.substr(pos_, end - pos_));
        pos_ = end + 1;
        return true;
    }
    bool string(size_t n) {
        if (n > kMaxStringBytes) return bad("a string longer than a tensor's pickle holds");
        if (!need(n)) return false;
        Value v;
        v.kind = Value::Kind::String;
        v.text.assign(in_.substr(pos_, n));
        pos_ += n;
        return push(std::move(v));
    }
    bool integer(int64_t i) {
        Value v;
        v.kind = Value::Kind::Int;
        v.integer = i;
        return push(std::move(v));
    }
    bool global(const std::string& module, const std::string& name) {
        const std::string full = module + " " + name;
        const bool known = full == kRebuildTensor || full == kRebuildParameter ||
                           full == kOrderedDict || (module == "torch" && storageDType(name));
        if (!known)
            return bad(
                "the pickle refers to " + module + "." + name +
                ", which is not part of a tensor saved by torch.save; refusing to interpret it");
        Value v;
        v.kind = Value::Kind::Global;
        v.text = full;
        return push(std::move(v));
    }
    bool tuple(std::vector<Value> items) {
        Value v;
        v.kind = Value::Kind::Tuple;
        for (const auto& item : items) v.nodes += item.nodes;
        v.items = std::move(items);
        return push(std::move(v));
    }
    bool tupleOf(size_t n) {
        std::vector<Value> items(n);
        for (size_t i = n; i-- > 0;)
            if (!pop(items[i])) return false;
        return tuple(std::move(items));
    }
    bool memoPut(size_t index) {
        if (stack_.empty()) return bad("the pickle memoizes an empty stack");
        if (index >= kMaxMemoEntries)
            return bad("the pickle's memo index is larger than a tensor's pickle needs");
        memo_[index] = stack_.back();
        return true;
    }
    bool memoGet(size_t index) {
        auto it = memo_.find(index);
        if (it == memo_.end()) return bad("the pickle reads a memo entry it never wrote");
        return push(it->second);
    }
    static bool intsOf(const Value& tuple, std::vector<int64_t>& out) {
        if (tuple.kind != Value::Kind::Tuple || tuple.items.size() > kMaxDims) return false;
        for (const auto& item : tuple.items) {
            if (item.kind != Value::Kind::Int || item.integer < 0) return false;
            out.push_back(item.integer);
        }
        return true;
    }
    bool persistentLoad() {
        Value pid;
        if (!pop(pid)) return false;
        // ('storage', torch.<Type>Storage, key, location, elements)
        if (pid.kind != Value::Kind::Tuple || pid.items.size() != 5 ||
            pid.items[0].kind != Value::Kind::String || pid.items[0].text != "storage" ||
            pid.items[1].kind != Value::Kind::Global || pid.items[2].kind != Value::Kind::String ||
            pid.items[3].kind != Value::Kind::String || pid.items[4].kind != Value::Kind::Int ||
            pid.items[4].integer < 0)
            return bad(
                "a persistent id that is not a torch storage ('storage', type, key, location, "
                "size)");
        const std::string& type = pid.items[1].text;
        const auto dtype =
            type.compare(0, 6, "torch ") == 0 ? storageDType(type.substr(6)) : std::nullopt;
        if (!dtype) return bad("a storage of an unknown type " + type);
        const std::string& key = pid.items[2].text;
        if (key.empty() || key.size() > 64 || key.find_first_of("/\\") != std::string::npos ||
            key == "." || key == "..")
            return bad("a storage key that is not a plain name");
        Value v;
        v.kind = Value::Kind::Storage;
        v.tensor = std::make_shared<PickledTensor>();
        v.tensor->dtype = *dtype;
        v.tensor->storageKey = key;
        v.tensor->storageElements = static_cast<uint64_t>(pid.items[4].integer);
        return push(std::move(v));
    }
    bool reduce() {
        Value args, callable;
        if (!pop(args) || !pop(callable)) return false;
        if (callable.kind != Value::Kind::Global || args.kind != Value::Kind::Tuple)
            return bad("REDUCE of " + std::string(kindName(callable.kind)) + " with " +
                       kindName(args.kind));
        const auto& a = args.items;
        if (callable.text == kOrderedDict) {
            if (!a.empty())
                return bad(
                    "an OrderedDict built from arguments (a tensor's hooks are an empty one)");
            Value v;
            v.kind = Value::Kind::Dict;
            return push(std::move(v));
        }
        if (callable.text == kRebuildParameter) {
            // (data, requires_grad, backward_hooks)
            if (a.size() != 3 || a[0].kind != Value::Kind::Tensor ||
                a[1].kind != Value::Kind::Bool || a[2].kind != Value::Kind::Dict)
                return bad("_rebuild_parameter with unexpected arguments");
            return push(a[0]);
        }
        if (callable.text == kRebuildTensor) {
            // (storage, offset, size, stride, requires_grad, backward_hooks[, metadata])
            if (a.size() < 6 || a.size() > 7 || a[0].kind != Value::Kind::Storage ||
                a[1].kind != Value::Kind::Int || a[1].integer < 0 ||
                a[4].kind != Value::Kind::Bool || a[5].kind != Value::Kind::Dict ||
                (a.size() == 7 && a[6].kind != Value::Kind::Dict))
                return bad("_rebuild_tensor_v2 with unexpected arguments");
            auto tensor = std::make_shared<PickledTensor>(*a[0].tensor);
            tensor->offset = a[1].integer;
            if (!intsOf(a[2], tensor->shape) || !intsOf(a[3], tensor->stride) ||
                tensor->shape.size() != tensor->stride.size())
                return bad(
                    "a tensor whose size or stride is not a tuple of non-negative ints of the same "
                    "length (at most " +
                    std::to_string(kMaxDims) + ")");
            Value v;
            v.kind = Value::Kind::Tensor;
            v.tensor = std::move(tensor);
            return push(std::move(v));
        }
        return bad("REDUCE of " +
                   callable.text);  // a storage class called: not in a tensor's pickle
    }

    bool step(uint8_t op) {
        switch (op) {
            case 0x80:  // PROTO
                if (!need(1)) return false;
                if (uint8_t version = static_cast<uint8_t>(in_[pos_++]); version < 2 || version > 5)
                    return bad("pickle protocol " + std::to_string(version) +
                               " (torch.save writes 2)");
                return true;
            case 0x95:  // FRAME (protocol 4): a length we do not need
                if (!need(8)) return false;
                pos_ += 8;
                return true;
            case 'c': {  // GLOBAL
                std::string module, name;
                return line(module) && line(name) && global(module, name);
            }
            case 0x93: {  // STACK_GLOBAL
                Value name, module;
                if (!pop(name) || !pop(module)) return false;
                if (name.kind != Value::Kind::String || module.kind != Value::Kind::String)
                    return bad("STACK_GLOBAL of non-strings");
                return global(module.text, name.text);
            }
            case '(':  // MARK
                if (marks_.size() >= kMaxStackDepth)
                    return bad("the pickle nests deeper than a tensor's does");
                marks_.push_back(stack_.size());
                return true;
            case 't': {  // TUPLE: everything since the last mark
                if (marks_.empty()) return bad("TUPLE without a MARK");
                const size_t from = marks_.back();
                marks_.pop_back();
                std::vector<Value> items(
                    std::make_move_iterator(stack_.begin() + static_cast<std::ptrdiff_t>(from)),
                    std::make_move_iterator(stack_.end()));
                stack_.resize(from);
                return tuple(std::move(items));
            }
            case ')':
                return tuple({});
            case 0x85:
                return tupleOf(1);
            case 0x86:
                return tupleOf(2);
            case 0x87:
                return tupleOf(3);
            case 'X':  // BINUNICODE
                if (!need(4)) return false;
                return string(readLittle(4));
            case 0x8c:  // SHORT_BINUNICODE
                if (!need(1)) return false;
                return string(readLittle(1));
            case 'K':  // BININT1
                if (!need(1)) return false;
                return integer(static_cast<int64_t>(readLittle(1)));
            case 'M':  // BININT2
                if (!need(2)) return false;
                return integer(static_cast<int64_t>(readLittle(2)));
            case 'J':  // BININT: signed 32-bit
                if (!need(4)) return false;
                return integer(static_cast<int32_t>(static_cast<uint32_t>(readLittle(4))));
            case 0x8a: {  // LONG1: n bytes, two's complement
                if (!need(1)) return false;
                const size_t n = readLittle(1);
                if (n > 8) return bad("an integer wider than 64 bits");
                if (!need(n)) return false;
                uint64_t v = readLittle(n);
                if (n > 0 && n < 8 && (v >> (8 * n - 1)) & 1)
                    v |= ~uint64_t(0) << (8 * n);  // sign-extend
                return integer(static_cast<int64_t>(v));
            }
            case 'N': {
                Value v;
                return push(v);
            }
            case 0x88:
            case 0x89: {  // NEWTRUE, NEWFALSE
                Value v;
                v.kind = Value::Kind::Bool;
                v.integer = op == 0x88;
                return push(std::move(v));
            }
            case '}': {  // EMPTY_DICT
                Value v;
                v.kind = Value::Kind::Dict;
                return push(std::move(v));
            }
            case 'Q':
                return persistentLoad();
            case 'R':
                return reduce();
            case 'q':  // BINPUT
                if (!need(1)) return false;
                return memoPut(readLittle(1));
            case 'r':  // LONG_BINPUT
                if (!need(4)) return false;
                return memoPut(readLittle(4));
            case 0x94:
                return memoPut(memo_.size());  // MEMOIZE
            case 'h':                          // BINGET
                if (!need(1)) return false;
                return memoGet(readLittle(1));
            case 'j':  // LONG_BINGET
                if (!need(4)) return false;
                return memoGet(readLittle(4));
            default: {
                char hex[8];
                std::snprintf(hex, sizeof hex, "0x%02x", op);
                return bad(std::string("pickle opcode ") + hex +
                           ", which torch.save does not write for a single tensor; refusing to "
                           "interpret it");
            }
        }
    }

    std::string_view in_;
    size_t pos_ = 0;
    std::vector<Value> stack_;
    std::vector<size_t> marks_;
    std::map<size_t, Value> memo_;
    std::string why_;
};

// A libzip archive, closed (read-only: discarded) when it goes.
struct ZipCloser {
    void operator()(zip_t* z) const { zip_discard(z); }
};
using ZipArchive = std::unique_ptr<zip_t, ZipCloser>;

// Reads entry `index` (at most `limit` bytes; its size must be known and not above it).
bool readEntry(zip_t* archive, zip_uint64_t index, uint64_t limit, std::vector<uint8_t>& out,
               std::string* why) {
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(archive, index, 0, &st) != 0 || !(st.valid & ZIP_STAT_SIZE)) {
        *why = "cannot read the archive's directory";
        return false;
    }
    if (st.size > limit) {
        *why = std::string(st.name ? st.name : "an entry") + " is larger (" +
               std::to_string(st.size) + " bytes) than it can be (" + std::to_string(limit) + ")";
        return false;
    }
    out.resize(st.size);
    zip_file_t* file = zip_fopen_index(archive, index, 0);
    if (!file) {
        *why = std::string("cannot open ") + (st.name ? st.name : "an entry") +
               " in the archive: " + zip_strerror(archive);
        return false;
    }
    const zip_int64_t got = out.empty() ? 0 : zip_fread(file, out.data(), out.size());
    zip_fclose(file);
    if (got < 0 || static_cast<uint64_t>(got) != out.size()) {
        *why = std::string("cannot read ") + (st.name ? st.name : "an entry") +
               " (the archive is damaged)";
        return false;
    }
    return true;
}

}  // namespace

bool isPtTensorPath(std::string_view path) {
    return path.size() > 3 && path.substr(path.size() - 3) == ".pt";
}

std::optional<PickledTensor> parseTensorPickle(std::string_view pickle, std::string* error) {
    return PickleMachine(pickle).run(error);
}

// What PtTensorReader holds: the archive and its storage entry (open while data is read from
// it), or the tensor gathered whole (a view).
struct PtTensorReader::Impl {
    TensorData whole;
    ZipArchive archive;
    zip_uint64_t storageIndex = 0;
    uint64_t storageOffsetBytes = 0;  // where the tensor begins in its storage
    // The storage entry open for reading, at byte `position` of it.
    struct FileCloser {
        void operator()(zip_file_t* f) const { zip_fclose(f); }
    };
    std::unique_ptr<zip_file_t, FileCloser> file;
    uint64_t position = 0;
    std::vector<uint8_t> gathered;  // a view's elements, in row-major order
    std::vector<uint8_t> skipped;   // what a forward skip reads past

    // Puts the open entry at byte `offset` of the storage: a seek where libzip can (a stored
    // entry, as torch.save writes them), else reading on to it, from the start when behind.
    bool seekTo(uint64_t offset, std::string* why) {
        if (file && position == offset) return true;
        if (file && zip_fseek(file.get(), static_cast<zip_int64_t>(offset), SEEK_SET) == 0) {
            position = offset;
            return true;
        }
        if (!file || offset < position) {
            file.reset(zip_fopen_index(archive.get(), storageIndex, 0));
            position = 0;
            if (!file) {
                *why = std::string("cannot open the tensor's storage in the archive: ") +
                       zip_strerror(archive.get());
                return false;
            }
            if (zip_fseek(file.get(), static_cast<zip_int64_t>(offset), SEEK_SET) == 0) {
                position = offset;
                return true;
            }
        }
        skipped.resize(std::min<uint64_t>(offset - position, 1u << 20));
        while (position < offset) {
            const auto n = std::min<uint64_t>(offset - position, skipped.size());
            if (zip_fread(file.get(), skipped.data(), n) != static_cast<zip_int64_t>(n)) {
                *why = "cannot read the tensor's storage (the archive is damaged)";
                return false;
            }
            position += n;
        }
        return true;
    }
};

PtTensorReader::PtTensorReader() : impl_(std::make_unique<Impl>()) {}
PtTensorReader::~PtTensorReader() = default;

const TensorData& PtTensorReader::whole() const {
    return impl_->whole;
}

bool PtTensorReader::read(uint64_t firstByte, uint64_t size, uint8_t* into,
                          std::string* error) const {
    Impl& d = *impl_;
    const uint64_t total = d.whole.header.dataLength;
    if (firstByte > total || size > total - firstByte) {
        if (error) *error = d.whole.path + ": read past the end of the tensor";
        return false;
    }
    if (size == 0) return true;  // (libzip's zip_fseek crashes on an empty entry)
    if (!d.archive) {
        std::memcpy(into, d.gathered.data() + firstByte, size);
        return true;
    }
    std::string why;
    if (d.seekTo(d.storageOffsetBytes + firstByte, &why)) {
        const zip_int64_t got = zip_fread(d.file.get(), into, size);
        if (got == static_cast<zip_int64_t>(size)) {
            d.position += size;
            return true;
        }
        why = "cannot read the tensor's storage (the archive is damaged)";
        d.file.reset();
    }
    if (error) *error = d.whole.path + ": " + why;
    return false;
}

std::unique_ptr<PtTensorReader> PtTensorReader::open(const std::string& path, std::string* error) {
    auto failWith = [&](const std::string& why) -> std::unique_ptr<PtTensorReader> {
        if (error) *error = path + ": " + why;
        return nullptr;
    };
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) return failWith(std::strerror(errno));
    if (!S_ISREG(st.st_mode)) return failWith("not a regular file");
    const uint64_t fileSize = static_cast<uint64_t>(st.st_size);

    int code = 0;
    ZipArchive archive(zip_open(path.c_str(), ZIP_RDONLY, &code));
    if (!archive) {
        zip_error_t zerr;
        zip_error_init_with_code(&zerr, code);
        const std::string text = zip_error_strerror(&zerr);
        zip_error_fini(&zerr);
        // Told apart by the first bytes: a zip's local header (torch.save's archive, damaged
        // or cut short: it was blamed on the legacy format), a pickle (the legacy format), else
        // something else altogether.
        // (Opened as every file of a dump is: a FIFO swapped in since the stat cannot block.)
        char head[4] = {};
        uint64_t size = 0;
        if (const int fd = format::openRegularFile(path, UINT64_MAX, &size, nullptr); fd >= 0) {
            if (::pread(fd, head, sizeof head, 0) != static_cast<ssize_t>(sizeof head)) head[0] = 0;
            ::close(fd);
        }
        if (std::memcmp(head, "PK\x03\x04", 4) == 0)
            return failWith("a zip archive (torch.save's format) that is damaged or cut short: " +
                            text);
        if (static_cast<unsigned char>(head[0]) == 0x80)
            return failWith(
                "written by torch.save(..., _use_new_zipfile_serialization=False), "
                "whose format is not supported: save it again without that option");
        return failWith("not a tensor saved by torch.save (a zip archive): " + text);
    }
    // <archive name>/data.pkl; the storages are <archive name>/data/<key>.
    const zip_int64_t entries = zip_get_num_entries(archive.get(), 0);
    std::string prefix;
    zip_int64_t pickleIndex = -1;
    for (zip_int64_t i = 0; i < entries; ++i) {
        const char* name = zip_get_name(archive.get(), static_cast<zip_uint64_t>(i), 0);
        if (!name) continue;
        const std::string_view n(name);
        if (n == "data.pkl" || (n.size() > 9 && n.substr(n.size() - 9) == "/data.pkl")) {
            if (pickleIndex >= 0) return failWith("the archive holds more than one data.pkl");
            pickleIndex = i;
            prefix.assign(n.substr(0, n.size() - 8));
        }
    }
    if (pickleIndex < 0)
        return failWith("the archive has no data.pkl: it is not a file torch.save wrote");
    const zip_int64_t byteOrder = zip_name_locate(archive.get(), (prefix + "byteorder").c_str(), 0);
    std::string why;
    if (byteOrder >= 0) {
        std::vector<uint8_t> order;
        if (!readEntry(archive.get(), static_cast<zip_uint64_t>(byteOrder), 16, order, &why))
            return failWith(why);
        if (std::string(order.begin(), order.end()) != "little")
            return failWith("the tensor was saved on a big-endian machine, which is not supported");
    }
    std::vector<uint8_t> pickle;
    if (!readEntry(archive.get(), static_cast<zip_uint64_t>(pickleIndex), kMaxPickleBytes, pickle,
                   &why))
        return failWith(why);
    auto described = parseTensorPickle(
        std::string_view(reinterpret_cast<const char*>(pickle.data()), pickle.size()), &why);
    if (!described) return failWith("data.pkl: " + why);

    const size_t elementSize = format::dtypeSize(described->dtype);
    const auto count = format::elementCount(described->shape);
    if (!count) return failWith("data.pkl: the shape's element count overflows");
    // The last element the view reaches must lie inside the storage.
    uint64_t last = static_cast<uint64_t>(described->offset);
    bool contiguous = true;
    uint64_t expected = 1;
    for (size_t d = described->shape.size(); d-- > 0;) {
        const uint64_t size = static_cast<uint64_t>(described->shape[d]);
        const uint64_t stride = static_cast<uint64_t>(described->stride[d]);
        if (size > 1 && stride != expected) contiguous = false;
        if (size == 0) continue;
        if (stride != 0 && (size - 1) > (UINT64_MAX - last) / stride)
            return failWith("data.pkl: the strides overflow");
        last += (size - 1) * stride;
        expected *= size;
    }
    if (*count > 0 && last >= described->storageElements)
        return failWith("data.pkl: the tensor reaches element " + std::to_string(last) +
                        " of a storage of " + std::to_string(described->storageElements));
    if (described->storageElements > fileSize / elementSize)
        return failWith("data.pkl: a storage of " + std::to_string(described->storageElements) +
                        " elements cannot be in a file of " + std::to_string(fileSize) + " bytes");
    const uint64_t storageBytes = described->storageElements * elementSize;
    if (*count > (std::max<uint64_t>(storageBytes, kMaxExpandedBytes)) / elementSize)
        return failWith("the tensor is an expanded view larger than " +
                        std::to_string(kMaxExpandedBytes >> 20) +
                        " MiB; save it with .contiguous()");

    const std::string storageName = prefix + "data/" + described->storageKey;
    const zip_int64_t storageIndex = zip_name_locate(archive.get(), storageName.c_str(), 0);
    if (storageIndex < 0)
        return failWith("the archive has no " + storageName + ", which data.pkl names");
    std::unique_ptr<PtTensorReader> reader(new PtTensorReader);
    Impl& d = *reader->impl_;
    TensorData& t = d.whole;
    t.path = path;
    t.header.dtypeCode = static_cast<int32_t>(described->dtype);
    t.header.dims = described->shape;
    t.dtype = described->dtype;
    t.count = *count;
    const uint64_t bytes = *count * elementSize;
    t.header.dataLength = bytes;
    zip_stat_t entry;
    zip_stat_init(&entry);
    if (zip_stat_index(archive.get(), static_cast<zip_uint64_t>(storageIndex), 0, &entry) != 0 ||
        !(entry.valid & ZIP_STAT_SIZE))
        return failWith("cannot read the archive's directory");
    if (entry.size != storageBytes)
        return failWith(storageName + " holds " + std::to_string(entry.size) +
                        " bytes; data.pkl says " + std::to_string(storageBytes));
    if (contiguous) {  // read from the archive as asked
        d.archive = std::move(archive);
        d.storageIndex = static_cast<zip_uint64_t>(storageIndex);
        d.storageOffsetBytes = static_cast<uint64_t>(described->offset) * elementSize;
        return reader;
    }
    std::vector<uint8_t> storage;
    if (!readEntry(archive.get(), static_cast<zip_uint64_t>(storageIndex), storageBytes, storage,
                   &why))
        return failWith(why);
    // Walk the view's elements in row-major order, an odometer over the dims.
    d.gathered.resize(bytes);
    const size_t dims = described->shape.size();
    std::vector<int64_t> at(dims, 0);
    uint64_t source = static_cast<uint64_t>(described->offset);
    for (uint64_t i = 0; i < *count; ++i) {
        std::memcpy(d.gathered.data() + i * elementSize, storage.data() + source * elementSize,
                    elementSize);
        for (size_t k = dims; k-- > 0;) {
            source += static_cast<uint64_t>(described->stride[k]);
            if (++at[k] < described->shape[k]) break;
            source -= static_cast<uint64_t>(described->stride[k]) *
                      static_cast<uint64_t>(described->shape[k]);
            at[k] = 0;
        }
    }
    return reader;
}

std::optional<TensorData> loadPtTensorFile(const std::string& path, std::string* error) {
    const auto reader = PtTensorReader::open(path, error);
    if (!reader) return std::nullopt;
    TensorData t = reader->whole();
    std::string why;
    if (!format::allocateTensorData(t.bytes, t.header.dataLength, &why)) {
        if (error) *error = path + ": " + why;
        return std::nullopt;
    }
    if (!reader->read(0, t.bytes.size(), t.bytes.data(), error)) return std::nullopt;
    if (t.hasValues()) t.stats = format::computeTensorStats(*t.dtype, t.bytes.data(), t.count);
    return t;
}

}  // namespace probe::analysis
