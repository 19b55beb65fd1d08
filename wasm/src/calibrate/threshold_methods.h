#pragma once
// Threshold re-calibration (docs/behaviour.md §13.2): a calibration node's thresholds chosen again
// from the values the float model feeds it, by one of the calibration methods of the toolchains
// (max, percentile, minimum quantization MSE, KL), per tensor or per channel along the node's axis.
// The values are gathered by a ValueObserver in two passes over the samples: their ranges, then
// histograms over those ranges.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "calibrate/observers.h"
#include "core/tensor.h"
#include "quant/calibration.h"

namespace ptq::quant {

// How thresholds are chosen. `percentile` is used by "percentile" only.
struct ThresholdMethod {
  std::string name = "max";   // "max" | "percentile" | "mse" | "kl"
  double percentile = 99.99;  // in percent, (0, 100]
  bool per_channel = false;   // one threshold per channel along the node's axis
  std::string text() const;   // "percentile 99.99 per channel", for messages and tables
};

// {name, doc}: the methods in the order they are documented (describe() lists them).
struct ThresholdMethodInfo {
  std::string name, doc;
};
const std::vector<ThresholdMethodInfo>& threshold_methods();
// Throws naming `field` for an unknown name or a percentile outside (0, 100].
void check_threshold_method(const ThresholdMethod& method, const std::string& field);

// A histogram of signed values over [lo, hi] with equal bins; values equal to hi fall in the last bin.
struct SignedHistogram {
  double lo = 0.0, hi = 0.0;
  std::vector<double> counts;
  SignedHistogram() = default;
  SignedHistogram(double lo_, double hi_, int bins) : lo(lo_), hi(hi_), counts(static_cast<size_t>(bins), 0.0) {}
  void add(double x);
  double bin_width() const { return (hi - lo) / static_cast<double>(counts.size()); }
};

// The values one calibration node reads over several samples, per tensor and per channel along `axis`.
class ValueObserver {
 public:
  // `axis` < 0 or a tensor of lower rank: no channels (one). Histograms: `bins` for the tensor,
  // `channel_bins` per channel.
  ValueObserver(int64_t axis, int bins = 2048, int channel_bins = 256);

  // Pass 1: ranges.
  void add_range(const Tensor& x);
  // Pass 2 (after every add_range): histograms over the ranges of pass 1.
  void add_histogram(const Tensor& x);

  int64_t count() const { return count_; }  // values seen (NaN left out)
  int64_t zeros() const { return zeros_; }
  int64_t negatives() const { return negatives_; }
  int64_t channels() const { return static_cast<int64_t>(channel_max_.size()); }
  double min() const { return min_; }
  double max() const { return max_; }
  double max_abs() const { return std::max(-min_, max_); }
  const std::vector<double>& channel_min() const { return channel_min_; }
  const std::vector<double>& channel_max() const { return channel_max_; }
  double channel_max_abs(size_t c) const { return std::max(-channel_min_[c], channel_max_[c]); }
  const AbsHistogram& abs_histogram() const { return abs_; }
  const SignedHistogram& signed_histogram() const { return signed_; }
  const std::vector<AbsHistogram>& channel_histograms() const { return channel_abs_; }

 private:
  // Calls f(channel, value) for every element.
  template <class F>
  void each(const Tensor& x, F&& f) const;

  int64_t axis_;
  int bins_, channel_bins_;
  int64_t count_ = 0, zeros_ = 0, negatives_ = 0;
  double min_ = 0.0, max_ = 0.0;
  std::vector<double> channel_min_, channel_max_;
  bool histograms_started_ = false;
  AbsHistogram abs_{1.0, 1};
  SignedHistogram signed_;
  std::vector<AbsHistogram> channel_abs_;
};

// A model-wide calibration method (a configuration's "calibration", a calibration-method comparison)
// re-calibrates the activation nodes that quantize with thresholds: not weights, dynamic, blocked or
// non-integer nodes, and not asymmetric nodes under kl (symmetric only). Asymmetric nodes stay per
// tensor under a per-channel method.
bool model_wide_target(const CalibrationSpec& spec, const ThresholdMethod& method);
ThresholdMethod model_wide_method(const CalibrationSpec& spec, const ThresholdMethod& method);

// Thresholds chosen by a method need the values the float model feeds each node (calibration data):
// a resolver gets every (calibration node, method, qtype) a configuration asks for at once and returns
// their thresholds in the same order (analysis/recalibrate.h makes one from the samples).
struct ThresholdRequest {
  size_t calibration = 0;  // index into the executor's calibration nodes
  ThresholdMethod method;
  std::string qtype;  // the node's qtype in the configuration (mse and kl depend on its levels)
  // A model-wide request: a node that never ran on the samples (inside a branch they do not take)
  // keeps its thresholds (the resolver returns none) instead of failing.
  bool keep_unobserved = false;
};
using ThresholdResolver = std::function<std::vector<std::vector<float>>(const std::vector<ThresholdRequest>&)>;

// The threshold of a symmetric quantizer with `qmax` positive levels that minimises the mean squared
// error of quantizing the values of `h` (rounding inside the range, clipping beyond it), over the
// candidates k·max/candidates for k = 1..candidates. The error of each bin is integrated in closed
// form over the bin, taken as uniformly filled.
float mse_threshold(const AbsHistogram& h, double qmax, int candidates = 512);
// The same for an asymmetric quantizer of levels [qmin, qmax] over the signed histogram: the range
// [a·lo, a·hi] (lo <= 0 <= hi) for a = k/candidates minimising the error. Returns {min, max}.
std::vector<float> mse_range(const SignedHistogram& h, double qmin, double qmax, int candidates = 512);

// The mean squared error of quantizing the values of `h` with a symmetric quantizer of threshold `t`
// (`qmax` positive levels): what mse_threshold minimises, for the evidence of a node (`explain`).
double quantization_mse(const AbsHistogram& h, double t, double qmax);

// The thresholds `method` gives calibration node `spec` (at qtype `qtype`) from what `observer` saw:
// symmetric nodes one per tensor or one per channel, asymmetric nodes [min, max] (per tensor only).
// A tensor or channel of zeros gets the calibrater's value (§1.4: 1.0 for an activation, the smallest
// normal float for a weight).
// Throws naming the node for what the method cannot do (kl or per channel on an asymmetric node).
std::vector<float> method_thresholds(const CalibrationSpec& spec, const QType& qtype, const ValueObserver& observer,
                                     const ThresholdMethod& method);

}  // namespace ptq::quant
