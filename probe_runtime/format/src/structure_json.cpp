// SPDX-License-Identifier: GPL-3.0-or-later
#include "probe/format/structure_json.h"

namespace probe::format {
namespace {

bool readStrings(const nlohmann::json& j, const char* key, std::vector<std::string>& out,
                 std::string* error) {
    auto it = j.find(key);
    if (it == j.end()) return true;
    if (!it->is_array()) {
        if (error) *error = std::string(key) + " is not an array";
        return false;
    }
    for (const auto& item : *it) {
        if (!item.is_string()) {
            if (error) *error = std::string(key) + " holds a non-string";
            return false;
        }
        out.push_back(item.get<std::string>());
    }
    return true;
}

}  // namespace

nlohmann::ordered_json StructureNode::toJson() const {
    nlohmann::ordered_json j;
    j["opName"] = opName;
    j["opType"] = opType;
    j["param"] = param;
    j["inTensors"] = inTensors;
    j["outTensors"] = outTensors;
    j["internalTensors"] = internalTensors;
    auto children = nlohmann::ordered_json::array();
    for (const auto& node : nodes) children.push_back(node.toJson());
    j["nodes"] = std::move(children);
    return j;
}

std::optional<StructureNode> StructureNode::fromJson(const nlohmann::json& j, std::string* error) {
    if (!j.is_object()) {
        if (error) *error = "node is not an object";
        return std::nullopt;
    }
    StructureNode node;
    if (auto it = j.find("opName"); it != j.end() && it->is_string())
        node.opName = it->get<std::string>();
    if (auto it = j.find("opType"); it != j.end() && it->is_string())
        node.opType = it->get<std::string>();
    if (auto it = j.find("param"); it != j.end()) node.param = nlohmann::ordered_json(*it);
    if (!readStrings(j, "inTensors", node.inTensors, error) ||
        !readStrings(j, "outTensors", node.outTensors, error) ||
        !readStrings(j, "internalTensors", node.internalTensors, error))
        return std::nullopt;
    if (auto it = j.find("nodes"); it != j.end()) {
        if (!it->is_array()) {
            if (error) *error = "nodes is not an array";
            return std::nullopt;
        }
        for (const auto& child : *it) {
            auto parsed = fromJson(child, error);
            if (!parsed) return std::nullopt;
            node.nodes.push_back(std::move(*parsed));
        }
    }
    return node;
}

nlohmann::ordered_json ModelStructure::toJson() const {
    nlohmann::ordered_json j;
    j["modelName"] = modelName;
    j["weightTensors"] = weightTensors;
    j["inTensors"] = inTensors;
    j["outTensors"] = outTensors;
    j["internalTensors"] = internalTensors;
    auto children = nlohmann::ordered_json::array();
    for (const auto& node : nodes) children.push_back(node.toJson());
    j["nodes"] = std::move(children);
    return j;
}

std::optional<ModelStructure> ModelStructure::fromJson(const nlohmann::json& j,
                                                       std::string* error) {
    if (!j.is_object()) {
        if (error) *error = "model is not an object";
        return std::nullopt;
    }
    ModelStructure model;
    if (auto it = j.find("modelName"); it != j.end() && it->is_string())
        model.modelName = it->get<std::string>();
    if (!readStrings(j, "weightTensors", model.weightTensors, error) ||
        !readStrings(j, "inTensors", model.inTensors, error) ||
        !readStrings(j, "outTensors", model.outTensors, error) ||
        !readStrings(j, "internalTensors", model.internalTensors, error))
        return std::nullopt;
    if (auto it = j.find("nodes"); it != j.end() && it->is_array()) {
        for (const auto& child : *it) {
            auto parsed = StructureNode::fromJson(child, error);
            if (!parsed) return std::nullopt;
            model.nodes.push_back(std::move(*parsed));
        }
    }
    return model;
}

std::string safeFileComponent(const std::string& name) {
    std::string out = name;
    for (auto& c : out)
        if (c == '/' || c == '\0') c = '_';
    if (out.empty() || out == "." || out == "..") out = "_" + out;
    return out;
}

}  // namespace probe::format
