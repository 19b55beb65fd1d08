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

// ---- Sequences and optionals ------------------------------------------------------------------

TEST(TensorValues, SequenceAndOptionalKinds) {
  const Tensor a = Tensor::from_floats({2}, {1, 2}), b = Tensor::from_floats({1}, {3});
  EXPECT_EQ(a.kind(), ValueKind::Dense);
  EXPECT_TRUE(a.is_dense());
  EXPECT_TRUE(a.items().empty());
  const Tensor s = Tensor::sequence({a, b}, DType::Undefined);
  EXPECT_EQ(s.kind(), ValueKind::Sequence);
  EXPECT_TRUE(s.defined());
  EXPECT_FALSE(s.is_dense());
  EXPECT_EQ(s.dtype(), DType::Undefined);
  EXPECT_EQ(s.elem_dtype(), DType::Float);  // taken from the elements
  ASSERT_EQ(s.items().size(), 2u);
  EXPECT_TRUE(s.items()[0].shares_storage_with(a));
  EXPECT_EQ(s.nbytes(), 12u);  // 3 float32 elements
  // An empty sequence is a defined value; an empty optional too.
  const Tensor empty = Tensor::sequence({}, DType::Int64);
  EXPECT_TRUE(empty.defined());
  EXPECT_EQ(empty.elem_dtype(), DType::Int64);
  EXPECT_EQ(empty.nbytes(), 0u);
  const Tensor none = Tensor::optional(Tensor());
  EXPECT_TRUE(none.defined());
  EXPECT_EQ(none.kind(), ValueKind::Optional);
  EXPECT_TRUE(none.items().empty());
  const Tensor some = Tensor::optional(s);
  ASSERT_EQ(some.items().size(), 1u);
  EXPECT_EQ(some.items()[0].kind(), ValueKind::Sequence);
  EXPECT_EQ(value_str(s), "sequence of 2 float32 tensor(s)");
  EXPECT_EQ(value_str(none), "empty optional");
  EXPECT_EQ(value_str(Tensor::optional(a)), "optional holding float32 [2]");
  // Invalid values are errors.
  EXPECT_THROW(Tensor::sequence({a, Tensor::from_int64s({1}, {1})}, DType::Undefined), Error);
  EXPECT_THROW(Tensor::sequence({s}, DType::Undefined), Error);
  EXPECT_THROW(Tensor::optional(none), Error);
}

TEST(TensorValues, SameBitsComparesElements) {
  const Tensor a = Tensor::from_floats({2}, {1, 2});
  const Tensor a2 = Tensor::from_floats({2}, {1, 2});
  const Tensor c = Tensor::from_floats({2}, {1, 3});
  EXPECT_TRUE(same_bits(a, a2));
  EXPECT_FALSE(same_bits(a, c));
  const Tensor s = Tensor::sequence({a}, DType::Float);
  EXPECT_TRUE(same_bits(s, Tensor::sequence({a2}, DType::Float)));   // other storage, same bits
  EXPECT_FALSE(same_bits(s, Tensor::sequence({c}, DType::Float)));   // an element differs
  EXPECT_FALSE(same_bits(s, Tensor::sequence({a, a}, DType::Float)));  // the length differs
  EXPECT_FALSE(same_bits(s, a));                                        // the kind differs
  EXPECT_FALSE(same_bits(Tensor::sequence({}, DType::Float), Tensor::optional(Tensor())));
  EXPECT_TRUE(same_bits(Tensor::optional(Tensor()), Tensor::optional(Tensor())));
  EXPECT_FALSE(same_bits(Tensor::optional(a), Tensor::optional(Tensor())));
  EXPECT_TRUE(same_bits(Tensor::optional(s), Tensor::optional(Tensor::sequence({a2}, DType::Float))));
  // Two empty sequences are not the same view (distinct values), but the same bits.
  const Tensor e1 = Tensor::sequence({}, DType::Float), e2 = Tensor::sequence({}, DType::Float);
  EXPECT_FALSE(e1.same_view_as(e2));
  EXPECT_TRUE(e1.same_view_as(e1));
  EXPECT_TRUE(same_bits(e1, e2));
}
