#include "calibrate/calibrate.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <random>

#include "core/error.h"
#include "exec/executor.h"
#include "ops/op_test_util.h"
#include "quant/calibration.h"
#include "quant/model_builder.h"
#include "reader/onnx.h"
#include "reader/onnx_writer.h"

using namespace ptq;
using namespace ptq::quant;
using test::attr_int;
using test::attr_ints;
using test::ModelBuilder;

namespace {

// Small values everywhere (|v| <= 0.05) plus one planted maximum per channel.
Tensor weights(Shape shape, const std::vector<std::pair<std::vector<int64_t>, float>>& planted) {
  Tensor t(DType::Float, shape);
  float* p = t.mutable_data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = 0.05f * std::sin(static_cast<float>(i));
  for (const auto& [index, v] : planted) {
    int64_t flat = 0;
    for (size_t d = 0; d < shape.size(); ++d) flat = flat * shape[d] + index[d];
    p[flat] = v;
  }
  return t;
}

Tensor random_tensor(Shape shape, uint32_t seed, float scale = 1.0f) {
  Tensor t(DType::Float, shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-scale, scale);
  for (int64_t i = 0; i < t.numel(); ++i) t.mutable_data<float>()[i] = u(rng);
  return t;
}

// x[1,2,4,4] -> conv1 -> c -> relu -> r -> conv2 -> y;  z = Add(r, c).
ir::Model conv_model() {
  return ModelBuilder()
      .input("x", DType::Float, {1, 2, 4, 4})
      .initializer("W1", weights({3, 2, 3, 3}, {{{0, 1, 2, 2}, -0.9f}, {{1, 0, 0, 0}, 0.7f}, {{2, 1, 1, 1}, -1.3f}}))
      .initializer("B1", Tensor::from_floats({3}, {0.1f, -0.2f, 0.3f}))
      .initializer("W2", weights({2, 3, 1, 1}, {{{0, 2, 0, 0}, 0.4f}, {{1, 0, 0, 0}, -0.6f}}))
      .node("Conv", "conv1", {"x", "W1", "B1"}, {"c"}, {attr_ints("pads", {1, 1, 1, 1}), attr_ints("kernel_shape", {3, 3})})
      .node("Relu", "relu", {"c"}, {"r"})
      .node("Conv", "conv2", {"r", "W2"}, {"y"})
      .node("Add", "add", {"r", "c"}, {"z"})
      .output("y")
      .output("z")
      .build();
}

std::vector<std::vector<Tensor>> conv_samples() {
  Tensor a = random_tensor({1, 2, 4, 4}, 1);
  Tensor b = random_tensor({1, 2, 4, 4}, 2);
  a.mutable_data<float>()[5] = -2.5f;
  b.mutable_data<float>()[17] = 3.25f;
  return {{a}, {b}};
}

const ir::Node& node_named(const ir::Graph& g, const std::string& name) {
  const int id = g.find_node(name);
  if (id < 0) throw Error("no node " + name);
  return g.node(id);
}

std::string input_name(const ir::Graph& g, const std::string& node, size_t slot) {
  return g.value(node_named(g, node).inputs.at(slot)).name;
}

size_t calibration_node_total(const ir::Graph& g) {
  size_t n = 0;
  for (const auto& node : g.nodes) n += is_calibration_node(node);
  return n;
}

// max|t| over the tensor `name` of the float model for every sample, computed by a plain run.
float observed_max(const ir::Model& m, const std::string& name, const std::vector<std::vector<Tensor>>& samples) {
  exec::Executor ex(m);
  const int v = ex.graph().find_value(name);
  float mx = 0.0f;
  for (const auto& s : samples) {
    const auto rec = ex.run(s, ex.uniform_config(false), {v});
    for (float x : rec.values[static_cast<size_t>(v)].to_float_vector()) mx = std::max(mx, std::fabs(x));
  }
  return mx;
}

bool bit_equal(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

}  // namespace

TEST(Calibrate, PlacesActivationAndWeightNodesLikeTheToolchain) {
  const ir::Model fm = conv_model();
  const ir::Model cm = calibrate(fm, conv_samples());
  const ir::Graph& g = cm.graph;
  EXPECT_EQ(cm.opset("horizon"), 1);
  EXPECT_EQ(cm.opset(""), 13);
  // x, W1, r (shared by conv2 and add), c (add only), W2. B1 is not calibrated.
  EXPECT_EQ(calibration_node_total(g), 5u);
  EXPECT_EQ(input_name(g, "conv1", 0), "x_calibrated");
  EXPECT_EQ(input_name(g, "conv1", 1), "W1_calibrated");
  EXPECT_EQ(input_name(g, "conv1", 2), "B1");
  EXPECT_EQ(input_name(g, "relu", 0), "c");  // Relu is not a quantized consumer
  EXPECT_EQ(input_name(g, "conv2", 0), "r_calibrated");
  EXPECT_EQ(input_name(g, "conv2", 1), "W2_calibrated");
  EXPECT_EQ(input_name(g, "add", 0), "r_calibrated");
  EXPECT_EQ(input_name(g, "add", 1), "c_calibrated");
  for (const char* t : {"x", "W1", "r", "c", "W2"}) {
    const ir::Node& n = node_named(g, std::string(t) + "_HzCalibration");
    EXPECT_EQ(n.op_type, "HzCalibration");
    EXPECT_EQ(n.domain, "horizon");
    EXPECT_EQ(n.opset, 1);
    EXPECT_EQ(g.value(n.inputs[0]).name, t);
    EXPECT_EQ(g.value(n.outputs[0]).name, std::string(t) + "_calibrated");
  }
  // Each calibration node sits right before its first quantized consumer.
  EXPECT_LT(g.find_node("x_HzCalibration"), g.find_node("conv1"));
  EXPECT_LT(g.find_node("r_HzCalibration"), g.find_node("conv2"));
  EXPECT_LT(g.find_node("c_HzCalibration"), g.find_node("add"));
  EXPECT_GT(g.find_node("c_HzCalibration"), g.find_node("conv2"));
  // The calibrated tensor inherits the declared type of its source.
  const ir::Value& xc = g.value(g.find_value("x_calibrated"));
  EXPECT_EQ(xc.info.dtype, DType::Float);
  EXPECT_EQ(xc.info.dims, (std::vector<int64_t>{1, 2, 4, 4}));
  // Graph outputs are unchanged.
  EXPECT_EQ(g.value(g.outputs[0]).name, "y");
  EXPECT_EQ(g.value(g.outputs[1]).name, "z");
}

TEST(Calibrate, AttributesAsTheToolchainWritesThem) {
  const ir::Model cm = calibrate(conv_model(), conv_samples());
  const ir::Graph& g = cm.graph;
  const ir::Node& w = node_named(g, "W1_HzCalibration");
  std::vector<std::string> names;
  for (const auto& a : w.attributes) names.push_back(a.name);
  EXPECT_EQ(names, (std::vector<std::string>{"thresholds", "scales", "qtype", "switch", "constant", "axis", "group"}));
  EXPECT_EQ(w.attr_string("qtype", ""), "int8");
  EXPECT_EQ(w.attr_string("switch", ""), "ON");
  EXPECT_EQ(w.attr_int("constant", -1), 1);
  EXPECT_EQ(w.attr_int("axis", -1), 0);
  EXPECT_EQ(w.attr_int("group", -1), 1);
  // Per output channel max|w| (the planted values).
  EXPECT_EQ(w.attr_floats("thresholds"), (std::vector<float>{0.9f, 0.7f, 1.3f}));
  EXPECT_EQ(w.attr_floats("scales"), (std::vector<float>{0.9f / 127.0f, 0.7f / 127.0f, 1.3f / 127.0f}));
  EXPECT_EQ(node_named(g, "W2_HzCalibration").attr_floats("thresholds"), (std::vector<float>{0.4f, 0.6f}));

  const ir::Node& x = node_named(g, "x_HzCalibration");
  names.clear();
  for (const auto& a : x.attributes) names.push_back(a.name);
  EXPECT_EQ(names, (std::vector<std::string>{"thresholds", "scales", "qtype", "switch", "constant"}));
  // max over both samples: |-2.5| in the first, 3.25 in the second.
  EXPECT_EQ(x.attr_floats("thresholds"), (std::vector<float>{3.25f}));
  EXPECT_EQ(x.attr_floats("scales"), (std::vector<float>{3.25f / 127.0f}));

  const float r_max = observed_max(conv_model(), "r", conv_samples());
  ASSERT_GT(r_max, 0.0f);
  EXPECT_EQ(node_named(g, "r_HzCalibration").attr_floats("thresholds"), (std::vector<float>{r_max}));

  // The executor's parser reads them back as the intended kinds.
  const CalibrationSpec ws = parse_calibration(g, g.find_node("W1_HzCalibration"));
  EXPECT_EQ(ws.kind, TensorKind::Weight);
  EXPECT_EQ(ws.scales.size(), 3u);
  const CalibrationSpec xs = parse_calibration(g, g.find_node("x_HzCalibration"));
  EXPECT_EQ(xs.kind, TensorKind::Feature);
  EXPECT_TRUE(xs.switch_on);
}

TEST(Calibrate, GemmAndMatMulWeightAxes) {
  // Gemm(transB=1): W [N=3, K=4] -> axis 0; MatMul B [K=3, N=5] -> axis 1.
  const ir::Model fm = ModelBuilder()
                           .input("x", DType::Float, {2, 4})
                           .initializer("Wg", weights({3, 4}, {{{0, 3}, 0.5f}, {{1, 0}, -0.25f}, {{2, 2}, 2.0f}}))
                           .initializer("Wm", weights({3, 5}, {{{0, 0}, 1.0f}, {{1, 1}, -1.5f}, {{2, 2}, 0.75f},
                                                               {{0, 3}, 0.125f}, {{2, 4}, -3.0f}}))
                           .node("Gemm", "gemm", {"x", "Wg"}, {"h"}, {attr_int("transB", 1)})
                           .node("MatMul", "matmul", {"h", "Wm"}, {"y"})
                           .output("y")
                           .build();
  const ir::Model cm = calibrate(fm, {{random_tensor({2, 4}, 3)}});
  const ir::Graph& g = cm.graph;
  const ir::Node& wg = node_named(g, "Wg_HzCalibration");
  EXPECT_EQ(wg.attr_int("axis", -1), 0);
  EXPECT_EQ(wg.attr_floats("thresholds"), (std::vector<float>{0.5f, 0.25f, 2.0f}));
  const ir::Node& wm = node_named(g, "Wm_HzCalibration");
  EXPECT_EQ(wm.attr_int("axis", -1), 1);
  EXPECT_EQ(wm.attr_floats("thresholds"), (std::vector<float>{1.0f, 1.5f, 0.75f, 0.125f, 3.0f}));
  EXPECT_EQ(input_name(g, "matmul", 0), "h_calibrated");
  EXPECT_EQ(calibration_node_total(g), 4u);

  // transB = 0: W [K=4, N=3] -> axis 1.
  const ir::Model fm0 = ModelBuilder()
                            .input("x", DType::Float, {2, 4})
                            .initializer("W", weights({4, 3}, {{{3, 0}, 0.5f}, {{0, 1}, -0.25f}, {{2, 2}, 2.0f}}))
                            .node("Gemm", "gemm", {"x", "W"}, {"y"})
                            .output("y")
                            .build();
  const ir::Model cm0 = calibrate(fm0, {{random_tensor({2, 4}, 4)}});
  const ir::Node& w0 = node_named(cm0.graph, "W_HzCalibration");
  EXPECT_EQ(w0.attr_int("axis", -1), 1);
  EXPECT_EQ(w0.attr_floats("thresholds"), (std::vector<float>{0.5f, 0.25f, 2.0f}));
}

TEST(Calibrate, ConvTransposeWeightsAreRegrouped) {
  // W [C_in=4, C_out/g=3, 2, 2], group 2: channel of [i, j] = (i / 2)·3 + j -> 6 thresholds.
  const Tensor w = weights({4, 3, 2, 2}, {{{0, 0, 1, 1}, 0.5f}, {{1, 1, 0, 0}, -0.6f}, {{0, 2, 0, 1}, 0.7f},
                                          {{2, 0, 1, 0}, 0.8f}, {{3, 1, 1, 1}, -0.9f}, {{3, 2, 0, 0}, 1.0f}});
  const ir::Model fm = ModelBuilder()
                           .input("x", DType::Float, {1, 4, 3, 3})
                           .initializer("W", w)
                           .node("ConvTranspose", "deconv", {"x", "W"}, {"y"}, {attr_int("group", 2)})
                           .output("y")
                           .build();
  const ir::Model cm = calibrate(fm, {{random_tensor({1, 4, 3, 3}, 5)}});
  const ir::Node& n = node_named(cm.graph, "W_HzCalibration");
  EXPECT_EQ(n.attr_int("axis", -1), 1);
  EXPECT_EQ(n.attr_int("group", -1), 2);
  EXPECT_EQ(n.attr_floats("thresholds"), (std::vector<float>{0.5f, 0.6f, 0.7f, 0.8f, 0.9f, 1.0f}));
  const CalibrationSpec s = parse_calibration(cm.graph, cm.graph.find_node("W_HzCalibration"));
  EXPECT_TRUE(s.conv_transpose_weight);
  // The executor accepts the layout (6 scales for the regrouped channels).
  exec::Executor ex(cm);
  EXPECT_NO_THROW(ex.run({random_tensor({1, 4, 3, 3}, 6)}, ex.uniform_config(true)));
}

TEST(Calibrate, AllOffReproducesTheFloatModelExactly) {
  const ir::Model fm = conv_model();
  const auto samples = conv_samples();
  exec::Executor float_ex(fm);
  exec::Executor cal_ex(calibrate(fm, samples));
  const Tensor probe = samples[1][0];  // inside the calibrated ranges
  const auto expected = float_ex.outputs(float_ex.run({probe}, float_ex.uniform_config(false)));
  const auto off = cal_ex.outputs(cal_ex.run({probe}, cal_ex.uniform_config(false)));
  ASSERT_EQ(expected.size(), off.size());
  for (size_t i = 0; i < off.size(); ++i) EXPECT_TRUE(bit_equal(expected[i], off[i])) << i;
  // All ON quantizes: close to, but not exactly, the float result.
  const auto on = cal_ex.outputs(cal_ex.run({probe}, cal_ex.stored_config()));
  const auto fy = expected[0].to_float_vector(), qy = on[0].to_float_vector();
  double max_diff = 0.0;
  for (size_t i = 0; i < fy.size(); ++i) max_diff = std::max(max_diff, static_cast<double>(std::fabs(fy[i] - qy[i])));
  EXPECT_GT(max_diff, 0.0);
  EXPECT_LT(max_diff, 0.1);
}

TEST(Calibrate, SurvivesWriteAndRead) {
  const ir::Model cm = calibrate(conv_model(), conv_samples());
  const auto bytes = reader::write_onnx(cm);
  const ir::Model back = reader::read_onnx(bytes.data(), bytes.size());
  EXPECT_EQ(back.opset("horizon"), 1);
  EXPECT_EQ(calibration_node_total(back.graph), 5u);
  EXPECT_EQ(node_named(back.graph, "W1_HzCalibration").attr_floats("thresholds"), (std::vector<float>{0.9f, 0.7f, 1.3f}));
  exec::Executor a(cm), b(back);
  const Tensor probe = random_tensor({1, 2, 4, 4}, 11);
  const auto ya = a.outputs(a.run({probe}, a.stored_config()));
  const auto yb = b.outputs(b.run({probe}, b.stored_config()));
  for (size_t i = 0; i < ya.size(); ++i) EXPECT_TRUE(bit_equal(ya[i], yb[i])) << i;
}

TEST(Calibrate, Int16OverridesByCalibrationNodeTensorOrConsumer) {
  CalibrateOptions o;
  o.int16 = {"x_HzCalibration", "c", "conv2"};  // conv2 -> r and W2
  const ir::Model cm = calibrate(conv_model(), conv_samples(), o);
  const ir::Graph& g = cm.graph;
  for (const char* n : {"x", "c", "r", "W2"}) {
    const ir::Node& node = node_named(g, std::string(n) + "_HzCalibration");
    EXPECT_EQ(node.attr_string("qtype", ""), "int16") << n;
    const float t = node.attr_floats("thresholds").at(0);
    EXPECT_EQ(node.attr_floats("scales").at(0), t / 32767.0f) << n;
  }
  EXPECT_EQ(node_named(g, "W1_HzCalibration").attr_string("qtype", ""), "int8");
  o.int16 = {"nonexistent"};
  EXPECT_THROW(calibrate(conv_model(), conv_samples(), o), Error);
}

TEST(Calibrate, FreshNamesAvoidCollisions) {
  const ir::Model fm = ModelBuilder()
                           .input("x", DType::Float, {1, 4})
                           .input("x_calibrated", DType::Float, {1, 4})
                           .node("Add", "x_HzCalibration", {"x", "x_calibrated"}, {"y"})
                           .output("y")
                           .build();
  const ir::Model cm = calibrate(fm, {{random_tensor({1, 4}, 1), random_tensor({1, 4}, 2)}});
  const ir::Graph& g = cm.graph;
  EXPECT_EQ(g.node(g.find_node("x_HzCalibration_1")).op_type, "HzCalibration");
  EXPECT_EQ(input_name(g, "x_HzCalibration", 0), "x_calibrated_1");
  EXPECT_EQ(input_name(g, "x_HzCalibration", 1), "x_calibrated_calibrated");
}

TEST(Calibrate, OptionalActivationOpsAndNonFloatTensors) {
  // Concat is in the default list, AveragePool is not; an int64 Add is observed and skipped.
  const ir::Model fm = ModelBuilder()
                           .input("a", DType::Float, {1, 1, 2, 2})
                           .input("i", DType::Int64, {2})
                           .node("AveragePool", "pool", {"a"}, {"p"}, {attr_ints("kernel_shape", {1, 1})})
                           .node("Concat", "cat", {"p", "a"}, {"y"}, {attr_int("axis", 1)})
                           .node("Add", "iadd", {"i", "i"}, {"j"})
                           .output("y")
                           .output("j")
                           .build();
  const std::vector<std::vector<Tensor>> samples = {{random_tensor({1, 1, 2, 2}, 1), Tensor::from_int64s({2}, {1, 2})}};
  const ir::Model cm = calibrate(fm, samples);
  EXPECT_EQ(calibration_node_total(cm.graph), 2u);  // p and a, for Concat
  EXPECT_EQ(input_name(cm.graph, "pool", 0), "a");
  EXPECT_EQ(input_name(cm.graph, "iadd", 0), "i");
  CalibrateOptions o;
  o.activation_ops = {"AveragePool"};
  const ir::Model cp = calibrate(fm, samples, o);
  EXPECT_EQ(calibration_node_total(cp.graph), 1u);
  EXPECT_EQ(input_name(cp.graph, "pool", 0), "a_calibrated");
  EXPECT_EQ(input_name(cp.graph, "cat", 1), "a");
}

TEST(Calibrate, RejectsCalibratedModelsAndMissingSamples) {
  const ir::Model cm = calibrate(conv_model(), conv_samples());
  EXPECT_THROW(calibrate(cm, conv_samples()), Error);
  EXPECT_THROW(calibrate(conv_model(), {}), Error);
  CalibrateOptions o;
  o.percentile = 0.0;
  EXPECT_THROW(calibrate(conv_model(), conv_samples(), o), Error);
  o = {};
  o.qtype = "int9000";
  EXPECT_THROW(calibrate(conv_model(), conv_samples(), o), Error);
  EXPECT_THROW(parse_activation_method("entropy"), Error);
  EXPECT_EQ(parse_activation_method("kl"), ActivationMethod::KL);
}

// ---- thresholds ----

TEST(CalibrateThreshold, Hygiene) {
  EXPECT_EQ(refine_activation_threshold(INFINITY, "n"), FLT_MAX);
  EXPECT_EQ(refine_activation_threshold(0.0f, "n"), 1.0f);
  EXPECT_EQ(refine_activation_threshold(-3.0f, "n"), 1.0f);
  EXPECT_EQ(refine_activation_threshold(2.5f, "n"), 2.5f);
  EXPECT_THROW(refine_activation_threshold(NAN, "n"), Error);
  // An all-zero activation gets threshold 1.0; an all-zero weight channel FLT_MIN.
  const ir::Model fm = ModelBuilder()
                           .input("x", DType::Float, {1, 2})
                           .initializer("W", Tensor::from_floats({2, 2}, {0.0f, 0.5f, 0.0f, -0.25f}))
                           .node("MatMul", "mm", {"x", "W"}, {"y"})
                           .output("y")
                           .build();
  const ir::Model cm = calibrate(fm, {{Tensor::zeros(DType::Float, {1, 2})}});
  EXPECT_EQ(node_named(cm.graph, "x_HzCalibration").attr_floats("thresholds"), (std::vector<float>{1.0f}));
  EXPECT_EQ(node_named(cm.graph, "W_HzCalibration").attr_floats("thresholds"), (std::vector<float>{FLT_MIN, 0.5f}));
  EXPECT_THROW(max_abs(Tensor::from_floats({2}, {1.0f, NAN}), "t"), Error);
}

TEST(CalibrateThreshold, HistogramBinsAbsoluteValues) {
  AbsHistogram h(4.0, 4);
  const std::vector<float> x = {0.0f, -0.5f, 1.0f, -3.99f, 4.0f, -4.0f, 2.5f};
  h.add(x.data(), static_cast<int64_t>(x.size()));
  // [0,1): 0, 0.5 | [1,2): 1 | [2,3): 2.5 | [3,4]: 3.99, 4, 4 (the max lands in the last bin)
  EXPECT_EQ(h.counts, (std::vector<double>{2, 1, 1, 3}));
}

TEST(CalibrateThreshold, PercentileOfAUniformSample) {
  // |x| = 1..10000 once each: the 99th percentile is 9900; bins of width 10000/2048.
  std::vector<float> x;
  for (int i = 1; i <= 10000; ++i) x.push_back(i % 2 ? static_cast<float>(i) : -static_cast<float>(i));
  AbsHistogram h(10000.0, 2048);
  h.add(x.data(), static_cast<int64_t>(x.size()));
  const float t = percentile_threshold(h, 99.0);
  EXPECT_GE(t, 9900.0f);
  EXPECT_LT(t, 9900.0f + 10000.0f / 2048.0f + 1e-3f);
  EXPECT_EQ(percentile_threshold(h, 100.0), 10000.0f);
  EXPECT_NEAR(percentile_threshold(h, 50.0), 5000.0f, 1.01f * 10000.0f / 2048.0f);
}

TEST(CalibrateThreshold, PercentileMethodEndToEnd) {
  // One activation, 1000 values 0.001..1 plus a single outlier 100: the 99.9th percentile ignores it.
  Tensor x(DType::Float, {1, 1001});
  for (int i = 0; i < 1000; ++i) x.mutable_data<float>()[i] = 0.001f * static_cast<float>(i + 1);
  x.mutable_data<float>()[1000] = 100.0f;
  const ir::Model fm = ModelBuilder()
                           .input("x", DType::Float, {1, 1001})
                           .initializer("W", Tensor::from_floats({1001, 1}, std::vector<float>(1001, 1.0f)))
                           .node("MatMul", "mm", {"x", "W"}, {"y"})
                           .output("y")
                           .build();
  CalibrateOptions o;
  o.method = ActivationMethod::Percentile;
  o.percentile = 99.9;
  const float t = node_named(calibrate(fm, {{x}}, o).graph, "x_HzCalibration").attr_floats("thresholds").at(0);
  // 99.9% of 1001 values = 999.999 -> all of 0.001..1 (bin 0 .. bin 20 of width 100/2048).
  EXPECT_GE(t, 1.0f);
  EXPECT_LE(t, 1.0f + 100.0f / 2048.0f);
  o.method = ActivationMethod::Max;
  EXPECT_EQ(node_named(calibrate(fm, {{x}}, o).graph, "x_HzCalibration").attr_floats("thresholds").at(0), 100.0f);
}

TEST(CalibrateThreshold, KlOnHandComputedHistograms) {
  // bins 4, quantized bins 2, width 1; bin k of the first i is in group floor(2k / i).
  // hist [10, 5, 0, 1]:
  //  i=2: P=[10,6]   Q=[10,5]                 KL = .625 ln(.625/.6667) + .375 ln(.375/.3333) = 0.0038
  //  i=3: P=[10,5,1] groups {0,1},{2}: Q=[7.5,7.5,0] -> the 0 under P's outliers is smoothed to
  //       1e-4: KL ≈ .0625 ln(.0625 / (1e-4/15)) - 0.0077 = 0.56
  //  i=4: P=[10,5,0,1] Q=[7.5,7.5,0,1]        KL ≈ .625 ln(.625/.46875) + .3125 ln(.3125/.46875) = 0.053
  //  -> i=2, threshold 2.
  AbsHistogram a(4.0, 4);
  a.counts = {10, 5, 0, 1};
  EXPECT_FLOAT_EQ(kl_threshold(a, 2), 2.0f);
  // hist [10, 5, 5, 5]: KL(2) = .4 ln .6 + .6 ln 1.8 = 0.148;
  // KL(3): P=[10,5,10] Q=[7.5,7.5,5] -> .4 ln(.4/.375) + .2 ln(.2/.375) + .4 ln(.4/.25) = 0.088;
  // KL(4): Q=[7.5,7.5,5,5] -> .4 ln(4/3) + .2 ln(2/3) = 0.034 -> i=4, threshold = max.
  AbsHistogram b(4.0, 4);
  b.counts = {10, 5, 5, 5};
  EXPECT_FLOAT_EQ(kl_threshold(b, 2), 4.0f);
  // Fewer bins than quantized bins, or nothing observed: the max.
  AbsHistogram c(3.0, 2);
  c.counts = {1, 1};
  EXPECT_FLOAT_EQ(kl_threshold(c, 128), 3.0f);
  AbsHistogram d(3.0, 256);
  EXPECT_FLOAT_EQ(kl_threshold(d, 128), 3.0f);
}

namespace {
std::vector<float> laplacian(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::exponential_distribution<float> e(1.0f);
  std::bernoulli_distribution sign(0.5);
  std::vector<float> x(n);
  for (float& v : x) v = sign(rng) ? e(rng) : -e(rng);
  return x;
}
float kl_of(const std::vector<float>& x) {
  float mx = 0.0f;
  for (float v : x) mx = std::max(mx, std::fabs(v));
  AbsHistogram h(mx, 2048);
  h.add(x.data(), static_cast<int64_t>(x.size()));
  return kl_threshold(h, 128);
}
}  // namespace

TEST(CalibrateThreshold, KlClipsALaplacianNearItsAnalyticOptimum) {
  // Unit Laplacian, 200k samples (max ≈ ln 200000 ≈ 11.3). The clipping that minimises the int8
  // quantization error of a Laplace(b) is ≈ 9.89·b (Banner et al., ACIQ, 2019); KL lands nearby.
  std::vector<float> x = laplacian(200000, 42);
  const float t = kl_of(x);
  EXPECT_GT(t, 8.0f);
  EXPECT_LT(t, 10.5f);
  // A few far outliers (like real activations) move the max to 49 but barely the KL threshold.
  for (int k = 0; k < 10; ++k) x[static_cast<size_t>(k)] = 40.0f + static_cast<float>(k);
  const float clipped = kl_of(x);
  EXPECT_GT(clipped, 8.0f);
  EXPECT_LT(clipped, 10.5f);  // well below the max of 49
  // A uniform sample has no tail worth clipping: the threshold stays at the max.
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (float& v : x) v = u(rng);
  EXPECT_GT(kl_of(x), 0.95f);
}

TEST(CalibrateThreshold, KlMethodEndToEnd) {
  std::vector<float> values = laplacian(4096, 7);
  values[0] = 60.0f;  // an outlier the KL threshold should clip
  const Tensor x = Tensor::from_floats({1, 4096}, values);
  const ir::Model fm = ModelBuilder()
                           .input("x", DType::Float, {1, 4096})
                           .initializer("W", Tensor::from_floats({4096, 1}, std::vector<float>(4096, 1.0f)))
                           .node("MatMul", "mm", {"x", "W"}, {"y"})
                           .output("y")
                           .build();
  CalibrateOptions o;
  o.method = ActivationMethod::KL;
  const float t = node_named(calibrate(fm, {{x}}, o).graph, "x_HzCalibration").attr_floats("thresholds").at(0);
  EXPECT_GT(t, 3.0f);
  EXPECT_LT(t, 20.0f);
  EXPECT_FLOAT_EQ(t, kl_of(values));  // the same as the building block on the same data
}

TEST(CalibrateThreshold, WeightThresholdsPerAxis) {
  // [2, 3]: axis 0 -> row maxima, axis 1 -> column maxima, axis -1 == axis 1.
  const Tensor w = Tensor::from_floats({2, 3}, {1, -5, 2, -3, 4, 0.5f});
  EXPECT_EQ(weight_thresholds(w, 0, 1, false, "w"), (std::vector<float>{5, 4}));
  EXPECT_EQ(weight_thresholds(w, 1, 1, false, "w"), (std::vector<float>{3, 5, 2}));
  EXPECT_EQ(weight_thresholds(w, -1, 1, false, "w"), (std::vector<float>{3, 5, 2}));
  EXPECT_THROW(weight_thresholds(w, 2, 1, false, "w"), Error);
  // ConvTranspose [C_in=2, C_out/g=1], g=2 -> channel i (one output channel per group).
  EXPECT_EQ(weight_thresholds(Tensor::from_floats({2, 1}, {-7, 3}), 1, 2, true, "w"), (std::vector<float>{7, 3}));
  EXPECT_THROW(weight_thresholds(Tensor::from_floats({3, 1}, {1, 2, 3}), 1, 2, true, "w"), Error);
}
