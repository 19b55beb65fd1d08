#pragma once
// Static shape and dtype inference over the graph IR, for viewers (graph JSON) and checks. Shapes come
// from constants, declared graph inputs and per-op rules; small int64/float results (shape
// subgraphs such as Shape -> Gather -> Concat -> Reshape) are folded with the real kernels so that
// Reshape/Expand/Resize targets are known. Unknown dims are -1; a symbolic input dim ("batch") is
// carried through ops that keep it.
#include <vector>

#include "ir/graph.h"

namespace ptq::exec {

// One entry per value id of `graph`. `has_shape` false = rank unknown. Declared value_info is used
// only where no rule applies (rules see the actual graph; exporters' value_info may be stale).
std::vector<ir::ValueInfo> infer_shapes(const ir::Graph& graph);

}  // namespace ptq::exec
