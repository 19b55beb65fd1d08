// Calibration nodes inside If branches and Loop bodies (§1.13): listed by qualified name, switched by
// the configuration, run by the subgraph executor, observed at every execution, swept incrementally
// with the control-flow node as one unit. Expected numbers come from a float oracle of the model
// written out below (test::fq is fake quantization by hand); incremental runs are compared with full
// runs byte for byte.
#include <gtest/gtest.h>

#include <cstring>

#include "analysis/analysis_test_util.h"
#include "analysis/metrics.h"
#include "analysis/selection.h"
#include "analysis/sensitivity.h"
#include "analysis/stat_info.h"
#include "api/analyze.h"
#include "exec/executor.h"
#include "graph_builder.h"
#include "io/json.h"
#include "ops/op_test_util.h"
#include "quant/relations.h"

namespace ptq {
namespace {

using test::attr_floats;
using test::attr_graph;
using test::attr_int;
using test::attr_string;
using test::fq;
using test::GraphBuilder;

const char* const kMainX = "x_HzCalibration";
const char* const kAcc = "loop/body/acc_HzCalibration";
const char* const kBodyX = "loop/body/x_HzCalibration";
const char* const kThen = "if/then_branch/y_HzCalibration";
const char* const kElse = "if/else_branch/y_HzCalibration";

ir::Attribute thresholds(float t) { return attr_floats("thresholds", {t}); }

// x [4] -> x_HzCalibration (t 1.27) -> x_cal
// loop (3 iterations, y0 = 0): y = acc_HzCalibration(y) (t 2.54) + x_HzCalibration(x) (t 0.635, reads the outer x)
// if sum(x) > 0: then y_HzCalibration(y) (t 5.08) * x_cal, else -y_HzCalibration(y) (t 5.08; the same node name)
ir::Model model() {
  GraphBuilder body;
  body.input("i", DType::Int64, {});
  body.input("cond_in", DType::Bool, {});
  body.input("y_in", DType::Float, {4});
  body.node("acc_HzCalibration", "HzCalibration", {"y_in"}, {"y_in_q"}, {thresholds(2.54f)}, "horizon");
  body.node("x_HzCalibration", "HzCalibration", {"x"}, {"xb"}, {thresholds(0.635f)}, "horizon");
  body.node("add", "Add", {"y_in_q", "xb"}, {"y_out"});
  body.node("keep_going", "Identity", {"cond_in"}, {"cond_out"});
  body.output("cond_out").output("y_out");
  GraphBuilder then_b;
  then_b.node("y_HzCalibration", "HzCalibration", {"y"}, {"yt"}, {thresholds(5.08f)}, "horizon");
  then_b.node("then_mul", "Mul", {"yt", "x_cal"}, {"t"});
  then_b.output("t");
  GraphBuilder else_b;
  else_b.node("y_HzCalibration", "HzCalibration", {"y"}, {"ye"}, {thresholds(5.08f)}, "horizon");
  else_b.node("else_neg", "Neg", {"ye"}, {"e"});
  else_b.output("e");
  GraphBuilder b;
  b.input("x", DType::Float, {4});
  b.calibration("x", {thresholds(1.27f)});
  b.initializer("M", Tensor::from_int64s({}, {3}));
  b.initializer("y0", Tensor::from_floats({4}, {0, 0, 0, 0}));
  b.initializer("zero", Tensor::from_floats({}, {0}));
  b.node("loop", "Loop", {"M", "", "y0"}, {"y"}, {attr_graph("body", body.subgraph("body"))});
  b.node("sum", "ReduceSum", {"x"}, {"s"}, {attr_int("keepdims", 0)});
  b.node("positive", "Greater", {"s", "zero"}, {"c"});
  b.node("if", "If", {"c"}, {"out"},
         {attr_graph("then_branch", then_b.subgraph("then")), attr_graph("else_branch", else_b.subgraph("else"))});
  b.output("out");
  return b.model();
}

// The model in floats, each calibration node applied when `on` says so (`acc_bits`: its qtype).
struct Switches {
  bool main_x = false, acc = false, body_x = false, then_y = false, else_y = false;
  int acc_bits = 8;
};

std::vector<float> oracle(const std::vector<float>& x, const Switches& s) {
  std::vector<float> out(4);
  float sum = 0;
  for (float v : x) sum += v;
  for (size_t k = 0; k < 4; ++k) {
    float y = 0;
    for (int it = 0; it < 3; ++it) y = (s.acc ? fq(y, 2.54f, s.acc_bits) : y) + (s.body_x ? fq(x[k], 0.635f) : x[k]);
    const float xm = s.main_x ? fq(x[k], 1.27f) : x[k];
    out[k] = sum > 0 ? (s.then_y ? fq(y, 5.08f) : y) * xm : -(s.else_y ? fq(y, 5.08f) : y);
  }
  return out;
}

exec::QuantConfig config_of(const exec::Executor& ex, const Switches& s) {
  exec::QuantConfig c = ex.uniform_config(false);
  const std::pair<const char*, bool> on[] = {
      {kMainX, s.main_x}, {kAcc, s.acc}, {kBodyX, s.body_x}, {kThen, s.then_y}, {kElse, s.else_y}};
  for (const auto& [name, value] : on) c.on[static_cast<size_t>(ex.calibration_index(name))] = value ? 1 : 0;
  if (s.acc_bits == 16) c.qtype[static_cast<size_t>(ex.calibration_index(kAcc))] = "int16";
  return c;
}

// Every single switch, all of them, and the loop-carried node at int16.
std::vector<Switches> variants() {
  std::vector<Switches> v(8);
  v[1].main_x = true;
  v[2].acc = true;
  v[3].body_x = true;
  v[4].then_y = true;
  v[5].else_y = true;
  v[6] = {true, true, true, true, true, 8};
  v[7] = {false, true, false, false, false, 16};
  return v;
}

// Positive sum: the then-branch; negative: the else-branch. Values straddle the quantization steps.
const std::vector<std::vector<float>>& samples() {
  static const std::vector<std::vector<float>> s = {{0.3127f, -0.0411f, 0.5993f, 0.0077f},
                                                    {-0.4521f, 0.2219f, -0.6183f, 0.0356f}};
  return s;
}

bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

TEST(SubgraphCalibration, ListedByQualifiedNamesWithTheirOwner) {
  exec::Executor ex(model());
  std::vector<std::string> names;
  for (const auto& spec : ex.calibrations()) names.push_back(spec.node_name);
  // The main graph's first, then each subgraph's in the order of their control-flow nodes.
  EXPECT_EQ(names, (std::vector<std::string>{kMainX, kAcc, kBodyX, kThen, kElse}));
  const int loop = ex.graph().find_node("loop"), branch = ex.graph().find_node("if");
  const auto& specs = ex.calibrations();
  EXPECT_FALSE(specs[0].in_subgraph());
  EXPECT_EQ(specs[1].owner_node, loop);
  EXPECT_EQ(specs[2].owner_node, loop);
  EXPECT_EQ(specs[3].owner_node, branch);
  EXPECT_EQ(specs[4].owner_node, branch);
  EXPECT_EQ(specs[2].graph->value(specs[2].input_value).name, "x");  // read from the main graph by name
  EXPECT_TRUE(ex.names_node(kElse));
  EXPECT_TRUE(ex.names_node("loop/body/add"));
  EXPECT_FALSE(ex.names_node("add"));
  EXPECT_EQ(quant::count_calibration_nodes(ex.graph()).activations, 5u);
}

TEST(SubgraphCalibration, NameClashIsALoadError) {
  GraphBuilder body;
  body.input("i", DType::Int64, {});
  body.input("cond_in", DType::Bool, {});
  body.node("q_HzCalibration", "HzCalibration", {"x"}, {"xq"}, {thresholds(1.0f)}, "horizon");
  body.node("keep_going", "Identity", {"cond_in"}, {"cond_out"});
  body.output("cond_out").output("xq");
  GraphBuilder b;
  b.input("x", DType::Float, {2});
  b.initializer("M", Tensor::from_int64s({}, {1}));
  b.node("loop", "Loop", {"M", ""}, {"ys"}, {attr_graph("body", body.subgraph())});
  b.node("loop/body/q_HzCalibration", "Identity", {"ys"}, {"z"});
  b.output("z");
  test::expect_error([&] { exec::Executor ex(b.model()); },
                     "calibration node 'q_HzCalibration' inside node 'loop' would go by the name "
                     "'loop/body/q_HzCalibration', which another node of the model already has");
}

TEST(SubgraphCalibration, RunsUnderTheConfiguration) {
  exec::Executor ex(model());
  for (const auto& x : samples())
    for (const Switches& s : variants()) {
      const Tensor out = ex.outputs(ex.run({Tensor::from_floats({4}, x)}, config_of(ex, s)))[0];
      const std::vector<float> expected = oracle(x, s);
      for (size_t k = 0; k < 4; ++k)
        EXPECT_NEAR(out.data<float>()[k], expected[k], 1e-6f) << "element " << k << ", sample " << x[0];
    }
  // The switches matter: with every node ON the outputs differ from the float model's.
  EXPECT_NE(oracle(samples()[0], variants()[6]), oracle(samples()[0], Switches{}));
  EXPECT_NE(oracle(samples()[0], variants()[7]), oracle(samples()[0], variants()[2]));
}

TEST(SubgraphCalibration, IncrementalRunsEqualFullRunsByteForByte) {
  exec::Executor ex(model());
  ex.set_run_cache_budget(0);
  for (const auto& x : samples()) {
    const std::vector<Tensor> inputs = {Tensor::from_floats({4}, x)};
    for (const exec::QuantConfig& from : {ex.uniform_config(false), ex.uniform_config(true)}) {
      const exec::RunRecord base = ex.run(inputs, from, {}, true);
      for (const Switches& s : variants()) {
        const exec::QuantConfig to = config_of(ex, s);
        const Tensor full = ex.outputs(ex.run(inputs, to))[0];
        const Tensor inc = ex.outputs(ex.run_incremental(base, to, {}))[0];
        EXPECT_TRUE(same_bytes(inc, full)) << "sample " << x[0];
      }
    }
  }
  // What re-runs from the float model: switching a Loop body's node re-runs the Loop and the If
  // after it; a branch's node only the If.
  const std::vector<Tensor> inputs = {Tensor::from_floats({4}, samples()[0])};
  const exec::RunRecord base = ex.run(inputs, ex.uniform_config(false), {}, true);
  exec::RunStats acc;
  ex.run_incremental(base, config_of(ex, variants()[2]), {}, &acc);
  EXPECT_EQ(acc.nodes_executed, 2);
  exec::RunStats then_y;
  ex.run_incremental(base, config_of(ex, variants()[4]), {}, &then_y);
  EXPECT_EQ(then_y.nodes_executed, 1);
}

TEST(SubgraphCalibration, CachedNearestRunsEqualFullRuns) {
  exec::Executor ex(model());
  const std::vector<Tensor> inputs = {Tensor::from_floats({4}, samples()[1])};
  ex.cached_keep_all_run(inputs, ex.uniform_config(false));
  for (const Switches& s : variants()) {  // each configuration derived from the nearest cached one
    const exec::QuantConfig to = config_of(ex, s);
    const exec::RunRecord nearest = ex.cached_keep_all_run_nearest(inputs, to);
    EXPECT_TRUE(same_bytes(ex.outputs(nearest)[0], ex.outputs(ex.run(inputs, to))[0]));
  }
}

TEST(SubgraphCalibration, ObservesEveryIterationAndOnlyTheBranchTaken) {
  exec::Executor ex(model());
  const std::vector<float>& x = samples()[0];  // sum > 0: the then-branch
  const std::vector<int> ids = {ex.calibration_index(kMainX), ex.calibration_index(kAcc), ex.calibration_index(kBodyX),
                                ex.calibration_index(kThen), ex.calibration_index(kElse)};
  const std::vector<Tensor> seen =
      analysis::observe_calibration_inputs(ex, {Tensor::from_floats({4}, x)}, ex.uniform_config(false), ids);
  ASSERT_EQ(seen.size(), 5u);
  EXPECT_EQ(seen[0].shape(), (Shape{4}));
  // acc reads y before each iteration: 0, x, x + x (float model); the body's x node reads x three times.
  ASSERT_EQ(seen[1].shape(), (Shape{12}));
  ASSERT_EQ(seen[2].shape(), (Shape{12}));
  for (size_t k = 0; k < 4; ++k) {
    EXPECT_EQ(seen[1].data<float>()[k], 0.0f);
    EXPECT_EQ(seen[1].data<float>()[4 + k], x[k]);
    EXPECT_EQ(seen[1].data<float>()[8 + k], x[k] + x[k]);
    for (size_t it = 0; it < 3; ++it) EXPECT_EQ(seen[2].data<float>()[4 * it + k], x[k]);
    EXPECT_EQ(seen[3].data<float>()[k], x[k] + x[k] + x[k]);
  }
  EXPECT_FALSE(seen[4].defined());  // the else-branch never ran

  // stat info: a body node's maximum is over every iteration (y before the third one: 2 · x[2], the largest).
  test::SampleSet set(ex.graph(), {{Tensor::from_floats({4}, x)}});
  quant::CalibrationRelations rel(ex.graph());
  analysis::StatInfoOptions o;
  o.has_nodes = true;
  o.nodes = {kAcc, kElse};
  const analysis::StatInfoResult r = analysis::get_calibration_nodes_stat_info(ex, rel, set.data(), o);
  ASSERT_EQ(r.nodes.size(), 2u);
  EXPECT_EQ(r.nodes[0].node, kAcc);
  ASSERT_FALSE(r.nodes[0].max_vals.empty());
  EXPECT_FLOAT_EQ(r.nodes[0].max_vals[0], x[2] + x[2]);
}

// Distribution and box plots of nodes some of which the sample does not run (the branch not taken):
// the others are plotted, those are named in `<section>_not_run`, and split parts merge to the same.
TEST(SubgraphCalibration, PlotsLeaveOutNodesTheSampleDidNotRun) {
  exec::Executor ex(model());
  quant::CalibrationRelations rel(ex.graph());
  test::SampleSet set(ex.graph(), {{Tensor::from_floats({4}, samples()[1])}});  // sum < 0: the else-branch
  const api::Context ctx{ex, rel, &set.data()};
  auto strings = [](const io::Json& list) {
    std::vector<std::string> out;
    for (const io::Json& s : list.items()) out.push_back(s.as_string());
    return out;
  };
  auto without_timings = [](const std::string& doc) {
    io::Json j = io::Json::parse(doc, "test");
    j.set("timings_ms", io::Json::object());
    return j.dump();
  };
  for (const std::string section : {"distribution", "channelwise"}) {
    const std::string head = R"({"analysis":")" + section + R"(","options":{"nodes_list":[")" + kThen + R"(",")" +
                             kMainX + R"(",")" + kElse + R"("]})";
    const std::string full = api::analyze(ctx, head + "}");
    const io::Json doc = io::Json::parse(full, section);
    EXPECT_EQ(strings(*doc.find(section + "_not_run")), std::vector<std::string>{kThen}) << section;
    EXPECT_EQ(strings(*doc.find(section + "_order")).size(), 2u) << section;
    EXPECT_EQ(doc.find(section)->dump().find(kThen), std::string::npos) << section;
    // The part holding the node left out merged after the other (the merge starts from the first part).
    const std::string a = api::analyze(ctx, head + R"(,"items":{"begin":0,"end":1}})");
    const std::string b = api::analyze(ctx, head + R"(,"items":{"begin":1,"end":3}})");
    EXPECT_EQ(without_timings(api::merge_results("[" + b + "," + a + "]")), without_timings(full)) << section;
  }
}

TEST(SubgraphCalibration, SensitivityItemsAndSweepsReachBodies) {
  exec::Executor ex(model());
  quant::CalibrationRelations rel(ex.graph());
  EXPECT_EQ(rel.node_items(),
            (std::vector<std::string>{"loop/body/add", "if/then_branch/then_mul", "if/else_branch/else_neg"}));
  EXPECT_EQ(rel.calibration_by_node("loop/body/add"), (std::set<std::string>{kAcc, kBodyX}));
  EXPECT_EQ(rel.cali_normal_map().at(kThen), "if/then_branch/then_mul");
  std::vector<std::vector<Tensor>> inputs;
  for (const auto& x : samples()) inputs.push_back({Tensor::from_floats({4}, x)});
  test::SampleSet set(ex.graph(), inputs);

  for (const std::string type : {"node", "activation"}) {
    analysis::SensitivityOptions o;
    o.node_type = type;
    o.data_num = 0;
    const analysis::SensitivityResult r = analysis::get_sensitivity_of_nodes(ex, rel, set.data(), o);
    // Each row: the float model with the item's set ON, from full runs; cosine per sample, averaged.
    for (const auto& row : r.rows) {
      const std::vector<int> set_of = row.item.find("HzCalibration") != std::string::npos
                                          ? std::vector<int>{ex.calibration_index(row.item)}
                                          : analysis::calibration_set(ex, rel, {row.item});
      const exec::QuantConfig config = analysis::whitelist_config(ex, ex.stored_config(), set_of);
      std::vector<std::vector<float>> values(1);
      for (const auto& in : inputs) {
        const Tensor a = ex.outputs(ex.run(in, ex.uniform_config(false)))[0];
        const Tensor b = ex.outputs(ex.run(in, config))[0];
        values[0].push_back(analysis::compute_metric(analysis::Metric::Cosine, a.data<float>(), b.data<float>(), 4));
      }
      EXPECT_EQ(row.values[0], analysis::aggregate(values)) << type << " " << row.item;
    }
    EXPECT_EQ(r.rows.size(), type == "node" ? 3u : 5u);
  }
}

}  // namespace
}  // namespace ptq
