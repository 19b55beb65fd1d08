// The memory budget (core/size.h): tensor storage and the kernels' scratch buffers are counted while
// alive, and an allocation that would take the count past the budget is a SizeError naming what was
// asked, what is in use and the budget, with nothing allocated or counted.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "core/size.h"
#include "core/size_test_util.h"
#include "core/tensor.h"
#include "ops/gemm_kernel.h"

using namespace ptq;
using test::ScopedMemoryBudget;
using test::size_error_of;

TEST(MemoryBudget, DefaultIsThreeGiB) {
  EXPECT_EQ(memory_budget(), uint64_t{3} << 30);
  set_memory_budget(1000);
  EXPECT_EQ(memory_budget(), 1000u);
  set_memory_budget(0);
  EXPECT_EQ(memory_budget(), kDefaultMemoryBudgetBytes);
}

TEST(MemoryBudget, TensorsCountWhileAliveAndViewsDoNot) {
  const uint64_t base = memory_in_use();
  {
    Tensor a(DType::Float, {10, 10});  // 400 bytes, rounded up to the 64-byte alignment: 448
    EXPECT_EQ(memory_in_use() - base, 448u);
    Tensor shared = a;                    // same storage
    Tensor reshaped = a.reshaped({100});  // same storage
    Tensor view = Tensor::view(DType::Float, {10}, a.raw());
    EXPECT_EQ(memory_in_use() - base, 448u);
    a = Tensor();
    EXPECT_EQ(memory_in_use() - base, 448u);  // still referenced
    Tensor b(DType::Int8, {1});               // the minimum block: 64
    EXPECT_EQ(memory_in_use() - base, 512u);
  }
  EXPECT_EQ(memory_in_use(), base);
}

TEST(MemoryBudget, TensorBeyondTheBudgetIsRefusedBeforeAllocating) {
  const uint64_t base = memory_in_use();
  ScopedMemoryBudget budget(base + 4096);
  Tensor a(DType::Float, {512});  // 2048 bytes
  // 2048 more fit exactly; 2048 + 64 do not.
  Tensor b(DType::Float, {512});
  const std::string m = size_error_of([] { Tensor c(DType::Float, {1, 16}); });
  EXPECT_NE(m.find("a float32 tensor of shape [1, 16] needs 64 bytes"), std::string::npos) << m;
  EXPECT_NE(m.find("but " + std::to_string(base + 4096) + " bytes"), std::string::npos) << m;
  EXPECT_NE(m.find("already in use and the memory budget is " + std::to_string(base + 4096) + " bytes"),
            std::string::npos)
      << m;
  EXPECT_EQ(memory_in_use(), base + 4096);  // the refused tensor counted nothing
  b = Tensor();
  EXPECT_NO_THROW(Tensor(DType::Float, {1, 16}));
  EXPECT_EQ(memory_in_use(), base + 2048);
}

TEST(MemoryBudget, ScratchBuffersCountAgainstTheBudget) {
  // Slot 7 is not used by any kernel: the test owns it.
  ops::gemm_scratch(7, 16);
  const uint64_t base = memory_in_use();
  ops::gemm_scratch(7, 1024);  // grows: 64 -> 4096 bytes
  EXPECT_EQ(memory_in_use() - base, 4096u - 64u);
  ops::gemm_scratch(7, 512);  // fits in what is held
  EXPECT_EQ(memory_in_use() - base, 4096u - 64u);
  ScopedMemoryBudget budget(memory_in_use() + 4096);
  const std::string m = size_error_of([] { ops::gemm_scratch(7, 4096); });  // 16384 bytes
  EXPECT_NE(m.find("a scratch buffer of 4096 floats needs 16384 bytes (16.0 KiB)"), std::string::npos) << m;
  EXPECT_EQ(memory_in_use(), base - 64);  // its old block was given back, nothing new is held
}
