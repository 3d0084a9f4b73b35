// msprobe's .pt tensors read without Python, against files /usr/bin/python3's torch.save wrote
// (make_pt_tensors.py, which also says, through torch, what each tensor's bytes are), and the
// files and pickles the reader must refuse.
// SPDX-License-Identifier: GPL-3.0-or-later
#include <cstdlib>
#include <random>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "analysis/compare_measures.h"
#include "analysis/pt_tensor.h"
#include "test_support.h"

namespace probe::analysis {
namespace {

using probe::test::TempDir;

// The files, written once for the suite.
class PtFiles : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        dir_ = new TempDir("pt");
        const std::string command =
            std::string("'" PROBE_TEST_PYTHON "' '" PROBE_MAKE_PT_TENSORS "' '") + dir_->path() +
            "' >/dev/null 2>&1";
        ASSERT_EQ(std::system(command.c_str()), 0) << command;
    }
    static void TearDownTestSuite() {
        delete dir_;
        dir_ = nullptr;
    }
    static std::string file(const std::string& name) { return *dir_ / name; }

    // The tensor as the reader gives it, against what torch said.
    static void expectAsTorchSaid(const std::string& name) {
        SCOPED_TRACE(name);
        const auto said = nlohmann::json::parse(probe::test::readFile(file(name + ".json")));
        std::string error;
        const auto tensor = loadPtTensorFile(file(name + ".pt"), &error);
        ASSERT_TRUE(tensor) << error;
        EXPECT_EQ(tensor->dtype, dtypeFromAnyName(said["dtype"].get<std::string>()));
        EXPECT_EQ(tensor->header.dims, said["shape"].get<std::vector<int64_t>>());
        const std::string hex = said["hex"];
        std::string ours;
        static const char* digits = "0123456789abcdef";
        for (uint8_t b : tensor->bytes) ours += std::string{digits[b >> 4], digits[b & 15]};
        EXPECT_EQ(ours, hex);
        EXPECT_EQ(tensor->count * format::dtypeSize(*tensor->dtype), tensor->bytes.size());
        // The same through the loader the tensor preview uses for .bin files.
        const auto viaPreview = loadTensorFile(file(name + ".pt"), &error);
        ASSERT_TRUE(viaPreview) << error;
        EXPECT_EQ(viaPreview->bytes, tensor->bytes);
        // The same a piece at a time (TensorFileReader, as a comparison reads it): pieces of
        // 7 elements in order, then one read again out of order.
        const auto reader = TensorFileReader::open(file(name + ".pt"), false, &error);
        if (tensor->count == 0) {
            EXPECT_FALSE(reader);  // no values
            return;
        }
        ASSERT_TRUE(reader) << error;
        EXPECT_EQ(reader->whole().header.dims, tensor->header.dims);
        std::vector<uint8_t> pieces;
        TensorData piece;
        for (uint64_t first = 0; first < reader->count(); first += 7) {
            ASSERT_TRUE(
                reader->read(first, std::min<uint64_t>(7, reader->count() - first), piece, &error))
                << error;
            pieces.insert(pieces.end(), piece.bytes.begin(), piece.bytes.end());
        }
        EXPECT_EQ(pieces, tensor->bytes);
        ASSERT_TRUE(reader->read(0, 1, piece, &error)) << error;
        EXPECT_TRUE(std::equal(piece.bytes.begin(), piece.bytes.end(), tensor->bytes.begin()));
        EXPECT_FALSE(reader->read(reader->count(), 1, piece, &error));
    }
    static std::string refusal(const std::string& name) {
        std::string error;
        const auto tensor = loadPtTensorFile(file(name), &error);
        EXPECT_FALSE(tensor) << name;
        EXPECT_EQ(error.rfind(file(name) + ": ", 0), 0u) << error;  // says which file
        return error;
    }

    static TempDir* dir_;
};
TempDir* PtFiles::dir_ = nullptr;

TEST_F(PtFiles, EveryDtype) {
    for (const char* name :
         {"float32", "float16", "bfloat16", "float64", "int64", "int32", "uint8", "bool"})
        expectAsTorchSaid(name);
}

TEST_F(PtFiles, ScalarsEmptyAndSpecialValues) {
    expectAsTorchSaid("scalar");
    expectAsTorchSaid("empty");
    expectAsTorchSaid("special");
    std::string error;
    const auto scalar = loadPtTensorFile(file("scalar.pt"), &error);
    ASSERT_TRUE(scalar) << error;
    EXPECT_TRUE(scalar->header.dims.empty());
    EXPECT_EQ(scalar->count, 1u);
    EXPECT_EQ(scalar->at(0), 3.25);
    EXPECT_EQ(scalar->stats.max, 3.25);  // statistics recomputed as for a .bin
    const auto special = loadPtTensorFile(file("special.pt"), &error);
    ASSERT_TRUE(special);
    EXPECT_TRUE(std::isnan(special->at(0)));
    EXPECT_EQ(special->at(2), -INFINITY);
}

TEST_F(PtFiles, ViewsAreGatheredFromTheirStorage) {
    for (const char* name :
         {"rows", "transposed", "sliced", "stepped", "expanded", "bf16_transposed"})
        expectAsTorchSaid(name);
}

TEST_F(PtFiles, AParameterIsItsData) {
    expectAsTorchSaid("parameter");
}

TEST_F(PtFiles, OtherObjectsAndFormatsAreRefused) {
    EXPECT_NE(refusal("dict.pt").find("torch.save does not write for a single tensor"),
              std::string::npos);
    EXPECT_NE(refusal("list.pt").find("torch.save does not write for a single tensor"),
              std::string::npos);
    EXPECT_NE(refusal("legacy.pt").find("_use_new_zipfile_serialization=False"), std::string::npos);
    const std::string evil = refusal("evil.pt");
    EXPECT_NE(evil.find("posix.system"), std::string::npos) << evil;
    EXPECT_NE(evil.find("refusing"), std::string::npos) << evil;
    EXPECT_NE(refusal("short.pt").find("data.pkl says"), std::string::npos);
    // Told apart by their first bytes: a cut zip was blamed on the legacy format.
    const std::string truncated = refusal("truncated.pt");
    EXPECT_NE(truncated.find("a zip archive (torch.save's format) that is damaged or cut short"),
              std::string::npos)
        << truncated;
    EXPECT_EQ(truncated.find("_use_new_zipfile_serialization"), std::string::npos) << truncated;
    const std::string text = refusal("text.pt");
    EXPECT_NE(text.find("not a tensor saved by torch.save"), std::string::npos) << text;
    EXPECT_EQ(text.find("_use_new_zipfile_serialization"), std::string::npos) << text;
    EXPECT_NE(refusal("missing.pt").find("No such file"), std::string::npos);
}

// Pickles made here, byte by byte: every bound holds without allocating what they ask for.
using namespace std::string_literals;
std::string rebuild(const std::string& storageType, const std::string& numel,
                    const std::string& offset, const std::string& size, const std::string& stride) {
    return "\x80\x02"s + "ctorch._utils\n_rebuild_tensor_v2\n" + "((" + "X\x07\0\0\0"s + "storage" +
           "ctorch\n" + storageType + "\n" + "X\x01\0\0\0"s + "0" + "X\x03\0\0\0"s + "cpu" + numel +
           "tQ" + offset + size + stride + "\x89" + "ccollections\nOrderedDict\n" + ")Rt" + "R.";
}

TEST(PtPickle, ThePickleOfOneTensor) {
    const std::string ok =
        rebuild("FloatStorage", "K\x06", "K\x01", "K\x02K\x02\x86", "K\x03K\x01\x86");
    std::string error;
    const auto t = parseTensorPickle(ok, &error);
    ASSERT_TRUE(t) << error;
    EXPECT_EQ(t->dtype, format::DType::Float);
    EXPECT_EQ(t->storageKey, "0");
    EXPECT_EQ(t->storageElements, 6u);
    EXPECT_EQ(t->offset, 1);
    EXPECT_EQ(t->shape, (std::vector<int64_t>{2, 2}));
    EXPECT_EQ(t->stride, (std::vector<int64_t>{3, 1}));
    // LONG1 and BININT sizes.
    const auto big = parseTensorPickle(rebuild("BFloat16Storage", "\x8a\x05\0\0\0\0\x01"s, "K\0"s,
                                               "J\0\0\0\x01\x85"s, "K\x01\x85"),
                                       &error);
    ASSERT_TRUE(big) << error;
    EXPECT_EQ(big->storageElements, 1ull << 32);
    EXPECT_EQ(big->shape, (std::vector<int64_t>{1 << 24}));
}

TEST(PtPickle, RefusesWhatATensorsPickleIsNot) {
    std::string error;
    auto refused = [&](const std::string& pickle) {
        error.clear();
        EXPECT_FALSE(parseTensorPickle(pickle, &error));
        EXPECT_FALSE(error.empty());
        return error;
    };
    EXPECT_NE(refused("\x80\x02"
                      "cos\nsystem\n.")
                  .find("os.system"),
              std::string::npos);
    EXPECT_NE(refused(rebuild("QUInt8Storage", "K\x06", "K\0"s, "K\x06\x85", "K\x01\x85"))
                  .find("torch.QUInt8Storage"),
              std::string::npos);
    EXPECT_NE(
        refused(rebuild("FloatStorage", "K\x06", "K\0"s, "K\x06\x85", "J\xff\xff\xff\xff\x85"s))
            .find("non-negative"),
        std::string::npos);  // a negative stride
    EXPECT_NE(refused("\x80\x01.").find("protocol 1"), std::string::npos);
    EXPECT_NE(
        refused(rebuild("FloatStorage", "K\x06", "K\0"s, "K\x06\x85", "K\x01\x85").substr(0, 60))
            .find("truncated"),
        std::string::npos);
    EXPECT_NE(refused(std::string(300, '(')).find("deeper"), std::string::npos);
    EXPECT_NE(refused("\x80\x02K\x01r\xff\xff\xff\x7f.").find("memo"), std::string::npos);
    EXPECT_NE(refused("\x80\x02h\x05.").find("never wrote"), std::string::npos);
    // Doubling a tuple through the memo: refused long before it is large.
    std::string bomb = "\x80\x02K\x01";
    for (int i = 0; i < 40; ++i) bomb += "q\x01h\x01\x86";
    bomb += ".";
    EXPECT_NE(refused(bomb).find("larger structure"), std::string::npos);
    EXPECT_NE(refused("\x80\x02X\xff\xff\xff\x7f"s).find("longer"), std::string::npos);
    EXPECT_NE(refused(std::string(70000, 'N')).find("larger than a tensor's ever is"),
              std::string::npos);
    EXPECT_NE(refused("\x80\x02]q\x00."s).find("0x5d"), std::string::npos);  // a list
}

// Damaged pickles (bytes changed, dropped, repeated at random, a fixed seed): every one is
// read or refused with a reason; none crashes or hangs (run it under the sanitizers).
TEST(PtPickle, DamagedPicklesAreReadOrRefused) {
    const std::string valid =
        rebuild("FloatStorage", "K\x06", "K\x01", "K\x02K\x02\x86", "K\x03K\x01\x86");
    std::mt19937 rng(42);
    int refused = 0;
    for (int trial = 0; trial < 20000; ++trial) {
        std::string pickle = valid;
        const int edits = 1 + static_cast<int>(rng() % 4);
        for (int e = 0; e < edits && !pickle.empty(); ++e) {
            const size_t at = rng() % pickle.size();
            switch (rng() % 3) {
                case 0:
                    pickle[at] = static_cast<char>(rng());
                    break;
                case 1:
                    pickle.erase(at, 1 + rng() % 8);
                    break;
                default:
                    pickle.insert(at, pickle.substr(at, 1 + rng() % 16));
                    break;
            }
        }
        std::string error;
        const auto parsed = parseTensorPickle(pickle, &error);
        if (!parsed) {
            ++refused;
            EXPECT_FALSE(error.empty());
        } else {
            EXPECT_EQ(parsed->shape.size(), parsed->stride.size());
        }
    }
    EXPECT_GT(refused, 10000);
}

}  // namespace
}  // namespace probe::analysis
