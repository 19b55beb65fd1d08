#include "quant/calibration.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "core/error.h"
#include "ops/op_test_util.h"

using namespace ptq;
using namespace ptq::quant;
using ptq::test::attr_float;
using ptq::test::attr_floats;
using ptq::test::attr_int;
using ptq::test::attr_ints;
using ptq::test::attr_string;
using ptq::test::attr_strings;

namespace {

// A graph with one HzCalibration node reading either a graph input (feature) or an initializer (weight).
ir::Graph calibration_graph(std::vector<ir::Attribute> attrs, const Tensor* weight = nullptr,
                            const std::string& consumer = "") {
  ir::Graph g;
  for (const char* name : {"x", "y", "z"}) {
    g.values.emplace_back();
    g.values.back().name = name;
  }
  if (weight) g.values[0].initializer = *weight;
  else g.values[0].is_graph_input = true;
  ir::Node n;
  n.name = "x_HzCalibration";
  n.op_type = "HzCalibration";
  n.domain = "horizon";
  n.inputs = {0};
  n.outputs = {1};
  n.attributes = std::move(attrs);
  g.nodes.push_back(n);
  if (!consumer.empty()) {
    ir::Node c;
    c.name = "consumer";
    c.op_type = consumer;
    c.inputs = {1};
    c.outputs = {2};
    g.nodes.push_back(c);
  }
  g.outputs = {1};
  ir::finalize_graph(g);
  return g;
}

}  // namespace

TEST(QType, RangesFollowTheReferenceTable) {
  EXPECT_EQ(QType::parse("int8").qmin(), -128);
  EXPECT_EQ(QType::parse("int8").qmax(), 127);
  EXPECT_EQ(QType::parse("int16").qmax(), 32767);
  EXPECT_EQ(QType::parse("int4").qmin(), -8);
  EXPECT_EQ(QType::parse("uint8").qmin(), 0);
  EXPECT_EQ(QType::parse("uint8").qmax(), 255);
  EXPECT_EQ(QType::parse("int32").qmax(), 2147483647.0);
  EXPECT_EQ(QType::parse("float8e4m3fn").qmax(), 448);
  EXPECT_EQ(QType::parse("float16").qmax(), 127);  // int8 fallback, unused
  EXPECT_THROW(QType::parse("int9000"), Error);
  EXPECT_THROW(QType::parse("fp8"), Error);
}

TEST(Calibration, SymmetricInt8PerTensor) {
  ir::Graph g = calibration_graph({attr_floats("thresholds", {1.27f}), attr_string("qtype", "int8")});
  CalibrationSpec s = parse_calibration(g, 0);
  EXPECT_EQ(s.kind, TensorKind::Feature);
  ASSERT_EQ(s.scales.size(), 1u);
  EXPECT_FLOAT_EQ(s.scales[0], 1.27f / 127.0f);
  // x/s: 0.015/0.01 = 1.5 -> 2 (tie to even), 0.025 -> 2.5 -> 2, -0.005 -> -0.5 -> -0, 5 -> clamp 127, -5 -> -128.
  Tensor x = Tensor::from_floats({5}, {0.015f, 0.025f, -0.005f, 5.0f, -5.0f});
  Tensor y = fake_quantize(s, s.qtype, s.scales, x);
  const float sc = s.scales[0];
  const std::vector<float> q = {2, 2, 0, 127, -128};
  for (int i = 0; i < 5; ++i) EXPECT_FLOAT_EQ(y.data<float>()[i], q[static_cast<size_t>(i)] * sc) << i;
  Tensor away = fake_quantize(s, s.qtype, s.scales, x, RoundMode::HalfAwayFromZero);
  // Values chosen near ties are not exact ties in float32 (0.015f/0.01f != 1.5 exactly); check a clear tie:
  Tensor tie = Tensor::from_floats({2}, {2.5f * sc, -2.5f * sc});
  EXPECT_FLOAT_EQ(fake_quantize(s, s.qtype, s.scales, tie).data<float>()[0], 2 * sc);
  EXPECT_FLOAT_EQ(fake_quantize(s, s.qtype, s.scales, tie, RoundMode::HalfAwayFromZero).data<float>()[0], 3 * sc);
  EXPECT_FLOAT_EQ(fake_quantize(s, s.qtype, s.scales, tie, RoundMode::HalfAwayFromZero).data<float>()[1], -3 * sc);
  EXPECT_EQ(away.numel(), 5);
}

TEST(Calibration, WeightPerChannelAlongAxis0) {
  Tensor w = Tensor::from_floats({2, 3}, {0.5f, -1.0f, 0.26f, 10.0f, -20.0f, 3.0f});
  ir::Graph g = calibration_graph({attr_floats("thresholds", {1.0f, 20.0f}), attr_int("axis", 0)}, &w);
  CalibrationSpec s = parse_calibration(g, 0);
  EXPECT_EQ(s.kind, TensorKind::Weight);
  Tensor y = fake_quantize(s, s.qtype, s.scales, w);
  const float s0 = 1.0f / 127, s1 = 20.0f / 127;
  EXPECT_FLOAT_EQ(y.data<float>()[0], std::nearbyint(0.5f / s0) * s0);
  EXPECT_FLOAT_EQ(y.data<float>()[1], -127 * s0);
  EXPECT_FLOAT_EQ(y.data<float>()[4], -127 * s1);
  EXPECT_FLOAT_EQ(y.data<float>()[5], std::nearbyint(3.0f / s1) * s1);
  // Wrong channel count is reported with the node name.
  Tensor bad = Tensor::from_floats({3, 1}, {1, 2, 3});
  try {
    fake_quantize(s, s.qtype, s.scales, bad);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("x_HzCalibration"), std::string::npos);
  }
}

TEST(Calibration, ConvTransposeWeightsAreRegrouped) {
  // Weight [C_in=4, C_out/g=1, 1, 1] with group 2: C_out = 2 scales; element i uses scale (i div 2)·1 + 0.
  Tensor w = Tensor::from_floats({4, 1, 1, 1}, {1.0f, 1.0f, 1.0f, 1.0f});
  ir::Graph g = calibration_graph({attr_floats("thresholds", {127.0f, 254.0f}), attr_int("axis", 1), attr_int("group", 2)}, &w,
                                  "ConvTranspose");
  CalibrationSpec s = parse_calibration(g, 0);
  EXPECT_TRUE(s.conv_transpose_weight);
  Tensor x = Tensor::from_floats({4, 1, 1, 1}, {1.4f, 1.4f, 1.4f, 1.4f});
  Tensor y = fake_quantize(s, s.qtype, s.scales, x);
  EXPECT_FLOAT_EQ(y.data<float>()[0], 1.0f);  // scale 1: round(1.4) = 1
  EXPECT_FLOAT_EQ(y.data<float>()[1], 1.0f);
  EXPECT_FLOAT_EQ(y.data<float>()[2], 2.0f);  // scale 2: round(0.7) = 1 -> 2
  EXPECT_FLOAT_EQ(y.data<float>()[3], 2.0f);
}

TEST(Calibration, AsymmetricUint8) {
  // thresholds [fmin, fmax] = [-1, 3]: s = 4/255, zp = 255 - round(3/s) = 255 - 191 = 64.
  ir::Graph g = calibration_graph({attr_floats("thresholds", {-1.0f, 3.0f}), attr_string("qtype", "uint8"), attr_ints("zero_point", {0})});
  CalibrationSpec s = parse_calibration(g, 0);
  ASSERT_TRUE(s.asymmetric);
  EXPECT_FLOAT_EQ(s.scales[0], 4.0f / 255.0f);
  EXPECT_EQ(s.zero_points[0], 255 - static_cast<int64_t>(std::nearbyint(3.0 / (4.0f / 255.0f))));
  Tensor x = Tensor::from_floats({3}, {-2.0f, 0.0f, 10.0f});
  Tensor y = fake_quantize(s, s.qtype, s.scales, x);
  const float sc = s.scales[0];
  const float zp = static_cast<float>(s.zero_points[0]);
  EXPECT_FLOAT_EQ(y.data<float>()[0], (0 - zp) * sc);
  EXPECT_FLOAT_EQ(y.data<float>()[1], 0.0f);
  EXPECT_FLOAT_EQ(y.data<float>()[2], (255 - zp) * sc);
}

TEST(Calibration, FloatCastsAndOff) {
  ir::Graph g = calibration_graph({attr_string("qtype", "float16"), attr_string("switch", "OFF")});
  CalibrationSpec s = parse_calibration(g, 0);
  EXPECT_FALSE(s.switch_on);
  Tensor x = Tensor::from_floats({2}, {1.0f + 1e-4f, 70000.0f});
  Tensor y = fake_quantize(s, s.qtype, s.scales, x);
  EXPECT_FLOAT_EQ(y.data<float>()[0], 1.0f);  // 1+1e-4 is below half a float16 ulp (2^-11) from 1
  EXPECT_TRUE(std::isinf(y.data<float>()[1]));
  Tensor z = fake_quantize(s, QType::parse("float32"), s.scales, x);
  EXPECT_TRUE(z.shares_storage_with(x));
  Tensor b = fake_quantize(s, QType::parse("bfloat16"), s.scales, Tensor::from_floats({1}, {1.0f + 1.0f / 512}));
  EXPECT_FLOAT_EQ(b.data<float>()[0], 1.0f);
}

TEST(Calibration, LegacyAttributes) {
  // bits -> qtype; info_strings weight overrides the input classification; shift -> power-of-two scales.
  ir::Graph g = calibration_graph({attr_floats("thresholds", {3.0f}), attr_int("bits", 16),
                                   attr_strings("info_strings", {"weight", "shift", "per-tensor"})});
  CalibrationSpec s = parse_calibration(g, 0);
  EXPECT_EQ(s.qtype.name, "int16");
  EXPECT_EQ(s.kind, TensorKind::Weight);
  // 3/32767 = 9.155e-5; log2 = -13.415; -round(13.415) = -13 -> 2^-13.
  EXPECT_FLOAT_EQ(s.scales[0], std::ldexp(1.0f, -13));
  // asymq: threshold - zp*scale, int8 -> uint8, symmetric unsigned.
  ir::Graph a = calibration_graph({attr_floats("thresholds", {2.0f}), attr_floats("scales", {0.01f}), attr_ints("zero_point", {10}),
                                   attr_strings("info_strings", {"asymq"})});
  CalibrationSpec sa = parse_calibration(a, 0);
  EXPECT_EQ(sa.qtype.name, "uint8");
  EXPECT_FALSE(sa.asymmetric);
  EXPECT_FLOAT_EQ(sa.thresholds[0], 2.0f - 10 * 0.01f);
  ir::Graph broken = calibration_graph({attr_floats("thresholds", {2.0f}), attr_strings("info_strings", {"asymq"})});
  EXPECT_THROW(parse_calibration(broken, 0), Error);
}

TEST(Calibration, Constant2UsesScales) {
  ir::Graph g = calibration_graph({attr_floats("scales", {0.5f}), attr_int("constant", 2), attr_floats("thresholds", {99.0f})});
  CalibrationSpec s = parse_calibration(g, 0);
  EXPECT_FLOAT_EQ(s.scales[0], 0.5f);
  EXPECT_FLOAT_EQ(s.thresholds[0], 0.5f * 127);
}

TEST(Calibration, Constant2AsymmetricKeepsStoredZeroPoint) {
  // Asymmetric uint8 with stored scales: two thresholds [fmin, fmax] and one scale must not be
  // replaced by a single threshold (the zero point was then read from thresholds[1], out of bounds).
  ir::Graph g = calibration_graph({attr_floats("thresholds", {-1.0f, 3.0f}), attr_floats("scales", {0.02f}), attr_int("constant", 2),
                                   attr_string("qtype", "uint8"), attr_ints("zero_point", {50})});
  CalibrationSpec s = parse_calibration(g, 0);
  ASSERT_TRUE(s.asymmetric);
  EXPECT_EQ(s.scales, std::vector<float>{0.02f});
  EXPECT_EQ(s.zero_points, std::vector<int64_t>{50});
  EXPECT_EQ(s.thresholds, (std::vector<float>{-1.0f, 3.0f}));
  Tensor y = fake_quantize(s, s.qtype, s.scales, Tensor::from_floats({2}, {0.0f, 10.0f}));
  EXPECT_FLOAT_EQ(y.data<float>()[0], 0.0f);                 // round(0 / 0.02) + 50 = 50 -> 0
  EXPECT_FLOAT_EQ(y.data<float>()[1], (255 - 50) * 0.02f);  // clamped at qmax
}

TEST(Calibration, RejectsNaNAndZeroThresholds) {
  EXPECT_THROW(parse_calibration(calibration_graph({attr_floats("thresholds", {std::nanf("")})}), 0), Error);
  EXPECT_THROW(parse_calibration(calibration_graph({attr_floats("thresholds", {0.0f})}), 0), Error);
}

// Asymmetric scales, zero points and the asymq shift are computed in double on the float attributes and
// rounded to float32 once, as the original's IR does with Python floats (§1.4). Each case differs from a
// float32 evaluation; the values are numpy's (np.float32 of the double expression).
TEST(Calibration, ParametersAreComputedInDouble) {
  const auto bits = [](float v) {
    uint32_t u;
    std::memcpy(&u, &v, sizeof u);
    return u;
  };
  // [fmin, fmax] = [-0.3, 0.1]: 0.1f - (-0.3f) = 0.4000000134110451 is exact in double (float32 rounds it to
  // 0.40000003576...); / 255 = 0.0015686275035727... -> float32 0.0015686275437474 (bits 986552936); the
  // float32 evaluation gives 0.0015686274273321 (986552935).
  ir::Graph g = calibration_graph({attr_floats("thresholds", {-0.3f, 0.1f}), attr_string("qtype", "uint8"), attr_ints("zero_point", {0})});
  const CalibrationSpec s = parse_calibration(g, 0);
  ASSERT_TRUE(s.asymmetric);
  EXPECT_EQ(bits(s.scales[0]), 986552936u);
  // zero point 255 - round(0.1f / s) = 255 - round(63.749997...) = 191 either way.
  EXPECT_EQ(s.zero_points[0], 191);
  // [-0.29, 0.01]: s = 0.0011764705413952 (either way); 0.01f / s = 8.50000014842954 in double -> 9, zero
  // point 246, where the float32 quotient is exactly 8.5 and would round (half to even) to 8, giving 247.
  ir::Graph h = calibration_graph({attr_floats("thresholds", {-0.29f, 0.01f}), attr_string("qtype", "uint8"), attr_ints("zero_point", {0})});
  EXPECT_EQ(parse_calibration(h, 0).zero_points[0], 246);
  // Under an override to uint16 the zero point is the new type's, not the stored 246: s = 0.2999999914318323
  // / 65535 -> float32 4.577706476993626e-06, 0.01f / s = 2184.499995... -> 2184, 65535 - 2184 = 63351.
  const CalibrationSpec sh = parse_calibration(h, 0);
  const QType u16 = QType::parse("uint16");
  const std::vector<float> s16 = derive_scales(sh, u16);
  EXPECT_EQ(s16, std::vector<float>{4.577706476993626e-06f});
  EXPECT_EQ(derive_zero_points(sh, u16, s16), std::vector<int64_t>{63351});
  // asymq: threshold 1.0, scale 0.05f (0.05000000074505806), zero point 9: 1 - 9 * 0.05000000074505806 =
  // 0.5499999932944775 in double -> float32 0.550000011920929 (= 0.55f); float32 arithmetic gives
  // 0.5499999523162842, one ulp below.
  ir::Graph a = calibration_graph({attr_floats("thresholds", {1.0f}), attr_floats("scales", {0.05f}), attr_ints("zero_point", {9}),
                                   attr_strings("info_strings", {"asymq"})});
  EXPECT_EQ(parse_calibration(a, 0).thresholds[0], 0.55f);
}

// A qtype override of a Horizon node with constant = 2 (quant::override_scales): its stored scales with
// `stored` (the original's IR), else derived for the new type; a Q/DQ quantizer is never such a node.
TEST(Calibration, OverrideScalesOfConstant2Nodes) {
  ir::Graph g = calibration_graph({attr_floats("scales", {0.5f}), attr_int("constant", 2)});
  const CalibrationSpec s = parse_calibration(g, 0);
  const QType i16 = QType::parse("int16");
  EXPECT_EQ(override_scales(s, i16, true), std::vector<float>{0.5f});
  EXPECT_EQ(override_scales(s, i16, false), std::vector<float>{63.5f / 32767.0f});  // thresholds 0.5 * 127
  ir::Graph t = calibration_graph({attr_floats("thresholds", {63.5f})});  // constant 0: derived either way
  EXPECT_EQ(override_scales(parse_calibration(t, 0), i16, true), std::vector<float>{63.5f / 32767.0f});
}
