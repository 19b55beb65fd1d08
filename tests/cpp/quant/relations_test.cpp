#include "quant/relations.h"

#include <gtest/gtest.h>

#include "graph_builder.h"
#include "ops/op_test_util.h"

using namespace ptq;
using ptq::test::attr_floats;

namespace {

// x -> x_HzCalibration -> Conv_1(w_HzCalibration) -> Relu_2 -> MaxPool_3 -> [y_HzCalibration] -> Conv_4
//                                                               \-> Reshape_5 -> Gemm_6 (no calibration on its input)
// Conv_4 output -> Add_7 (with Relu_2 output) ; graph output from HzFilter_8(Add_7 out, Gemm out)
ir::Graph sample_graph() {
  test::GraphBuilder b;
  b.input("x", DType::Float, {1, 1, 4, 4});
  b.initializer("w", Tensor::from_floats({1, 1, 1, 1}, {1.0f}));
  b.calibration("x", {attr_floats("thresholds", {1.0f})});
  b.calibration("w", {attr_floats("thresholds", {1.0f})});
  b.node("Conv_1", "Conv", {"x_cal", "w_cal"}, {"c1"});
  b.node("Relu_2", "Relu", {"c1"}, {"r2"});
  b.node("MaxPool_3", "MaxPool", {"r2"}, {"m3"});
  b.calibration("m3", {attr_floats("thresholds", {1.0f})});
  b.node("Conv_4", "Conv", {"m3_cal", "w_cal"}, {"c4"});
  b.node("Reshape_5", "Reshape", {"m3", "shape"}, {"s5"});
  b.initializer("shape", Tensor::from_int64s({2}, {1, -1}));
  b.node("Gemm_6", "Gemm", {"s5", "w"}, {"g6"});
  b.node("Add_7", "Add", {"c4", "r2"}, {"a7"});
  b.node("HzFilter_8", "HzFilter", {"a7", "g6"}, {"f8"}, {}, "horizon");
  b.output("f8");
  return b.graph();
}

}  // namespace

TEST(Relations, InputCalibrationFollowsSkippableOps) {
  ir::Graph g = sample_graph();
  quant::CalibrationRelations r(g);
  auto& n2c = r.node_to_calibration();
  EXPECT_EQ(n2c.at("Conv_1"), (std::set<std::string>{"x_HzCalibration", "w_HzCalibration"}));
  EXPECT_EQ(n2c.at("Conv_4"), (std::set<std::string>{"m3_HzCalibration", "w_HzCalibration"}));
  // Reshape_5 reads MaxPool_3 (skippable) -> Relu_2 (skippable) -> Conv_1 (not calibration, not skippable): none.
  EXPECT_EQ(n2c.count("Reshape_5"), 0u);
  EXPECT_EQ(n2c.count("Relu_2"), 0u);
  // get_calibration_by_node falls back to the name itself.
  EXPECT_EQ(r.calibration_by_node("m3_HzCalibration"), (std::set<std::string>{"m3_HzCalibration"}));
  EXPECT_EQ(r.calibration_by_node("Relu_2"), (std::set<std::string>{"Relu_2"}));
  EXPECT_EQ(r.calibration_to_node().at("w_HzCalibration"), (std::set<std::string>{"Conv_1", "Conv_4"}));
}

TEST(Relations, SkippableChainReachesCalibration) {
  test::GraphBuilder b;
  b.input("x", DType::Float, {1, 4});
  b.calibration("x", {attr_floats("thresholds", {1.0f})});
  b.node("Relu_1", "Relu", {"x_cal"}, {"r"});
  b.node("Reshape_2", "Reshape", {"r", "shape"}, {"s"});
  b.initializer("shape", Tensor::from_int64s({2}, {1, -1}));
  b.node("Neg_3", "Neg", {"s"}, {"n"});
  b.output("n");
  quant::CalibrationRelations r(b.graph());
  EXPECT_EQ(r.node_to_calibration().at("Neg_3"), (std::set<std::string>{"x_HzCalibration"}));
  EXPECT_EQ(r.node_to_calibration().at("Reshape_2"), (std::set<std::string>{"x_HzCalibration"}));
  EXPECT_EQ(r.node_to_calibration().at("Relu_1"), (std::set<std::string>{"x_HzCalibration"}));
}

TEST(Relations, NormalNodesCaliMapTaeAndOutputs) {
  ir::Graph g = sample_graph();
  quant::CalibrationRelations r(g);
  std::vector<std::string> names;
  for (const auto& [n, outs] : r.normal_nodes()) names.push_back(n);
  EXPECT_EQ(names, (std::vector<std::string>{"Conv_1", "Conv_4"}));
  EXPECT_EQ(r.node_outputs("Conv_4"), (std::vector<std::string>{"c4"}));
  EXPECT_TRUE(r.node_outputs("Relu_2").empty());
  EXPECT_EQ(r.cali_normal_map().at("w_HzCalibration"), "Conv_1;Conv_4");
  EXPECT_EQ(r.cali_normal_map().at("x_HzCalibration"), "Conv_1");
  EXPECT_EQ(r.tae_nodes(), (std::vector<std::string>{"x_HzCalibration", "m3_HzCalibration"}));
  EXPECT_EQ(r.model_outputs(), (std::vector<std::string>{"a7", "g6"}));
}

// x -> x_HzCalibration -> Clip_1 (ReLU6) -> Conv_2(w_HzCalibration) -> Sigmoid_3: horizon_nn's finder
// (the default) stops at Clip, hmct's looks through it as through Relu (behaviour.md §1.9).
TEST(Relations, ClipIsLookedThroughByHmctRulesOnly) {
  test::GraphBuilder b;
  b.input("x", DType::Float, {1, 1, 2, 2});
  b.initializer("w", Tensor::from_floats({1, 1, 1, 1}, {1.0f}));
  b.initializer("lo", Tensor::from_floats({}, {0.0f}));
  b.initializer("hi", Tensor::from_floats({}, {6.0f}));
  b.calibration("x", {attr_floats("thresholds", {6.0f})});
  b.calibration("w", {attr_floats("thresholds", {1.0f})});
  b.node("Clip_1", "Clip", {"x_cal", "lo", "hi"}, {"r"});
  b.node("Conv_2", "Conv", {"r", "w_cal"}, {"c"});
  b.node("Clip_3", "Clip", {"x_cal", "lo", "hi"}, {"r3"});
  b.node("Sigmoid_4", "Sigmoid", {"r3"}, {"s"});
  b.node("Add_5", "Add", {"c", "s"}, {"y"});
  b.output("y");
  const ir::Graph g = b.graph();
  auto normal = [](const quant::CalibrationRelations& r) {
    std::vector<std::string> names;
    for (const auto& [n, outs] : r.normal_nodes()) names.push_back(n);
    return names;
  };

  const quant::CalibrationRelations older(g);
  EXPECT_EQ(older.rules(), quant::RelationRules::HorizonNn);
  EXPECT_EQ(older.node_to_calibration().at("Conv_2"), (std::set<std::string>{"w_HzCalibration"}));
  EXPECT_EQ(older.node_to_calibration().count("Sigmoid_4"), 0u);
  EXPECT_EQ(normal(older), (std::vector<std::string>{"Clip_1", "Conv_2", "Clip_3"}));

  const quant::CalibrationRelations newer(g, quant::RelationRules::Hmct);
  EXPECT_EQ(newer.node_to_calibration().at("Conv_2"), (std::set<std::string>{"x_HzCalibration", "w_HzCalibration"}));
  EXPECT_EQ(newer.node_to_calibration().at("Sigmoid_4"), (std::set<std::string>{"x_HzCalibration"}));
  EXPECT_EQ(normal(newer), (std::vector<std::string>{"Clip_1", "Conv_2", "Clip_3", "Sigmoid_4"}));
  // Only the op types differ: cali_normal_map (direct consumers) and the tae nodes are the same.
  EXPECT_EQ(newer.cali_normal_map(), older.cali_normal_map());
  EXPECT_EQ(newer.tae_nodes(), older.tae_nodes());
}

TEST(Relations, RulesByNameDefaultFirst) {
  const auto& rules = quant::relation_rules();
  ASSERT_EQ(rules.size(), 2u);
  EXPECT_EQ(rules[0].name, "horizon_nn");
  EXPECT_EQ(rules[1].name, "hmct");
  EXPECT_EQ(quant::parse_relation_rules("hmct"), quant::RelationRules::Hmct);
  EXPECT_FALSE(quant::CalibrationRelations::is_skippable("Clip"));
  EXPECT_TRUE(quant::CalibrationRelations::is_skippable("Clip", quant::RelationRules::Hmct));
  try {
    quant::parse_relation_rules("hmct2");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'horizon_nn', 'hmct'"), std::string::npos) << e.what();
  }
}

// The original appends a consumer's name once per input of it that reads the calibration node's output.
TEST(Relations, NodeColumnRepeatsAConsumerPerInputSlot) {
  test::GraphBuilder b;
  b.input("x", DType::Float, {1, 4});
  b.calibration("x", {attr_floats("thresholds", {1.0f})});
  b.node("Mul_1", "Mul", {"x_cal", "x_cal"}, {"m"});
  b.node("Add_2", "Add", {"x_cal", "m"}, {"y"});
  b.output("y");
  const quant::CalibrationRelations r(b.graph());
  EXPECT_EQ(r.cali_normal_map().at("x_HzCalibration"), "Mul_1;Mul_1;Add_2");
}
