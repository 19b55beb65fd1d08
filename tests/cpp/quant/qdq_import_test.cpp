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
  ir::Model blocked =
      ModelBuilder(21)
          .input("x", DType::Float, {2, 4})
          .initializer("s", Tensor::from_floats({2, 2}, {0.1f, 0.2f, 0.3f, 0.4f}))
          .initializer("z", typed<int8_t>(DType::Int8, {2, 2}, {0, 0, 0, 0}))
          .node("QuantizeLinear", "bq", {"x", "s", "z"}, {"xq"}, {attr_int("axis", 1), attr_int("block_size", 2)})
          .node("DequantizeLinear", "bdq", {"xq", "s", "z"}, {"y"}, {attr_int("axis", 1), attr_int("block_size", 2)})
          .output("y")
          .build();
  const QdqImportSummary s = import_qdq(blocked);
  EXPECT_EQ(s.activations, 0u);
  EXPECT_EQ(s.left, 1u);
  ASSERT_EQ(blocked.warnings.size(), 1u);
  EXPECT_NE(blocked.warnings[0].find("'bq': blocked quantization (block_size 2)"), std::string::npos)
      << blocked.warnings[0];
  EXPECT_TRUE(calibration_names(blocked.graph).empty());

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
