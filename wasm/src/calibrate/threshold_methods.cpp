#include "calibrate/threshold_methods.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <limits>

#include "core/error.h"

namespace ptq::quant {

std::string ThresholdMethod::text() const {
  std::string t = name;
  if (name == "percentile") {
    char buf[32];
    std::snprintf(buf, sizeof buf, " %.10g", percentile);
    t += buf;
  }
  return per_channel ? t + " per channel" : t;
}

const std::vector<ThresholdMethodInfo>& threshold_methods() {
  static const std::vector<ThresholdMethodInfo> methods = {
      {"max", "the largest |x| seen (asymmetric nodes: [min(x, 0), max(x, 0)]): no value is clipped"},
      {"percentile", "the given percentile of |x| (asymmetric nodes: of x at both ends), from a 2048-bin histogram"},
      {"mse", "the threshold minimising the mean squared error of quantizing the values seen (rounding and clipping)"},
      {"kl",
       "the threshold minimising the KL divergence between the |x| histogram and its quantized form (TensorRT's "
       "entropy calibration; symmetric nodes only)"},
  };
  return methods;
}

void check_threshold_method(const ThresholdMethod& m, const std::string& field) {
  std::string known;
  bool found = false;
  for (const auto& info : threshold_methods()) {
    known += (known.empty() ? "" : ", ") + info.name;
    found = found || info.name == m.name;
  }
  check(found, field + ": unknown threshold method '" + m.name + "' (known: " + known + ")");
  check(m.name != "percentile" || (m.percentile > 0.0 && m.percentile <= 100.0),
        field + ": the percentile must be in (0, 100], got " + std::to_string(m.percentile));
}

bool model_wide_target(const CalibrationSpec& spec, const ThresholdMethod& method) {
  return spec.kind != TensorKind::Weight && !spec.dynamic && spec.block_size == 0 && spec.qtype.is_integer() &&
         !(spec.asymmetric && method.name == "kl");
}

ThresholdMethod model_wide_method(const CalibrationSpec& spec, const ThresholdMethod& method) {
  ThresholdMethod m = method;
  m.per_channel = method.per_channel && !spec.asymmetric;
  return m;
}

void SignedHistogram::add(double x) {
  if (std::isnan(x)) return;
  const size_t bins = counts.size();
  const double b = hi > lo ? (x - lo) / (hi - lo) * static_cast<double>(bins) : 0.0;
  counts[b >= static_cast<double>(bins) ? bins - 1 : b <= 0.0 ? 0 : static_cast<size_t>(b)] += 1.0;
}

ValueObserver::ValueObserver(int64_t axis, int bins, int channel_bins)
    : axis_(axis), bins_(std::max(bins, 1)), channel_bins_(std::max(channel_bins, 1)) {}

template <class F>
void ValueObserver::each(const Tensor& x, F&& f) const {
  const Tensor t = x.to_float();
  const float* p = t.data<float>();
  const int64_t rank = static_cast<int64_t>(t.rank());
  const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
  if (axis_ < -rank || axis < 0 || axis >= rank || rank < 2) {
    for (int64_t i = 0; i < t.numel(); ++i) f(size_t{0}, static_cast<double>(p[i]));
    return;
  }
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= t.dim(static_cast<size_t>(d));
  for (int64_t d = axis + 1; d < rank; ++d) inner *= t.dim(static_cast<size_t>(d));
  const int64_t channels = t.dim(static_cast<size_t>(axis));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t c = 0; c < channels; ++c) {
      const float* run = p + (o * channels + c) * inner;
      for (int64_t k = 0; k < inner; ++k) f(static_cast<size_t>(c), static_cast<double>(run[k]));
    }
}

namespace {

// The channel count of `x` along `axis` (1 when it has no such axis).
int64_t channel_count(const Tensor& x, int64_t axis) {
  const int64_t rank = static_cast<int64_t>(x.rank());
  const int64_t a = axis < 0 ? axis + rank : axis;
  return rank < 2 || a < 0 || a >= rank ? 1 : x.dim(static_cast<size_t>(a));
}

}  // namespace

void ValueObserver::add_range(const Tensor& x) {
  check(!histograms_started_, "ValueObserver: add_range after add_histogram");
  const size_t channels = static_cast<size_t>(channel_count(x, axis_));
  if (count_ == 0) {
    channel_min_.assign(channels, 0.0);
    channel_max_.assign(channels, 0.0);
  }
  check(channels == channel_max_.size(), "the values of one calibration node have " +
                                             std::to_string(channel_max_.size()) + " channels in one sample and " +
                                             std::to_string(channels) + " in another");
  each(x, [&](size_t c, double v) {
    if (std::isnan(v)) return;
    if (count_ == 0 || v < min_) min_ = v;
    if (count_ == 0 || v > max_) max_ = v;
    channel_min_[c] = std::min(channel_min_[c], v);
    channel_max_[c] = std::max(channel_max_[c], v);
    zeros_ += v == 0.0;
    negatives_ += v < 0.0;
    ++count_;
  });
  // The ranges always include 0: a quantizer represents 0 exactly (and an all-positive tensor's
  // histogram starts there).
  min_ = std::min(min_, 0.0);
  max_ = std::max(max_, 0.0);
}

void ValueObserver::add_histogram(const Tensor& x) {
  if (!histograms_started_) {
    histograms_started_ = true;
    const double m = max_abs() > 0.0 ? max_abs() : 1.0;
    abs_ = AbsHistogram(m, bins_);
    signed_ = SignedHistogram(min_, max_ > min_ ? max_ : min_ + 1.0, bins_);
    channel_abs_.clear();
    for (size_t c = 0; c < channel_max_.size(); ++c) {
      const double cm = channel_max_abs(c);
      channel_abs_.emplace_back(cm > 0.0 ? cm : 1.0, channel_bins_);
    }
  }
  each(x, [&](size_t c, double v) {
    if (std::isnan(v)) return;
    const float f = static_cast<float>(v);
    abs_.add(&f, 1);
    signed_.add(v);
    if (c < channel_abs_.size()) channel_abs_[c].add(&f, 1);
  });
}

namespace {

// ∫_0^x e(u)² du for the rounding error e(u) = u − s·round(u/s) of a grid of step s (odd in x).
double rounding_integral(double x, double s) {
  if (x < 0.0) return -rounding_integral(-x, s);
  const double k = std::floor(x / s);
  const double r = x - k * s;
  const double s3 = s * s * s;
  const double part = r <= s / 2 ? r * r * r / 3.0 : s3 / 24.0 + ((r - s) * (r - s) * (r - s) + s3 / 8.0) / 3.0;
  return k * s3 / 12.0 + part;
}

// ∫_a^b (x − c)² dx.
double clip_integral(double a, double b, double c) {
  return ((b - c) * (b - c) * (b - c) - (a - c) * (a - c) * (a - c)) / 3.0;
}

// The squared error of the values of bin [a, b) (`count` of them, spread evenly) on a grid of step s
// that represents [lo, hi] (both multiples of s) and clips beyond.
double bin_error(double a, double b, double count, double s, double lo, double hi) {
  if (count == 0.0 || b <= a) return 0.0;
  double integral = 0.0;
  const double inner_a = std::max(a, lo), inner_b = std::min(b, hi);
  if (inner_b > inner_a) integral += rounding_integral(inner_b, s) - rounding_integral(inner_a, s);
  if (b > hi) integral += clip_integral(std::max(a, hi), b, hi);
  if (a < lo) integral += clip_integral(a, std::min(b, lo), lo);
  return count * integral / (b - a);
}

double abs_error(const AbsHistogram& h, double t, double qmax) {
  const double s = t / qmax, w = h.bin_width();
  double error = 0.0;
  for (size_t b = 0; b < h.counts.size(); ++b)
    error += bin_error(static_cast<double>(b) * w, static_cast<double>(b + 1) * w, h.counts[b], s, -t, t);
  return error;
}

}  // namespace

double quantization_mse(const AbsHistogram& h, double t, double qmax) {
  double total = 0.0;
  for (double c : h.counts) total += c;
  return total > 0.0 ? abs_error(h, t, qmax) / total : 0.0;
}

float mse_threshold(const AbsHistogram& h, double qmax, int candidates) {
  double best = std::numeric_limits<double>::infinity();
  double best_t = h.max;
  for (int k = 1; k <= candidates; ++k) {
    const double t = h.max * static_cast<double>(k) / static_cast<double>(candidates);
    const double e = abs_error(h, t, qmax);
    if (e < best) {
      best = e;
      best_t = t;
    }
  }
  return static_cast<float>(best_t);
}

std::vector<float> mse_range(const SignedHistogram& h, double qmin, double qmax, int candidates) {
  double best = std::numeric_limits<double>::infinity();
  double best_a = 1.0;
  const double w = h.bin_width();
  for (int k = 1; k <= candidates; ++k) {
    const double a = static_cast<double>(k) / static_cast<double>(candidates);
    const double lo = a * h.lo, hi = a * h.hi;
    const double s = (hi - lo) / (qmax - qmin);
    if (!(s > 0.0)) continue;
    // The grid of the quantizer: the zero point rounds the range to multiples of s.
    const double zp = std::min(std::max(std::nearbyint(qmin - lo / s), qmin), qmax);
    const double glo = (qmin - zp) * s, ghi = (qmax - zp) * s;
    double e = 0.0;
    for (size_t b = 0; b < h.counts.size(); ++b)
      e +=
          bin_error(h.lo + static_cast<double>(b) * w, h.lo + static_cast<double>(b + 1) * w, h.counts[b], s, glo, ghi);
    if (e < best) {
      best = e;
      best_a = a;
    }
  }
  return {static_cast<float>(best_a * h.lo), static_cast<float>(best_a * h.hi)};
}

namespace {

// One threshold from an |x| histogram.
float abs_threshold(const AbsHistogram& h, const QType& qtype, const ThresholdMethod& m) {
  if (m.name == "max") return static_cast<float>(h.max);  // the histogram spans exactly [0, max |x|]
  if (m.name == "percentile") return percentile_threshold(h, m.percentile);
  if (m.name == "mse") return mse_threshold(h, qtype.qmax());
  return kl_threshold(h, static_cast<int>(std::min(qtype.qmax() + 1.0, 1e6)));
}

// A tensor or channel that only held zeros has no threshold to choose: the calibrater's hygiene
// (§1.4) gives an activation 1.0 and clips a weight's to the smallest normal float.
float chosen(const CalibrationSpec& spec, double max_abs, const AbsHistogram& h, const QType& qtype,
             const ThresholdMethod& m) {
  if (max_abs > 0.0) return std::max(abs_threshold(h, qtype, m), FLT_MIN);
  return spec.kind == TensorKind::Weight ? FLT_MIN : 1.0f;
}

// A signed-histogram percentile: the value below which `fraction` of the counts lie (bin edges).
double signed_percentile(const SignedHistogram& h, double fraction) {
  double total = 0.0;
  for (double c : h.counts) total += c;
  const double target = fraction * total;
  double cumulative = 0.0;
  for (size_t b = 0; b < h.counts.size(); ++b) {
    cumulative += h.counts[b];
    if (cumulative >= target) return h.lo + static_cast<double>(b + 1) * h.bin_width();
  }
  return h.hi;
}

}  // namespace

std::vector<float> method_thresholds(const CalibrationSpec& spec, const QType& qtype, const ValueObserver& o,
                                     const ThresholdMethod& m) {
  const std::string where = "calibration node '" + spec.node_name + "'";
  check(o.count() > 0, where + ": no values were observed to choose thresholds from");
  if (spec.asymmetric) {
    check(!m.per_channel, where + " is asymmetric: its thresholds are one [min, max] per tensor, not per channel");
    check(m.name != "kl", where + " is asymmetric: the kl method chooses symmetric thresholds only");
    const SignedHistogram& h = o.signed_histogram();
    std::vector<float> range;
    if (m.name == "max") range = {static_cast<float>(o.min()), static_cast<float>(o.max())};
    else if (m.name == "mse") range = mse_range(h, qtype.qmin(), qtype.qmax());
    else {
      const double tail = (100.0 - m.percentile) / 100.0;
      range = {static_cast<float>(std::min(signed_percentile(h, tail / 2), 0.0)),
               static_cast<float>(std::max(signed_percentile(h, 1.0 - tail / 2), 0.0))};
    }
    if (!(range[0] < range[1])) range = {range[0], range[0] + FLT_MIN};
    return range;
  }
  if (!m.per_channel) return {chosen(spec, o.max_abs(), o.abs_histogram(), qtype, m)};
  check(!(spec.conv_transpose_weight && spec.group > 1),
        where +
            " is the weight of a grouped ConvTranspose: its channels are regrouped (§1.5), so per-channel "
            "thresholds are not chosen for it");
  std::vector<float> out;
  for (size_t c = 0; c < o.channel_histograms().size(); ++c)
    out.push_back(chosen(spec, o.channel_max_abs(c), o.channel_histograms()[c], qtype, m));
  return out;
}

}  // namespace ptq::quant
