#include "analysis/fix_search.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "analysis/selection.h"
#include "analysis_test_util.h"
#include "graph_builder.h"
#include "ops/op_test_util.h"

using namespace ptq;
using test::attr_floats;

namespace {

// Three independent branches, one output each, so the right fix is known by construction:
//   Mul_A(a, wa) -> ya   a's threshold fits its data: int8 is nearly exact
//   Mul_B(b, wb) -> yb   b's threshold is 100 for data in [-1, 1]: int8 steps of 0.79 destroy it,
//                        int16 steps of 0.003 are fine
//   Mul_C(c, wc) -> yc   c's threshold is 0.1: clipped alike in int8 and int16, only float restores it
// Weights are ones with threshold 1 (exact in every type).
ir::Model branches_model() {
  test::GraphBuilder b;
  for (const char* n : {"a", "b", "c"}) {
    const std::string x = n, w = std::string("w") + n;
    b.input(x, DType::Float, {1, 8});
    b.initializer(w, Tensor::from_floats({1, 8}, std::vector<float>(8, 1.0f)));
  }
  b.calibration("a", {attr_floats("thresholds", {0.97f})});
  b.calibration("b", {attr_floats("thresholds", {100.0f})});
  b.calibration("c", {attr_floats("thresholds", {0.1f})});
  for (const char* n : {"a", "b", "c"}) b.calibration(std::string("w") + n, {attr_floats("thresholds", {1.0f})});
  b.node("Mul_A", "Mul", {"a_cal", "wa_cal"}, {"ya"});
  b.node("Mul_B", "Mul", {"b_cal", "wb_cal"}, {"yb"});
  b.node("Mul_C", "Mul", {"c_cal", "wc_cal"}, {"yc"});
  b.output("ya");
  b.output("yb");
  b.output("yc");
  return b.model();
}

Tensor row(std::vector<float> v) { return Tensor::from_floats({1, 8}, std::move(v)); }

struct Fixture {
  exec::Executor ex{branches_model()};
  quant::CalibrationRelations rel{ex.graph()};
  test::SampleSet samples{
      ex.graph(),
      {{row({0.9f, -0.4f, 0.33f, 0.1f, -0.97f, 0.5f, 0.21f, -0.6f}), row({0.95f, -0.8f, 0.6f, 0.3f, -0.9f, 0.7f, 0.2f, -0.55f}),
        row({0.9f, -0.4f, 0.33f, 0.8f, -0.97f, 0.5f, 0.21f, -0.6f})},
       {row({-0.5f, 0.25f, 0.77f, -0.3f, 0.9f, -0.12f, 0.4f, 0.05f}), row({-0.9f, 0.45f, 0.8f, -0.6f, 0.99f, -0.3f, 0.5f, 0.42f}),
        row({-0.5f, 0.25f, 0.77f, -0.3f, 0.9f, -0.12f, 0.4f, 0.65f})}}};

  // Oracle: full runs (no cache, no incremental run) of `choice` (node -> "int16" | "float") applied by
  // hand to the calibration nodes named after the branch, aggregated over the samples `on` (the fix's
  // tuning sample, 0, by default) and the three outputs as every analysis does (§3.3).
  float metric(const std::map<std::string, std::string>& choice, analysis::Metric m = analysis::Metric::Cosine,
               const std::vector<size_t>& on = {0}) {
    exec::QuantConfig c = ex.stored_config();
    for (const auto& [node, action] : choice) {
      const std::string branch(1, static_cast<char>(std::tolower(node.back())));
      for (const std::string& cal : {branch + "_HzCalibration", "w" + branch + "_HzCalibration"}) {
        const size_t i = static_cast<size_t>(ex.calibration_index(cal));
        if (action == "float") c.on[i] = 0;
        else c.qtype[i] = action;
      }
    }
    std::vector<std::vector<float>> per_output(3);
    for (size_t s : on) {
      const auto ref = ex.outputs(ex.run(samples.data().sample(s), ex.uniform_config(false)));
      const auto got = ex.outputs(ex.run(samples.data().sample(s), c));
      for (size_t o = 0; o < 3; ++o)
        per_output[o].push_back(analysis::compute_metric(m, ref[o].data<float>(), got[o].data<float>(), 8));
    }
    return analysis::aggregate(per_output);
  }

  analysis::FixResult fix(analysis::FixOptions o) {
    o.data_num = 0;  // both samples: 0.npy is tuned on, 1.npy held out (§13.4)
    return analysis::find_fix(ex, rel, samples.data(), ex.stored_config(), o);
  }
};

std::map<std::string, std::string> as_map(const std::vector<analysis::FixChoice>& nodes) {
  std::map<std::string, std::string> m;
  for (const auto& c : nodes) m[c.node] = c.action;
  return m;
}

// Every step's value is the oracle's metric of the configuration the path has reached at that step.
void expect_path_matches_oracle(Fixture& f, const analysis::FixResult& r, analysis::Metric m = analysis::Metric::Cosine) {
  std::map<std::string, std::string> state;
  for (const auto& step : r.steps) {
    if (step.action == "removed") state.erase(step.node);
    else state[step.node] = step.action;
    EXPECT_EQ(step.value, f.metric(state, m)) << step.phase << " " << step.node << " " << step.action;
  }
  EXPECT_EQ(state, as_map(r.nodes));
}

}  // namespace

TEST(FixSearch, FindsTheKnownMinimalFix) {
  Fixture f;
  analysis::FixOptions o;
  o.target = analysis::parse_fix_target("cosine-similarity>=0.999");
  const auto r = f.fix(o);

  // Brute force over every assignment (untouched / int16 / float per node): the assignments meeting the
  // target with the fewest raised nodes, then the least precision, are exactly {B: int16, C: float}.
  const std::vector<std::string> nodes = {"Mul_A", "Mul_B", "Mul_C"}, levels = {"", "int16", "float"};
  std::vector<std::map<std::string, std::string>> best;
  std::pair<int, int> best_cost = {99, 99};
  for (int code = 0; code < 27; ++code) {
    std::map<std::string, std::string> choice;
    std::pair<int, int> cost = {0, 0};
    for (int k = 0, rest = code; k < 3; ++k, rest /= 3)
      if (rest % 3) {
        choice[nodes[k]] = levels[rest % 3];
        cost.first += 1;
        cost.second += rest % 3;
      }
    if (f.metric(choice) < 0.999f) continue;
    if (cost < best_cost) best.clear(), best_cost = cost;
    if (cost == best_cost) best.push_back(choice);
  }
  ASSERT_EQ(best.size(), 1u);
  EXPECT_EQ(best[0], (std::map<std::string, std::string>{{"Mul_B", "int16"}, {"Mul_C", "float"}}));

  EXPECT_TRUE(r.reached);
  EXPECT_EQ(as_map(r.nodes), best[0]);
  EXPECT_EQ(r.start, f.metric({}));
  EXPECT_LT(r.start, 0.999f);
  EXPECT_EQ(r.final_value, f.metric(best[0]));
  EXPECT_GE(r.final_value, 0.999f);
  // Each chosen node's contribution: the oracle's metric of the final choice without that node, below
  // the target for both (the brute force found no smaller set).
  for (const auto& c : r.nodes) {
    std::map<std::string, std::string> without = best[0];
    without.erase(c.node);
    EXPECT_EQ(c.without, f.metric(without)) << c.node;
    EXPECT_LT(c.without, 0.999f) << c.node;
  }
  EXPECT_TRUE(r.message.empty());
  EXPECT_EQ(r.samples, (std::vector<std::string>{"0.npy"}));
  // The held-out sample reports the start and the fix found.
  EXPECT_EQ(r.held_out, (std::vector<std::string>{"1.npy"}));
  EXPECT_EQ(r.held_out_start, f.metric({}, analysis::Metric::Cosine, {1}));
  EXPECT_EQ(r.held_out_final, f.metric(best[0], analysis::Metric::Cosine, {1}));
  EXPECT_EQ(r.held_out_met, r.held_out_final >= 0.999f);
  // Ranked by sensitivity: A (nearly exact in int8) last.
  ASSERT_EQ(r.ranking.size(), 3u);
  EXPECT_EQ(r.ranking.back(), "Mul_A");
  // The path: all three at int16 (C's clipping stays), then float in rank order until the target holds;
  // pruning drops A and lowers B back to int16.
  EXPECT_EQ(r.pruned, (std::vector<std::string>{"Mul_A"}));
  ASSERT_GE(r.steps.size(), 5u);
  for (size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(r.steps[k].phase, "add");
    EXPECT_EQ(r.steps[k].node, r.ranking[k]);
    EXPECT_EQ(r.steps[k].action, "int16");
  }
  EXPECT_EQ(r.steps[3].phase, "escalate");
  EXPECT_EQ(r.steps.back().phase, "prune");
  expect_path_matches_oracle(f, r);
  // The configuration: B's two calibration nodes int16, C's two OFF, everything else as stored.
  exec::QuantConfig expected = f.ex.stored_config();
  for (const char* n : {"b_HzCalibration", "wb_HzCalibration"}) expected.qtype[static_cast<size_t>(f.ex.calibration_index(n))] = "int16";
  for (const char* n : {"c_HzCalibration", "wc_HzCalibration"}) expected.on[static_cast<size_t>(f.ex.calibration_index(n))] = 0;
  EXPECT_EQ(r.config.on, expected.on);
  EXPECT_EQ(r.config.qtype, expected.qtype);
}

TEST(FixSearch, LeaveOneOutRanksByTheGainOfRestoringEachNode) {
  Fixture f;
  analysis::FixOptions o;
  o.target = analysis::parse_fix_target("cosine-similarity>=0.999");
  o.candidates = "leave_one_out";
  const auto r = f.fix(o);
  // The oracle's leave-one-out value (only that node's calibration nodes OFF), best first.
  ASSERT_EQ(r.ranking.size(), 3u);
  for (size_t k = 0; k < 3; ++k) EXPECT_EQ(r.ranking_values[k], f.metric({{r.ranking[k], "float"}}));
  EXPECT_GE(r.ranking_values[0], r.ranking_values[1]);
  EXPECT_GE(r.ranking_values[1], r.ranking_values[2]);
  EXPECT_EQ(r.ranking.back(), "Mul_A");
  EXPECT_TRUE(r.reached);
  EXPECT_EQ(as_map(r.nodes), (std::map<std::string, std::string>{{"Mul_B", "int16"}, {"Mul_C", "float"}}));
  expect_path_matches_oracle(f, r);
}

TEST(FixSearch, GivenOrderIsTriedAsListed) {
  Fixture f;
  analysis::FixOptions o;
  o.target = analysis::parse_fix_target("cosine-similarity>=0.999");
  o.candidates = "list";
  o.candidate_nodes = {"Mul_A", "Mul_C", "Mul_B"};
  o.prefer = {"float"};
  const auto r = f.fix(o);
  EXPECT_EQ(r.ranking, o.candidate_nodes);
  EXPECT_TRUE(std::isnan(r.ranking_values[0]));
  // A, then C, then B raised to float (the target holds only with B and C); pruning drops A.
  ASSERT_EQ(r.steps.size(), 4u);
  EXPECT_EQ(r.steps[0].node, "Mul_A");
  EXPECT_EQ(r.steps[1].node, "Mul_C");
  EXPECT_EQ(r.steps[2].node, "Mul_B");
  EXPECT_EQ(r.steps[3].phase, "prune");
  EXPECT_EQ(r.steps[3].node, "Mul_A");
  EXPECT_EQ(r.pruned, (std::vector<std::string>{"Mul_A"}));
  EXPECT_EQ(as_map(r.nodes), (std::map<std::string, std::string>{{"Mul_B", "float"}, {"Mul_C", "float"}}));
  expect_path_matches_oracle(f, r);

  o.candidate_nodes = {"Mul_A", "nope"};
  test::expect_error([&] { f.fix(o); }, "options.candidates[1]: node 'nope' does not exist in the model");
  o.candidate_nodes = {"Mul_A", "Mul_A"};
  test::expect_error([&] { f.fix(o); }, "options.candidates[1]: node 'Mul_A' is listed twice");
}

TEST(FixSearch, UnreachableTargetsSaySo) {
  Fixture f;
  analysis::FixOptions o;
  o.target = analysis::parse_fix_target("cosine-similarity>=0.999");
  o.prefer = {"int16"};  // C's clipping survives int16
  auto r = f.fix(o);
  EXPECT_FALSE(r.reached);
  const std::map<std::string, std::string> all16 = {{"Mul_A", "int16"}, {"Mul_B", "int16"}, {"Mul_C", "int16"}};
  EXPECT_EQ(as_map(r.nodes), all16);
  EXPECT_EQ(r.final_value, f.metric(all16));
  EXPECT_LT(r.final_value, 0.999f);
  EXPECT_EQ(r.evaluations, 1u);  // the up-front check alone
  EXPECT_TRUE(r.steps.empty());
  EXPECT_NE(r.message.find("cannot be reached: with every candidate (3 nodes) raised to int16"), std::string::npos) << r.message;

  // Two nodes are needed; one is allowed.
  o.prefer = {"int16", "float"};
  o.max_nodes = 1;
  r = f.fix(o);
  EXPECT_FALSE(r.reached);
  EXPECT_EQ(r.nodes.size(), 1u);
  EXPECT_EQ(r.final_value, f.metric(as_map(r.nodes)));
  EXPECT_NE(r.message.find("cannot be reached with at most 1 nodes raised"), std::string::npos) << r.message;
  expect_path_matches_oracle(f, r);

  // max_nodes = 2 suffices.
  o.max_nodes = 2;
  r = f.fix(o);
  EXPECT_TRUE(r.reached);
  EXPECT_EQ(as_map(r.nodes), (std::map<std::string, std::string>{{"Mul_B", "int16"}, {"Mul_C", "float"}}));
  expect_path_matches_oracle(f, r);
}

TEST(FixSearch, TargetAlreadyMetAndLowerIsBetterMetrics) {
  Fixture f;
  analysis::FixOptions o;
  o.target = analysis::parse_fix_target("cosine-similarity >= 0.1");
  auto r = f.fix(o);
  EXPECT_TRUE(r.reached);
  EXPECT_TRUE(r.steps.empty());
  EXPECT_TRUE(r.nodes.empty());
  EXPECT_EQ(r.config.on, f.ex.stored_config().on);
  EXPECT_NE(r.message.find("already meets the target cosine-similarity>=0.1"), std::string::npos);

  // mse: the bound lies between the fully fixed model and the model with only C restored.
  const float only_c = f.metric({{"Mul_C", "float"}}, analysis::Metric::Mse);
  const float fixed = f.metric({{"Mul_B", "int16"}, {"Mul_C", "float"}}, analysis::Metric::Mse);
  ASSERT_LT(fixed, only_c);
  o.target.metric = analysis::Metric::Mse;
  o.target.op = "<=";
  o.target.bound = (static_cast<double>(fixed) + only_c) / 2;
  r = f.fix(o);
  EXPECT_TRUE(r.reached);
  EXPECT_LE(r.final_value, o.target.bound);
  EXPECT_EQ(r.final_value, f.metric(as_map(r.nodes), analysis::Metric::Mse));
  EXPECT_TRUE(as_map(r.nodes).count("Mul_B"));
  EXPECT_TRUE(as_map(r.nodes).count("Mul_C"));
  expect_path_matches_oracle(f, r, analysis::Metric::Mse);
}

TEST(FixSearch, EventsAndCancel) {
  Fixture f;
  analysis::FixOptions o;
  o.target = analysis::parse_fix_target("cosine-similarity>=0.999");
  std::vector<std::string> phases;
  o.progress = [&](const analysis::FixOptions::Event& e) {
    if (phases.empty() || phases.back() != e.phase) phases.push_back(e.phase);
    return true;
  };
  auto r = f.fix(o);
  EXPECT_EQ(phases, (std::vector<std::string>{"rank", "check", "add", "escalate", "prune", "without"}));
  // Cancelling at the first step keeps the path so far.
  o.progress = [](const analysis::FixOptions::Event& e) { return e.phase != "add"; };
  r = f.fix(o);
  EXPECT_TRUE(r.cancelled);
  EXPECT_FALSE(r.reached);
  ASSERT_EQ(r.steps.size(), 1u);
  expect_path_matches_oracle(f, r);
}

TEST(FixSearch, CancelStopsBetweenEvaluations) {
  Fixture f;
  analysis::FixOptions o;
  o.target = analysis::parse_fix_target("cosine-similarity>=0.999");
  const auto whole = f.fix(o);
  ASSERT_TRUE(whole.reached);
  ASSERT_GT(whole.evaluations, 3u);
  // The cancel hook is asked before every evaluation: answering true once k evaluations are done stops
  // the search with exactly k, for every k the whole search passes through.
  for (size_t k = 0; k < whole.evaluations; ++k) {
    size_t evaluations = 0, asked = 0;
    o.progress = [&](const analysis::FixOptions::Event& e) {
      if (e.phase != "rank") ++evaluations;
      return true;
    };
    o.cancel = [&] {
      ++asked;
      return evaluations >= k;
    };
    const auto r = f.fix(o);
    EXPECT_TRUE(r.cancelled) << k;
    EXPECT_EQ(r.evaluations, k);
    EXPECT_EQ(evaluations, k);
    EXPECT_TRUE(r.message.empty()) << r.message;
    EXPECT_GT(asked, k);  // also asked after every ranking item
  }
  // The executor is left usable: the next search gives the same answer as the first.
  o.cancel = nullptr;
  o.progress = nullptr;
  const auto again = f.fix(o);
  EXPECT_FALSE(again.cancelled);
  EXPECT_EQ(as_map(again.nodes), as_map(whole.nodes));
  EXPECT_EQ(again.final_value, whole.final_value);
  EXPECT_EQ(again.evaluations, whole.evaluations);
}

TEST(FixSearch, TargetsAndPreferencesAreChecked) {
  const auto t = analysis::parse_fix_target(" mse <= 1e-4 ");
  EXPECT_EQ(t.metric, analysis::Metric::Mse);
  EXPECT_EQ(t.op, "<=");
  EXPECT_EQ(t.bound, 1e-4);
  EXPECT_EQ(t.text(), "mse<=0.0001");
  EXPECT_TRUE(t.holds(1e-4f * 0.5f));
  EXPECT_FALSE(t.holds(std::nanf("")));
  EXPECT_EQ(analysis::parse_fix_target("sqnr>30").text(), "sqnr>30");
  test::expect_error([] { analysis::parse_fix_target("cosine-similarity"); },
                     "target 'cosine-similarity': expected <metric><op><number> with op one of >=, >, <=, <, e.g. "
                     "cosine-similarity>=0.999");
  test::expect_error([] { analysis::parse_fix_target("cosine>=0.9"); },
                     "target 'cosine>=0.9': unknown metric 'cosine' (known: cosine-similarity, mse, mre, sqnr, chebyshev)");
  test::expect_error([] { analysis::parse_fix_target("mse>=0.1"); }, "target 'mse>=0.1': mse is better when lower; use <= or <");
  test::expect_error([] { analysis::parse_fix_target("cosine-similarity>=0.9x"); },
                     "target 'cosine-similarity>=0.9x': '0.9x' is not a finite number");
  analysis::check_prefer({"int16", "float"}, "options.prefer");
  test::expect_error([] { analysis::check_prefer({"float", "int16"}, "options.prefer"); },
                     "options.prefer[1]: 'int16' is not more precise than the action before it; list the actions from "
                     "the least to the most precise (e.g. threshold,int16,float)");
  test::expect_error([] { analysis::check_prefer({"int17x"}, "options.prefer"); },
                     "options.prefer[0]: unknown action 'int17x' (threshold, float, or a qtype such as int16)");
  test::expect_error([] { analysis::check_prefer({}, "options.prefer"); },
                     "options.prefer is empty: give the allowed actions, e.g. int16,float");
}

TEST(FixSearch, ActionsOnlyRaise) {
  // relu_mul_add: r_HzCalibration is stored int16; an int8 action leaves it, an int16 one raises w.
  exec::Executor ex{test::relu_mul_add_model()};
  quant::CalibrationRelations rel{ex.graph()};
  const size_t w = static_cast<size_t>(ex.calibration_index("w_HzCalibration"));
  const size_t r = static_cast<size_t>(ex.calibration_index("r_HzCalibration"));
  exec::QuantConfig c = analysis::apply_fix_choices(ex, rel, ex.stored_config(), {{"Mul_2", "int16"}});
  EXPECT_EQ(c.qtype[w], "int16");
  EXPECT_EQ(c.qtype[r], "");  // stored int16: unchanged, no override spelled out
  c = analysis::apply_fix_choices(ex, rel, ex.stored_config(), {{"Mul_2", "float"}, {"Mul_2", "int16"}});
  EXPECT_EQ(c.on[w], 0);  // float then int16: float stays (order does not matter)
  EXPECT_EQ(c.on[r], 0);
  exec::QuantConfig off = ex.stored_config();
  off.on[w] = 0;
  c = analysis::apply_fix_choices(ex, rel, off, {{"Mul_2", "int16"}});
  EXPECT_EQ(c.on[w], 0);  // an OFF calibration node is never lowered to int16
}

TEST(FixSearch, OwnErrorRanksByEachNodesOwnLoss) {
  Fixture f;
  analysis::FixOptions o;
  o.target = analysis::parse_fix_target("cosine-similarity>=0.999");
  o.candidates = "own_error";
  const auto r = f.fix(o);
  // Oracle: each branch's output with only its own calibration nodes ON (full runs of the tuning
  // sample 0): the branches are independent, so that is the node's own error at its output.
  std::map<std::string, float> own;
  const auto ref = f.ex.outputs(f.ex.run(f.samples.data().sample(0), f.ex.uniform_config(false)));
  for (size_t k = 0; k < 3; ++k) {
    const std::string branch(1, static_cast<char>('a' + k)), node = std::string("Mul_") + static_cast<char>('A' + k);
    exec::QuantConfig c = f.ex.uniform_config(false);
    for (const std::string& cal : {branch + "_HzCalibration", "w" + branch + "_HzCalibration"})
      c.on[static_cast<size_t>(f.ex.calibration_index(cal))] = 1;
    const auto got = f.ex.outputs(f.ex.run(f.samples.data().sample(0), c));
    own[node] = analysis::compute_metric(analysis::Metric::Cosine, ref[k].data<float>(), got[k].data<float>(), 8);
  }
  ASSERT_EQ(r.ranking.size(), 3u);
  for (size_t k = 0; k < 3; ++k) EXPECT_EQ(r.ranking_values[k], own[r.ranking[k]]) << r.ranking[k];
  EXPECT_LE(r.ranking_values[0], r.ranking_values[1]);
  EXPECT_LE(r.ranking_values[1], r.ranking_values[2]);
  EXPECT_TRUE(r.reached);
  expect_path_matches_oracle(f, r);
}

TEST(FixSearch, ThresholdFirstCuresThresholdFaultsWithoutRaising) {
  // B's threshold is 100 for data in [-1, 1] and C's 0.1: both faults are thresholds, so a threshold
  // chosen again from the tuning sample cures them without raising either node.
  Fixture f;
  analysis::FixOptions o;
  o.target = analysis::parse_fix_target("cosine-similarity>=0.999");
  o.prefer = {"threshold", "int16", "float"};
  const auto r = f.fix(o);
  ASSERT_TRUE(r.reached) << r.message;
  for (const auto& n : r.nodes) EXPECT_EQ(n.action, "threshold") << n.node;
  const std::map<std::string, std::string> chosen = as_map(r.nodes);
  EXPECT_EQ(chosen.count("Mul_B"), 1u);
  EXPECT_EQ(chosen.count("Mul_C"), 1u);
  // Only activations are re-calibrated, to thresholds within the data's range (|x| <= 0.99).
  for (const char* cal : {"b_HzCalibration", "c_HzCalibration"}) {
    const auto* t = r.config.thresholds_of(static_cast<size_t>(f.ex.calibration_index(cal)));
    ASSERT_NE(t, nullptr) << cal;
    EXPECT_GT((*t)[0], 0.5f) << cal;
    EXPECT_LE((*t)[0], 0.99f) << cal;
  }
  EXPECT_EQ(r.config.thresholds_of(static_cast<size_t>(f.ex.calibration_index("wb_HzCalibration"))), nullptr);
  // The final value is what full runs of the found configuration give (no incremental run).
  const auto ref = f.ex.outputs(f.ex.run(f.samples.data().sample(0), f.ex.uniform_config(false)));
  const auto got = f.ex.outputs(f.ex.run(f.samples.data().sample(0), r.config));
  std::vector<std::vector<float>> per_output(3);
  for (size_t k = 0; k < 3; ++k)
    per_output[k].push_back(analysis::compute_metric(analysis::Metric::Cosine, ref[k].data<float>(), got[k].data<float>(), 8));
  EXPECT_EQ(r.final_value, analysis::aggregate(per_output));
  // Thresholds only where they suffice: with threshold allowed nowhere (an export that cannot carry
  // them), the search raises nodes as before.
  o.threshold_allowed = [](size_t) { return false; };
  const auto raised = f.fix(o);
  EXPECT_TRUE(raised.reached);
  for (const auto& n : raised.nodes) EXPECT_NE(n.action, "threshold") << n.node;
}
