#pragma once
// The debugger's five metrics (§4), in float32 arithmetic as numpy computes them on
// float32 arrays: sums use numpy's pairwise summation so results agree with the original to the last
// bits for sums and means (dot products differ from BLAS sdot by ~1e-7 relative; docs/compatibility.md).
#include <cstdint>
#include <string>
#include <vector>

namespace ptq::analysis {

enum class Metric { Cosine, Mse, Mre, Sqnr, Chebyshev };

// Every metric, in the order the original lists them (§4).
const std::vector<Metric>& all_metrics();
Metric parse_metric(const std::string& name);  // "metrics contain unavailable method: <m>" on failure
std::string metric_name(Metric m);
// Optimum direction: true for argmax metrics (cosine-similarity, sqnr).
bool higher_is_better(Metric m);

// numpy's pairwise float32 summation (the algorithm of np.add.reduce on a contiguous float32 array).
float pairwise_sum(const float* a, int64_t n);

// metric(a = float reference, b = quantized), both flattened, same length.
float compute_metric(Metric m, const float* a, const float* b, int64_t n);

// §3.3 step 5: per output, drop NaN sample values and average the rest (outputs with none are
// skipped); the result is the mean over kept outputs, or NaN when none remain. +inf is kept.
float aggregate(const std::vector<std::vector<float>>& per_output_per_sample);

}  // namespace ptq::analysis
