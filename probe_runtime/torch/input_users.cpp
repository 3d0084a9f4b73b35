// SPDX-License-Identifier: GPL-3.0-or-later
#include "input_users.h"

#include <tuple>

#include <ATen/SequenceNumber.h>
#include <ATen/record_function.h>
#include <torch/csrc/autograd/variable.h>
#include <torch/library.h>

namespace probe::torch_adapter {

bool madeHereBetween(const torch::autograd::Node* node, uint64_t first, uint64_t end) {
    return node && node->sequence_nr() >= first && node->sequence_nr() < end &&
           node->thread_id() == at::RecordFunction::currentThreadId();
}

std::vector<std::vector<InputUser>> findInputUsers(const std::vector<at::Tensor>& outputs,
                                                   const std::vector<torch::autograd::Edge>& inputs,
                                                   uint64_t first, uint64_t end) {
    using torch::autograd::Node;
    std::vector<std::vector<InputUser>> users(inputs.size());
    const auto madeByOp = [&](const Node* node) { return madeHereBetween(node, first, end); };
    // Each node once, known by its sequence number: a module's forward may have made thousands.
    std::vector<bool> seen(end > first ? end - first : 0, false);
    std::vector<Node*> pending;
    const auto visit = [&](Node* node) {
        if (madeByOp(node) && !seen[node->sequence_nr() - first]) {
            seen[node->sequence_nr() - first] = true;
            pending.push_back(node);
        }
    };
    std::vector<bool> returned(inputs.size(), false);
    for (const at::Tensor& t : outputs) {
        if (!t.defined()) continue;
        visit(t.grad_fn().get());
        if (!t.requires_grad()) continue;
        const torch::autograd::Edge edge =
            t.grad_fn()
                ? torch::autograd::Edge(t.grad_fn(), t.output_nr())
                : torch::autograd::Edge(torch::autograd::impl::try_get_grad_accumulator(t), 0);
        for (size_t i = 0; i < inputs.size(); ++i)
            if (edge.function && inputs[i] == edge) returned[i] = true;
    }
    while (!pending.empty()) {
        Node* node = pending.back();
        pending.pop_back();
        const uint32_t edges = node->num_outputs();
        for (uint32_t j = 0; j < edges; ++j) {
            const torch::autograd::Edge& edge = node->next_edge(j);
            if (!edge.function) continue;
            for (size_t i = 0; i < inputs.size(); ++i) {
                if (!(inputs[i] == edge)) continue;
                if (users[i].empty() || users[i].back().node != node)
                    users[i].push_back({node, {}});
                users[i].back().edges.push_back(j);
            }
            visit(edge.function.get());
        }
    }
    for (size_t i = 0; i < inputs.size(); ++i)
        if (returned[i]) users[i].clear();
    return users;
}

namespace {

// For the code-level API (probe_studio.pytorch's module hooks): the nodes a module call made
// since the autograd sequence number `first` that pass gradients back to its `inputs`, each as a
// tensor of no elements whose grad_fn is the node (Python gets node objects only from tensors),
// and per input: the number of such nodes, then for each its place in the list, its number of
// edges to the input and those edges. An input the call changed in place (its node the call's
// own now) has none: its gradient is taken where it was when the call began.
std::tuple<std::vector<at::Tensor>, std::vector<int64_t>> moduleInputUsers(
    const std::vector<at::Tensor>& outputs, const std::vector<at::Tensor>& inputs, int64_t first) {
    const uint64_t begin = static_cast<uint64_t>(first), end = at::sequence_number::peek();
    std::vector<torch::autograd::Edge> edges;
    edges.reserve(inputs.size());
    for (const at::Tensor& input : inputs) {
        const bool changedInPlace =
            input.defined() && madeHereBetween(input.grad_fn().get(), begin, end);
        edges.push_back(input.defined() && input.requires_grad() && !changedInPlace
                            ? torch::autograd::impl::gradient_edge(input)
                            : torch::autograd::Edge());
    }
    std::vector<at::Tensor> nodes;
    std::vector<const torch::autograd::Node*> known;
    std::vector<int64_t> table;
    for (const std::vector<InputUser>& users : findInputUsers(outputs, edges, begin, end)) {
        table.push_back(static_cast<int64_t>(users.size()));
        for (const InputUser& user : users) {
            size_t place = 0;
            while (place < known.size() && known[place] != user.node) ++place;
            if (place == known.size()) {
                known.push_back(user.node);
                at::Tensor holder = at::empty({0});
                torch::autograd::impl::set_gradient_edge(holder,
                                                         {user.node->shared_from_this(), 0});
                nodes.push_back(std::move(holder));
            }
            table.push_back(static_cast<int64_t>(place));
            table.push_back(static_cast<int64_t>(user.edges.size()));
            for (const uint32_t edge : user.edges) table.push_back(edge);
        }
    }
    return {std::move(nodes), std::move(table)};
}

}  // namespace
}  // namespace probe::torch_adapter

TORCH_LIBRARY_FRAGMENT(probe, m) {
    m.def("module_input_users(Tensor[] outputs, Tensor[] inputs, int first) -> (Tensor[], int[])",
          &probe::torch_adapter::moduleInputUsers);
}
