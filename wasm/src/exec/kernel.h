#pragma once
// The contract between the executor and one op kernel. A kernel reads its inputs (nullptr for an
// absent optional input), its node's attributes and opset, and assigns every output it produces.
// Kernels are pure: no state between calls; anything expensive to derive from constant inputs
// (packed weights) goes through `prepared`, which the executor keeps per node.
#include <any>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/tensor.h"
#include "ir/graph.h"

namespace ptq::exec {

// Runs a subgraph attribute of the node being executed (an If branch, a Loop or Scan body) with the
// executor running the node: `inputs` bind the body's declared inputs in order, names the body reads
// from enclosing graphs resolve to their values in this run, and the body's outputs come back in
// declared order. Calibration nodes inside follow the run's configuration.
class SubgraphRunner {
 public:
  virtual std::vector<Tensor> run(const ir::Graph& body, const std::vector<Tensor>& inputs) = 0;

 protected:
  ~SubgraphRunner() = default;
};

struct KernelContext {
  const ir::Node& node;
  const std::vector<const Tensor*>& inputs;  // size == node.inputs.size(); nullptr for ""
  std::vector<Tensor>& outputs;              // size == node.outputs.size(); kernel assigns them
  // Per-node cache owned by the executor for derived constant data (e.g. packed weights); a kernel
  // may fill it on first call when its inputs are constant (see `constant_input`).
  std::any* prepared = nullptr;
  // True when input i is a graph constant (initializer/Constant) or the output of a weight calibration
  // node (one of two fixed tensors), so caching derived data is worthwhile; caches still compare the
  // tensor's identity before reuse.
  std::vector<bool> constant_input;
  // Set by the executor for nodes with subgraph attributes; nullptr where no executor runs the node
  // (shape inference folding), where a control-flow kernel fails.
  SubgraphRunner* subgraphs = nullptr;

  int opset() const { return node.opset; }
  size_t input_count() const { return inputs.size(); }
  const Tensor* input(size_t i) const { return i < inputs.size() ? inputs[i] : nullptr; }
  // Input that must be present; throws naming the node otherwise.
  const Tensor& required(size_t i) const;
  bool has_output(size_t i) const { return i < node.outputs.size() && node.outputs[i] >= 0; }
  // The graph attribute `name` (throws naming the node when absent).
  const ir::Graph& graph_attr(std::string_view name) const;
  // Runs `body` through `subgraphs` (throws naming the node when there is no runner).
  std::vector<Tensor> run_subgraph(const ir::Graph& body, const std::vector<Tensor>& inputs) const;
  // Throws ptq::Error prefixed with the node's name and op type.
  [[noreturn]] void fail(const std::string& message) const;
  void check(bool condition, const std::string& message) const {
    if (!condition) fail(message);
  }
};

using KernelFn = void (*)(KernelContext&);

}  // namespace ptq::exec
