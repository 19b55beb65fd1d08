#pragma once
// The five metrics (§4) of a model's compared outputs against the float model's, gathered sample by
// sample and aggregated as every analysis aggregates them (§3.3: per output the mean over its
// samples, NaN left out, then the mean over outputs). Used by what_if on the executor's runs, and by
// the wasm API's OutputComparison on outputs computed elsewhere (onnxruntime's, docs/wasm-api.md),
// so that another engine's numbers are measured exactly as ptqscope's own.
#include <cstddef>
#include <vector>

#include "analysis/metrics.h"
#include "core/tensor.h"

namespace ptq::analysis {

class OutputMetrics {
 public:
  explicit OutputMetrics(size_t outputs);

  size_t outputs() const { return values_.empty() ? 0 : values_.front().size(); }
  // One sample's pair at output `output`: float reference and quantized, flattened and compared as
  // float32 (to_float: integer and bool tensors as their values); NaN when the sizes differ.
  void add(size_t output, const Tensor& reference, const Tensor& quantized);

  std::vector<std::vector<float>> per_output() const;  // [output][all_metrics()], averaged over samples
  std::vector<float> mean() const;                     // [all_metrics()]: mean over outputs

 private:
  std::vector<std::vector<std::vector<float>>> values_;  // [metric][output][sample]
};

}  // namespace ptq::analysis
