// A model with an op the core cannot run, loaded in the limited state (Executor allow_unsupported):
// the graph and calibration nodes are there, what describe() marks needs_execution "activations"
// works on weight calibration nodes exactly as on a runnable twin of the model, and everything that
// runs the model fails with one error naming every unsupported op.
#include <gtest/gtest.h>

#include "analysis/analysis_test_util.h"
#include "api/analyze.h"
#include "api/catalog.h"
#include "exec/executor.h"
#include "graph_builder.h"
#include "io/json.h"
#include "ops/op_test_util.h"

using namespace ptq;
using io::Json;
using test::attr_floats;
using test::attr_int;

namespace {

// x -> x_HzCalibration -> Mul(x_cal, w_cal) -> m -> <last_op> -> y; `last_op` in `domain`.
ir::Model model_with(const std::string& last_op, const std::string& domain) {
  test::GraphBuilder b;
  b.input("x", DType::Float, {2, 3});
  b.initializer("w", Tensor::from_floats({2, 3}, {0.5f, -1.25f, 0.0f, 2.0f, 0.25f, -0.75f}));
  b.calibration("x", {attr_floats("thresholds", {1.5f})});
  b.calibration("w", {attr_floats("thresholds", {1.25f, 2.0f}), attr_int("axis", 0)});
  b.node("mul", "Mul", {"x_cal", "w_cal"}, {"m"});
  b.node("fancy", last_op, {"m"}, {"y"}, {}, domain);
  b.output("y");
  return b.model();
}

struct Loaded {
  explicit Loaded(ir::Model m, bool allow) : ex(std::move(m), allow) {}
  exec::Executor ex;
  quant::CalibrationRelations rel{ex.graph()};
  test::SampleSet samples{ex.graph(), {{Tensor::from_floats({2, 3}, {0.1f, -0.2f, 0.3f, 0.4f, -0.5f, 0.6f})}}};
  std::string analyze(const std::string& request) { return api::analyze({ex, rel, &samples.data()}, request); }
};

Json section(const std::string& doc, const std::string& name) { return *Json::parse(doc, "test").find(name); }

const char* kUnsupported =
    "the model uses 1 node(s) with unsupported ops: FancyOp (domain 'com.example', node 'fancy')";

}  // namespace

TEST(UnsupportedOp, ExecutorRefusesByDefaultAndLoadsLimitedOnRequest) {
  test::expect_error([] { exec::Executor ex(model_with("FancyOp", "com.example")); }, kUnsupported);
  Loaded l(model_with("FancyOp", "com.example"), true);
  EXPECT_FALSE(l.ex.runnable());
  ASSERT_EQ(l.ex.unsupported_nodes().size(), 1u);
  EXPECT_EQ(l.ex.unsupported_nodes()[0].node, "fancy");
  EXPECT_EQ(l.ex.unsupported_nodes()[0].op_type, "FancyOp");
  EXPECT_EQ(l.ex.unsupported_nodes()[0].domain, "com.example");
  EXPECT_EQ(l.ex.unsupported_message(), kUnsupported);
  EXPECT_EQ(l.ex.calibrations().size(), 2u);
  const std::vector<Tensor> inputs = l.samples.data().sample(0);
  test::expect_error([&] { l.ex.run(inputs, l.ex.stored_config()); }, std::string("cannot run: ") + kUnsupported);
  test::expect_error([&] { l.ex.cached_keep_all_run(inputs, l.ex.uniform_config(false)); },
                     std::string("cannot run: ") + kUnsupported);

  Loaded twin(model_with("Relu", ""), true);
  EXPECT_TRUE(twin.ex.runnable());
  EXPECT_EQ(twin.ex.unsupported_message(), "");
}

TEST(UnsupportedOp, WeightAnalysesMatchARunnableTwin) {
  Loaded l(model_with("FancyOp", "com.example"), true);
  Loaded twin(model_with("Relu", ""), false);
  const std::string stat = R"({"analysis":"stat_info","options":{"nodes_list":["w_HzCalibration"]}})";
  const Json got = section(l.analyze(stat), "stat_info");
  EXPECT_EQ(got.dump(), section(twin.analyze(stat), "stat_info").dump());
  // Rows along dim 0 by hand: max |w| and smallest non-zero |w| of {0.5, -1.25, 0} and {2, 0.25, -0.75}.
  const Json& w = *got.find("w_HzCalibration");
  ASSERT_EQ(w.find("max_vals")->items().size(), 2u);
  EXPECT_DOUBLE_EQ(w.find("max_vals")->items()[0].as_number(), 1.25);
  EXPECT_DOUBLE_EQ(w.find("max_vals")->items()[1].as_number(), 2.0);
  EXPECT_DOUBLE_EQ(w.find("min_nz_vals")->items()[0].as_number(), 0.5);
  EXPECT_DOUBLE_EQ(w.find("min_nz_vals")->items()[1].as_number(), 0.25);

  const std::string dist = R"({"analysis":"distribution","options":{"nodes_list":["w_HzCalibration"],"bins":4}})";
  EXPECT_EQ(section(l.analyze(dist), "distribution").dump(), section(twin.analyze(dist), "distribution").dump());
}

TEST(UnsupportedOp, AnalysesThatRunTheModelNameTheOps) {
  Loaded l(model_with("FancyOp", "com.example"), true);
  const std::string still = ". Without running the model, distribution, stat_info work on weight calibration nodes";
  for (const auto& a : api::analyses()) {
    if (a.needs_execution != "always") continue;
    std::string options = "{}";
    if (a.name == "channelwise") options = R"({"nodes_list":["w_HzCalibration"]})";
    test::expect_error([&] { l.analyze(R"({"analysis":")" + a.name + R"(","options":)" + options + "}"); },
                       "cannot run " + a.name + ": " + kUnsupported + still);
  }
  // The analyses that run the model only for activations fail the same way when asked for one.
  test::expect_error([&] { l.analyze(R"({"analysis":"stat_info","options":{"nodes_list":["x_HzCalibration"]}})"); },
                     std::string("cannot run stat_info: ") + kUnsupported + still);
  test::expect_error([&] { l.analyze(R"({"analysis":"distribution","options":{"nodes_list":["x_HzCalibration"]}})"); },
                     std::string("cannot run distribution: ") + kUnsupported + still);
}

TEST(UnsupportedOp, StatInfoByDefaultGivesTheWeightNodesAndNamesTheFeatureNodesLeftOut) {
  Loaded l(model_with("FancyOp", "com.example"), true);
  const Json doc = Json::parse(l.analyze(R"({"analysis":"stat_info"})"), "stat_info");
  std::vector<std::string> order;
  for (const Json& n : doc.find("stat_info_order")->items()) order.push_back(n.as_string());
  EXPECT_EQ(order, std::vector<std::string>{"w_HzCalibration"});
  const Json* messages = doc.find("stat_info_messages");
  ASSERT_NE(messages, nullptr);
  ASSERT_EQ(messages->items().size(), 1u);
  EXPECT_EQ(messages->items()[0].as_string(),
            std::string("1 feature calibration node(s) left out: their statistics need a run of the model, and ") +
                kUnsupported);
  // A runnable model has every node and no message.
  Loaded twin(model_with("Relu", ""), false);
  const Json full = Json::parse(twin.analyze(R"({"analysis":"stat_info"})"), "stat_info");
  EXPECT_EQ(full.find("stat_info_order")->items().size(), 2u);
  EXPECT_EQ(full.find("stat_info_messages"), nullptr);
}

TEST(UnsupportedOp, DescribeSaysWhichAnalysesNeedExecution) {
  const Json d = Json::parse(api::describe_json(), "describe");
  for (const auto& a : d.find("analyses")->items()) {
    const std::string name = a.find("name")->as_string();
    const bool weights_only = name == "stat_info" || name == "distribution";
    EXPECT_EQ(a.find("needs_execution")->as_string(), weights_only ? "activations" : "always") << name;
  }
}
