// SPDX-License-Identifier: GPL-3.0-or-later
#include "model_reports.h"

#include <algorithm>
#include <vector>

#include <nlohmann/json.hpp>

#include "dump_writer.h"
#include "op_names.h"
#include "probe/format/json_input.h"
#include "probe/format/structure_json.h"
#include "runtime.h"
#include "structure_builder.h"

namespace probe::runtime {

ModelReports::ModelReports(Runtime& runtime) : runtime_(runtime) {}

ModelReports::~ModelReports() = default;

void ModelReports::reset(const std::string& processName) {
    std::lock_guard<std::mutex> lock(mutex_);
    models_.clear();
    explicitModels_.clear();
    if (modelName_.empty()) modelName_ = processName;
}

void ModelReports::layerObserved(LayerRegistry::Slot& slot, const ObservedOp& observed) {
    bool explicitLayer = false;
    if (!runtime_.ops().layers().claimStructure(slot, &explicitLayer))
        return;  // another thread got there first
    std::vector<SourceTensor> sources;
    format::StructureNode layer = buildLayerStructure(observed, &sources);
    if (!explicitLayer) {
        WriteJob job;
        job.kind = WriteJob::Kind::File;
        job.path = runtime_.infoDirectory("layer") + "/" +
                   format::safeFileComponent(slot.name + "_" + observed.id) + ".json";
        job.head = format::dumpJson(layer.toJson()) + "\n";
        runtime_.writer().enqueue(std::move(job));
    }
    std::string modelName;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (explicitModels_.count(modelName_)) return;
        modelName = modelName_;
        auto& builder = models_[modelName];
        if (!builder) builder = std::make_unique<ModelStructureBuilder>(modelName);
        // Of what the layer's ops read and no op wrote, the reported weights are the model's.
        sources.erase(std::remove_if(sources.begin(), sources.end(),
                                     [&](const SourceTensor& s) {
                                         return weightBuffers_.count(s.buffer) == 0;
                                     }),
                      sources.end());
        builder->addLayer(observed, std::move(layer), sources);
    }
    // Rendered by the writer (once per batch, however many layers were added meanwhile: each
    // rendering holds the whole model so far). Queued without our lock held: the rendering
    // takes it, and enqueue may wait for the writer.
    WriteJob job;
    job.kind = WriteJob::Kind::LatestFile;
    job.path =
        runtime_.infoDirectory("model") + "/" + format::safeFileComponent(modelName) + ".json";
    job.render = [this, modelName] { return renderModel(modelName); };
    runtime_.writer().enqueue(std::move(job));
}

std::string ModelReports::renderModel(const std::string& modelName) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = models_.find(modelName);
    if (it == models_.end() || !it->second || explicitModels_.count(modelName)) return "";
    return format::dumpJson(it->second->model().toJson()) + "\n";
}

int ModelReports::reportModel(const char* modelName, const char* modelJson) {
    if (!modelName || !*modelName) {
        Runtime::setLastError("probe_report_model: the model name is empty");
        return -1;
    }
    const std::string name = sanitizeName(modelName);
    std::string content;
    if (modelJson && *modelJson) {
        auto parsed = nlohmann::ordered_json::parse(modelJson, nullptr, false);
        if (parsed.is_discarded() || !parsed.is_object()) {
            Runtime::setLastError("probe_report_model: the model description is not a JSON object");
            return -1;
        }
        content = format::dumpJson(parsed) + "\n";
    }
    {
        std::lock_guard<std::mutex> lock(mutex_);
        modelName_ = name;
        if (!content.empty()) explicitModels_.insert(name);
    }
    if (!content.empty()) {
        if (!runtime_.isStarted()) {
            Runtime::setLastError("probe_report_model: the runtime is not started");
            return -2;
        }
        WriteJob job;
        job.kind = WriteJob::Kind::LatestFile;
        job.path =
            runtime_.infoDirectory("model") + "/" + format::safeFileComponent(name) + ".json";
        job.head = std::move(content);
        runtime_.writer().enqueue(std::move(job));
    }
    return 0;
}

int ModelReports::reportWeight(const char* name, uint64_t bufferId) {
    if (bufferId == 0) {
        Runtime::setLastError(std::string("probe_report_weight: no buffer id for ") +
                              (name ? name : "the weight"));
        return -1;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    weightBuffers_.insert(bufferId);
    return 0;
}

int ModelReports::reportLayer(const char* layerName, const char* layerJson) {
    if (!runtime_.isStarted()) {
        Runtime::setLastError("probe_report_layer: the runtime is not started");
        return -2;
    }
    if (!layerName || !*layerName || !layerJson) {
        Runtime::setLastError("probe_report_layer: layer name and JSON are required");
        return -1;
    }
    auto parsed = nlohmann::ordered_json::parse(layerJson, nullptr, false);
    if (parsed.is_discarded() || !parsed.is_object()) {
        Runtime::setLastError("probe_report_layer: the layer description is not a JSON object");
        return -1;
    }
    const std::string name = sanitizeName(layerName);
    const int id = runtime_.ops().layers().markExplicit(layerName, name);
    WriteJob job;
    job.kind = WriteJob::Kind::LatestFile;
    job.path = runtime_.infoDirectory("layer") + "/" +
               format::safeFileComponent(name + "_" + std::to_string(id)) + ".json";
    job.head = format::dumpJson(parsed) + "\n";
    runtime_.writer().enqueue(std::move(job));
    return 0;
}

}  // namespace probe::runtime
