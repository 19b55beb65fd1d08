// A model's own bytes against the memory budget (core/model_memory.h): refused before they are held
// when they do not fit beside what is counted, counted while a reservation lives, and in the peak.
#include "core/model_memory.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>

#include "core/size_test_util.h"
#include "core/tensor.h"

using namespace ptq;
using test::ScopedMemoryBudget;
using test::size_error_of;

TEST(ModelMemory, AReservationCountsTheModelsBytesUntilDestroyed) {
  const uint64_t base = memory_in_use();
  {
    ModelReservation r({1000, 24});
    EXPECT_EQ(memory_in_use() - base, 1024u);
    EXPECT_GE(memory_peak(), memory_in_use());
    ModelReservation moved = std::move(r);
    EXPECT_EQ(memory_in_use() - base, 1024u);
    moved = ModelReservation({10, 0});  // the previous model's bytes are given back
    EXPECT_EQ(memory_in_use() - base, 10u);
  }
  EXPECT_EQ(memory_in_use(), base);
}

TEST(ModelMemory, AModelThatCannotFitIsRefusedWithTheEstimateAndHoldsNothing) {
  const uint64_t base = memory_in_use();
  const ScopedMemoryBudget budget(base + 4096);
  Tensor held(DType::Float, {256});  // 1024 bytes counted
  EXPECT_EQ(size_error_of([] {
              ModelReservation r({1000, 3000});
            }),
            "the model needs 4000 bytes (3.9 KiB) (its file 1000 bytes, its external data 3000 bytes (2.9 KiB)) of the "
            "wasm heap for as long as it is loaded, before any tensor is computed, but " +
                byte_size_str(base + 1024) + " are already in use and the memory budget is " +
                byte_size_str(base + 4096) +
                " (what the 4 GB WebAssembly heap leaves for a model and its tensors): it cannot be loaded");
  EXPECT_EQ(memory_in_use(), base + 1024);
  EXPECT_NO_THROW(check_model_fits({3072, 0}));  // exactly what is left
  EXPECT_EQ(size_error_of([] {
              check_model_fits({UINT64_MAX, 5});
            }).rfind("the model needs 18446744073709551615 bytes", 0),
            0u);  // the sum saturates instead of wrapping to 4
}
