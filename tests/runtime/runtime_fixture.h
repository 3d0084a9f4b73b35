// Shared by the runtime suites: a started runtime writing into a temporary directory, and
// readers that take what it wrote apart again.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <unistd.h>

#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "native_model.h"
#include "probe/format/statistic_csv.h"
#include "probe/probe.h"
#include "test_support.h"

namespace probe::test {

// The runtime is one per process: each test starts it on its own directory and stops it.
class RuntimeTest : public ::testing::Test {
protected:
    void SetUp() override {
        ::setenv("PROBE_QUIET", "1", 1);
        // The device is the process's and outlives a stop (a program names it once, for every
        // start): a device an earlier test named must not filter or name this test's dump.
        probe_set_device(-1);
    }
    void TearDown() override { probe_stop(); }

    std::string configPath() const { return dir_ / "config.json"; }
    std::string root() const { return dir_ / "atb_dump_data"; }
    std::string pidDir() const { return std::to_string(::getpid()); }

    void start(const std::string& configJson) {
        if (!configJson.empty()) writeFile(configPath(), configJson);
        ASSERT_EQ(probe_start(dir_.path().c_str(), configPath().c_str()), PROBE_OK)
            << probe_last_error();
    }

    // Rows of every statistic.csv below data/, with the file each came from.
    struct Row {
        format::StatRow row;
        std::string csv;
    };
    std::vector<Row> readRows() const {
        std::vector<Row> rows;
        const std::string data = root() + "/data";
        for (const auto& file : listFiles(data)) {
            if (file.size() < 14 || file.substr(file.size() - 13) != "statistic.csv") continue;
            const auto lines = splitLines(readFile(data + "/" + file));
            EXPECT_FALSE(lines.empty());
            if (lines.empty()) continue;
            EXPECT_EQ(lines[0], format::kStatisticCsvHeader);
            for (size_t i = 1; i < lines.size(); ++i) {
                std::string error;
                auto row = format::parseStatRow(lines[i], &error);
                EXPECT_TRUE(row) << file << ":" << i + 1 << ": " << error;
                if (row) rows.push_back({*row, data + "/" + file});
            }
        }
        return rows;
    }

    // (round, op id) of every op that has at least one row.
    std::set<std::pair<int64_t, std::string>> dumpedOps() const {
        std::set<std::pair<int64_t, std::string>> ops;
        for (const auto& r : readRows()) ops.insert({r.row.round, r.row.opId});
        return ops;
    }

    TempDir dir_{"probe-runtime"};
};

// Statistics computed the plain way, from the engine's own bytes.
struct PlainStats {
    double max = 0, min = 0, mean = 0, norm = 0;
    bool nan = false;
};

inline double elementAt(int dtype, const uint8_t* p, size_t i) {
    switch (dtype) {
        case PROBE_DTYPE_FLOAT: {
            float f;
            std::memcpy(&f, p + 4 * i, 4);
            return f;
        }
        case PROBE_DTYPE_DOUBLE: {
            double d;
            std::memcpy(&d, p + 8 * i, 8);
            return d;
        }
        case PROBE_DTYPE_INT64: {
            int64_t v;
            std::memcpy(&v, p + 8 * i, 8);
            return static_cast<double>(v);
        }
        case PROBE_DTYPE_INT32: {
            int32_t v;
            std::memcpy(&v, p + 4 * i, 4);
            return v;
        }
        case PROBE_DTYPE_BOOL:
            return p[i] ? 1.0 : 0.0;
        case PROBE_DTYPE_BF16: {
            uint16_t h;
            std::memcpy(&h, p + 2 * i, 2);
            uint32_t w = static_cast<uint32_t>(h) << 16;
            float f;
            std::memcpy(&f, &w, 4);
            return f;
        }
        case PROBE_DTYPE_FLOAT16: {
            uint16_t h;
            std::memcpy(&h, p + 2 * i, 2);
            const int s = h >> 15, e = (h >> 10) & 0x1f, m = h & 0x3ff;
            double v = e == 0x1f ? (m ? NAN : INFINITY)
                       : e == 0  ? std::ldexp(m / 1024.0, -14)
                                 : std::ldexp(1.0 + m / 1024.0, e - 15);
            return s ? -v : v;
        }
    }
    ADD_FAILURE() << "dtype " << dtype << " not handled by the test";
    return 0;
}

inline size_t elementSize(int dtype) {
    switch (dtype) {
        case PROBE_DTYPE_FLOAT:
        case PROBE_DTYPE_INT32:
            return 4;
        case PROBE_DTYPE_DOUBLE:
        case PROBE_DTYPE_INT64:
            return 8;
        case PROBE_DTYPE_BF16:
        case PROBE_DTYPE_FLOAT16:
            return 2;
        default:
            return 1;
    }
}

inline PlainStats plainStats(const CapturedTensor& t) {
    PlainStats s;
    const size_t n = t.bytes.size() / elementSize(t.dtype);
    double sum = 0, sq = 0;
    for (size_t i = 0; i < n; ++i) {
        const double v = elementAt(t.dtype, t.bytes.data(), i);
        if (std::isnan(v)) s.nan = true;
        if (i == 0 || v > s.max) s.max = v;
        if (i == 0 || v < s.min) s.min = v;
        sum += v;
        sq += v * v;
    }
    s.mean = sum / static_cast<double>(n);
    s.norm = std::sqrt(sq);
    return s;
}

inline void expectStatsMatch(const format::StatRow& row, const CapturedTensor& t) {
    const PlainStats s = plainStats(t);
    ASSERT_TRUE(row.max && row.min && row.mean && row.norm) << row.opName;
    if (s.nan) {
        EXPECT_TRUE(std::isnan(*row.max) && std::isnan(*row.min) && std::isnan(*row.mean) &&
                    std::isnan(*row.norm));
        return;
    }
    // statistic.csv carries six decimals.
    EXPECT_NEAR(*row.max, s.max, 1e-6) << row.opName;
    EXPECT_NEAR(*row.min, s.min, 1e-6) << row.opName;
    EXPECT_NEAR(*row.mean, s.mean, 1e-6) << row.opName;
    EXPECT_NEAR(*row.norm, s.norm, 1e-6 * std::max(1.0, s.norm)) << row.opName;
}

inline std::string dtypeNameOf(int dtype) {
    switch (dtype) {
        case PROBE_DTYPE_FLOAT:
            return "float";
        case PROBE_DTYPE_FLOAT16:
            return "float16";
        case PROBE_DTYPE_BF16:
            return "bf16";
        case PROBE_DTYPE_INT64:
            return "int64";
        case PROBE_DTYPE_INT32:
            return "int32";
        case PROBE_DTYPE_BOOL:
            return "bool";
        case PROBE_DTYPE_DOUBLE:
            return "double";
    }
    return "?";
}

inline std::string shapeOf(const std::vector<int64_t>& dims) {
    std::string s;
    for (size_t i = 0; i < dims.size(); ++i) s += (i ? "x" : "") + std::to_string(dims[i]);
    return s;
}

inline std::string fileNameOf(const CapturedTensor& t) {
    return std::string(t.output ? "outtensor" : "intensor") + std::to_string(t.index) +
           (t.argName.empty() ? "" : "_" + t.argName) + ".bin";
}

}  // namespace probe::test
