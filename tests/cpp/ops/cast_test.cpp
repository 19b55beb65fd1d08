// Cast / CastLike: truncation toward zero for float->int, round-to-nearest-even to half types,
// nonzero->true for bool, worked by hand.
#include "core/half.h"
#include "ops/op_test_util.h"

namespace ptq {
namespace {

using test::attr_int;
using test::expect_tensor_near;
using test::run_op;

TEST(Cast, FloatToIntTruncates) {
  auto y = run_op("Cast", {Tensor::from_floats({4}, {1.9f, -1.9f, 0.5f, -0.0f})},
                  {attr_int("to", static_cast<int64_t>(DType::Int64))}, 1, 13);
  EXPECT_EQ(y[0].dtype(), DType::Int64);
  EXPECT_EQ(y[0].to_int64_vector(), (std::vector<int64_t>{1, -1, 0, 0}));
}

TEST(Cast, ToBoolAndBack) {
  auto b = run_op("Cast", {Tensor::from_floats({3}, {0, -2.5f, 0.1f})}, {attr_int("to", static_cast<int64_t>(DType::Bool))});
  EXPECT_EQ(b[0].dtype(), DType::Bool);
  EXPECT_EQ(b[0].data<uint8_t>()[0], 0);
  EXPECT_EQ(b[0].data<uint8_t>()[1], 1);
  EXPECT_EQ(b[0].data<uint8_t>()[2], 1);
  auto f = run_op("Cast", {b[0]}, {attr_int("to", static_cast<int64_t>(DType::Float))});
  expect_tensor_near(f[0], {3}, {0, 1, 1});
}

TEST(Cast, FloatToFloat16AndBFloat16RoundToNearestEven) {
  // 1 + 2^-11 is halfway between float16 1.0 and 1 + 2^-10: ties to even -> 1.0 (0x3C00).
  // 1 + 3*2^-11 is halfway between 1+2^-10 and 1+2^-9: ties to even -> 1 + 2^-9 (0x3C02).
  auto h = run_op("Cast", {Tensor::from_floats({2}, {1.0f + 1.0f / 2048, 1.0f + 3.0f / 2048})},
                  {attr_int("to", static_cast<int64_t>(DType::Float16))});
  EXPECT_EQ(h[0].dtype(), DType::Float16);
  EXPECT_EQ(h[0].data<uint16_t>()[0], 0x3C00);
  EXPECT_EQ(h[0].data<uint16_t>()[1], 0x3C02);
  // bfloat16 keeps the top 16 bits of float32: 1.0f = 0x3F80, -2.0f = 0xC000.
  auto bf = run_op("Cast", {Tensor::from_floats({2}, {1.0f, -2.0f})}, {attr_int("to", static_cast<int64_t>(DType::BFloat16))});
  EXPECT_EQ(bf[0].dtype(), DType::BFloat16);
  EXPECT_EQ(bf[0].data<uint16_t>()[0], 0x3F80);
  EXPECT_EQ(bf[0].data<uint16_t>()[1], 0xC000);
  auto back = run_op("Cast", {bf[0]}, {attr_int("to", static_cast<int64_t>(DType::Float))});
  expect_tensor_near(back[0], {2}, {1, -2});
}

TEST(Cast, Int64ToInt32AndDouble) {
  auto i = run_op("Cast", {Tensor::from_int64s({2}, {7, -3})}, {attr_int("to", static_cast<int64_t>(DType::Int32))});
  EXPECT_EQ(i[0].dtype(), DType::Int32);
  EXPECT_EQ(i[0].data<int32_t>()[1], -3);
  auto d = run_op("Cast", {Tensor::from_int64s({1}, {1} )}, {attr_int("to", static_cast<int64_t>(DType::Double))});
  EXPECT_EQ(d[0].dtype(), DType::Double);
  EXPECT_EQ(d[0].data<double>()[0], 1.0);
}

TEST(Cast, UnsupportedTargetsRejected) {
  EXPECT_THROW(run_op("Cast", {Tensor::from_floats({1}, {1})}, {attr_int("to", 8)}), Error);   // STRING
  EXPECT_THROW(run_op("Cast", {Tensor::from_floats({1}, {1})}, {attr_int("to", 17)}), Error);  // FLOAT8E4M3FN
  EXPECT_THROW(run_op("Cast", {Tensor::from_floats({1}, {1})}), Error);                        // no 'to'
}

TEST(CastLike, TakesTheSecondInputsDtype) {
  auto y = run_op("CastLike", {Tensor::from_floats({2}, {2.7f, -2.7f}), Tensor::from_int64s({1}, {0})}, {}, 1, 15);
  EXPECT_EQ(y[0].dtype(), DType::Int64);
  EXPECT_EQ(y[0].to_int64_vector(), (std::vector<int64_t>{2, -2}));
  auto h = run_op("CastLike", {Tensor::from_floats({1}, {0.5f}), cast_tensor(Tensor::from_floats({1}, {0}), DType::Float16)},
                  {}, 1, 15);
  EXPECT_EQ(h[0].dtype(), DType::Float16);
  EXPECT_EQ(h[0].data<uint16_t>()[0], 0x3800);  // 0.5 in float16
}

}  // namespace
}  // namespace ptq
