#include "quant/hz_to_qdq.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "calibrate/calibrate.h"
#include "core/error.h"
#include "exec/executor.h"
#include "exec/registry.h"
#include "ops/op_test_util.h"
#include "quant/calibration.h"
#include "quant/model_builder.h"
#include "quant/opset_upgrade.h"
#include "reader/onnx.h"
#include "reader/onnx_writer.h"

using namespace ptq;
using namespace ptq::quant;
using test::attr_floats;
using test::attr_int;
using test::attr_ints;
using test::attr_string;
using test::ModelBuilder;

namespace {

Tensor random_tensor(Shape shape, uint32_t seed, float scale = 1.0f) {
  Tensor t(DType::Float, shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-scale, scale);
  for (int64_t i = 0; i < t.numel(); ++i) t.mutable_data<float>()[i] = u(rng);
  return t;
}

const ir::Node& node_named(const ir::Graph& g, const std::string& name) {
  const int id = g.find_node(name);
  if (id < 0) throw Error("no node " + name);
  return g.node(id);
}

std::vector<std::string> op_types(const ir::Graph& g) {
  std::vector<std::string> ops;
  for (const auto& n : g.nodes) ops.push_back(n.op_type);
  return ops;
}

const Tensor& constant_input(const ir::Graph& g, const ir::Node& n, size_t slot) {
  const Tensor* t = g.constant(n.inputs.at(slot));
  if (!t) throw Error("input " + std::to_string(slot) + " of " + n.name + " is not constant");
  return *t;
}

// conv -> relu -> conv, calibrated by calibrate() (x, W1, r, W2).
ir::Model calibrated_conv(const CalibrateOptions& o = {}) {
  Tensor w1 = random_tensor({3, 2, 3, 3}, 1, 0.5f), w2 = random_tensor({2, 3, 1, 1}, 2, 0.5f);
  const ir::Model fm = ModelBuilder()
                           .input("x", DType::Float, {1, 2, 5, 5})
                           .initializer("W1", w1)
                           .initializer("W2", w2)
                           .node("Conv", "conv1", {"x", "W1"}, {"c"}, {attr_ints("pads", {1, 1, 1, 1})})
                           .node("Relu", "relu", {"c"}, {"r"})
                           .node("Conv", "conv2", {"r", "W2"}, {"y"})
                           .output("y")
                           .build();
  return calibrate(fm, {{random_tensor({1, 2, 5, 5}, 3, 2.0f)}}, o);
}

bool qdq_kernels_available() {
  const auto& r = exec::OpRegistry::global();
  return r.find("", "QuantizeLinear") && r.find("", "DequantizeLinear");
}

// Runs the calibrated model (stored config) and its QDQ rewrite on the same input; bitwise equal.
void expect_same_outputs(const ir::Model& calibrated, const ir::Model& qdq, const std::vector<Tensor>& inputs) {
  exec::Executor a(calibrated), b(qdq);
  const auto ya = a.outputs(a.run(inputs, a.stored_config()));
  const auto yb = b.outputs(b.run(inputs, b.stored_config()));
  ASSERT_EQ(ya.size(), yb.size());
  for (size_t i = 0; i < ya.size(); ++i) {
    ASSERT_EQ(ya[i].shape(), yb[i].shape());
    EXPECT_EQ(std::memcmp(ya[i].raw(), yb[i].raw(), ya[i].nbytes()), 0) << "output " << i;
  }
}

}  // namespace

TEST(HzToQdq, Int8NodesBecomeQuantizeDequantizePairs) {
  const ir::Model cm = calibrated_conv();
  const ir::Model qm = hz_to_qdq(cm);
  const ir::Graph& g = qm.graph;
  EXPECT_EQ(qm.opset("horizon"), 0);
  EXPECT_EQ(qm.opset(""), 13);
  EXPECT_GE(qm.ir_version, 7);
  EXPECT_EQ(op_types(g), (std::vector<std::string>{"QuantizeLinear", "DequantizeLinear", "QuantizeLinear", "DequantizeLinear",
                                                   "Conv", "Relu", "QuantizeLinear", "DequantizeLinear", "QuantizeLinear",
                                                   "DequantizeLinear", "Conv"}));
  // Activation x: per-tensor, scalar scale = threshold / 127, int8 zero point 0, no axis.
  const ir::Node& q = node_named(g, "x_HzCalibration_QuantizeLinear");
  const ir::Node& dq = node_named(g, "x_HzCalibration_DequantizeLinear");
  const float threshold = node_named(cm.graph, "x_HzCalibration").attr_floats("thresholds").at(0);
  EXPECT_EQ(g.value(q.inputs[0]).name, "x");
  EXPECT_EQ(g.value(dq.outputs[0]).name, "x_calibrated");
  EXPECT_EQ(dq.inputs[0], q.outputs[0]);
  EXPECT_EQ(dq.inputs[1], q.inputs[1]);
  EXPECT_EQ(dq.inputs[2], q.inputs[2]);
  EXPECT_FALSE(q.has_attr("axis"));
  const Tensor& scale = constant_input(g, q, 1);
  EXPECT_EQ(scale.dtype(), DType::Float);
  EXPECT_EQ(scale.shape(), Shape{});
  EXPECT_EQ(scale.data<float>()[0], threshold / 127.0f);
  const Tensor& zp = constant_input(g, q, 2);
  EXPECT_EQ(zp.dtype(), DType::Int8);
  EXPECT_EQ(zp.shape(), Shape{});
  EXPECT_EQ(zp.data<int8_t>()[0], 0);
  // Weight W1: per output channel along axis 0.
  const ir::Node& wq = node_named(g, "W1_HzCalibration_QuantizeLinear");
  EXPECT_EQ(wq.attr_int("axis", -1), 0);
  EXPECT_EQ(node_named(g, "W1_HzCalibration_DequantizeLinear").attr_int("axis", -1), 0);
  EXPECT_EQ(g.value(wq.inputs[0]).name, "W1");
  EXPECT_EQ(constant_input(g, wq, 1).shape(), Shape{3});
  EXPECT_EQ(constant_input(g, wq, 1).to_float_vector(), node_named(cm.graph, "W1_HzCalibration").attr_floats("scales"));
  EXPECT_EQ(constant_input(g, wq, 2).dtype(), DType::Int8);
  EXPECT_EQ(constant_input(g, wq, 2).shape(), Shape{3});
  for (const auto& n : g.nodes) EXPECT_EQ(n.opset, n.domain.empty() ? 13 : 1) << n.name;
  // The file is readable again.
  const auto bytes = reader::write_onnx(qm);
  const ir::Model back = reader::read_onnx(bytes.data(), bytes.size());
  EXPECT_EQ(op_types(back.graph), op_types(g));
}

TEST(HzToQdq, Int16RaisesTheOpsetTo21) {
  CalibrateOptions o;
  o.int16 = {"r"};
  const ir::Model qm = hz_to_qdq(calibrated_conv(o));
  EXPECT_EQ(qm.opset(""), 21);
  EXPECT_GE(qm.ir_version, 10);
  const ir::Node& q = node_named(qm.graph, "r_HzCalibration_QuantizeLinear");
  EXPECT_EQ(constant_input(qm.graph, q, 2).dtype(), DType::Int16);
  EXPECT_EQ(constant_input(qm.graph, node_named(qm.graph, "x_HzCalibration_QuantizeLinear"), 2).dtype(), DType::Int8);
  for (const auto& n : qm.graph.nodes) EXPECT_EQ(n.opset, 21) << n.name;
}

TEST(HzToQdq, SwitchedOffAndFloatNodes) {
  // off -> Identity (same name); float16 -> Cast/Cast; float32 -> Identity; a Horizon op stays.
  const ir::Model cm = ModelBuilder(17)
                           .opset("horizon", 1)
                           .input("x", DType::Float, {1, 4})
                           .node("HzCalibration", "off", {"x"}, {"a"}, {attr_floats("thresholds", {1.0f}), attr_string("switch", "OFF")}, "horizon")
                           .node("HzCalibration", "half", {"a"}, {"b"}, {attr_floats("thresholds", {1.0f}), attr_string("qtype", "float16")}, "horizon")
                           .node("HzCalibration", "full", {"b"}, {"c"}, {attr_floats("thresholds", {1.0f}), attr_string("qtype", "float32")}, "horizon")
                           .node("HzSwish", "swish", {"c"}, {"y"}, {}, "horizon")
                           .output("y")
                           .build();
  const ir::Model qm = hz_to_qdq(cm);
  const ir::Graph& g = qm.graph;
  EXPECT_EQ(op_types(g), (std::vector<std::string>{"Identity", "Cast", "Cast", "Identity", "HzSwish"}));
  EXPECT_EQ(node_named(g, "off").op_type, "Identity");
  EXPECT_EQ(node_named(g, "full").op_type, "Identity");
  EXPECT_EQ(g.nodes[1].attr_int("to", 0), static_cast<int64_t>(DType::Float16));
  EXPECT_EQ(g.nodes[2].attr_int("to", 0), static_cast<int64_t>(DType::Float));
  EXPECT_EQ(g.value(g.nodes[2].outputs[0]).name, "b");
  EXPECT_EQ(qm.opset("horizon"), 1);  // HzSwish remains
  EXPECT_EQ(qm.opset(""), 17);
  EXPECT_EQ(node_named(g, "swish").opset, 1);
}

TEST(HzToQdq, AsymmetricUint8KeepsItsZeroPoint) {
  // thresholds [fmin, fmax] = [-1, 3], uint8: s = 4/255, zp = 255 - round(3/s) = 255 - 191 = 64.
  const ir::Model cm = ModelBuilder()
                           .opset("horizon", 1)
                           .input("x", DType::Float, {4})
                           .node("HzCalibration", "asym", {"x"}, {"y"},
                                 {attr_floats("thresholds", {-1.0f, 3.0f}), attr_string("qtype", "uint8"), attr_ints("zero_point", {0})},
                                 "horizon")
                           .output("y")
                           .build();
  const ir::Model qm = hz_to_qdq(cm);
  const ir::Node& q = node_named(qm.graph, "asym_QuantizeLinear");
  const Tensor& zp = constant_input(qm.graph, q, 2);
  EXPECT_EQ(zp.dtype(), DType::UInt8);
  EXPECT_EQ(zp.data<uint8_t>()[0], 64);
  EXPECT_EQ(constant_input(qm.graph, q, 1).data<float>()[0], 4.0f / 255.0f);
}

TEST(HzToQdq, GroupedConvTransposeWeightsAreRegroupedAroundQdq) {
  const ir::Model fm = ModelBuilder()
                           .input("x", DType::Float, {1, 4, 3, 3})
                           .initializer("W", random_tensor({4, 3, 2, 2}, 5))
                           .node("ConvTranspose", "deconv", {"x", "W"}, {"y"}, {attr_int("group", 2)})
                           .output("y")
                           .build();
  const ir::Model cm = calibrate(fm, {{random_tensor({1, 4, 3, 3}, 6)}});
  const ir::Model qm = hz_to_qdq(cm);
  const ir::Graph& g = qm.graph;
  EXPECT_EQ(op_types(g), (std::vector<std::string>{"QuantizeLinear", "DequantizeLinear", "Reshape", "Transpose", "Reshape",
                                                   "QuantizeLinear", "DequantizeLinear", "Reshape", "Transpose", "Reshape",
                                                   "ConvTranspose"}));
  const ir::Node& wq = node_named(g, "W_HzCalibration_QuantizeLinear");
  EXPECT_EQ(wq.attr_int("axis", -1), 0);
  EXPECT_EQ(constant_input(g, wq, 1).shape(), Shape{6});
  EXPECT_EQ(constant_input(g, g.nodes[2], 1).to_int64_vector(), (std::vector<int64_t>{2, 2, 3, 4}));
  EXPECT_EQ(constant_input(g, g.nodes[4], 1).to_int64_vector(), (std::vector<int64_t>{6, 2, 4}));
  EXPECT_EQ(constant_input(g, g.nodes[7], 1).to_int64_vector(), (std::vector<int64_t>{2, 3, 2, 4}));
  EXPECT_EQ(constant_input(g, g.nodes[9], 1).to_int64_vector(), (std::vector<int64_t>{4, 3, 2, 2}));
  EXPECT_EQ(g.nodes[3].attr_ints("perm"), (std::vector<int64_t>{0, 2, 1, 3}));
  EXPECT_EQ(g.value(g.nodes[9].outputs[0]).name, "W_calibrated");
  if (qdq_kernels_available()) expect_same_outputs(cm, qm, {random_tensor({1, 4, 3, 3}, 7)});
}

TEST(HzToQdq, ExecutesLikeTheCalibratedModel) {
  if (!qdq_kernels_available()) GTEST_SKIP() << "QuantizeLinear/DequantizeLinear kernels are not registered";
  const ir::Model cm = calibrated_conv();
  expect_same_outputs(cm, hz_to_qdq(cm), {random_tensor({1, 2, 5, 5}, 8, 3.0f)});
}

TEST(HzToQdq, RejectsQtypesWithoutAQuantizeLinear) {
  const ir::Model cm = ModelBuilder()
                           .opset("horizon", 1)
                           .input("x", DType::Float, {4})
                           .node("HzCalibration", "c", {"x"}, {"y"}, {attr_floats("thresholds", {1.0f}), attr_string("qtype", "int32")}, "horizon")
                           .output("y")
                           .build();
  EXPECT_THROW(hz_to_qdq(cm), Error);
}

// ---- opset upgrade ----

TEST(OpsetUpgrade, MovesAttributesToInputsAndKeepsSoftmaxSemantics) {
  const ir::Model m11 = ModelBuilder(11)
                            .input("x", DType::Float, {2, 1, 3, 4})
                            .node("Squeeze", "sq", {"x"}, {"s"}, {attr_ints("axes", {1})})
                            .node("Softmax", "sm", {"s"}, {"p"}, {attr_int("axis", 1)})
                            .node("ReduceMean", "rm", {"p"}, {"m"}, {attr_ints("axes", {2}), attr_int("keepdims", 0)})
                            .node("Unsqueeze", "us", {"m"}, {"u"}, {attr_ints("axes", {0})})
                            .node("Split", "sp", {"u"}, {"y1", "y2"}, {attr_int("axis", 1)})
                            .node("LogSoftmax", "ls", {"s"}, {"q"}, {attr_int("axis", -1)})
                            .output("y1")
                            .output("y2")
                            .output("q")
                            .build();
  ir::Model up = m11;
  upgrade_default_opset(up, 21);
  const ir::Graph& g = up.graph;
  EXPECT_EQ(up.opset(""), 21);
  EXPECT_EQ(up.ir_version, 10);
  const ir::Node& sq = node_named(g, "sq");
  ASSERT_EQ(sq.inputs.size(), 2u);
  EXPECT_FALSE(sq.has_attr("axes"));
  EXPECT_EQ(constant_input(g, sq, 1).to_int64_vector(), (std::vector<int64_t>{1}));
  EXPECT_EQ(constant_input(g, node_named(g, "rm"), 1).to_int64_vector(), (std::vector<int64_t>{2}));
  EXPECT_EQ(constant_input(g, node_named(g, "us"), 1).to_int64_vector(), (std::vector<int64_t>{0}));
  EXPECT_EQ(node_named(g, "sp").attr_int("num_outputs", 0), 2);
  // Softmax(axis=1) on a rank-3 input (no declared shape): Flatten -> Softmax(-1) -> Reshape(Shape(x)).
  EXPECT_EQ(node_named(g, "sm").attr_int("axis", 0), -1);
  EXPECT_EQ(node_named(g, "sm_Flatten").attr_int("axis", 0), 1);
  EXPECT_EQ(g.value(node_named(g, "sm_Reshape").outputs[0]).name, "p");
  // LogSoftmax(axis=-1) is the same in both opsets: no rewrite.
  EXPECT_EQ(g.find_node("ls_Flatten"), -1);
  EXPECT_EQ(node_named(g, "ls").attr_int("axis", 0), -1);
  for (const auto& n : g.nodes) EXPECT_EQ(n.opset, 21) << n.name;

  // Same results when the executor honours each node's opset.
  const auto& r = exec::OpRegistry::global();
  for (const char* op : {"Squeeze", "Softmax", "ReduceMean", "Unsqueeze", "Split", "LogSoftmax", "Flatten", "Shape", "Reshape"})
    if (!r.find("", op)) GTEST_SKIP() << op << " kernel not registered";
  exec::Executor a(m11), b(up);
  const Tensor x = random_tensor({2, 1, 3, 4}, 12, 3.0f);
  const auto ya = a.outputs(a.run({x}, a.uniform_config(false)));
  const auto yb = b.outputs(b.run({x}, b.uniform_config(false)));
  ASSERT_EQ(ya.size(), yb.size());
  for (size_t i = 0; i < ya.size(); ++i) {
    ASSERT_EQ(ya[i].shape(), yb[i].shape()) << i;
    const auto va = ya[i].to_float_vector(), vb = yb[i].to_float_vector();
    for (size_t k = 0; k < va.size(); ++k) EXPECT_NEAR(va[k], vb[k], 1e-6f) << i << "/" << k;
  }
}

TEST(OpsetUpgrade, MovesSubgraphNodesWithoutTouchingTheSource) {
  auto branch = std::make_shared<ir::Graph>();
  {
    ModelBuilder b(11);
    ir::Attribute value;
    value.name = "value";
    value.type = ir::AttrType::Tensor;
    value.t = Tensor::from_floats({1}, {-1.0f});
    b.node("Constant", "c", {}, {"k"}, {value}).node("Relu", "relu", {"k"}, {"out"}).output("out");
    *branch = b.build().graph;
  }
  ir::Attribute then_branch, else_branch;
  then_branch.name = "then_branch";
  else_branch.name = "else_branch";
  then_branch.type = else_branch.type = ir::AttrType::Graph;
  then_branch.g = else_branch.g = branch;
  const ir::Model m11 = ModelBuilder(11)
                            .input("cond", DType::Bool, {})
                            .node("If", "if", {"cond"}, {"y"}, {then_branch, else_branch})
                            .output("y")
                            .build();
  ir::Model up = m11;
  upgrade_default_opset(up, 13);
  const ir::Attribute* g = up.graph.nodes[0].attr("then_branch");
  ASSERT_TRUE(g && g->g);
  for (const auto& n : g->g->nodes) EXPECT_EQ(n.opset, 13) << n.name;
  for (const auto& n : branch->nodes) EXPECT_EQ(n.opset, 11) << n.name;  // the source model is unchanged
  EXPECT_EQ(up.graph.nodes[0].opset, 13);
  // A subgraph node that would need rewriting is refused.
  ir::Node& relu = branch->nodes[1];
  relu.op_type = "Squeeze";
  relu.attributes = {attr_ints("axes", {0})};
  ir::Model squeeze = m11;
  EXPECT_THROW(upgrade_default_opset(squeeze, 13), Error);
}

TEST(OpsetUpgrade, RefusesWhatItCannotExpress) {
  ir::Model old = ModelBuilder(10).input("x", DType::Float, {1}).node("Relu", "r", {"x"}, {"y"}).output("y").build();
  EXPECT_THROW(upgrade_default_opset(old, 13), Error);
  ir::Model resize = ModelBuilder(11)
                         .input("x", DType::Float, {1, 1, 2, 2})
                         .input("roi", DType::Float, {0})
                         .input("scales", DType::Float, {4})
                         .node("Resize", "rs", {"x", "roi", "scales"}, {"y"}, {attr_string("coordinate_transformation_mode", "tf_half_pixel_for_nn")})
                         .output("y")
                         .build();
  EXPECT_THROW(upgrade_default_opset(resize, 13), Error);
  ir::Model same = ModelBuilder(13).input("x", DType::Float, {1}).node("Relu", "r", {"x"}, {"y"}).output("y").build();
  upgrade_default_opset(same, 13);  // nothing to do
  EXPECT_EQ(same.opset(""), 13);
  EXPECT_EQ(min_ir_version_for_opset(11), 6);
  EXPECT_EQ(min_ir_version_for_opset(13), 7);
  EXPECT_EQ(min_ir_version_for_opset(17), 8);
  EXPECT_EQ(min_ir_version_for_opset(21), 10);
}
