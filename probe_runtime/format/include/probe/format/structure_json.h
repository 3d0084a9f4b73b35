// info/layer and info/model JSON: the structure of layer-level ops and of the model
// (FORMATS.md section 1).
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace probe::format {

struct StructureNode {
    std::string opName;                 // "Prefill_layer_2"
    std::string opType;                 // "Prefill_layer"
    nlohmann::ordered_json param = "";  // the op's parameters, or "" when it has none
    std::vector<std::string> inTensors, outTensors, internalTensors;
    std::vector<StructureNode> nodes;

    // Key order: opName, opType, param, inTensors, outTensors, internalTensors, nodes.
    nlohmann::ordered_json toJson() const;
    static std::optional<StructureNode> fromJson(const nlohmann::json& j, std::string* error);
};

struct ModelStructure {
    std::string modelName;
    std::vector<std::string> weightTensors, inTensors, outTensors, internalTensors;
    std::vector<StructureNode> nodes;

    nlohmann::ordered_json toJson() const;
    static std::optional<ModelStructure> fromJson(const nlohmann::json& j, std::string* error);
};

// Replaces characters that cannot appear in a file name ('/', NUL) so an op or model name can
// name a file or directory.
std::string safeFileComponent(const std::string& name);

}  // namespace probe::format
