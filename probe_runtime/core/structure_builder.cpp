// SPDX-License-Identifier: GPL-3.0-or-later
#include "structure_builder.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "probe/format/json_input.h"

namespace probe::runtime {
namespace {

void sortByIndex(std::vector<ObservedTensor>& tensors) {
    std::stable_sort(tensors.begin(), tensors.end(),
                     [](const auto& a, const auto& b) { return a.index < b.index; });
}

nlohmann::ordered_json paramOf(const ObservedOp& op) {
    if (op.paramJson.empty()) return "";
    // The engine's text, through the guarded parser; kept as a (valid UTF-8) string otherwise.
    auto parsed =
        format::parseOrderedJson(op.paramJson, "op parameters", format::kStructureJsonLimits);
    return parsed.ok() ? std::move(*parsed.value)
                       : nlohmann::ordered_json(format::toValidUtf8(op.paramJson));
}

format::StructureNode buildNode(const ObservedOp& op, std::vector<std::string> inNames,
                                std::vector<std::string> outNames,
                                std::vector<SourceTensor>* sources) {
    format::StructureNode node;
    node.opName = op.name + "_" + op.id;
    node.opType = op.type;
    node.param = paramOf(op);
    node.inTensors = std::move(inNames);
    node.outTensors = std::move(outNames);

    auto inputs = op.inputs, outputs = op.outputs;
    sortByIndex(inputs);
    sortByIndex(outputs);
    // The value a buffer currently holds, as the children see it.
    std::unordered_map<uint64_t, std::string> current;
    for (size_t i = 0; i < inputs.size() && i < node.inTensors.size(); ++i)
        if (inputs[i].buffer) current[inputs[i].buffer] = node.inTensors[i];
    std::unordered_map<uint64_t, std::string> parentOutputs;
    for (size_t i = 0; i < outputs.size() && i < node.outTensors.size(); ++i)
        if (outputs[i].buffer) parentOutputs.emplace(outputs[i].buffer, node.outTensors[i]);

    auto newInternal = [&] {
        std::string name = node.opName + "_internal_" + std::to_string(node.internalTensors.size());
        node.internalTensors.push_back(name);
        return name;
    };
    for (const auto& child : op.children) {
        auto childInputs = child->inputs, childOutputs = child->outputs;
        sortByIndex(childInputs);
        sortByIndex(childOutputs);
        std::vector<std::string> childIn, childOut;
        for (const auto& t : childInputs) {
            auto it = t.buffer ? current.find(t.buffer) : current.end();
            if (it != current.end()) {
                childIn.push_back(it->second);
            } else {
                // Read by a child, written by no op seen: a weight, a constant, or a buffer the
                // op wrote without reporting it.
                childIn.push_back(newInternal());
                if (t.buffer) current[t.buffer] = childIn.back();
                if (sources && t.buffer) sources->push_back({childIn.back(), t.buffer});
            }
        }
        for (const auto& t : childOutputs) {
            auto it = t.buffer ? parentOutputs.find(t.buffer) : parentOutputs.end();
            childOut.push_back(it != parentOutputs.end() ? it->second : newInternal());
            if (t.buffer) current[t.buffer] = childOut.back();
        }
        node.nodes.push_back(buildNode(*child, std::move(childIn), std::move(childOut), sources));
    }
    return node;
}

// Renames tensors down the subtree; an internal tensor that is renamed has become a model-level
// tensor (a weight) and leaves the internal list of the node that held it.
void renameTensors(format::StructureNode& node,
                   const std::unordered_map<std::string, std::string>& names) {
    for (auto* list : {&node.inTensors, &node.outTensors})
        for (auto& name : *list)
            if (auto it = names.find(name); it != names.end()) name = it->second;
    auto& internal = node.internalTensors;
    internal.erase(std::remove_if(internal.begin(), internal.end(),
                                  [&](const std::string& n) { return names.count(n) > 0; }),
                   internal.end());
    for (auto& child : node.nodes) renameTensors(child, names);
}

}  // namespace

void ObservedOp::addTensor(bool isOutput, int index, uint64_t buffer) {
    auto& list = isOutput ? outputs : inputs;
    for (auto& t : list)
        if (t.index == index) {
            t.buffer = buffer;
            return;
        }
    list.push_back({index, buffer});
}

format::StructureNode buildLayerStructure(const ObservedOp& layer,
                                          std::vector<SourceTensor>* sources) {
    const std::string opName = layer.name + "_" + layer.id;
    std::vector<std::string> in, out;
    for (size_t i = 0; i < layer.inputs.size(); ++i)
        in.push_back(opName + "_input_" + std::to_string(i));
    for (size_t i = 0; i < layer.outputs.size(); ++i)
        out.push_back(opName + "_output_" + std::to_string(i));
    return buildNode(layer, std::move(in), std::move(out), sources);
}

ModelStructureBuilder::ModelStructureBuilder(std::string modelName) {
    model_.modelName = std::move(modelName);
}

void ModelStructureBuilder::addLayer(const ObservedOp& observed, format::StructureNode layer,
                                     const std::vector<SourceTensor>& weights) {
    auto inputs = observed.inputs, outputs = observed.outputs;
    sortByIndex(inputs);
    sortByIndex(outputs);
    std::vector<std::string> in, out;
    for (const auto& t : inputs) {
        auto it = t.buffer ? current_.find(t.buffer) : current_.end();
        if (it != current_.end()) {
            in.push_back(it->second);
        } else {
            in.push_back(model_.modelName + "_input_" + std::to_string(model_.inTensors.size()));
            model_.inTensors.push_back(in.back());
            if (t.buffer) current_[t.buffer] = in.back();
        }
    }
    for (const auto& t : outputs) {
        out.push_back(model_.modelName + "_internal_" + std::to_string(internalCount_++));
        if (t.buffer) current_[t.buffer] = out.back();
    }
    // The model's outputs are, as far as anyone can tell while it runs, those of the latest layer;
    // the previous layer's outputs are internal tensors from now on.
    model_.internalTensors.insert(model_.internalTensors.end(), model_.outTensors.begin(),
                                  model_.outTensors.end());
    model_.outTensors = out;
    // In the model file the layer's own tensors take their model-level names, down the subtree;
    // so do its weights, one name per buffer (a weight read by two layers, as tied embeddings
    // are, is one tensor).
    std::unordered_map<std::string, std::string> rename;
    for (const SourceTensor& weight : weights) {
        std::string& name = weightNames_[weight.buffer];
        if (name.empty()) {
            name = model_.modelName + "_weight_" + std::to_string(model_.weightTensors.size());
            model_.weightTensors.push_back(name);
        }
        rename[weight.name] = name;
    }
    for (size_t i = 0; i < layer.inTensors.size() && i < in.size(); ++i)
        rename[layer.inTensors[i]] = in[i];
    for (size_t i = 0; i < layer.outTensors.size() && i < out.size(); ++i)
        rename[layer.outTensors[i]] = out[i];
    renameTensors(layer, rename);
    model_.nodes.push_back(std::move(layer));
}

}  // namespace probe::runtime
