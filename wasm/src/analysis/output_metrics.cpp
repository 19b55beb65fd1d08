#include "analysis/output_metrics.h"

#include <limits>

#include "core/error.h"

namespace ptq::analysis {

OutputMetrics::OutputMetrics(size_t outputs)
    : values_(all_metrics().size(), std::vector<std::vector<float>>(outputs)) {}

void OutputMetrics::add(size_t output, const Tensor& reference, const Tensor& quantized) {
  check(output < outputs(), "output metrics: output " + std::to_string(output) + " out of range (" +
                                std::to_string(outputs()) + " outputs)");
  const Tensor a = reference.to_float();
  const Tensor b = quantized.to_float();
  for (size_t m = 0; m < values_.size(); ++m)
    values_[m][output].push_back(a.numel() != b.numel()
                                     ? std::numeric_limits<float>::quiet_NaN()
                                     : compute_metric(all_metrics()[m], a.data<float>(), b.data<float>(), a.numel()));
}

std::vector<std::vector<float>> OutputMetrics::per_output() const {
  std::vector<std::vector<float>> out(outputs(), std::vector<float>(values_.size()));
  for (size_t m = 0; m < values_.size(); ++m)
    for (size_t t = 0; t < outputs(); ++t) out[t][m] = aggregate({values_[m][t]});
  return out;
}

std::vector<float> OutputMetrics::mean() const {
  std::vector<float> out;
  for (const auto& per_output : values_) out.push_back(aggregate(per_output));
  return out;
}

}  // namespace ptq::analysis
