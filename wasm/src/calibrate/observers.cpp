#include "calibrate/observers.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>

#include "core/error.h"

namespace ptq::quant {

void AbsHistogram::add(const float* x, int64_t n) {
  const size_t bins = counts.size();
  const double per_unit = static_cast<double>(bins) / max;
  for (int64_t i = 0; i < n; ++i) {
    const double a = std::fabs(static_cast<double>(x[i]));
    if (std::isnan(a)) continue;
    const double b = a * per_unit;
    counts[b >= static_cast<double>(bins) ? bins - 1 : static_cast<size_t>(b)] += 1.0;
  }
}

float max_abs(const Tensor& x, const std::string& what) {
  const float* p = x.data<float>();
  float m = 0.0f;
  for (int64_t i = 0; i < x.numel(); ++i) {
    const float a = std::fabs(p[i]);
    check(!std::isnan(a), "calibration: " + what + " contains NaN");
    m = std::max(m, a);
  }
  return m;
}

float percentile_threshold(const AbsHistogram& h, double percentile) {
  double total = 0.0;
  for (double c : h.counts) total += c;
  if (total == 0.0 || percentile >= 100.0) return static_cast<float>(h.max);
  const double target = percentile / 100.0 * total;
  double cumulative = 0.0;
  for (size_t b = 0; b < h.counts.size(); ++b) {
    cumulative += h.counts[b];
    if (cumulative >= target) return static_cast<float>(static_cast<double>(b + 1) * h.bin_width());
  }
  return static_cast<float>(h.max);
}

namespace {

// MXNet's _smooth_distribution: zeros become eps, the non-zeros give up the same mass. Returns
// false when that would make an entry non-positive (the candidate is then skipped).
bool smooth(std::vector<double>& d) {
  constexpr double eps = 1e-4;
  size_t zeros = 0;
  for (double v : d) zeros += v == 0.0;
  const size_t nonzeros = d.size() - zeros;
  if (nonzeros == 0) return false;
  const double eps1 = eps * static_cast<double>(zeros) / static_cast<double>(nonzeros);
  for (double& v : d) {
    v = v == 0.0 ? eps : v - eps1;
    if (v <= 0.0) return false;
  }
  return true;
}

// KL(P||Q) of two positive, unnormalised distributions of equal length.
double kl_divergence(const std::vector<double>& p, const std::vector<double>& q) {
  double sp = 0.0, sq = 0.0;
  for (size_t i = 0; i < p.size(); ++i) {
    sp += p[i];
    sq += q[i];
  }
  double kl = 0.0;
  for (size_t i = 0; i < p.size(); ++i) {
    const double pi = p[i] / sp;
    kl += pi * std::log(pi / (q[i] / sq));
  }
  return kl;
}

}  // namespace

float kl_threshold(const AbsHistogram& h, int quantized_bins) {
  const size_t bins = h.counts.size();
  const size_t nq = static_cast<size_t>(std::max(quantized_bins, 1));
  if (bins <= nq) return static_cast<float>(h.max);
  // suffix[i] = number of values in bins >= i (the outliers clipped into P's last bin).
  std::vector<double> suffix(bins + 1, 0.0);
  for (size_t b = bins; b-- > 0;) suffix[b] = suffix[b + 1] + h.counts[b];
  if (suffix[0] == 0.0) return static_cast<float>(h.max);

  double best = std::numeric_limits<double>::infinity();
  size_t best_i = bins;
  std::vector<double> p, q;
  for (size_t i = nq; i <= bins; ++i) {
    p.assign(h.counts.begin(), h.counts.begin() + static_cast<std::ptrdiff_t>(i));
    p[i - 1] += suffix[i];
    // Bin k of the first i goes to group floor(k·nq / i): groups differ in size by at most one bin.
    q.assign(i, 0.0);
    for (size_t start = 0; start < i;) {
      const size_t group = start * nq / i;
      size_t stop = start;
      double sum = 0.0;
      size_t nonzero = 0;
      for (; stop < i && stop * nq / i == group; ++stop) {
        sum += h.counts[stop];
        nonzero += p[stop] != 0.0;
      }
      for (size_t k = start; nonzero && k < stop; ++k)
        if (p[k] != 0.0) q[k] = sum / static_cast<double>(nonzero);
      start = stop;
    }
    if (!smooth(p) || !smooth(q)) continue;
    const double kl = kl_divergence(p, q);
    if (kl < best) {
      best = kl;
      best_i = i;
    }
  }
  return static_cast<float>(static_cast<double>(best_i) * h.bin_width());
}

float refine_activation_threshold(float t, const std::string& node_name) {
  check(!std::isnan(t), "find NaN threshold in " + node_name);
  if (std::isinf(t) && t > 0) return FLT_MAX;
  if (t <= 0.0f) return 1.0f;
  return t;
}

std::vector<float> weight_thresholds(const Tensor& w, int64_t axis, int64_t group, bool conv_transpose,
                                     const std::string& what) {
  check(w.dtype() == DType::Float, what + ": weight calibration needs float32 data");
  const int64_t rank = static_cast<int64_t>(w.rank());
  int64_t outer = 1, channels = 1, inner = 1;
  int64_t in_per_group = 1, out_per_group = 1, g = 1;
  if (conv_transpose) {
    // [C_in, C_out/g, ...] regrouped to [g·C_out/g]: channel of [i, j, ...] = (i / (C_in/g))·(C_out/g) + j.
    check(rank >= 2, what + ": a ConvTranspose weight needs rank >= 2, got " + shape_str(w.shape()));
    g = std::max<int64_t>(1, group);
    check(w.dim(0) % g == 0, what + ": " + std::to_string(w.dim(0)) + " input channels do not split into " +
                                 std::to_string(g) + " groups");
    outer = w.dim(0);
    in_per_group = w.dim(0) / g;
    out_per_group = w.dim(1);
    for (int64_t d = 2; d < rank; ++d) inner *= w.dim(static_cast<size_t>(d));
  } else {
    const int64_t a = axis < 0 ? axis + rank : axis;
    check(a >= 0 && a < rank, what + ": axis " + std::to_string(axis) + " out of range for " + shape_str(w.shape()));
    for (int64_t d = 0; d < a; ++d) outer *= w.dim(static_cast<size_t>(d));
    channels = w.dim(static_cast<size_t>(a));
    for (int64_t d = a + 1; d < rank; ++d) inner *= w.dim(static_cast<size_t>(d));
  }
  const int64_t per_row = conv_transpose ? out_per_group : channels;
  std::vector<float> t(static_cast<size_t>(conv_transpose ? g * out_per_group : channels), 0.0f);
  const float* x = w.data<float>();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t c = 0; c < per_row; ++c) {
      const int64_t channel = conv_transpose ? (o / in_per_group) * out_per_group + c : c;
      float& m = t[static_cast<size_t>(channel)];
      const float* run = x + (o * per_row + c) * inner;
      for (int64_t k = 0; k < inner; ++k) {
        check(!std::isnan(run[k]), what + " contains NaN");
        m = std::max(m, std::fabs(run[k]));
      }
    }
  }
  for (float& v : t) v = std::min(std::max(v, FLT_MIN), FLT_MAX);  // max_percentile 1.0 × max|w|, clipped
  return t;
}

}  // namespace ptq::quant
