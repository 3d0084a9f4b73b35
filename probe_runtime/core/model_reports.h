// info/model and info/layer: the structure observed during each layer op's first execution,
// or what the engine reported itself (probe_report_model / probe_report_layer), and the
// buffers that hold the model's weights (probe_report_weight).
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "op_tracker.h"

namespace probe::runtime {

class Runtime;
class ModelStructureBuilder;
struct ObservedOp;

class ModelReports {
public:
    explicit ModelReports(Runtime& runtime);
    ~ModelReports();

    // A new session: no structure observed yet; the model is named after the process unless
    // the engine named it.
    void reset(const std::string& processName);
    int reportModel(const char* modelName, const char* modelJson);
    int reportWeight(const char* name, uint64_t bufferId);
    int reportLayer(const char* layerName, const char* layerJson);
    // The first execution of a layer op ended: writes its layer file and adds it to the model.
    void layerObserved(LayerRegistry::Slot& slot, const ObservedOp& observed);

private:
    // The model's structure so far as its file's content, "" when there is none (on the writer
    // thread).
    std::string renderModel(const std::string& modelName);

    Runtime& runtime_;
    std::mutex mutex_;
    std::string modelName_;
    std::unordered_map<std::string, std::unique_ptr<ModelStructureBuilder>> models_;
    std::unordered_set<std::string> explicitModels_;
    std::unordered_set<uint64_t> weightBuffers_;
};

}  // namespace probe::runtime
