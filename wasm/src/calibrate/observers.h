#pragma once
// The statistics `calibrate` turns into thresholds: the max |x| of activations, an |x| histogram
// with the percentile and KL (entropy) searches over it, per-channel max |w| of weights, and the
// toolchain's clean-up of activation thresholds (§1.4).
#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace ptq::quant {

// Histogram of |x| with `bins` equal bins over [0, max]; values equal to max fall in the last bin.
struct AbsHistogram {
  double max = 0.0;
  std::vector<double> counts;
  AbsHistogram(double max_abs, int bins) : max(max_abs), counts(static_cast<size_t>(bins), 0.0) {}
  void add(const float* x, int64_t n);
  double bin_width() const { return max / static_cast<double>(counts.size()); }
};

// max |x|; throws naming `what` when x holds a NaN.
float max_abs(const Tensor& x, const std::string& what);

// The upper edge of the first bin at which the cumulative count reaches `percentile`% of all
// values. Approximation: overestimates the exact sample percentile by less than one bin width
// (max/bins); percentile 100 gives exactly the max.
float percentile_threshold(const AbsHistogram& h, double percentile);

// TensorRT-style entropy calibration: for each candidate i in [quantized_bins, bins], the reference
// P = the first i bins with every count beyond folded into bin i-1, the candidate Q = the first i
// bins merged into `quantized_bins` groups (bin k in group floor(k·quantized_bins / i), so group
// sizes differ by at most one, as NVIDIA's pytorch-quantization does, rather than MXNet's
// remainder-in-the-last-group) and spread back evenly over the bins where P is non-zero;
// both smoothed (zeros get 1e-4, taken from the non-zeros, as MXNet does) and normalised. The
// threshold is the upper edge i·width of the i minimising KL(P||Q) (first one on ties).
float kl_threshold(const AbsHistogram& h, int quantized_bins);

// §1.4 hygiene for activation thresholds: +inf -> FLT_MAX, <= 0 -> 1.0, NaN -> error.
float refine_activation_threshold(float t, const std::string& node_name);

// Per-channel max|w| along `axis` (or over the ConvTranspose regrouped view [g·C_out/g] when
// `conv_transpose`), clipped to [FLT_MIN, FLT_MAX] as the weight calibrater does.
std::vector<float> weight_thresholds(const Tensor& w, int64_t axis, int64_t group, bool conv_transpose,
                                     const std::string& what);

}  // namespace ptq::quant
