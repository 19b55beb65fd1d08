#include "calibrate/threshold_methods.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <random>

#include "core/error.h"
#include "ops/op_test_util.h"
#include "quant/calibration.h"

using namespace ptq;
using namespace ptq::quant;

namespace {

// n values of a Laplace (scale 1) or standard Gaussian distribution, as a [1, n] tensor.
Tensor sampled(bool laplace, int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::exponential_distribution<float> e(1.0f);
  std::normal_distribution<float> g(0.0f, 1.0f);
  std::bernoulli_distribution sign(0.5);
  Tensor t(DType::Float, {1, n});
  for (int64_t i = 0; i < n; ++i) t.mutable_data<float>()[i] = laplace ? (sign(rng) ? 1.0f : -1.0f) * e(rng) : g(rng);
  return t;
}

ValueObserver observe(const Tensor& x, int64_t axis = -1) {
  ValueObserver o(axis);
  o.add_range(x);
  o.add_histogram(x);
  return o;
}

// What the closed form claims, by brute force: the mean of (x − q(x))² with q symmetric of threshold t,
// 127 levels each side, clamped to ±t.
double brute_mse(const Tensor& x, double t) {
  const double s = t / 127.0;
  double sum = 0.0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    const double v = x.data<float>()[i];
    const double q = std::min(std::max(std::nearbyint(v / s), -127.0), 127.0) * s;
    sum += (v - q) * (v - q);
  }
  return sum / static_cast<double>(x.numel());
}

CalibrationSpec symmetric_spec(std::vector<float> thresholds, TensorKind kind = TensorKind::Feature) {
  CalibrationSpec s;
  s.node_name = "x_HzCalibration";
  s.kind = kind;
  s.thresholds = std::move(thresholds);
  s.scales = derive_scales(s, s.qtype);
  s.zero_points = {0};
  return s;
}

}  // namespace

TEST(ThresholdMethods, QuantizationMseAgreesWithBruteForce) {
  const Tensor x = sampled(true, 200000, 7);
  const ValueObserver o = observe(x);
  for (double share : {1.0, 0.5, 0.2, 0.05}) {
    const double t = o.max_abs() * share;
    const double closed = quantization_mse(o.abs_histogram(), t, 127.0);
    const double brute = brute_mse(x, t);
    // The histogram takes each of its 2048 bins as evenly filled: within 1% of the exact mean.
    EXPECT_NEAR(closed, brute, 0.01 * brute) << "threshold " << t;
  }
}

TEST(ThresholdMethods, MseThresholdIsTheKnownOptimum) {
  // The optimal clipping of 8-bit uniform quantization: 9.88 b for Laplace(b), 3.92 σ for a Gaussian
  // (Banner et al. 2019, ACIQ; recomputed by numerical integration of clipping + Δ²/12 rounding noise:
  // 9.8823 and 3.9205). The MSE curve is flat near the optimum: within 5% on 400000 samples.
  const ValueObserver laplace = observe(sampled(true, 400000, 11));
  EXPECT_NEAR(mse_threshold(laplace.abs_histogram(), 127.0), 9.8823, 0.05 * 9.8823);
  const ValueObserver gauss = observe(sampled(false, 400000, 12));
  EXPECT_NEAR(mse_threshold(gauss.abs_histogram(), 127.0), 3.9205, 0.05 * 3.9205);
}

TEST(ThresholdMethods, MaxPercentileAndChannels) {
  // x[1, 2, 3]: channel 0 holds {1, -2, 0.5}, channel 1 {4, 0.25, -0.5}.
  const Tensor x = Tensor::from_floats({1, 2, 3}, {1.0f, -2.0f, 0.5f, 4.0f, 0.25f, -0.5f});
  const ValueObserver o = observe(x, 1);
  EXPECT_EQ(o.count(), 6);
  EXPECT_EQ(o.negatives(), 2);
  EXPECT_EQ(o.channels(), 2);
  EXPECT_DOUBLE_EQ(o.channel_max_abs(0), 2.0);
  EXPECT_DOUBLE_EQ(o.channel_max_abs(1), 4.0);
  const CalibrationSpec spec = symmetric_spec({4.0f});
  ThresholdMethod m;
  EXPECT_EQ(method_thresholds(spec, spec.qtype, o, m), std::vector<float>({4.0f}));
  m.per_channel = true;
  EXPECT_EQ(method_thresholds(spec, spec.qtype, o, m), std::vector<float>({2.0f, 4.0f}));
  m = {};
  m.name = "percentile";
  m.percentile = 100.0;
  EXPECT_EQ(method_thresholds(spec, spec.qtype, o, m), std::vector<float>({4.0f}));
  // |x| sorted: 0.25, 0.5, 0.5, 1, 2, 4. Half of the six values is reached by the third, 0.5: the
  // percentile is the upper edge of its bin (width 4/2048), so within two bins of 0.5.
  m.percentile = 50.0;
  EXPECT_NEAR(method_thresholds(spec, spec.qtype, o, m)[0], 0.5f, 2 * 4.0f / 2048.0f);
}

TEST(ThresholdMethods, AsymmetricAndZeroNodes) {
  CalibrationSpec asym;
  asym.node_name = "a_HzCalibration";
  asym.kind = TensorKind::Feature;
  asym.qtype = QType::parse("uint8");
  asym.asymmetric = true;
  asym.thresholds = {-1.0f, 3.0f};
  const ValueObserver o = observe(Tensor::from_floats({1, 4}, {-0.5f, 2.0f, 1.0f, 0.0f}));
  ThresholdMethod m;
  EXPECT_EQ(method_thresholds(asym, asym.qtype, o, m), std::vector<float>({-0.5f, 2.0f}));
  m.name = "kl";
  EXPECT_THROW(method_thresholds(asym, asym.qtype, o, m), Error);
  m.name = "max";
  m.per_channel = true;
  EXPECT_THROW(method_thresholds(asym, asym.qtype, o, m), Error);
  // A tensor of zeros: the calibrater's hygiene (§1.4), 1.0 for an activation, FLT_MIN for a weight.
  const ValueObserver zeros = observe(Tensor::from_floats({1, 3}, {0.0f, 0.0f, 0.0f}));
  m = {};
  EXPECT_EQ(method_thresholds(symmetric_spec({1.0f}), QType{}, zeros, m), std::vector<float>({1.0f}));
  EXPECT_EQ(method_thresholds(symmetric_spec({1.0f}, TensorKind::Weight), QType{}, zeros, m),
            std::vector<float>({FLT_MIN}));
}

TEST(ThresholdMethods, WithThresholdsDerivesLikeACalibratedNode) {
  const CalibrationSpec spec = symmetric_spec({2.54f});
  const CalibrationSpec per_tensor = with_thresholds(spec, {1.27f});
  EXPECT_EQ(per_tensor.scales, std::vector<float>({1.27f / 127.0f}));  // §1.4: threshold / qmax in float32
  const CalibrationSpec per_channel = with_thresholds(spec, {1.27f, 0.635f});
  EXPECT_EQ(per_channel.scales, std::vector<float>({1.27f / 127.0f, 0.635f / 127.0f}));
  // An asymmetric node: s = (fmax − fmin) / 255, zp = 255 − round(fmax / s) (§1.4).
  CalibrationSpec asym = spec;
  asym.qtype = QType::parse("uint8");
  asym.asymmetric = true;
  asym.thresholds = {-1.0f, 3.0f};
  const CalibrationSpec a = with_thresholds(asym, {-0.5f, 2.0f});
  const float s = 2.5f / 255.0f;
  EXPECT_EQ(a.scales, std::vector<float>({s}));
  EXPECT_EQ(a.zero_points, std::vector<int64_t>({255 - static_cast<int64_t>(std::nearbyint(2.0f / s))}));
  EXPECT_THROW(with_thresholds(spec, {0.0f}), Error);
  EXPECT_THROW(with_thresholds(spec, {}), Error);
  EXPECT_THROW(with_thresholds(asym, {1.0f, 2.0f}), Error);  // min must be <= 0
  CalibrationSpec dynamic = spec;
  dynamic.dynamic = true;
  EXPECT_THROW(with_thresholds(dynamic, {1.0f}), Error);
}
