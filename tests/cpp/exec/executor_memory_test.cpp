// The memory budget in the executor: a model whose tensors each fit one heap buffer but together
// exceed the budget (found by model_exec_fuzz: ConstantOfShape feeding a Relu chain whose tensors
// all stay alive) fails with a SizeError naming the node, the size asked and the budget, before the
// allocation; the bytes of a failed run are given back and the executor stays usable.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "core/size.h"
#include "core/size_test_util.h"
#include "exec/executor.h"
#include "graph_builder.h"

using namespace ptq;
using test::ScopedMemoryBudget;
using test::size_error_of;

namespace {

constexpr int64_t kElements = 16384;                          // every big tensor: [16384] float32
constexpr uint64_t kTensorBytes = kElements * sizeof(float);  // 64 KiB, a multiple of the alignment

// x[1, 4]; fill = ConstantOfShape([16384]) -> relu_1 -> relu_2 -> relu_3 -> relu_4. With
// `all_outputs` every relu's output is a graph output (all four stay alive to the end of the run),
// else only relu_4's (each tensor is released once the next relu has read it).
ir::Model fill_and_relu_chain(bool all_outputs) {
  test::GraphBuilder g;
  g.input("x", DType::Float, {1, 4});
  g.initializer("shape", Tensor::from_int64s({1}, {kElements}));
  g.node("fill", "ConstantOfShape", {"shape"}, {"c"});
  std::string previous = "c";
  for (int i = 1; i <= 4; ++i) {
    const std::string out = "r" + std::to_string(i);
    g.node("relu_" + std::to_string(i), "Relu", {previous}, {out});
    if (all_outputs || i == 4) g.output(out);
    previous = out;
  }
  g.node("relu_x", "Relu", {"x"}, {"y"});
  g.output("y");
  return g.model();
}

std::string run_error(exec::Executor& ex, const Tensor& x) {
  return size_error_of([&] { ex.run({x}, ex.uniform_config(false)); });
}

}  // namespace

TEST(ExecutorMemory, TensorsAliveTogetherBeyondTheBudgetFailNamingTheNode) {
  exec::Executor ex(fill_and_relu_chain(true));
  const Tensor x = Tensor::from_floats({1, 4}, {1, -2, 3, -4});
  const uint64_t base = memory_in_use();
  // Room for three of the big tensors (and the small ones), not for the fourth relu's output.
  const uint64_t budget = base + 3 * kTensorBytes + 4096;
  {
    ScopedMemoryBudget scoped(budget);
    const std::string m = run_error(ex, x);
    EXPECT_EQ(m.rfind("node 'relu_4' (Relu): a float32 tensor of shape [16384] needs 65536 bytes (64.0 KiB), but ", 0),
              0u)
        << m;
    EXPECT_NE(m.find("already in use and the memory budget is " + std::to_string(budget) + " bytes"), std::string::npos)
        << m;
    // Everything the failed run allocated is given back.
    EXPECT_EQ(memory_in_use(), base);
  }
  // The same executor runs the model under a budget that holds it.
  ScopedMemoryBudget scoped(base + 5 * kTensorBytes);
  const exec::RunRecord record = ex.run({x}, ex.uniform_config(false));
  const std::vector<Tensor> outputs = ex.outputs(record);
  ASSERT_EQ(outputs.size(), 5u);
  EXPECT_EQ(outputs[3].shape(), Shape({kElements}));
  EXPECT_EQ(outputs[3].data<float>()[kElements - 1], 0.0f);
  EXPECT_EQ(outputs[4].data<float>()[0], 1.0f);
  EXPECT_EQ(outputs[4].data<float>()[1], 0.0f);
}

// The budget counts live bytes, not bytes ever allocated: the chain whose tensors are released as it
// goes (at most two big ones alive) runs under a budget of two and a half.
TEST(ExecutorMemory, TensorsReleasedOnTheWayDoNotCount) {
  exec::Executor ex(fill_and_relu_chain(false));
  const Tensor x = Tensor::from_floats({1, 4}, {1, -2, 3, -4});
  ScopedMemoryBudget scoped(memory_in_use() + 2 * kTensorBytes + kTensorBytes / 2);
  EXPECT_NO_THROW(ex.run({x}, ex.uniform_config(false)));
  ScopedMemoryBudget tighter(memory_in_use() + kTensorBytes + kTensorBytes / 2);
  const std::string m = run_error(ex, x);
  EXPECT_EQ(m.rfind("node 'relu_1' (Relu): a float32 tensor of shape [16384] needs 65536 bytes", 0), 0u) << m;
}

// The run cache holds the records of earlier runs; a run that fits the budget on its own but not
// beside them drops them and runs, in both cached entry points, with the outputs of a plain run.
TEST(ExecutorMemory, CachedRecordsGiveWayToARunThatFitsOnItsOwn) {
  exec::Executor ex(fill_and_relu_chain(true));
  const Tensor x1 = Tensor::from_floats({1, 4}, {1, -2, 3, -4});
  const Tensor x2 = Tensor::from_floats({1, 4}, {-1, 2, -3, 4});
  const Tensor x3 = Tensor::from_floats({1, 4}, {5, 6, -7, 8});
  // One keep_all run holds five big tensors (fill and four relus); the budget has room for seven.
  ScopedMemoryBudget scoped(memory_in_use() + 7 * kTensorBytes);
  const exec::QuantConfig off = ex.uniform_config(false);
  // Checks a record's outputs and lets it go (only the cache holds it afterwards).
  const auto expect_relu_outputs = [&](const exec::RunRecord& record, const Tensor& x) {
    const std::vector<Tensor> got = ex.outputs(record);
    ASSERT_EQ(got.size(), 5u);
    EXPECT_EQ(got[3].data<float>()[0], 0.0f);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(got[4].data<float>()[i], std::max(0.0f, x.data<float>()[i])) << i;
  };
  expect_relu_outputs(ex.cached_keep_all_run({x1}, off), x1);
  expect_relu_outputs(ex.cached_keep_all_run({x2}, off), x2);
  expect_relu_outputs(ex.cached_keep_all_run_nearest({x3}, off), x3);
  // A budget too small for one run still fails.
  ex.clear_run_cache();
  ScopedMemoryBudget tighter(memory_in_use() + 3 * kTensorBytes);
  EXPECT_THROW(ex.cached_keep_all_run({x1}, off), SizeError);
}
