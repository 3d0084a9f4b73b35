// SPDX-License-Identifier: GPL-3.0-or-later
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include <gtest/gtest.h>

#include "probe/format/dtype.h"
#include "probe/format/file_util.h"
#include "probe/format/tensor_bin.h"
#include "test_support.h"

using namespace probe::format;

TEST(TensorBin, HeaderIsExactlyTheDocumentedText) {
    BinHeader h;
    h.formatCode = 2;
    h.dtypeCode = 1;
    h.dims = {36, 128};
    h.dataLength = 36 * 128 * 2;
    EXPECT_EQ(makeBinHeader(h),
              "$Version=1.0\n$Object.Count=1\n$Object.Length=9216\nformat=2\ndtype=1\ndims=36,128\n"
              "$Object.data=0,9216\n$End=1\n");
    h.alias = "2_1_outtensor0.bin";
    EXPECT_EQ(makeBinHeader(h),
              "$Version=1.0\n$Object.Count=0\n$Object.Length=0\nformat=2\ndtype=1\ndims=36,128\n"
              "data=2_1_outtensor0.bin\n$End=1\n");
}

TEST(TensorBin, RoundTripThroughAFile) {
    probe::test::TempDir dir;
    std::vector<float> values = {1.5f, -2.0f, 3.25f, 0.0f, 7.0f, -8.5f};
    BinHeader h;
    h.dtypeCode = 0;
    h.dims = {2, 3};
    h.dataLength = values.size() * 4;
    const std::string path = dir / "t.bin";
    ASSERT_EQ(writeFileAtomically(path, makeBinHeader(h), values.data(), h.dataLength), 0);
    std::string error;
    auto file = readBinFile(path, &error);
    ASSERT_TRUE(file) << error;
    EXPECT_EQ(file->header.dims, h.dims);
    EXPECT_EQ(file->header.dtypeCode, 0);
    ASSERT_EQ(file->data.size(), 24u);
    EXPECT_EQ(std::memcmp(file->data.data(), values.data(), 24), 0);
    auto header = readBinHeader(path, &error);
    ASSERT_TRUE(header);
    EXPECT_EQ(header->dataLength, 24u);
}

// Read in pieces (BinReader): any range of the data, as the file holds it; past its end refused;
// a file cut short is refused as readBinFile refuses it, before any data is read.
TEST(TensorBin, ReaderReadsAnyPieceOfTheData) {
    probe::test::TempDir dir;
    std::vector<double> values(1000);
    for (size_t i = 0; i < values.size(); ++i) values[i] = 0.5 * static_cast<double>(i) - 7;
    BinHeader h;
    h.dtypeCode = static_cast<int32_t>(DType::Double);
    h.dims = {10, 100};
    h.dataLength = values.size() * sizeof(double);
    const std::string path = dir / "t.bin";
    ASSERT_EQ(writeFileAtomically(path, makeBinHeader(h), values.data(), h.dataLength), 0);
    std::string error;
    {
        const BinReader reader(path, &error);
        ASSERT_TRUE(reader.header()) << error;
        EXPECT_EQ(reader.header()->dims, h.dims);
        EXPECT_EQ(reader.header()->dataLength, h.dataLength);
        std::vector<double> read(values.size());
        auto* into = reinterpret_cast<uint8_t*>(read.data());
        // In pieces of 125 doubles, the last piece first: every byte where it belongs.
        for (size_t piece = 8; piece-- > 0;)
            ASSERT_TRUE(reader.read(piece * 1000, into + piece * 1000, 1000, &error)) << error;
        EXPECT_EQ(read, values);
        double one = 0;
        ASSERT_TRUE(reader.read(999 * 8, reinterpret_cast<uint8_t*>(&one), 8, &error));
        EXPECT_EQ(one, values[999]);
        EXPECT_FALSE(reader.read(999 * 8, reinterpret_cast<uint8_t*>(&one), 9, &error));
        EXPECT_EQ(error, "read past the end of the data");
    }
    ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(makeBinHeader(h).size() + 100)), 0);
    error.clear();
    const BinReader cut(path, &error);
    EXPECT_FALSE(cut.header());
    EXPECT_NE(error.find("file is truncated"), std::string::npos) << error;
}

TEST(TensorBin, ScalarAndHeaderOnly) {
    BinHeader h;
    h.dims = {};
    h.dataLength = 4;
    std::string error;
    auto parsed = parseBinHeader(makeBinHeader(h) + "abcd", &error);
    ASSERT_TRUE(parsed) << error;
    EXPECT_TRUE(parsed->dims.empty());
    h.alias = "intensor0.bin";
    parsed = parseBinHeader(makeBinHeader(h), &error);
    ASSERT_TRUE(parsed) << error;
    EXPECT_TRUE(parsed->headerOnly());
    EXPECT_EQ(parsed->alias, "intensor0.bin");
    EXPECT_EQ(parsed->dataLength, 0u);
}

TEST(TensorBin, MalformedFilesAreRejectedWithAReason) {
    probe::test::TempDir dir;
    std::string error;
    EXPECT_FALSE(parseBinHeader("$Version=1.0\n$Object.Count=1\n", &error));
    EXPECT_NE(error.find("$End"), std::string::npos);
    EXPECT_FALSE(parseBinHeader("garbage without equals\n$End=1\n", &error));
    BinHeader h;
    h.dims = {4};
    h.dataLength = 16;
    probe::test::writeFile(dir / "short.bin", makeBinHeader(h) + "12345678");
    EXPECT_FALSE(readBinFile(dir / "short.bin", &error));
    EXPECT_NE(error.find("truncated"), std::string::npos);
    h.dataLength = 12;  // does not match 4 floats
    probe::test::writeFile(dir / "mismatch.bin", makeBinHeader(h) + std::string(12, 'x'));
    EXPECT_FALSE(readBinFile(dir / "mismatch.bin", &error));
    EXPECT_NE(error.find("does not match"), std::string::npos);
    EXPECT_FALSE(readBinFile(dir / "absent.bin", &error));
    // Cut inside its header (a copy cut short): said so, not "no line end within 4096 bytes".
    h.dataLength = 16;
    probe::test::writeFile(dir / "cut.bin", makeBinHeader(h).substr(0, 40));
    EXPECT_FALSE(readBinFile(dir / "cut.bin", &error));
    EXPECT_NE(error.find("the file ends inside the header, after 40 bytes (cut short)"),
              std::string::npos)
        << error;
    // A line longer than a header may be is the other thing.
    probe::test::writeFile(dir / "long.bin", "$Version=" + std::string(5000, '1'));
    EXPECT_FALSE(readBinFile(dir / "long.bin", &error));
    EXPECT_NE(error.find("no line end within 4096 bytes"), std::string::npos) << error;
}

// --- crafted files: errors naming the file's line, never an exception or a huge allocation -----

namespace {

std::string header(const std::string& length, const std::string& dtype, const std::string& dims,
                   const std::string& data) {
    return "$Version=1.0\n$Object.Count=1\n$Object.Length=" + length +
           "\nformat=2\ndtype=" + dtype + "\ndims=" + dims + "\n$Object.data=" + data +
           "\n$End=1\n";
}

std::string readError(const std::string& path) {
    std::string error;
    std::optional<BinFile> file;
    EXPECT_NO_THROW(file = readBinFile(path, &error));
    EXPECT_FALSE(file);
    return error;
}

}  // namespace

TEST(TensorBinHostile, LengthNear2To64IsAnErrorNotAnAllocation) {
    // The header's length plus its own size wrapped around, and 2^64 - 1 bytes were resized for.
    probe::test::TempDir dir;
    const std::string max = "18446744073709551615";
    probe::test::writeFile(dir / "len.bin", header(max, "0", "4", "0," + max) + "0123456789abcdef");
    EXPECT_EQ(readError(dir / "len.bin"),
              "header line 3: data length 18446744073709551615 does not match dims 4 of float (16 "
              "bytes)");
    probe::test::writeFile(dir / "offset.bin",
                           header("16", "0", "4", max + ",16") + "0123456789abcdef");
    EXPECT_EQ(readError(dir / "offset.bin"),
              "header line 7: $Object.data=18446744073709551615,16: a data offset other than 0 is "
              "not supported");
    // Dims whose element count does not fit, and a length that matches them modulo 2^64.
    probe::test::writeFile(dir / "dims.bin", header("0", "0", "4294967296,4294967296,4", "0,0"));
    EXPECT_EQ(
        readError(dir / "dims.bin"),
        "header line 6: dims 4294967296x4294967296x4 hold more elements than can be addressed");
    // Consistent, but more than a tensor file may hold.
    probe::test::writeFile(dir / "huge.bin",
                           header("8589934592", "2", "8589934592", "0,8589934592"));
    EXPECT_EQ(readError(dir / "huge.bin"),
              "header line 3: 8589934592 bytes of data, more than the limit of 4294967296 for a "
              "tensor file");
}

TEST(TensorBinHostile, UnknownDtypeIsAnError) {
    probe::test::TempDir dir;
    probe::test::writeFile(dir / "dtype.bin",
                           header("16", "777", "4", "0,16") + "0123456789abcdef");
    EXPECT_EQ(readError(dir / "dtype.bin"),
              "header line 5: dtype=777 is not a dtype code this version knows");
    std::string error;
    EXPECT_FALSE(readBinHeader(dir / "dtype.bin", &error));
    EXPECT_FALSE(parseBinFile(header("16", "-1", "4", "0,16") + "0123456789abcdef", &error));
    EXPECT_EQ(error, "header line 5: dtype=-1 is not a dtype code this version knows");
}

TEST(TensorBinHostile, SpecialFilesAreRefusedWithoutBlocking) {
    probe::test::TempDir dir;
    const std::string fifo = dir / "outtensor0.bin";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    EXPECT_EQ(readError(fifo), "is a named pipe (FIFO), not a regular file");
    EXPECT_EQ(readError("/dev/zero"), "is a character device, not a regular file");
    EXPECT_EQ(readError(dir.path()), "is a directory, not a file");
    // 6 GiB of nothing behind a header promising exactly that much.
    const std::string sparse = dir / "sparse.bin";
    probe::test::writeFile(sparse, header("6442450944", "2", "6442450944", "0,6442450944"));
    ASSERT_EQ(::truncate(sparse.c_str(), 6ll << 30), 0);
    EXPECT_NE(readError(sparse).find("is 6442450944 bytes, more than the limit"),
              std::string::npos);
}
