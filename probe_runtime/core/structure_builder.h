// Turns what was observed during one execution of a layer-level op (its op tree and the
// buffers its tensors live in) into the info/layer and info/model structures, naming every
// tensor so that data flow between ops can be drawn.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "probe/format/structure_json.h"

namespace probe::runtime {

struct ObservedTensor {
    int index = 0;
    uint64_t buffer = 0;  // 0 = unknown: never matched with another tensor
};

struct ObservedOp {
    std::string name, type, id;
    std::string paramJson;  // "" when none
    std::vector<ObservedTensor> inputs, outputs;
    std::vector<std::unique_ptr<ObservedOp>> children;

    void addTensor(bool isOutput, int index, uint64_t buffer);
};

// A tensor the layer's ops read that no op of the layer wrote, by its name in the layer file and
// its buffer.
struct SourceTensor {
    std::string name;
    uint64_t buffer = 0;
};

// The layer file: tensors of the layer are "<opName>_input_i" / "_output_i"; children name
// theirs after the parent's tensors they share a buffer with, or as new internal tensors.
// `sources` (when given) receives the internal tensors that no op wrote.
format::StructureNode buildLayerStructure(const ObservedOp& layer,
                                          std::vector<SourceTensor>* sources = nullptr);

// Accumulates layer-level ops into the model description as they are first seen.
class ModelStructureBuilder {
public:
    explicit ModelStructureBuilder(std::string modelName);
    const std::string& modelName() const { return model_.modelName; }
    // `weights`: the layer's tensors no op wrote that hold model weights (weightTensors).
    void addLayer(const ObservedOp& observed, format::StructureNode layer,
                  const std::vector<SourceTensor>& weights);
    const format::ModelStructure& model() const { return model_; }

private:
    format::ModelStructure model_;
    std::unordered_map<uint64_t, std::string> current_;  // buffer -> model tensor name
    size_t internalCount_ = 0;
    std::unordered_map<uint64_t, std::string> weightNames_;  // buffer -> "<model>_weight_<i>"
};

}  // namespace probe::runtime
