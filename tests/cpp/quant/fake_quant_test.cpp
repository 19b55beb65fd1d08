#include "quant/fake_quant.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "ops/op_test_util.h"
#include "quant/calibration.h"

using namespace ptq;
using namespace ptq::quant;

namespace {

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

// A symmetric int8 per-tensor HzCalibration spec with the given scale.
CalibrationSpec int8_spec(float scale) {
  CalibrationSpec s;
  s.node_name = "x_HzCalibration";
  s.qtype = QType::parse("int8");
  s.scales = {scale};
  return s;
}

}  // namespace

// By hand: 2.5 -> 2 (even) or 3 (away), -2.5 -> -2 or -3, 3.5 -> 4 either way; + zero point 1; clamp to [-128, 127].
TEST(FakeQuant, RoundsSaturatesAndKeepsNaN) {
  EXPECT_EQ(quantize_value(2.5f, 1.0f, 1.0f, -128, 127), 3.0f);
  EXPECT_EQ(quantize_value<RoundMode::HalfAwayFromZero>(2.5f, 1.0f, 1.0f, -128, 127), 4.0f);
  EXPECT_EQ(quantize_value(-2.5f, 1.0f, 1.0f, -128, 127), -1.0f);
  EXPECT_EQ(quantize_value<RoundMode::HalfAwayFromZero>(-2.5f, 1.0f, 1.0f, -128, 127), -2.0f);
  EXPECT_EQ(quantize_value(7.0f, 2.0f, 0.0f, -128, 127), 4.0f);  // 3.5 -> 4
  EXPECT_EQ(quantize_value(1000.0f, 1.0f, 1.0f, -128, 127), 127.0f);
  EXPECT_EQ(quantize_value(-1000.0f, 1.0f, 1.0f, -128, 127), -128.0f);
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(quantize_value(inf, 1.0f, 0.0f, -128, 127), 127.0f);
  EXPECT_EQ(quantize_value(-inf, 1.0f, 0.0f, -128, 127), -128.0f);
  EXPECT_TRUE(std::isnan(quantize_value(NAN, 1.0f, 1.0f, -128, 127)));
  EXPECT_TRUE(std::isnan(quantize_value<RoundMode::HalfAwayFromZero>(NAN, 1.0f, 1.0f, -128, 127)));
  // (q - zp) * scale; an integer store writes NaN as the zero point.
  EXPECT_EQ(dequantize_value(3.0f, 1.0f, 0.5f), 1.0f);
  EXPECT_EQ(to_integer<int8_t>(NAN, 3.0f), 3);
  EXPECT_EQ(to_integer<uint8_t>(-0.0f, 0.0f), 0);
  EXPECT_EQ(to_integer<int16_t>(-300.0f, 0.0f), -300);
}

// The HzCalibration fake-quant of NaN is NaN (visible to the analyses), ±inf saturate.
TEST(FakeQuant, CalibrationNodeKeepsNaN) {
  const CalibrationSpec s = int8_spec(0.5f);
  const Tensor x = Tensor::from_floats(
      {4}, {NAN, std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(), 1.25f});
  const Tensor y = fake_quantize(s, s.qtype, s.scales, x);
  EXPECT_TRUE(std::isnan(y.data<float>()[0]));
  EXPECT_EQ(y.data<float>()[1], 63.5f);   // 127 * 0.5
  EXPECT_EQ(y.data<float>()[2], -64.0f);  // -128 * 0.5
  EXPECT_EQ(y.data<float>()[3], 1.0f);    // 2.5 -> 2
}

// The HzCalibration fake-quant and QuantizeLinear -> DequantizeLinear (what hz_to_qdq writes) give the same
// float32 bits for every finite value, ties and saturation included; NaN differs by design (NaN vs 0).
TEST(FakeQuant, CalibrationMatchesQuantizeDequantizeLinear) {
  const float scale = 0.0123f;
  const CalibrationSpec s = int8_spec(scale);
  std::vector<float> v;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  for (int i = 0; i < 2000; ++i) v.push_back(dist(rng));
  for (int k = -130; k <= 130; ++k) v.push_back((static_cast<float>(k) + 0.5f) * scale);  // near ties
  v.push_back(NAN);
  const Tensor x = Tensor::from_floats({static_cast<int64_t>(v.size())}, v);
  const Tensor fake = fake_quantize(s, s.qtype, s.scales, x);
  Tensor zp(DType::Int8, {});
  zp.mutable_data<int8_t>()[0] = 0;
  const Tensor sc = Tensor::from_floats({}, {scale});
  const auto q = test::run_op("QuantizeLinear", {x, sc, zp}, {}, 1, 13);
  const auto dq = test::run_op("DequantizeLinear", {q[0], sc, zp}, {}, 1, 13);
  for (size_t i = 0; i + 1 < v.size(); ++i)
    ASSERT_EQ(bits(fake.data<float>()[i]), bits(dq[0].data<float>()[i])) << "x = " << v[i];
  EXPECT_TRUE(std::isnan(fake.data<float>()[v.size() - 1]));
  EXPECT_EQ(dq[0].data<float>()[v.size() - 1], 0.0f);
}
