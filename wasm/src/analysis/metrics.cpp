#include "analysis/metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/error.h"

namespace ptq::analysis {

const std::vector<Metric>& all_metrics() {
  static const std::vector<Metric> all = {Metric::Cosine, Metric::Mse, Metric::Mre, Metric::Sqnr, Metric::Chebyshev};
  return all;
}

Metric parse_metric(const std::string& name) {
  for (Metric m : all_metrics())
    if (metric_name(m) == name) return m;
  fail("metrics contain unavailable method: " + name);
}

std::string metric_name(Metric m) {
  switch (m) {
    case Metric::Cosine: return "cosine-similarity";
    case Metric::Mse: return "mse";
    case Metric::Mre: return "mre";
    case Metric::Sqnr: return "sqnr";
    case Metric::Chebyshev: return "chebyshev";
  }
  return "";
}

bool higher_is_better(Metric m) { return m == Metric::Cosine || m == Metric::Sqnr; }

namespace {

constexpr int64_t kBlock = 128;  // numpy's PW_BLOCKSIZE

// Pairwise sum of f(i) for i in [0, n), exactly numpy's pairwise_sum structure.
template <class F>
float pairwise(const F& f, int64_t begin, int64_t n) {
  if (n < 8) {
    float res = 0.0f;
    for (int64_t i = 0; i < n; ++i) res += f(begin + i);
    return res;
  }
  if (n <= kBlock) {
    float r[8];
    for (int j = 0; j < 8; ++j) r[j] = f(begin + j);
    int64_t i = 8;
    for (; i < n - (n % 8); i += 8)
      for (int j = 0; j < 8; ++j) r[j] += f(begin + i + j);
    float res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) res += f(begin + i);
    return res;
  }
  int64_t n2 = n / 2;
  n2 -= n2 % 8;
  return pairwise(f, begin, n2) + pairwise(f, begin + n2, n - n2);
}

template <class F>
float sum_of(const F& f, int64_t n) {
  return pairwise(f, 0, n);
}

float norm_of(const float* a, int64_t n) {
  return std::sqrt(sum_of([a](int64_t i) { return a[i] * a[i]; }, n));
}

}  // namespace

float pairwise_sum(const float* a, int64_t n) {
  return sum_of([a](int64_t i) { return a[i]; }, n);
}

float compute_metric(Metric m, const float* a, const float* b, int64_t n) {
  const float count = static_cast<float>(n);
  switch (m) {
    case Metric::Cosine: {
      const float dot = sum_of([a, b](int64_t i) { return a[i] * b[i]; }, n);
      return dot / (std::max(norm_of(a, n), 1e-8f) * std::max(norm_of(b, n), 1e-8f));
    }
    case Metric::Mse:
      return sum_of([a, b](int64_t i) { const float d = a[i] - b[i]; return d * d; }, n) / count;
    case Metric::Mre:
      return sum_of([a, b](int64_t i) { return std::fabs(a[i] - b[i]); }, n) / count;
    case Metric::Sqnr: {
      const float signal = std::sqrt(norm_of(a, n));
      const float noise = std::sqrt(std::sqrt(sum_of([a, b](int64_t i) { const float d = a[i] - b[i]; return d * d; }, n)));
      return 20.0f * std::log10(signal / noise);  // identical tensors: x/0 = inf (0/0 = NaN), as numpy
    }
    case Metric::Chebyshev: {
      float worst = 0.0f;
      for (int64_t i = 0; i < n; ++i) {
        const float d = std::fabs(a[i] - b[i]);
        if (std::isnan(d)) return d;  // numpy max propagates NaN
        worst = std::max(worst, d);
      }
      return n ? worst : std::numeric_limits<float>::quiet_NaN();
    }
  }
  return std::numeric_limits<float>::quiet_NaN();
}

float aggregate(const std::vector<std::vector<float>>& per_output_per_sample) {
  std::vector<float> kept;
  for (const auto& samples : per_output_per_sample) {
    std::vector<float> finite_or_inf;
    for (float v : samples)
      if (!std::isnan(v)) finite_or_inf.push_back(v);
    if (finite_or_inf.empty()) continue;
    kept.push_back(pairwise_sum(finite_or_inf.data(), static_cast<int64_t>(finite_or_inf.size())) /
                   static_cast<float>(finite_or_inf.size()));
  }
  if (kept.empty()) return std::numeric_limits<float>::quiet_NaN();
  return pairwise_sum(kept.data(), static_cast<int64_t>(kept.size())) / static_cast<float>(kept.size());
}

}  // namespace ptq::analysis
