// info/layer and info/model JSON: the structure of layer-level ops and of the model
// (FORMATS.md section 1).
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "probe/format/json_input.h"

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

// A structure file's text read straight into the structs, as parseJson (kStructureJsonLimits) and
// then fromJson would read it, with the same result and messages, but without a JSON tree: a big
// model's files are tens of MB, and building and walking their tree costs several times the parse.
template <typename Structure>
struct StructureRead {
    std::optional<Structure> value;      // set when the text is a structure file
    std::optional<JsonError> jsonError;  // the text is not JSON within the limits
    std::string error;                   // JSON, but not a structure file: why (fromJson's words)
};
// What a reader keeps of a structure file. Whatever it leaves out is checked all the same: the
// same errors for the same text.
struct StructureReadOptions {
    // The tensor name lists (inTensors, outTensors, internalTensors, weightTensors): a reader
    // that does not show them spares an allocation per name.
    bool tensorNames = true;
    // The child nodes: without them a file is only checked (a reader that has its nodes from
    // another file already).
    bool children = true;
};
StructureRead<StructureNode> readLayerStructure(std::string_view text, const std::string& source,
                                                const StructureReadOptions& options = {});
StructureRead<ModelStructure> readModelStructure(std::string_view text, const std::string& source,
                                                 const StructureReadOptions& options = {});

// A model structure file's text cut where its top-level nodes lie, so that they can be read side
// by side. Only found, not checked: reading the parts checks them.
struct ModelTextParts {
    std::string shell;                    // the text with the root's "nodes" array emptied
    std::vector<std::string_view> nodes;  // the text of each element of that array, in order
};
// The parts of `text`, or nullopt when it cannot be cut so (no "nodes" array of objects at the
// root, a key written with escapes, text that is not JSON): then it is read whole.
std::optional<ModelTextParts> cutModelText(std::string_view text);

// Runs read(i) once for every i < count, on any threads, and returns when all have returned.
using ForEachIndex = std::function<void(size_t count, const std::function<void(size_t)>& read)>;

// readModelStructure(text, source, options), the same result and messages, its parts (`parts`,
// cut from `text`) read by `forEach`: the shell, and the top-level nodes in groups. A part that
// does not read (the text is not a model structure file) has the whole text read again to
// word the problem as readModelStructure does.
StructureRead<ModelStructure> readModelStructure(std::string_view text, const std::string& source,
                                                 const ModelTextParts& parts,
                                                 const StructureReadOptions& options,
                                                 const ForEachIndex& forEach);

// Replaces characters that cannot appear in a file name ('/', NUL) so an op or model name can
// name a file or directory.
std::string safeFileComponent(const std::string& name);

}  // namespace probe::format
