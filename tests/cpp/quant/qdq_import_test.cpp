#include "quant/qdq_import.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "calibrate/calibrate.h"
#include "core/error.h"
#include "exec/executor.h"
#include "ops/op_test_util.h"
#include "quant/calibration.h"
#include "quant/hz_to_qdq.h"
#include "quant/model_builder.h"
#include "quant/relations.h"

using namespace ptq;
using namespace ptq::quant;
using test::attr_int;
using test::ModelBuilder;

namespace {

Tensor random_tensor(Shape shape, uint32_t seed, float scale = 1.0f) {
  Tensor t(DType::Float, shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-scale, scale);
  for (int64_t i = 0; i < t.numel(); ++i) t.mutable_data<float>()[i] = u(rng);
  return t;
}

template <class T>
Tensor typed(DType dtype, Shape shape, const std::vector<T>& values) {
  Tensor t(dtype, shape);
  for (size_t i = 0; i < values.size(); ++i) t.mutable_data<T>()[i] = values[i];
  return t;
}

std::vector<Tensor> run(const ir::Model& m, const std::vector<Tensor>& inputs, bool on) {
  exec::Executor e(m);
  return e.outputs(e.run(inputs, on ? e.stored_config() : e.uniform_config(false)));
}

void expect_bitwise(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].shape(), b[i].shape());
    EXPECT_EQ(std::memcmp(a[i].raw(), b[i].raw(), a[i].nbytes()), 0) << "output " << i;
  }
}

std::vector<std::string> calibration_names(const ir::Graph& g) {
  std::vector<std::string> names;
  for (const auto& n : g.nodes)
    if (is_calibration_node(n)) names.push_back(n.name);
  return names;
}

// conv -> relu -> conv, calibrated by calibrate() and rewritten to Q/DQ by hz_to_qdq.
ir::Model calibrated_conv() {
  const ir::Model fm = ModelBuilder()
                           .input("x", DType::Float, {1, 2, 5, 5})
                           .initializer("W1", random_tensor({3, 2, 3, 3}, 1, 0.5f))
                           .initializer("W2", random_tensor({2, 3, 1, 1}, 2, 0.5f))
                           .node("Conv", "conv1", {"x", "W1"}, {"c"})
                           .node("Relu", "relu", {"c"}, {"r"})
                           .node("Conv", "conv2", {"r", "W2"}, {"y"})
                           .output("y")
                           .build();
  return calibrate(fm, {{random_tensor({1, 2, 5, 5}, 3, 2.0f)}});
}

// x (float) -> Q/DQ uint8 asymmetric (scale 0.05, zp 100) -> Conv with an int8 per-axis weight
// (DequantizeLinear, axis 0) and an int32 bias (DequantizeLinear) -> y.
ModelBuilder qdq_conv(int64_t opset = 13) {
  ModelBuilder b(opset);
  b.input("x", DType::Float, {1, 2, 4, 4})
      .initializer("x_scale", Tensor::from_floats({}, {0.05f}))
      .initializer("x_zp", typed<uint8_t>(DType::UInt8, {}, {100}))
      .initializer("w_q", typed<int8_t>(DType::Int8, {2, 2, 1, 1}, {-127, 5, 64, 127}))
      .initializer("w_scale", Tensor::from_floats({2}, {0.01f, 0.02f}))
      .initializer("w_zp", typed<int8_t>(DType::Int8, {2}, {0, 0}))
      .initializer("b_q", typed<int32_t>(DType::Int32, {2}, {30, -40}))
      .initializer("b_scale", Tensor::from_floats({}, {0.0005f}))
      .node("QuantizeLinear", "x_QuantizeLinear", {"x", "x_scale", "x_zp"}, {"x_q"})
      .node("DequantizeLinear", "x_DequantizeLinear", {"x_q", "x_scale", "x_zp"}, {"x_dq"})
      .node("DequantizeLinear", "w_DequantizeLinear", {"w_q", "w_scale", "w_zp"}, {"w_dq"}, {attr_int("axis", 0)})
      .node("DequantizeLinear", "b_DequantizeLinear", {"b_q", "b_scale"}, {"b_dq"})
      .node("Conv", "conv", {"x_dq", "w_dq", "b_dq"}, {"y"})
      .output("y");
  return b;
}

}  // namespace

TEST(QdqImport, RoundTripOfACalibratedModelRunsBitIdentically) {
  const ir::Model cm = calibrated_conv();
  ir::Model m = hz_to_qdq(cm);
  const QdqImportSummary s = import_qdq(m);
  EXPECT_EQ(s.activations, 2u);
  EXPECT_EQ(s.weights, 2u);
  EXPECT_EQ(s.left, 0u);
  EXPECT_TRUE(m.warnings.empty());
  // Named after the quantized tensors.
  EXPECT_EQ(calibration_names(m.graph), (std::vector<std::string>{"x", "W1", "r", "W2"}));
  EXPECT_GT(m.opset("horizon"), 0);
  const std::vector<Tensor> in = {random_tensor({1, 2, 5, 5}, 9, 2.0f)};
  expect_bitwise(run(m, in, true), run(cm, in, true));
  expect_bitwise(run(m, in, false), run(cm, in, false));
  const CalibrationSpec w1 = parse_calibration(m.graph, m.graph.find_node("W1"));
  EXPECT_EQ(w1.kind, TensorKind::Weight);
  EXPECT_TRUE(w1.affine);
  EXPECT_EQ(w1.scales, parse_calibration(cm.graph, cm.graph.find_node("W1_HzCalibration")).scales);
  EXPECT_EQ(w1.qdq_nodes,
            (std::vector<std::string>{"W1_HzCalibration_QuantizeLinear", "W1_HzCalibration_DequantizeLinear"}));
  const CalibrationSpec x = parse_calibration(m.graph, m.graph.find_node("x"));
  EXPECT_EQ(x.kind, TensorKind::Feature);
  EXPECT_FALSE(x.asymmetric);
  // Relations: each Conv is fed by its activation and weight quantizers.
  const CalibrationRelations rel(m.graph);
  EXPECT_EQ(rel.node_to_calibration().at("conv1"), (std::set<std::string>{"x", "W1"}));
  EXPECT_EQ(rel.node_to_calibration().at("conv2"), (std::set<std::string>{"r", "W2"}));
}

TEST(QdqImport, AsymmetricActivationPerAxisWeightAndFoldedBias) {
  const ir::Model original = qdq_conv().build();
  ir::Model m = original;
  const QdqImportSummary s = import_qdq(m);
  EXPECT_EQ(s.activations, 1u);
  EXPECT_EQ(s.weights, 1u);
  EXPECT_EQ(s.folded, 1u);
  EXPECT_EQ(calibration_names(m.graph), (std::vector<std::string>{"x", "w_q"}));
  const Tensor x = random_tensor({1, 2, 4, 4}, 4, 6.0f);  // beyond the range [-5, 7.75]: clamps too
  // ON: the original model as our QuantizeLinear/DequantizeLinear kernels run it, bit for bit.
  expect_bitwise(run(m, {x}, true), run(original, {x}, true));
  // OFF: the activation passes through; the weight and bias are their dequantized values.
  const ir::Model no_activation_qdq =
      ModelBuilder()
          .input("x", DType::Float, {1, 2, 4, 4})
          .initializer("w_q", typed<int8_t>(DType::Int8, {2, 2, 1, 1}, {-127, 5, 64, 127}))
          .initializer("w_scale", Tensor::from_floats({2}, {0.01f, 0.02f}))
          .initializer("w_zp", typed<int8_t>(DType::Int8, {2}, {0, 0}))
          .initializer("b_q", typed<int32_t>(DType::Int32, {2}, {30, -40}))
          .initializer("b_scale", Tensor::from_floats({}, {0.0005f}))
          .node("DequantizeLinear", "w_dq", {"w_q", "w_scale", "w_zp"}, {"w_dq"}, {attr_int("axis", 0)})
          .node("DequantizeLinear", "b_dq", {"b_q", "b_scale"}, {"b_dq"})
          .node("Conv", "conv", {"x", "w_dq", "b_dq"}, {"y"})
          .output("y")
          .build();
  expect_bitwise(run(m, {x}, false), run(no_activation_qdq, {x}, true));

  const CalibrationSpec a = parse_calibration(m.graph, m.graph.find_node("x"));
  EXPECT_TRUE(a.asymmetric);
  EXPECT_EQ(a.qtype.name, "uint8");
  EXPECT_EQ(a.zero_points, (std::vector<int64_t>{100}));
  EXPECT_EQ(a.range_min, (std::vector<float>{-100.0f * 0.05f}));
  EXPECT_EQ(a.range_max, (std::vector<float>{155.0f * 0.05f}));
  // int16 override: the same real range over 65535 steps, zero point round(-32768 + 5 / s').
  const QType i16 = QType::parse("int16");
  const std::vector<float> s16 = derive_scales(a, i16);
  ASSERT_EQ(s16.size(), 1u);
  EXPECT_FLOAT_EQ(s16[0], 12.75f / 65535.0f);
  const std::vector<int64_t> z16 = derive_zero_points(a, i16, s16);
  EXPECT_EQ(z16,
            (std::vector<int64_t>{static_cast<int64_t>(std::nearbyint(-32768.0 + 5.0 / static_cast<double>(s16[0])))}));
  // Within the range, int16 rounds 257 times finer than uint8: the output moves far less from OFF.
  const Tensor inside = random_tensor({1, 2, 4, 4}, 5, 4.9f);
  exec::Executor e(m);
  exec::QuantConfig c = e.stored_config();
  c.qtype.assign(c.on.size(), "");
  c.qtype[0] = "int16";
  const auto y16 = e.outputs(e.run({inside}, c));
  const auto yoff = run(m, {inside}, false);
  const auto y8 = run(m, {inside}, true);
  double d16 = 0, d8 = 0;
  for (int64_t i = 0; i < yoff[0].numel(); ++i) {
    d16 = std::max(d16, std::fabs(static_cast<double>(y16[0].data<float>()[i] - yoff[0].data<float>()[i])));
    d8 = std::max(d8, std::fabs(static_cast<double>(y8[0].data<float>()[i] - yoff[0].data<float>()[i])));
  }
  EXPECT_GT(d8, 0.0);
  EXPECT_LT(d16, d8 / 16);
}

TEST(QdqImport, WeightRequantizesToTheStoredIntegers) {
  ir::Model m = qdq_conv().build();
  import_qdq(m);
  const CalibrationSpec w = parse_calibration(m.graph, m.graph.find_node("w_q"));
  EXPECT_EQ(w.kind, TensorKind::Weight);
  EXPECT_EQ(w.axis, 0);
  EXPECT_FALSE(w.asymmetric);
  const Tensor& values = *m.graph.constant(w.input_value);
  const Tensor q = fake_quantize(w, w.qtype, w.scales, values);
  EXPECT_EQ(std::memcmp(q.raw(), values.raw(), q.nbytes()), 0);
  EXPECT_EQ(values.data<float>()[0], -127.0f * 0.01f);
  EXPECT_EQ(values.data<float>()[3], 127.0f * 0.02f);
}

TEST(QdqImport, SharedQuantizerAndMicrosoftDomain) {
  ir::Model m = ModelBuilder()
                    .opset("com.microsoft", 1)
                    .input("x", DType::Float, {4})
                    .initializer("s", Tensor::from_floats({}, {0.1f}))
                    .initializer("z", typed<uint16_t>(DType::UInt16, {}, {30000}))
                    .node("QuantizeLinear", "q", {"x", "s", "z"}, {"xq"}, {}, "com.microsoft")
                    .node("DequantizeLinear", "dq1", {"xq", "s", "z"}, {"a"}, {}, "com.microsoft")
                    .node("DequantizeLinear", "dq2", {"xq", "s", "z"}, {"b"}, {}, "com.microsoft")
                    .node("Relu", "relu", {"a"}, {"ya"})
                    .node("Neg", "neg", {"b"}, {"yb"})
                    .output("ya")
                    .output("yb")
                    .build();
  const QdqImportSummary s = import_qdq(m);
  EXPECT_EQ(s.activations, 1u);
  EXPECT_EQ(calibration_names(m.graph), (std::vector<std::string>{"x"}));
  const CalibrationSpec spec = parse_calibration(m.graph, m.graph.find_node("x"));
  EXPECT_EQ(spec.qtype.name, "uint16");
  EXPECT_EQ(spec.qdq_nodes, (std::vector<std::string>{"q", "dq1", "dq2"}));
  EXPECT_EQ(m.graph.node(m.graph.find_node("dq2")).op_type, "Identity");
  const auto y = run(m, {Tensor::from_floats({4}, {-3000.0f, -1.04f, 0.26f, 4000.0f})}, true);
  // uint16 zp 30000, s 0.1: [-3000, 3553.5]; -1.04 -> -10 steps, 0.26 -> 3 steps (round half even of 2.6).
  EXPECT_FLOAT_EQ(y[0].data<float>()[0], 0.0f);
  EXPECT_FLOAT_EQ(y[1].data<float>()[0], 3000.0f);
  EXPECT_FLOAT_EQ(y[1].data<float>()[1], 10 * 0.1f);
  EXPECT_FLOAT_EQ(y[0].data<float>()[2], 3 * 0.1f);
  EXPECT_FLOAT_EQ(y[0].data<float>()[3], 35535 * 0.1f);
  const CalibrationRelations rel(m.graph);
  EXPECT_EQ(rel.node_to_calibration().at("relu"), (std::set<std::string>{"x"}));
}

TEST(QdqImport, UnmappableQuantizersStayWithAWarningNamingTheNode) {
  ir::Model mismatch = ModelBuilder()
                           .input("x", DType::Float, {4})
                           .initializer("s", Tensor::from_floats({}, {0.1f}))
                           .initializer("s2", Tensor::from_floats({}, {0.2f}))
                           .node("QuantizeLinear", "q", {"x", "s"}, {"xq"})
                           .node("DequantizeLinear", "dq", {"xq", "s2"}, {"y"})
                           .output("y")
                           .build();
  import_qdq(mismatch);
  ASSERT_EQ(mismatch.warnings.size(), 1u);
  EXPECT_NE(mismatch.warnings[0].find("'dq': its scale, zero point or axis differ from those of QuantizeLinear 'q'"),
            std::string::npos)
      << mismatch.warnings[0];

  ir::Model integer_out = ModelBuilder()
                              .input("x", DType::Float, {4})
                              .initializer("s", Tensor::from_floats({}, {0.1f}))
                              .node("QuantizeLinear", "q", {"x", "s"}, {"xq"})
                              .output("xq")
                              .build();
  import_qdq(integer_out);
  ASSERT_EQ(integer_out.warnings.size(), 1u);
  EXPECT_NE(integer_out.warnings[0].find("'q': its output is not dequantized"), std::string::npos)
      << integer_out.warnings[0];

  // A model without Q/DQ nodes is untouched.
  ir::Model plain = ModelBuilder().input("x", DType::Float, {4}).node("Relu", "r", {"x"}, {"y"}).output("y").build();
  const size_t nodes = plain.graph.nodes.size();
  const QdqImportSummary none = import_qdq(plain);
  EXPECT_EQ(none.activations + none.weights + none.left, 0u);
  EXPECT_EQ(plain.graph.nodes.size(), nodes);
}

namespace {

Tensor zeros(DType dtype, const Shape& shape) {
  Tensor t(dtype, shape);
  std::memset(t.mutable_raw(), 0, t.nbytes());
  return t;
}

// x [2, 5] -> Q/DQ int8 blocked along axis 1 by 2 (scale [2, 3], zero points 0) -> y.
ModelBuilder blocked_pair(Shape scale_shape, int64_t block, DType zp_type = DType::Int8) {
  std::vector<float> scales;
  for (int64_t i = 0; i < shape_numel(scale_shape); ++i) scales.push_back(0.05f * static_cast<float>(i + 1));
  ModelBuilder b(21);
  b.input("x", DType::Float, {2, 5})
      .initializer("s", Tensor::from_floats(scale_shape, scales))
      .initializer("z", zeros(zp_type, scale_shape))
      .node("QuantizeLinear", "bq", {"x", "s", "z"}, {"xq"}, {attr_int("axis", 1), attr_int("block_size", block)})
      .node("DequantizeLinear", "bdq", {"xq", "s", "z"}, {"y"}, {attr_int("axis", 1), attr_int("block_size", block)})
      .output("y");
  return b;
}

std::string import_error(ir::Model m) {
  try {
    import_qdq(m);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST(QdqImport, BlockedActivationPairIsOneQuantizerPerBlock) {
  ModelBuilder b = blocked_pair({2, 3}, 2);
  const ir::Model original = b.build();
  ir::Model m = original;
  const QdqImportSummary s = import_qdq(m);
  EXPECT_EQ(s.activations, 1u);
  EXPECT_EQ(s.left, 0u);
  EXPECT_TRUE(m.warnings.empty());
  const CalibrationSpec spec = parse_calibration(m.graph, m.graph.find_node("x"));
  EXPECT_EQ(spec.block_size, 2);
  EXPECT_EQ(spec.axis, 1);
  EXPECT_EQ(spec.scales.size(), 6u);
  EXPECT_FALSE(spec.asymmetric);
  // x[r, c] uses scale s[r, c / 2]: the last block of each row holds one element.
  const Tensor x = Tensor::from_floats({2, 5}, {0.26f, -0.31f, 0.52f, 0.49f, 1.0f, 3.0f, -9.0f, 0.61f, 0.66f, 0.7f});
  const float s0[] = {0.05f, 0.05f, 0.10f, 0.10f, 0.15f, 0.20f, 0.20f, 0.25f, 0.25f, 0.30f};
  const auto on = run(m, {x}, true);
  for (int i = 0; i < 10; ++i) {
    const float q = std::min(std::max(std::nearbyint(x.data<float>()[i] / s0[i]), -128.0f), 127.0f);
    EXPECT_EQ(on[0].data<float>()[i], q * s0[i]) << i;
  }
  expect_bitwise(on, run(original, {x}, true));
  expect_bitwise(run(m, {x}, false), {x});
  // int16: each block keeps its threshold s * 127 (symmetric), as the kernels run the int16 model.
  exec::Executor e(m);
  exec::QuantConfig c = e.stored_config();
  c.qtype = {"int16"};
  std::vector<float> s16;
  for (int i = 0; i < 6; ++i) s16.push_back(0.05f * static_cast<float>(i + 1) * 127.0f / 32767.0f);
  EXPECT_EQ(derive_scales(spec, QType::parse("int16")), s16);
  const ir::Model int16 =
      ModelBuilder(21)
          .input("x", DType::Float, {2, 5})
          .initializer("s", Tensor::from_floats({2, 3}, s16))
          .initializer("z", zeros(DType::Int16, {2, 3}))
          .node("QuantizeLinear", "q", {"x", "s", "z"}, {"xq"}, {attr_int("axis", 1), attr_int("block_size", 2)})
          .node("DequantizeLinear", "dq", {"xq", "s", "z"}, {"y"}, {attr_int("axis", 1), attr_int("block_size", 2)})
          .output("y")
          .build();
  expect_bitwise(e.outputs(e.run({x}, c)), run(int16, {x}, true));
}

TEST(QdqImport, BlockedFourBitWeightsDequantizePerBlock) {
  // W [5, 2] (K = 5, N = 2) blocked along K by 2: scale [3, 2]. int4 without a zero point
  // (symmetric) and uint4 with a zero point per block.
  Tensor wq(DType::Int4, {5, 2});
  const int8_t q[] = {-8, 7, 1, -1, 3, 0, -4, 5, 6, -7};
  std::memcpy(wq.mutable_raw(), q, sizeof q);
  Tensor uq(DType::UInt4, {5, 2});
  const uint8_t u[] = {0, 15, 1, 9, 3, 8, 4, 5, 6, 7};
  std::memcpy(uq.mutable_raw(), u, sizeof u);
  Tensor uz(DType::UInt4, {3, 2});
  const uint8_t z[] = {8, 7, 1, 0, 15, 8};
  std::memcpy(uz.mutable_raw(), z, sizeof z);
  const std::vector<float> s = {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f};
  const ir::Model original =
      ModelBuilder(21)
          .input("x", DType::Float, {1, 5})
          .initializer("w_q", wq)
          .initializer("u_q", uq)
          .initializer("s", Tensor::from_floats({3, 2}, s))
          .initializer("uz", uz)
          .node("DequantizeLinear", "w_dq", {"w_q", "s"}, {"w"}, {attr_int("axis", 0), attr_int("block_size", 2)})
          .node("DequantizeLinear", "u_dq", {"u_q", "s", "uz"}, {"u"}, {attr_int("axis", 0), attr_int("block_size", 2)})
          .node("MatMul", "mw", {"x", "w"}, {"a"})
          .node("MatMul", "mu", {"x", "u"}, {"b"})
          .output("a")
          .output("b")
          .build();
  ir::Model m = original;
  const QdqImportSummary summary = import_qdq(m);
  EXPECT_EQ(summary.weights, 2u);
  EXPECT_EQ(summary.left, 0u);
  const CalibrationSpec w = parse_calibration(m.graph, m.graph.find_node("w_q"));
  const CalibrationSpec v = parse_calibration(m.graph, m.graph.find_node("u_q"));
  EXPECT_EQ(w.qtype.name, "int4");
  EXPECT_FALSE(w.asymmetric);
  EXPECT_EQ(v.qtype.name, "uint4");
  EXPECT_TRUE(v.asymmetric);
  EXPECT_EQ(w.block_size, 2);
  EXPECT_EQ(w.axis, 0);
  // Element [k, n] uses entry [k / 2, n].
  const Tensor& wv = *m.graph.constant(w.input_value);
  const Tensor& uv = *m.graph.constant(v.input_value);
  for (int k = 0; k < 5; ++k)
    for (int n = 0; n < 2; ++n) {
      const size_t e = static_cast<size_t>(k * 2 + n), p = static_cast<size_t>((k / 2) * 2 + n);
      EXPECT_EQ(wv.data<float>()[e], static_cast<float>(q[e]) * s[p]) << e;
      EXPECT_EQ(uv.data<float>()[e], static_cast<float>(static_cast<int>(u[e]) - static_cast<int>(z[p])) * s[p]) << e;
    }
  // Re-quantized, the dequantized values give the stored integers back: ON is the original model.
  for (const CalibrationSpec* c : {&w, &v}) {
    const Tensor& values = *m.graph.constant(c->input_value);
    const Tensor back = fake_quantize(*c, c->qtype, c->scales, values);
    EXPECT_EQ(std::memcmp(back.raw(), values.raw(), values.nbytes()), 0) << c->node_name;
  }
  const Tensor x = random_tensor({1, 5}, 11, 2.0f);
  expect_bitwise(run(m, {x}, true), run(original, {x}, true));
  // uint4 to int16: each block's range [(0 - z) s, (15 - z) s] over 65535 steps.
  const std::vector<float> s16 = derive_scales(v, QType::parse("int16"));
  ASSERT_EQ(s16.size(), 6u);
  for (size_t p = 0; p < 6; ++p) {
    const float lo = (0.0f - static_cast<float>(z[p])) * s[p], hi = (15.0f - static_cast<float>(z[p])) * s[p];
    EXPECT_EQ(s16[p], (hi - lo) / 65535.0f) << p;
  }
}

TEST(QdqImport, BlockedScaleThatDoesNotFitIsAnErrorNamingTheNode) {
  // [2, 5] by blocks of 2 needs a [2, 3] scale.
  EXPECT_NE(
      import_error(blocked_pair({2, 2}, 2).build())
          .find("QuantizeLinear 'bq': its blocked scale [2, 2] does not fit its input [2, 5] with block_size 2 along "
                "axis 1 (expected [2, 3]"),
      std::string::npos)
      << import_error(blocked_pair({2, 2}, 2).build());
  EXPECT_NE(import_error(blocked_pair({2, 3}, 3).build()).find("'bq': its blocked scale [2, 3] does not fit"),
            std::string::npos);
  EXPECT_NE(import_error(blocked_pair({6}, 2).build()).find("'bq': its blocked scale [6] has rank 1, its input rank 2"),
            std::string::npos);
  EXPECT_NE(import_error(blocked_pair({2, 3}, -2).build()).find("'bq': attribute 'block_size' is -2"),
            std::string::npos);
  const ir::Model zp_shape =
      ModelBuilder(21)
          .input("x", DType::Float, {2, 5})
          .initializer("s", Tensor::from_floats({2, 3}, std::vector<float>(6, 0.1f)))
          .initializer("z", zeros(DType::Int8, {3, 2}))
          .node("QuantizeLinear", "bq", {"x", "s", "z"}, {"xq"}, {attr_int("axis", 1), attr_int("block_size", 2)})
          .node("DequantizeLinear", "bdq", {"xq", "s", "z"}, {"y"}, {attr_int("axis", 1), attr_int("block_size", 2)})
          .output("y")
          .build();
  EXPECT_NE(import_error(zp_shape).find(
                "QuantizeLinear 'bq': its zero point [3, 2] and its blocked scale [2, 3] differ in shape"),
            std::string::npos)
      << import_error(zp_shape);
  // The kernel says the same when it runs such a pair (no import: e.g. inside a subgraph).
  exec::Executor e(blocked_pair({2, 2}, 2).build());
  try {
    e.run({Tensor::from_floats({2, 5}, std::vector<float>(10, 0.0f))}, e.stored_config());
    ADD_FAILURE() << "no error";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("blocked scale [2, 2] must have shape [2, 3]"), std::string::npos)
        << err.what();
  }
}
