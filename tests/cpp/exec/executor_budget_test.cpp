// The executor's keep_all byte budget: which tensors a budgeted keep_all run keeps, and incremental
// runs from such a base (evicted tensors recomputed on demand) giving bit-identical results.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "core/size_test_util.h"
#include "exec/executor.h"
#include "graph_builder.h"
#include "ops/op_test_util.h"

using namespace ptq;
using test::attr_floats;

namespace {

constexpr int64_t kWidth = 64;  // every tensor is [1, 64] float32 = 256 bytes
constexpr size_t kTensorBytes = kWidth * sizeof(float);

// x -> x_HzCalibration -> Relu -> a -> a_HzCalibration -> Mul(a_cal, x) -> b -> Sigmoid -> c
//   -> c_HzCalibration -> Add(c_cal, x) -> d -> Neg -> y
ir::Model chain_model() {
  test::GraphBuilder g;
  g.input("x", DType::Float, {1, kWidth});
  g.calibration("x", {attr_floats("thresholds", {1.0f})});
  g.node("relu", "Relu", {"x_cal"}, {"a"});
  g.calibration("a", {attr_floats("thresholds", {0.9f})});
  g.node("mul", "Mul", {"a_cal", "x"}, {"b"});
  g.node("sigmoid", "Sigmoid", {"b"}, {"c"});
  g.calibration("c", {attr_floats("thresholds", {1.0f})});
  g.node("add", "Add", {"c_cal", "x"}, {"d"});
  g.node("neg", "Neg", {"d"}, {"y"});
  g.output("y");
  return g.model();
}

Tensor input() {
  std::vector<float> v(kWidth);
  for (int64_t i = 0; i < kWidth; ++i)
    v[static_cast<size_t>(i)] = -1.0f + 2.0f * static_cast<float>(i) / (kWidth - 1) + 0.0037f;
  return Tensor::from_floats({1, kWidth}, v);
}

bool bit_equal(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

int id(const exec::Executor& ex, const std::string& name) { return ex.graph().find_value(name); }

}  // namespace

TEST(ExecutorBudget, UnlimitedByDefault) {
  exec::Executor ex(chain_model());
  EXPECT_EQ(ex.keep_all_budget(), 0u);
  const auto rec = ex.run({input()}, ex.stored_config(), {}, true);
  EXPECT_EQ(rec.evicted, 0);
  for (const char* name : {"x_cal", "a", "a_cal", "b", "c", "c_cal", "d", "y"})
    EXPECT_TRUE(rec.values[static_cast<size_t>(id(ex, name))].defined()) << name;
}

// Budget for three tensors: the first three produced (graph order) stay, the next four are evicted;
// the graph input and output are always kept and not counted.
TEST(ExecutorBudget, KeepAllKeepsTensorsInGraphOrderWithinTheBudget) {
  exec::Executor ex(chain_model());
  ex.set_keep_all_budget(3 * kTensorBytes + kTensorBytes / 2);
  const auto rec = ex.run({input()}, ex.stored_config(), {}, true);
  EXPECT_EQ(rec.kept_bytes, 3 * kTensorBytes);
  EXPECT_EQ(rec.evicted, 4);
  for (const char* name : {"x", "x_cal", "a", "a_cal", "y"})
    EXPECT_TRUE(rec.values[static_cast<size_t>(id(ex, name))].defined()) << name;
  for (const char* name : {"b", "c", "c_cal", "d"})
    EXPECT_FALSE(rec.values[static_cast<size_t>(id(ex, name))].defined()) << name;
  // Explicit keep is honoured whatever the budget.
  const auto kept = ex.run({input()}, ex.stored_config(), {id(ex, "d")}, true);
  EXPECT_TRUE(kept.values[static_cast<size_t>(id(ex, "d"))].defined());
}

// Every single-node toggle (and all OFF) from a budgeted base equals the same variant from an
// unbounded base and a full run, bit for bit, also for kept intermediate tensors.
TEST(ExecutorBudget, IncrementalRunsFromABudgetedBaseAreExact) {
  exec::Executor full(chain_model()), small(chain_model());
  small.set_keep_all_budget(2 * kTensorBytes);
  const Tensor x = input();
  const auto base_full = full.run({x}, full.stored_config(), {}, true);
  const auto base_small = small.run({x}, small.stored_config(), {}, true);
  ASSERT_GT(base_small.evicted, 0);
  std::vector<int> keep;
  for (const char* name : {"a", "b", "c_cal", "d"}) keep.push_back(id(full, name));

  std::vector<exec::QuantConfig> variants;
  for (size_t i = 0; i < full.calibrations().size(); ++i) {
    auto c = full.stored_config();
    c.on[i] = 0;
    variants.push_back(c);
  }
  variants.push_back(full.uniform_config(false));
  int64_t recomputed = 0;
  for (const auto& cfg : variants) {
    exec::RunStats stats;
    const auto a = full.run_incremental(base_full, cfg, keep);
    const auto b = small.run_incremental(base_small, cfg, keep, &stats);
    const auto direct = full.run({x}, cfg, keep);
    recomputed += stats.nodes_recomputed;
    for (int v : keep) {
      const auto& name = full.graph().value(v).name;
      EXPECT_TRUE(bit_equal(a.values[static_cast<size_t>(v)], b.values[static_cast<size_t>(v)])) << name;
      EXPECT_TRUE(bit_equal(direct.values[static_cast<size_t>(v)], b.values[static_cast<size_t>(v)])) << name;
    }
    EXPECT_TRUE(bit_equal(full.outputs(direct)[0], small.outputs(b)[0]));
  }
  // Toggling c_HzCalibration needs the evicted `b`/`c` (kept `b` is wanted, `c` feeds the toggled node).
  EXPECT_GT(recomputed, 0);
}

// Toggling only the last calibration node: the nodes before it are neither re-run nor recomputed
// when the base kept what that node reads; with everything evicted they are recomputed once.
TEST(ExecutorBudget, RecomputesOnlyWhatAToggledNodeNeeds) {
  exec::Executor ex(chain_model());
  const Tensor x = input();
  auto cfg = ex.stored_config();
  cfg.on[static_cast<size_t>(ex.calibration_index("c_HzCalibration"))] = 0;

  const auto base = ex.run({x}, ex.stored_config(), {}, true);
  exec::RunStats s1;
  ex.run_incremental(base, cfg, {}, &s1);
  EXPECT_EQ(s1.nodes_recomputed, 0);
  EXPECT_EQ(s1.nodes_executed, 3);  // c_HzCalibration, add, neg

  ex.set_keep_all_budget(1);  // nothing fits
  const auto bare = ex.run({x}, ex.stored_config(), {}, true);
  EXPECT_EQ(bare.kept_bytes, 0u);
  exec::RunStats s2;
  const auto out = ex.run_incremental(bare, cfg, {}, &s2);
  EXPECT_EQ(s2.nodes_executed, 3);
  // c_HzCalibration reads c: x_HzCalibration, relu, a_HzCalibration, mul, sigmoid re-run under the base config.
  EXPECT_EQ(s2.nodes_recomputed, 5);
  EXPECT_TRUE(bit_equal(ex.outputs(out)[0], ex.outputs(ex.run({x}, cfg))[0]));
}

// Without a keep_all budget, a keep_all run whose tensors do not all fit the memory budget keeps
// those that fit in half of it (a sweep's base run of a large model) instead of failing; variants
// run from it stay exact.
TEST(ExecutorBudget, KeepAllBeyondTheMemoryBudgetKeepsWhatFitsInHalfOfIt) {
  exec::Executor ex(chain_model());
  const Tensor x = input();
  uint64_t everything_bytes = 0;  // x and every tensor of a keep_all run
  {
    const auto everything = ex.run({x}, ex.stored_config(), {}, true);
    ASSERT_EQ(everything.evicted, 0);
    everything_bytes = memory_in_use();
  }
  exec::RunRecord base;
  {
    test::ScopedMemoryBudget budget(everything_bytes - 1);
    base = ex.run({x}, ex.stored_config(), {}, true);
  }
  EXPECT_GT(base.evicted, 0);
  EXPECT_GT(base.kept_bytes, 0u);
  EXPECT_LE(base.kept_bytes, (everything_bytes - 1) / 2);
  for (size_t i = 0; i < ex.calibrations().size(); ++i) {
    auto cfg = ex.stored_config();
    cfg.on[i] = 0;
    EXPECT_TRUE(bit_equal(ex.outputs(ex.run_incremental(base, cfg, {}))[0], ex.outputs(ex.run({x}, cfg))[0])) << i;
  }
}

namespace {

constexpr int64_t kBigWidth = 16384;  // [1, 16384] float32 = 64 KiB, a multiple of the alignment
constexpr uint64_t kBigBytes = kBigWidth * sizeof(float);

// x -> x_HzCalibration -> Neg -> n1 -> ... -> Neg -> h -> h_HzCalibration -> Add(h_cal, h) -> y:
// toggling h_HzCalibration reads the base's h, at the end of a stretch a budgeted base run evicts.
ir::Model long_chain_model(int length) {
  test::GraphBuilder g;
  g.input("x", DType::Float, {1, kBigWidth});
  g.calibration("x", {attr_floats("thresholds", {1.0f})});
  std::string previous = "x_cal";
  for (int i = 1; i <= length; ++i) {
    const std::string out = i == length ? "h" : "n" + std::to_string(i);
    g.node("neg_" + std::to_string(i), "Neg", {previous}, {out});
    previous = out;
  }
  g.calibration("h", {attr_floats("thresholds", {0.5f})});
  g.node("add", "Add", {"h_cal", "h"}, {"y"});
  g.output("y");
  return g.model();
}

}  // namespace

// A variant that needs a base tensor evicted at the end of a long stretch rebuilds that stretch
// holding only its live tensors, as a forward run does: under a memory budget a plain run fits in,
// the base run falls back to keeping what fits in half of it, and the variant, which before held every
// rebuilt tensor until it ended (the whole stretch: 20 tensors here), stays within a few tensors of
// what the base holds and gives the plain run's output bit for bit.
TEST(ExecutorBudget, RecomputingAnEvictedStretchHoldsOnlyItsLiveTensors) {
  constexpr int kLength = 24;
  exec::Executor ex(long_chain_model(kLength));
  std::vector<float> v(kBigWidth);
  for (int64_t i = 0; i < kBigWidth; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i % 97) / 48.0f - 1.0f;
  const Tensor x = Tensor::from_floats({1, kBigWidth}, v);
  auto cfg = ex.stored_config();
  cfg.on[static_cast<size_t>(ex.calibration_index("h_HzCalibration"))] = 0;
  const Tensor expected = ex.outputs(ex.run({x}, cfg))[0];

  test::ScopedMemoryBudget budget(memory_in_use() + 11 * kBigBytes);
  ASSERT_NO_THROW(ex.run({x}, cfg));  // a plain run holds at most three big tensors
  const exec::RunRecord base = ex.run({x}, ex.stored_config(), {}, true);
  ASSERT_GT(base.evicted, 0);
  ASSERT_FALSE(base.values[static_cast<size_t>(id(ex, "h"))].defined());
  // The most bytes in use after any node of the variant (rebuilt ones included), beyond the base's.
  const uint64_t before = memory_in_use();
  uint64_t peak = before;
  exec::RunStats stats;
  exec::RunRecord variant;
  {
    exec::Executor::ScopedNodeTimer timer(ex, [&](int, double) { peak = std::max(peak, memory_in_use()); });
    ASSERT_EQ(test::size_error_of([&] { variant = ex.run_incremental(base, cfg, {}, &stats); }), "no error");
  }
  EXPECT_GT(stats.nodes_recomputed, kLength / 2);
  // After the last Neg: h rebuilt, h_cal, and Add's output.
  EXPECT_LE(peak - before, 3 * kBigBytes);
  EXPECT_TRUE(bit_equal(ex.outputs(variant)[0], expected));
}
