#include "quant/qoperator_rewrite.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <random>

#include "exec/executor.h"
#include "ops/op_test_util.h"
#include "quant/calibration.h"
#include "quant/model_builder.h"
#include "quant/qdq_import.h"

using namespace ptq;
using namespace ptq::quant;
using test::attr_float;
using test::attr_int;
using test::attr_ints;
using test::ModelBuilder;

namespace {

constexpr const char* kMs = "com.microsoft";

template <class T>
Tensor typed(DType dtype, Shape shape, const std::vector<T>& values) {
  Tensor t(dtype, shape);
  for (size_t i = 0; i < values.size(); ++i) t.mutable_data<T>()[i] = values[i];
  return t;
}
Tensor u8(uint8_t v) { return typed<uint8_t>(DType::UInt8, {}, {v}); }
Tensor f32(float v) { return Tensor::from_floats({}, {v}); }

Tensor random_tensor(Shape shape, uint32_t seed, float scale) {
  Tensor t(DType::Float, shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-scale, scale);
  for (int64_t i = 0; i < t.numel(); ++i) t.mutable_data<float>()[i] = u(rng);
  return t;
}

std::vector<Tensor> run(const ir::Model& m, const std::vector<Tensor>& inputs, bool on) {
  exec::Executor e(m);
  return e.outputs(e.run(inputs, on ? e.stored_config() : e.uniform_config(false)));
}

std::vector<std::string> calibration_names(const ir::Graph& g) {
  std::vector<std::string> names;
  for (const auto& n : g.nodes)
    if (is_calibration_node(n)) names.push_back(n.name);
  return names;
}

const ir::Node& node_named(const ir::Graph& g, const std::string& name) {
  const int id = g.find_node(name);
  EXPECT_GE(id, 0) << name;
  return g.node(id);
}

// x -> QuantizeLinear (0.1, uint8 zp 0) -> QLinearConv (1x1, int8 weight {10, -20} with per-channel
// scales {0.05, 0.01}, int32 bias {100, -45}; y: 0.02, uint8 zero point y_zp) -> DequantizeLinear -> y.
ir::Model qlinear_conv(uint8_t y_zp = 128) {
  return ModelBuilder()
      .input("x", DType::Float, {1, 1, 1, 2})
      .initializer("x_scale", f32(0.1f))
      .initializer("x_zp", u8(0))
      .initializer("w", typed<int8_t>(DType::Int8, {2, 1, 1, 1}, {10, -20}))
      .initializer("w_scale", Tensor::from_floats({2}, {0.05f, 0.01f}))
      .initializer("w_zp", typed<int8_t>(DType::Int8, {}, {0}))
      .initializer("y_scale", f32(0.02f))
      .initializer("y_zp", u8(y_zp))
      .initializer("B", typed<int32_t>(DType::Int32, {2}, {100, -45}))
      .node("QuantizeLinear", "x_QuantizeLinear", {"x", "x_scale", "x_zp"}, {"x_quantized"})
      .node("QLinearConv", "conv", {"x_quantized", "x_scale", "x_zp", "w", "w_scale", "w_zp", "y_scale", "y_zp", "B"},
            {"c_quantized"})
      .node("DequantizeLinear", "c_DequantizeLinear", {"c_quantized", "y_scale", "y_zp"}, {"y"})
      .output("y")
      .build();
}

}  // namespace

TEST(QOperatorRewrite, QLinearConvBecomesConvBetweenQuantizers) {
  const ir::Model original = qlinear_conv();
  ir::Model m = original;
  const QOperatorRewriteSummary s = rewrite_qoperators(m);
  EXPECT_EQ(s.rewritten, 1u);
  EXPECT_EQ(s.left, 0u);
  const ir::Node& conv = node_named(m.graph, "conv");
  EXPECT_EQ(conv.op_type, "Conv");
  EXPECT_EQ(m.graph.value(conv.outputs[0]).name, "c");  // "_quantized" dropped
  import_qdq(m);
  EXPECT_TRUE(m.warnings.empty());
  // The input activation (named after the tensor it quantizes), the weight (its initializer), the
  // output activation (the float tensor); the bias is folded.
  EXPECT_EQ(calibration_names(m.graph), (std::vector<std::string>{"x", "w", "c"}));
  const CalibrationSpec w = parse_calibration(m.graph, m.graph.find_node("w"));
  EXPECT_EQ(w.kind, TensorKind::Weight);
  EXPECT_EQ(w.scales, (std::vector<float>{0.05f, 0.01f}));
  EXPECT_EQ(w.zero_points, (std::vector<int64_t>{0, 0}));  // the scalar zero point, one per channel
  const CalibrationSpec c = parse_calibration(m.graph, m.graph.find_node("c"));
  EXPECT_EQ(c.qtype.name, "uint8");
  EXPECT_EQ(c.zero_points, (std::vector<int64_t>{128}));
  EXPECT_EQ(c.qdq_nodes, (std::vector<std::string>{"conv_QuantizeLinear", "c_DequantizeLinear"}));

  // By hand: x = {0.41, 1.0} -> {4, 10} -> {0.4, 1.0}; w = {0.5, -0.2}; bias {100·0.1·0.05, -45·0.1·0.01}
  // = {0.5, -0.045}; channel 0 {0.7, 1.0} -> {35, 50} + 128; channel 1 {-0.125, -0.245} -> {-6.25,
  // -12.25} -> {-6, -12} + 128.
  const Tensor x = Tensor::from_floats({1, 1, 1, 2}, {0.41f, 1.0f});
  const std::vector<Tensor> on = run(m, {x}, true);
  test::expect_tensor_near(on[0], {1, 2, 1, 2}, {0.7f, 1.0f, -0.12f, -0.24f}, 1e-6f);
  // The original model, as our QLinearConv kernel runs it (integer accumulation).
  test::expect_tensor_near(run(original, {x}, true)[0], {1, 2, 1, 2}, {0.7f, 1.0f, -0.12f, -0.24f}, 1e-6f);
  // OFF: the float convolution of x with the dequantized weight and bias.
  test::expect_tensor_near(run(m, {x}, false)[0], {1, 2, 1, 2},
                           {0.5f * 0.41f + 0.5f, 1.0f, -0.2f * 0.41f - 0.045f, -0.2f - 0.045f}, 1e-6f);
}

TEST(QOperatorRewrite, AnOutputRangeStartingAtZeroKeepsTheFusedRelu) {
  // y zero point 0 on uint8: the range [0, 5.1] of a ReLU fused into the convolution.
  ir::Model m = qlinear_conv(0);
  import_quantizers(m);
  EXPECT_TRUE(m.warnings.empty());
  const ir::Node& relu = node_named(m.graph, "conv_Relu");
  EXPECT_EQ(relu.op_type, "Relu");
  EXPECT_EQ(m.graph.value(relu.outputs[0]).name, "c");
  EXPECT_EQ(m.graph.value(node_named(m.graph, "conv").outputs[0]).name, "conv_output");
  const Tensor x = Tensor::from_floats({1, 1, 1, 2}, {0.41f, 1.0f});
  // ON: the quantizer clamps channel 1's negative values to 0 with or without the Relu.
  test::expect_tensor_near(run(m, {x}, true)[0], {1, 2, 1, 2}, {0.7f, 1.0f, 0.0f, 0.0f}, 1e-6f);
  test::expect_tensor_near(run(qlinear_conv(0), {x}, true)[0], {1, 2, 1, 2}, {0.7f, 1.0f, 0.0f, 0.0f}, 1e-6f);
  // OFF: the ReLU of the float model.
  test::expect_tensor_near(run(m, {x}, false)[0], {1, 2, 1, 2}, {0.5f * 0.41f + 0.5f, 1.0f, 0.0f, 0.0f}, 1e-6f);
}

TEST(QOperatorRewrite, ComMicrosoftOperatorsBecomeTheirFloatOperators) {
  // x -> Q -> QLinearLeakyRelu -> QLinearSigmoid; QLinearAdd and QLinearMul of the two; QLinearConcat
  // of add and mul; QLinearAveragePool; QLinearGlobalAveragePool -> DQ. Every tensor uint8.
  ModelBuilder b;
  b.opset(kMs, 1).input("x", DType::Float, {1, 2, 4, 4});
  const std::vector<std::pair<std::string, float>> scales = {{"x", 0.05f},   {"lr", 0.04f},  {"sg", 1.0f / 255},
                                                             {"add", 0.06f}, {"mul", 0.03f}, {"cat", 0.06f},
                                                             {"ap", 0.05f},  {"gap", 0.04f}};
  for (const auto& [t, s] : scales) b.initializer(t + "_s", f32(s)).initializer(t + "_z", u8(t == "sg" ? 0 : 100));
  b.node("QuantizeLinear", "q_x", {"x", "x_s", "x_z"}, {"x_quantized"})
      .node("QLinearLeakyRelu", "leaky", {"x_quantized", "x_s", "x_z", "lr_s", "lr_z"}, {"lr_quantized"},
            {attr_float("alpha", 0.2f)}, kMs)
      .node("QLinearSigmoid", "sigmoid", {"lr_quantized", "lr_s", "lr_z", "sg_s", "sg_z"}, {"sg_quantized"}, {}, kMs)
      .node("QLinearAdd", "add", {"lr_quantized", "lr_s", "lr_z", "sg_quantized", "sg_s", "sg_z", "add_s", "add_z"},
            {"add_quantized"}, {}, kMs)
      .node("QLinearMul", "mul", {"lr_quantized", "lr_s", "lr_z", "sg_quantized", "sg_s", "sg_z", "mul_s", "mul_z"},
            {"mul_quantized"}, {}, kMs)
      .node("QLinearConcat", "cat",
            {"cat_s", "cat_z", "add_quantized", "add_s", "add_z", "mul_quantized", "mul_s", "mul_z"}, {"cat_quantized"},
            {attr_int("axis", 1)}, kMs)
      .node("QLinearAveragePool", "ap", {"cat_quantized", "cat_s", "cat_z", "ap_s", "ap_z"}, {"ap_quantized"},
            {attr_ints("kernel_shape", {2, 2}), attr_ints("strides", {2, 2})}, kMs)
      .node("QLinearGlobalAveragePool", "gap", {"ap_quantized", "ap_s", "ap_z", "gap_s", "gap_z"}, {"gap_quantized"},
            {attr_int("channels_last", 0)}, kMs)
      .node("DequantizeLinear", "dq_out", {"gap_quantized", "gap_s", "gap_z"}, {"y"})
      .output("y");
  ir::Model m = b.build();
  import_quantizers(m);
  EXPECT_TRUE(m.warnings.empty()) << (m.warnings.empty() ? "" : m.warnings[0]);
  const std::vector<std::pair<std::string, std::string>> ops = {
      {"leaky", "LeakyRelu"}, {"sigmoid", "Sigmoid"},      {"add", "Add"}, {"mul", "Mul"}, {"cat", "Concat"},
      {"ap", "AveragePool"},  {"gap", "GlobalAveragePool"}};
  for (const auto& [name, op] : ops) {
    EXPECT_EQ(node_named(m.graph, name).op_type, op) << name;
    EXPECT_EQ(node_named(m.graph, name).domain, "") << name;
  }
  EXPECT_FLOAT_EQ(node_named(m.graph, "leaky").attr_float("alpha", 0), 0.2f);
  EXPECT_FALSE(node_named(m.graph, "gap").has_attr("channels_last"));
  // Named after the float tensors; where the float operator already has that name (node "add" writes
  // tensor "add"), the calibration node takes "_1" (§1.11).
  EXPECT_EQ(calibration_names(m.graph),
            (std::vector<std::string>{"x", "lr", "sg", "add_1", "mul_1", "cat_1", "ap_1", "gap_1"}));

  // The same computation written by hand as a Q/DQ model (each quantized tensor a Q -> DQ pair)
  // runs bit-identically, ON and OFF.
  ModelBuilder h;
  h.input("x", DType::Float, {1, 2, 4, 4});
  for (const auto& [t, s] : scales) h.initializer(t + "_s", f32(s)).initializer(t + "_z", u8(t == "sg" ? 0 : 100));
  auto qdq = [&](const std::string& t, const std::string& in) {
    h.node("QuantizeLinear", t + "_q", {in, t + "_s", t + "_z"}, {t + "_int"})
        .node("DequantizeLinear", t + "_dq", {t + "_int", t + "_s", t + "_z"}, {t + "_f"});
  };
  qdq("x", "x");
  h.node("LeakyRelu", "leaky", {"x_f"}, {"lr"}, {attr_float("alpha", 0.2f)});
  qdq("lr", "lr");
  h.node("Sigmoid", "sigmoid", {"lr_f"}, {"sg"});
  qdq("sg", "sg");
  h.node("Add", "add", {"lr_f", "sg_f"}, {"add"});
  qdq("add", "add");
  h.node("Mul", "mul", {"lr_f", "sg_f"}, {"mul"});
  qdq("mul", "mul");
  h.node("Concat", "cat", {"add_f", "mul_f"}, {"cat"}, {attr_int("axis", 1)});
  qdq("cat", "cat");
  h.node("AveragePool", "ap", {"cat_f"}, {"ap"}, {attr_ints("kernel_shape", {2, 2}), attr_ints("strides", {2, 2})});
  qdq("ap", "ap");
  h.node("GlobalAveragePool", "gap", {"ap_f"}, {"gap"});
  qdq("gap", "gap");
  h.output("gap_f");
  ir::Model hand = h.build();
  import_qdq(hand);
  const std::vector<Tensor> x = {random_tensor({1, 2, 4, 4}, 7, 4.0f)};
  for (bool on : {true, false}) {
    const Tensor a = run(m, x, on)[0], e = run(hand, x, on)[0];
    ASSERT_EQ(a.shape(), e.shape());
    EXPECT_EQ(std::memcmp(a.raw(), e.raw(), a.nbytes()), 0) << (on ? "ON" : "OFF");
  }
}

TEST(QOperatorRewrite, IntegerOperatorsBetweenQLinearNodesBecomeFloatWithTheirInputsParameters) {
  // x -> Q -> QLinearConv -> MaxPool (uint8) -> Reshape (uint8) -> QLinearMatMul -> DQ.
  ir::Model m = ModelBuilder()
                    .input("x", DType::Float, {1, 1, 2, 2})
                    .initializer("s", f32(0.1f))
                    .initializer("z", u8(10))
                    .initializer("w", typed<int8_t>(DType::Int8, {1, 1, 1, 1}, {50}))
                    .initializer("ws", f32(0.02f))
                    .initializer("wz", typed<int8_t>(DType::Int8, {}, {0}))
                    .initializer("shape", Tensor::from_int64s({2}, {1, 1}))
                    .initializer("b", typed<int8_t>(DType::Int8, {1, 2}, {20, -20}))
                    .initializer("bs", Tensor::from_floats({2}, {0.01f, 0.02f}))
                    .initializer("bz", typed<int8_t>(DType::Int8, {2}, {0, 0}))
                    .node("QuantizeLinear", "q", {"x", "s", "z"}, {"x_quantized"})
                    .node("QLinearConv", "conv", {"x_quantized", "s", "z", "w", "ws", "wz", "s", "z"}, {"c_quantized"})
                    .node("MaxPool", "pool", {"c_quantized"}, {"p_quantized"}, {attr_ints("kernel_shape", {2, 2})})
                    .node("Reshape", "flat", {"p_quantized", "shape"}, {"r_quantized"})
                    .node("QLinearMatMul", "fc", {"r_quantized", "s", "z", "b", "bs", "bz", "s", "z"}, {"y_quantized"})
                    .node("DequantizeLinear", "dq", {"y_quantized", "s", "z"}, {"y"})
                    .output("y")
                    .build();
  const QOperatorRewriteSummary s = rewrite_qoperators(m);
  EXPECT_EQ(s.rewritten, 2u);
  EXPECT_EQ(s.left, 0u);
  EXPECT_EQ(node_named(m.graph, "pool").op_type, "MaxPool");
  EXPECT_EQ(node_named(m.graph, "fc").op_type, "MatMul");
  import_qdq(m);
  EXPECT_TRUE(m.warnings.empty()) << (m.warnings.empty() ? "" : m.warnings[0]);
  // "y" names the graph output already: the float tensor takes the integer tensor's own name.
  EXPECT_EQ(calibration_names(m.graph), (std::vector<std::string>{"x", "w", "c", "p", "r", "b", "y_quantized"}));
  // b quantized per column (its last axis).
  const CalibrationSpec bq = parse_calibration(m.graph, m.graph.find_node("b"));
  EXPECT_EQ(bq.axis, 1);
  EXPECT_EQ(bq.scales, (std::vector<float>{0.01f, 0.02f}));
  // By hand: x {0.1, 0.52, -0.3, 2.0} -> q {11, 15, 7, 30} -> {0.1, 0.5, -0.3, 2.0}; conv w 1.0 -> same
  // values, max 2.0 -> q 30; y = 2.0 · {0.2, -0.4} = {0.4, -0.8} -> {14, 2} -> {0.4, -0.8}.
  test::expect_tensor_near(run(m, {Tensor::from_floats({1, 1, 2, 2}, {0.1f, 0.52f, -0.3f, 2.0f})}, true)[0], {1, 2},
                           {0.4f, -0.8f}, 1e-6f);
}

TEST(QOperatorRewrite, NodesThatCannotBeMappedAreKeptAndNamedInAWarning) {
  ir::Model m = ModelBuilder()
                    .input("x", DType::Float, {1, 1, 2, 2})
                    .input("dynamic_scale", DType::Float, {})
                    .initializer("s", f32(0.1f))
                    .initializer("z", u8(0))
                    .initializer("w", typed<int8_t>(DType::Int8, {1, 1, 1, 1}, {50}))
                    .initializer("ws", f32(0.02f))
                    .initializer("wz", typed<int8_t>(DType::Int8, {}, {0}))
                    .node("QuantizeLinear", "q", {"x", "s", "z"}, {"x_quantized"})
                    .node("QLinearConv", "conv_dynamic",
                          {"x_quantized", "dynamic_scale", "z", "w", "ws", "wz", "s", "z"}, {"a_quantized"})
                    .node("QLinearAveragePool", "pool_nhwc", {"x_quantized", "s", "z", "s", "z"}, {"p_quantized"},
                          {attr_int("channels_last", 1), attr_ints("kernel_shape", {1, 1})}, kMs)
                    .node("QLinearSoftmax", "softmax", {"x_quantized", "s", "z", "s", "z"}, {"sm_quantized"}, {}, kMs)
                    .node("QLinearConv", "conv_odd", {"x_quantized", "s", "z", "w", "ws", "wz", "s", "z"},
                          {"o_quantized"}, {attr_int("future_attribute", 1)})
                    .output("a_quantized")
                    .output("p_quantized")
                    .output("sm_quantized")
                    .output("o_quantized")
                    .build();
  const QOperatorRewriteSummary s = rewrite_qoperators(m);
  EXPECT_EQ(s.rewritten, 0u);
  EXPECT_EQ(s.left, 4u);
  ASSERT_EQ(m.warnings.size(), 1u);
  const std::string& w = m.warnings[0];
  EXPECT_NE(w.find("'conv_dynamic' (QLinearConv): the scale of 'x' ('dynamic_scale') is not a constant"),
            std::string::npos)
      << w;
  EXPECT_NE(w.find("'pool_nhwc' (QLinearAveragePool): attribute 'channels_last' is 1"), std::string::npos) << w;
  EXPECT_NE(w.find("'softmax' (QLinearSoftmax): no rewrite rule"), std::string::npos) << w;
  EXPECT_NE(w.find("'conv_odd' (QLinearConv): attribute 'future_attribute' is not mapped"), std::string::npos) << w;
  // Kept as they are.
  EXPECT_EQ(node_named(m.graph, "conv_dynamic").op_type, "QLinearConv");
  EXPECT_EQ(node_named(m.graph, "pool_nhwc").op_type, "QLinearAveragePool");
}

TEST(QOperatorRewrite, QOperatorNodesInsideSubgraphsAreNamedInAWarning) {
  auto branch = std::make_shared<ir::Graph>();
  branch->name = "then_body";
  ir::Node inner;
  inner.name = "inner_add";
  inner.op_type = "QLinearAdd";
  inner.domain = kMs;
  branch->nodes.push_back(inner);
  ir::Attribute then_branch;
  then_branch.name = "then_branch";
  then_branch.type = ir::AttrType::Graph;
  then_branch.g = branch;
  ir::Model m =
      ModelBuilder().input("c", DType::Bool, {}).node("If", "choose", {"c"}, {"y"}, {then_branch}).output("y").build();
  const QOperatorRewriteSummary s = rewrite_qoperators(m);
  EXPECT_EQ(s.rewritten + s.left, 0u);
  ASSERT_EQ(m.warnings.size(), 1u);
  EXPECT_NE(m.warnings[0].find("'inner_add' (QLinearAdd) in subgraph 'then_body' of node 'choose'"), std::string::npos)
      << m.warnings[0];
}

TEST(QOperatorRewrite, ModelsWithoutQOperatorNodesAreUntouched) {
  ir::Model m = ModelBuilder().input("x", DType::Float, {1, 2}).node("Relu", "relu", {"x"}, {"y"}).output("y").build();
  const size_t values = m.graph.values.size();
  const QOperatorRewriteSummary s = rewrite_qoperators(m);
  EXPECT_EQ(s.rewritten + s.left, 0u);
  EXPECT_EQ(m.graph.values.size(), values);
  EXPECT_TRUE(m.warnings.empty());
}

namespace {

// onnxruntime's dynamic quantization of a MatMul: x -> DynamicQuantizeLinear; MatMulInteger(x_q, W int8 per
// column, x_zp, 0) -> Cast -> Mul(x_s · w_s) -> y.
ir::Model dynamic_matmul_model() {
  return ModelBuilder()
      .input("x", DType::Float, {2, 2})
      .initializer("w", typed<int8_t>(DType::Int8, {2, 2}, {100, -50, 20, 127}))
      .initializer("w_scale", Tensor::from_floats({2}, {0.01f, 0.02f}))
      .initializer("w_zp", typed<int8_t>(DType::Int8, {2}, {0, 0}))
      .node("DynamicQuantizeLinear", "x_QuantizeLinear", {"x"}, {"x_quantized", "x_scale", "x_zero_point"})
      .node("Mul", "scales_mul", {"x_scale", "w_scale"}, {"s"})
      .node("MatMulInteger", "mm", {"x_quantized", "w", "x_zero_point", "w_zp"}, {"acc"})
      .node("Cast", "cast", {"acc"}, {"acc_float"}, {attr_int("to", 1)})
      .node("Mul", "scale", {"acc_float", "s"}, {"y"})
      .output("y")
      .build();
}

}  // namespace

TEST(QOperatorRewrite, DynamicQuantizationBecomesADynamicQuantizerBeforeTheFloatMatMul) {
  const ir::Model original = dynamic_matmul_model();
  ir::Model m = original;
  import_quantizers(m);
  EXPECT_TRUE(m.warnings.empty()) << (m.warnings.empty() ? "" : m.warnings[0]);
  // The DynamicQuantizeLinear, the scale Mul, the Cast and the Mul are gone; MatMul keeps the name.
  std::vector<std::string> ops;
  for (const auto& n : m.graph.nodes) ops.push_back(n.op_type + ":" + n.name);
  EXPECT_EQ(ops, (std::vector<std::string>{"HzCalibration:x", "HzCalibration:w", "MatMul:mm"}));
  const CalibrationSpec x = parse_calibration(m.graph, m.graph.find_node("x"));
  EXPECT_TRUE(x.dynamic);
  EXPECT_EQ(x.qtype.name, "uint8");
  EXPECT_EQ(x.kind, TensorKind::Feature);
  EXPECT_EQ(x.qdq_nodes, (std::vector<std::string>{"x_QuantizeLinear"}));
  EXPECT_EQ(parse_calibration(m.graph, m.graph.find_node("w")).axis, 1);
  const Tensor in = Tensor::from_floats({2, 2}, {-1.0f, 0.47f, 2.0f, 0.31f});
  // ON: the original model as our integer kernels run it (exact integer accumulation).
  const Tensor on = run(m, {in}, true)[0], expected = run(original, {in}, true)[0];
  test::expect_tensor_near(on, {2, 2}, expected.to_float_vector(), 1e-6f);
  // By hand: range [-1, 2], scale 3/255, zero point 85: x -> {0, 125, 255, 111} - 85.
  const float s = 3.0f / 255.0f;
  const std::vector<float> xq = {-85 * s, 40 * s, 170 * s, 26 * s};
  test::expect_tensor_near(on, {2, 2},
                           {xq[0] * 1.0f + xq[1] * 0.2f, xq[0] * -1.0f + xq[1] * 2.54f, xq[2] * 1.0f + xq[3] * 0.2f,
                            xq[2] * -1.0f + xq[3] * 2.54f},
                           1e-5f);
  // OFF: the float MatMul with the dequantized weight.
  test::expect_tensor_near(run(m, {in}, false)[0], {2, 2},
                           {-1.0f + 0.47f * 0.2f, 1.0f + 0.47f * 2.54f, 2.0f + 0.31f * 0.2f, -2.0f + 0.31f * 2.54f},
                           1e-5f);
  // int16: the same per-run range over 65535 levels: every value within half a step of x.
  exec::Executor e(m);
  exec::QuantConfig c = e.stored_config();
  c.qtype[static_cast<size_t>(0)] = "int16";
  c.on[1] = 0;
  const Tensor wide = e.outputs(e.run({in}, c))[0];
  const Tensor exact = run(m, {in}, false)[0];
  for (int64_t i = 0; i < 4; ++i)
    EXPECT_NEAR(wide.data<float>()[i], exact.data<float>()[i], 3.6f * (3.0f / 65535.0f) / 2.0f) << i;
}

TEST(QOperatorRewrite, AnIntegerMatMulNotScaledAsDynamicQuantizationIsNamedInAWarning) {
  ir::Model m = ModelBuilder()
                    .input("x", DType::Float, {2, 2})
                    .initializer("w", typed<int8_t>(DType::Int8, {2, 2}, {1, 2, 3, 4}))
                    .node("DynamicQuantizeLinear", "dq", {"x"}, {"x_quantized", "x_scale", "x_zero_point"})
                    .node("MatMulInteger", "mm", {"x_quantized", "w", "x_zero_point"}, {"acc"})
                    .output("acc")
                    .build();
  import_quantizers(m);
  ASSERT_EQ(m.warnings.size(), 1u);
  EXPECT_NE(m.warnings[0].find("'mm' (MatMulInteger): its int32 output is not read by one Cast alone"),
            std::string::npos)
      << m.warnings[0];
  EXPECT_EQ(node_named(m.graph, "mm").op_type, "MatMulInteger");
}

namespace {

using Pairs = std::vector<std::pair<std::string, std::string>>;
using Names = std::vector<std::string>;

const FileNode& file_node_named(const FileProvenance& file, const std::string& name) {
  for (const auto& f : file.nodes)
    if (f.name == name) return f;
  ADD_FAILURE() << "no file node " << name;
  static const FileNode none;
  return none;
}

const FileTensor& file_tensor_named(const FileProvenance& file, const std::string& name) {
  for (const auto& t : file.tensors)
    if (t.name == name) return t;
  ADD_FAILURE() << "no file tensor " << name;
  static const FileTensor none;
  return none;
}

}  // namespace

TEST(QOperatorRewrite, KeepsEachRewrittenNodeAsTheFileHoldsItAndWhatItBecame) {
  ir::Model m = qlinear_conv();
  const FileProvenance file = import_quantizers(m);
  // Only the QLinearConv was rewritten: the file's QuantizeLinear and DequantizeLinear stay (as parts
  // of the calibration nodes x and c).
  ASSERT_EQ(file.nodes.size(), 1u);
  const FileNode& conv = file.nodes[0];
  EXPECT_EQ(conv.name, "conv");
  EXPECT_EQ(conv.op_type, "QLinearConv");
  EXPECT_EQ(conv.domain, "");
  EXPECT_EQ(conv.inputs, (Names{"x_quantized", "x_scale", "x_zp", "w", "w_scale", "w_zp", "y_scale", "y_zp", "B"}));
  EXPECT_EQ(conv.outputs, (Names{"c_quantized"}));  // the file's name (the loaded graph's float tensor is "c")
  // What it became, in emission order: the DequantizeLinear of x and of w, the Conv, the QuantizeLinear.
  EXPECT_EQ(conv.became, (Names{"x_quantized_DequantizeLinear", "w_DequantizeLinear", "conv", "conv_QuantizeLinear"}));
  // Its integer tensors' quantizers by their calibration nodes; it stands for its output's.
  EXPECT_EQ(conv.quantizers, (Pairs{{"x_quantized", "x"}, {"w", "w"}, {"c_quantized", "c"}}));
  EXPECT_EQ(conv.stands, "c");
  for (const auto& [tensor, node] : conv.quantizers) EXPECT_TRUE(is_calibration_node(node_named(m.graph, node)));
  EXPECT_EQ(node_named(m.graph, "conv").op_type, "Conv");

  // Its tensors as the file holds them: an integer activation has its quantizer's type and the shape of
  // the loaded tensor it became; constants keep type, dims and (small ones) values.
  EXPECT_EQ(file.tensors.size(), 10u);  // nine inputs, one output
  const FileTensor& xq = file_tensor_named(file, "x_quantized");
  EXPECT_EQ(xq.dtype, DType::UInt8);
  EXPECT_FALSE(xq.constant);
  EXPECT_EQ(xq.shape_of, "x_quantized_dequantized");
  EXPECT_GE(m.graph.find_value(xq.shape_of), 0);
  const FileTensor& cq = file_tensor_named(file, "c_quantized");
  EXPECT_EQ(cq.dtype, DType::UInt8);
  EXPECT_EQ(cq.shape_of, "c");
  const FileTensor& w = file_tensor_named(file, "w");
  EXPECT_TRUE(w.constant && w.initializer && w.has_dims);
  EXPECT_EQ(w.dtype, DType::Int8);
  EXPECT_EQ(w.dims, (std::vector<int64_t>{2, 1, 1, 1}));
  ASSERT_TRUE(w.values.has_value());
  EXPECT_EQ(w.values->to_int64_vector(), (std::vector<int64_t>{10, -20}));
  const FileTensor& b = file_tensor_named(file, "B");
  EXPECT_EQ(b.dtype, DType::Int32);
  EXPECT_EQ(b.values->to_int64_vector(), (std::vector<int64_t>{100, -45}));
}

TEST(QOperatorRewrite, KeepsTheFusedReluAmongWhatTheNodeBecame) {
  ir::Model m = qlinear_conv(0);
  const FileProvenance file = import_quantizers(m);
  ASSERT_EQ(file.nodes.size(), 1u);
  EXPECT_EQ(file.nodes[0].became,
            (Names{"x_quantized_DequantizeLinear", "w_DequantizeLinear", "conv", "conv_Relu", "conv_QuantizeLinear"}));
  EXPECT_EQ(file.nodes[0].stands, "c");
}

TEST(QOperatorRewrite, KeepsEveryNodeOfADynamicChainInFileOrder) {
  ir::Model m = dynamic_matmul_model();
  const FileProvenance file = import_quantizers(m);
  Names names;
  for (const auto& f : file.nodes) names.push_back(f.op_type + ":" + f.name);
  EXPECT_EQ(names, (Names{"DynamicQuantizeLinear:x_QuantizeLinear", "Mul:scales_mul", "MatMulInteger:mm", "Cast:cast",
                          "Mul:scale"}));
  // The DynamicQuantizeLinear became the dynamic calibration node x and stands for it.
  const FileNode& d = file_node_named(file, "x_QuantizeLinear");
  EXPECT_EQ(d.outputs, (Names{"x_quantized", "x_scale", "x_zero_point"}));
  EXPECT_EQ(d.became, (Names{"x"}));
  EXPECT_EQ(d.quantizers, (Pairs{{"x_quantized", "x"}}));
  EXPECT_EQ(d.stands, "x");
  // The MatMulInteger became the weight's DequantizeLinear (now calibration node w) and the MatMul of
  // its own name, which it stands for (its int32 output has no quantizer).
  const FileNode& mm = file_node_named(file, "mm");
  EXPECT_EQ(mm.inputs, (Names{"x_quantized", "w", "x_zero_point", "w_zp"}));
  EXPECT_EQ(mm.became, (Names{"w_DequantizeLinear", "mm"}));
  EXPECT_EQ(mm.quantizers, (Pairs{{"x_quantized", "x"}, {"w", "w"}}));
  EXPECT_EQ(mm.stands, "mm");
  // The scale Mul, the Cast and the Mul were folded into the MatMul.
  for (const char* folded : {"scales_mul", "cast", "scale"}) {
    EXPECT_EQ(file_node_named(file, folded).became, (Names{"mm"})) << folded;
    EXPECT_EQ(file_node_named(file, folded).stands, "mm") << folded;
  }
  EXPECT_EQ(file_node_named(file, "cast").attributes.size(), 1u);  // to = float
}

TEST(QOperatorRewrite, KeepsNoProvenanceForOtherModels) {
  ir::Model m = ModelBuilder().input("x", DType::Float, {2}).node("Relu", "r", {"x"}, {"y"}).output("y").build();
  const FileProvenance file = import_quantizers(m);
  EXPECT_TRUE(file.nodes.empty());
  EXPECT_TRUE(file.tensors.empty());
}
