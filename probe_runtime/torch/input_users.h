// Which of the autograd nodes an op made pass gradients back to its inputs: where the op's share
// of each input's gradient can be seen (a post-hook on those nodes), as a module's full backward
// hook sees it, without changing what the model computes.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <vector>

#include <ATen/ATen.h>
#include <torch/csrc/autograd/edge.h>
#include <torch/csrc/autograd/function.h>

namespace probe::torch_adapter {

// A node of the op passing a gradient back to an input, along these of its edges (x * x: two).
struct InputUser {
    torch::autograd::Node* node;
    std::vector<uint32_t> edges;
};

// Whether `node` was made by this thread while its autograd sequence number went from `first`
// to `end` (another thread's numbers are its own: they overlap).
bool madeHereBetween(const torch::autograd::Node* node, uint64_t first, uint64_t end);

// For each input (the edge its gradient leaves the op along, taken as the op began: an op may
// change an input in place), the nodes the op made that pass it a gradient. The op's nodes are
// those this thread made with autograd sequence numbers [first, end), found from its outputs'
// nodes. An input the op returns as it is has none: part of its gradient from the op reaches it
// through no node.
std::vector<std::vector<InputUser>> findInputUsers(const std::vector<at::Tensor>& outputs,
                                                   const std::vector<torch::autograd::Edge>& inputs,
                                                   uint64_t first, uint64_t end);

}  // namespace probe::torch_adapter
