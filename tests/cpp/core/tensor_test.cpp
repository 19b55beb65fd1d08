#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/half.h"
#include "core/error.h"
#include "core/tensor.h"

using namespace ptq;

TEST(Half, RoundTripsEveryHalfValue) {
  // Every finite half converts to float and back unchanged (exhaustive over 2^16 bit patterns).
  for (uint32_t h = 0; h < 0x10000u; ++h) {
    const float f = half_to_float(static_cast<uint16_t>(h));
    if (std::isnan(f)) continue;
    EXPECT_EQ(float_to_half(f), h) << std::hex << h;
  }
}

TEST(Half, RoundsHalfToEven) {
  // 1 + 2^-11 is exactly between 1 and the next half (1 + 2^-10): ties go to the even mantissa (1.0).
  EXPECT_EQ(float_to_half(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  // 1 + 3*2^-11 lies between 1+2^-10 (odd) and 1+2^-9 (even): goes up.
  EXPECT_EQ(float_to_half(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  EXPECT_EQ(float_to_half(65520.0f), 0x7c00);  // overflow to inf
  EXPECT_EQ(float_to_half(65519.0f), 0x7bff);
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -25)), 0x0000);  // tie between 0 and min subnormal -> 0
  EXPECT_EQ(float_to_half(std::ldexp(1.5f, -25)), 0x0001);
}

TEST(BFloat16, RoundsHalfToEven) {
  EXPECT_EQ(float_to_bfloat16(1.0f), 0x3f80);
  EXPECT_EQ(bfloat16_to_float(0x3f80), 1.0f);
  // 1 + 2^-8 is halfway between 1 and 1+2^-7: tie to even -> 1.0
  EXPECT_EQ(float_to_bfloat16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
  EXPECT_EQ(float_to_bfloat16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
}

TEST(Tensor, ReshapeSharesStorage) {
  Tensor t = Tensor::from_floats({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor r = t.reshaped({3, 2});
  EXPECT_TRUE(r.shares_storage_with(t));
  EXPECT_EQ(r.shape(), (Shape{3, 2}));
  EXPECT_THROW(t.reshaped({4}), Error);
}

TEST(Tensor, CastTruncatesAndRounds) {
  Tensor t = Tensor::from_floats({4}, {1.7f, -1.7f, 0.0f, 300.0f});
  Tensor i = cast_tensor(t, DType::Int64);
  EXPECT_EQ(i.to_int64_vector(), (std::vector<int64_t>{1, -1, 0, 300}));
  Tensor b = cast_tensor(t, DType::Bool);
  EXPECT_EQ(b.data<uint8_t>()[2], 0);
  EXPECT_EQ(b.data<uint8_t>()[0], 1);
}
