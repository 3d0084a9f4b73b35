// Writes small op-level dumps row by row with the format library, the way the runtime does
// (whole lines appended to statistic.csv, other files replaced atomically), so tests can grow a
// dump while a reader follows it, or break it on purpose.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "probe/format/statistic_csv.h"
#include "probe/format/structure_json.h"
#include "synthetic_dump.h"

namespace probe::test {

class DumpBuilder {
public:
    // Writes below <output>/atb_dump_data for process `devicePid`.
    explicit DumpBuilder(std::string output, std::string devicePid = "0_777");

    const std::string& root() const { return root_; }
    std::string csvPath(int round) const;
    std::string roundDir(int round) const;

    // Appends one row; with `values` also writes the tensor file (float32, dims) the row names.
    // Returns the row as written.
    format::StatRow addRow(int round, const std::string& id, const std::string& namePath,
                           const std::string& type, bool isOutput, std::vector<float> values = {},
                           std::vector<int64_t> dims = {},
                           std::optional<double> forceMax = std::nullopt);
    // Appends an output row of op `id` holding these statistics alone, float64, shape 2, no
    // tensor file: values beyond a float's (1e300).
    void addStatisticsRow(int round, const std::string& id, const std::string& namePath,
                          const std::string& type, double max, double min, double mean,
                          double norm);
    // A round of layer "L" (id 0) whose children ran in this order: "L/<name>" of type
    // "aten::<name>" at ids 0_0, 0_1, ... (an op shifted in a round lands on another's id).
    void addLayerRound(int round, const std::vector<std::string>& children);
    // Appends raw text to a round's statistic.csv (creating it with its header when asked).
    void appendRaw(int round, const std::string& text, bool header = true);
    // A header-only .bin naming `alias` as the file with the data, at `path` relative to the round.
    std::string writeAliasBin(int round, const std::string& relativePath, const std::string& alias,
                              std::vector<int64_t> dims);
    void writeModel(const format::ModelStructure& model, const std::string& name = "Model");
    void writeLayer(const format::StructureNode& layer, const std::string& fileName);
    void setStatus(const std::string& state);  // running | complete
    // Rows added from now on print N/A statistics, as a dump of task tensor does.
    void setStatisticsPrinted(bool printed) { statisticsPrinted_ = printed; }

private:
    // A row of this process's, its tensor 0, format nd: the rest for the caller to fill.
    format::StatRow rowOf(int round, const std::string& id, const std::string& namePath,
                          const std::string& type, bool isOutput) const;
    std::string output_, devicePid_, root_;
    bool statisticsPrinted_ = true;
};

// A dump.json as PrecisionDebugger writes it (FORMATS.md section 2): three entries (an API call
// inside a module, the module with its parameters, its parameters' gradients), with NaN and
// Infinity among the statistics.
extern const char* const kMsprobeDumpJson;
// A dump.json of API calls outside any module, in this order, each with one output whose Max
// and Norm are the given value (NaN written as Python writes it).
std::string msprobeCalls(const std::vector<std::pair<std::string, double>>& calls);
// Writes <dumpPath>/step<step>/rank0/{dump.json (replaced atomically), construct.json, stack.json}.
void writeMsprobeStep(const std::string& dumpPath, int step, const std::string& dumpJson);

// A structure node "<name>_<id>" with children.
format::StructureNode node(const std::string& name, const std::string& id, const std::string& type,
                           std::vector<format::StructureNode> children = {});

// The small synthetic dump the application's tests share: `ops` ops in `layers` layers, `rows`
// rows, a NaN planted in layer 1 from round 2, and tensor files when `tensors`.
synthetic::SyntheticDumpResult writeSmallSyntheticDump(const std::string& dir, uint64_t ops = 60,
                                                       uint64_t rows = 600, int layers = 3,
                                                       bool tensors = true);

}  // namespace probe::test
