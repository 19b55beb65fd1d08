#include "analysis/explain.h"

#include <gtest/gtest.h>

#include <random>

#include "analysis/analysis_test_util.h"
#include "graph_builder.h"

using namespace ptq;
using test::attr_floats;

namespace {

// Independent branches with one planted fault each, their data uniform in [-1, 1] (d: in [0, 1]):
//   Mul_A  a's threshold 20 (20x the data): coarse resolution
//   Mul_B  b's threshold 0.1: clipping
//   Mul_C  c's threshold 1: clean
//   Mul_D  d (never negative) on a signed int8 grid: one-sided
// Weights are ones with threshold 1 (exact).
ir::Model planted() {
  test::GraphBuilder b;
  for (const char* n : {"a", "b", "c", "d"}) {
    b.input(n, DType::Float, {1, 64});
    b.initializer(std::string("w") + n, Tensor::from_floats({1, 64}, std::vector<float>(64, 1.0f)));
    b.calibration(std::string("w") + n, {attr_floats("thresholds", {1.0f})});
  }
  b.calibration("a", {attr_floats("thresholds", {20.0f})});
  b.calibration("b", {attr_floats("thresholds", {0.1f})});
  b.calibration("c", {attr_floats("thresholds", {1.0f})});
  b.calibration("d", {attr_floats("thresholds", {1.0f})});
  for (const char* n : {"A", "B", "C", "D"}) {
    const std::string lower(1, static_cast<char>(n[0] - 'A' + 'a'));
    b.node(std::string("Mul_") + n, "Mul", {lower + "_cal", "w" + lower + "_cal"}, {"y" + lower});
    b.output("y" + lower);
  }
  return b.model();
}

Tensor uniform(float lo, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, 1.0f);
  std::vector<float> v(64);
  for (float& x : v) x = u(rng);
  return Tensor::from_floats({1, 64}, v);
}

const analysis::Hint* hint_on(const analysis::ExplainResult& r, const std::string& cali, const std::string& cause) {
  for (const auto& h : r.hints)
    if (h.calibration_node == cali && h.cause == cause) return &h;
  return nullptr;
}

}  // namespace

TEST(Explain, FindsEachPlantedCauseAndMeasuresItsCure) {
  exec::Executor ex(planted());
  quant::CalibrationRelations rel(ex.graph());
  std::vector<std::vector<Tensor>> samples;
  for (uint32_t k = 0; k < 4; ++k)
    samples.push_back({uniform(-1, 10 + k), uniform(-1, 20 + k), uniform(-1, 30 + k), uniform(0, 40 + k)});
  test::SampleSet set(ex.graph(), samples);
  analysis::ExplainOptions o;
  o.min_recovery = 0.0;
  o.inherited_top = 0;
  const analysis::ExplainResult r = analysis::explain(ex, rel, set.data(), o);
  EXPECT_EQ(r.tune_samples, (std::vector<std::string>{"0.npy", "2.npy"}));
  EXPECT_EQ(r.held_out_samples, (std::vector<std::string>{"1.npy", "3.npy"}));
  const auto* coarse = hint_on(r, "a_HzCalibration", "coarse-resolution");
  const auto* clipping = hint_on(r, "b_HzCalibration", "clipping");
  const auto* one_sided = hint_on(r, "d_HzCalibration", "one-sided");
  ASSERT_NE(coarse, nullptr);
  ASSERT_NE(clipping, nullptr);
  ASSERT_NE(one_sided, nullptr);
  EXPECT_EQ(coarse->node, "Mul_A");
  EXPECT_EQ(coarse->suggestion.action, "threshold");
  EXPECT_EQ(one_sided->suggestion.action, "uint8");
  // Every cure helps on the tuning samples and on the held-out ones.
  for (const auto* h : {coarse, clipping, one_sided}) {
    EXPECT_GT(h->effect.after, h->effect.before) << h->cause;
    EXPECT_GT(h->effect.recovered, 0.0f) << h->cause;
    ASSERT_TRUE(h->effect.has_held_out);
    EXPECT_GT(h->effect.held_out_after, h->effect.held_out_before) << h->cause;
  }
  // The clean branch gets no hint; c's evidence: nothing clipped, the data over the whole range.
  for (const auto& h : r.hints) EXPECT_NE(h.calibration_node, "c_HzCalibration") << h.cause;
  for (const auto& e : r.evidence) {
    if (e.calibration_node != "c_HzCalibration") continue;
    EXPECT_EQ(e.clipped, 0.0);
    EXPECT_GT(e.occupied, 0.9);
    EXPECT_EQ(e.node, "Mul_C");
  }
  // Ranked by recovery.
  for (size_t k = 1; k < r.hints.size(); ++k) EXPECT_GE(r.hints[k - 1].effect.recovered, r.hints[k].effect.recovered);
}
