#pragma once
// The contract between the executor and one op kernel. A kernel reads its inputs (nullptr for an
// absent optional input), its node's attributes and opset, and assigns every output it produces.
// Kernels are pure: no state between calls; anything expensive to derive from constant inputs
// (packed weights) goes through `prepared`, which the executor keeps per node.
#include <any>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/tensor.h"
#include "ir/graph.h"

namespace ptq::exec {

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

  int opset() const { return node.opset; }
  size_t input_count() const { return inputs.size(); }
  const Tensor* input(size_t i) const { return i < inputs.size() ? inputs[i] : nullptr; }
  // Input that must be present; throws naming the node otherwise.
  const Tensor& required(size_t i) const;
  bool has_output(size_t i) const { return i < node.outputs.size() && node.outputs[i] >= 0; }
  // Throws ptq::Error prefixed with the node's name and op type.
  [[noreturn]] void fail(const std::string& message) const;
  void check(bool condition, const std::string& message) const {
    if (!condition) fail(message);
  }
};

using KernelFn = void (*)(KernelContext&);

}  // namespace ptq::exec
