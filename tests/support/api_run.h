// A run written through the probe's C API in the test's own process, op by op (the tests of
// the comparison, and of the app's comparison view).
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "probe/probe.h"
#include "test_support.h"

namespace probe::test {

// One run written through the C API, every tensor's data kept.
class ApiRun {
public:
    ApiRun(const TempDir& dir, const std::string& name, const char* task = "all")
        : out_(dir / name) {
        probe::test::writeFile(
            dir / (name + ".json"),
            std::string(R"({"task": ")") + task +
                R"(", "dump_enable": true, "exec_range": "all", "save_child": true, "filter_level": 1})");
        ::setenv("PROBE_QUIET", "1", 1);
        EXPECT_EQ(probe_start(out_.c_str(), (dir / (name + ".json")).c_str()), PROBE_OK);
    }
    void begin(const char* name, const char* type = nullptr) {
        probe_op_begin(name, type ? type : name, nullptr);
    }
    void end() { probe_op_end(); }
    void input(int i, const std::vector<float>& v, std::vector<int64_t> dims = {},
               const char* arg = nullptr) {
        tensor(PROBE_INPUT, i, v, dims, arg);
    }
    void output(int i, const std::vector<float>& v, std::vector<int64_t> dims = {}) {
        tensor(PROBE_OUTPUT, i, v, dims);
    }
    void inputInt64(int i, const std::vector<int64_t>& v) {
        const int64_t dims[1] = {static_cast<int64_t>(v.size())};
        probe_op_tensor(PROBE_INPUT, i, nullptr, PROBE_DTYPE_INT64, PROBE_FORMAT_ND, dims, 1,
                        v.data(), v.size() * sizeof(int64_t));
    }
    // An op with inputs and outputs and nothing inside.
    void op(const char* name, std::vector<std::vector<float>> inputs,
            std::vector<std::vector<float>> outputs) {
        begin(name);
        for (size_t i = 0; i < inputs.size(); ++i) input(static_cast<int>(i), inputs[i]);
        for (size_t i = 0; i < outputs.size(); ++i) output(static_cast<int>(i), outputs[i]);
        end();
    }
    std::string finish() {
        EXPECT_EQ(probe_stop(), PROBE_OK);
        return out_ + "/atb_dump_data";
    }

private:
    void tensor(int io, int i, const std::vector<float>& v, std::vector<int64_t> dims,
                const char* arg = nullptr) {
        if (dims.empty()) dims = {static_cast<int64_t>(v.size())};
        probe_op_tensor(io, i, arg, PROBE_DTYPE_FLOAT, PROBE_FORMAT_ND, dims.data(),
                        static_cast<int>(dims.size()), v.data(), v.size() * sizeof(float));
    }
    std::string out_;
};

}  // namespace probe::test
