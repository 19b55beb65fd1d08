#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"
#include "core/half.h"
#include "ops/op_test_util.h"

using namespace ptq;
using test::attr_int;
using test::run_op;

namespace {

template <class T>
Tensor make(DType dtype, Shape shape, const std::vector<T>& v) {
  Tensor t(dtype, shape);
  for (size_t i = 0; i < v.size(); ++i) t.mutable_data<T>()[i] = v[i];
  return t;
}

std::vector<int64_t> ints_of(const Tensor& t) { return t.to_int64_vector(); }

}  // namespace

// ONNX spec example (test_quantizelinear): 3 / 2 = 1.5 rounds to even 2; saturation at 0 and 255.
TEST(QuantizeLinear, PerTensorUint8WithZeroPoint) {
  const Tensor x = Tensor::from_floats({6}, {0, 2, 3, 1000, -254, -1000});
  const auto y = run_op("QuantizeLinear", {x, Tensor::from_floats({}, {2}), make<uint8_t>(DType::UInt8, {}, {128})}, {}, 1, 10);
  EXPECT_EQ(y[0].dtype(), DType::UInt8);
  EXPECT_EQ(ints_of(y[0]), (std::vector<int64_t>{128, 129, 130, 255, 1, 0}));
  // No zero point: uint8 with zero point 0.
  const auto z = run_op("QuantizeLinear", {x, Tensor::from_floats({}, {2})}, {}, 1, 13);
  EXPECT_EQ(z[0].dtype(), DType::UInt8);
  EXPECT_EQ(ints_of(z[0]), (std::vector<int64_t>{0, 1, 2, 255, 0, 0}));
}

// x [2, 2, 2], axis 1, scale [0.5, 2], zp [0, -1]:
// 1.25/0.5 = 2.5 -> 2; -0.25/0.5 = -0.5 -> 0; 3/2 = 1.5 -> 2 - 1 = 1; -3/2 = -1.5 -> -2 - 1 = -3;
// ±200 saturate to 127 / -128; 0.9/2 -> 0 - 1 = -1; 5/2 = 2.5 -> 2 - 1 = 1.
TEST(QuantizeLinear, PerAxisInt8RoundsHalfToEven) {
  const Tensor x = Tensor::from_floats({2, 2, 2}, {1.25f, -0.25f, 3, -3, 100, -100, 0.9f, 5});
  const Tensor scale = Tensor::from_floats({2}, {0.5f, 2});
  const Tensor zp = make<int8_t>(DType::Int8, {2}, {0, -1});
  const auto q = run_op("QuantizeLinear", {x, scale, zp}, {attr_int("axis", 1)}, 1, 13);
  EXPECT_EQ(q[0].dtype(), DType::Int8);
  EXPECT_EQ(ints_of(q[0]), (std::vector<int64_t>{2, 0, 1, -3, 127, -128, -1, 1}));
  // Back: (q - zp) * s.
  const auto d = run_op("DequantizeLinear", {q[0], scale, zp}, {attr_int("axis", -2)}, 1, 13);
  EXPECT_EQ(d[0].dtype(), DType::Float);
  test::expect_tensor_near(d[0], {2, 2, 2}, {1.0f, 0, 4, -4, 63.5f, -64, 0, 4}, 0);
}

TEST(QuantizeLinear, SixteenBitTypes) {
  const Tensor x = Tensor::from_floats({4}, {40000, -40000, 1.5f, 2.5f});
  const auto a = run_op("QuantizeLinear", {x, Tensor::from_floats({}, {1}), make<int16_t>(DType::Int16, {}, {0})}, {}, 1, 21);
  EXPECT_EQ(a[0].dtype(), DType::Int16);
  EXPECT_EQ(ints_of(a[0]), (std::vector<int64_t>{32767, -32768, 2, 2}));
  const Tensor u = Tensor::from_floats({3}, {-1, 70000, 0.5f});
  const auto b = run_op("QuantizeLinear", {u, Tensor::from_floats({}, {1}), make<uint16_t>(DType::UInt16, {}, {32768})}, {}, 1, 21);
  EXPECT_EQ(b[0].dtype(), DType::UInt16);
  EXPECT_EQ(ints_of(b[0]), (std::vector<int64_t>{32767, 65535, 32768}));  // 0.5 -> 0 (even)
  const auto c = run_op("DequantizeLinear", {b[0], Tensor::from_floats({}, {0.5f}), make<uint16_t>(DType::UInt16, {}, {32768})}, {}, 1, 21);
  test::expect_tensor_near(c[0], {3}, {-0.5f, 16383.5f, 0}, 0);
}

// output_dtype (opset 21) without a zero point; blocked scales [2, 2] over x [2, 4], block 2 on axis 1:
// row 0 scales 1, 2: 1, 2, 3/2 = 1.5 -> 2, 4/2 = 2; row 1 scales 4, 8: 2, 4, 3, 4.
TEST(QuantizeLinear, BlockedScalesAndOutputDtype) {
  const Tensor x = Tensor::from_floats({2, 4}, {1, 2, 3, 4, 8, 16, 24, 32});
  const Tensor scale = Tensor::from_floats({2, 2}, {1, 2, 4, 8});
  const auto q = run_op("QuantizeLinear", {x, scale},
                        {attr_int("axis", 1), attr_int("block_size", 2), attr_int("output_dtype", static_cast<int64_t>(DType::Int8))}, 1, 21);
  EXPECT_EQ(q[0].dtype(), DType::Int8);
  EXPECT_EQ(ints_of(q[0]), (std::vector<int64_t>{1, 2, 2, 2, 2, 4, 3, 4}));
  const auto d = run_op("DequantizeLinear", {q[0], scale}, {attr_int("axis", 1), attr_int("block_size", 2)}, 1, 21);
  test::expect_tensor_near(d[0], {2, 4}, {1, 2, 4, 4, 8, 16, 24, 32}, 0);
  // A block shape that does not match is rejected.
  EXPECT_THROW(run_op("QuantizeLinear", {x, scale}, {attr_int("axis", 1), attr_int("block_size", 1)}, 1, 21), Error);
}

TEST(QuantizeLinear, NanMapsToZeroPoint) {
  const Tensor x = Tensor::from_floats({2}, {NAN, 1});
  const auto q = run_op("QuantizeLinear", {x, Tensor::from_floats({}, {1}), make<int8_t>(DType::Int8, {}, {3})}, {}, 1, 13);
  EXPECT_EQ(ints_of(q[0]), (std::vector<int64_t>{3, 4}));
}

TEST(QuantizeLinear, RejectsWhatItCannotCompute) {
  const Tensor x = Tensor::from_floats({2, 2}, {1, 2, 3, 4});
  // Per-axis before opset 13.
  EXPECT_THROW(run_op("QuantizeLinear", {x, Tensor::from_floats({2}, {1, 2})}, {}, 1, 10), Error);
  // Scale length does not match the axis.
  EXPECT_THROW(run_op("QuantizeLinear", {x, Tensor::from_floats({3}, {1, 2, 3})}, {}, 1, 13), Error);
  EXPECT_THROW(run_op("QuantizeLinear", {x, Tensor::from_floats({2}, {1, 2})}, {attr_int("axis", 2)}, 1, 13), Error);
  // float8 (FLOAT8E4M3FN = 17) output.
  EXPECT_THROW(run_op("QuantizeLinear", {x, Tensor::from_floats({}, {1})}, {attr_int("output_dtype", 17)}, 1, 21), Error);
  // Zero point and output_dtype disagree.
  EXPECT_THROW(run_op("QuantizeLinear", {x, Tensor::from_floats({}, {1}), make<int8_t>(DType::Int8, {}, {0})},
                      {attr_int("output_dtype", static_cast<int64_t>(DType::UInt8))}, 1, 21),
               Error);
  // DequantizeLinear: float input, zero point of another dtype, int32 with a non-zero zero point.
  EXPECT_THROW(run_op("DequantizeLinear", {x, Tensor::from_floats({}, {1})}, {}, 1, 13), Error);
  const Tensor q = make<int8_t>(DType::Int8, {2}, {1, 2});
  EXPECT_THROW(run_op("DequantizeLinear", {q, Tensor::from_floats({}, {1}), make<uint8_t>(DType::UInt8, {}, {0})}, {}, 1, 13), Error);
  const Tensor i32 = make<int32_t>(DType::Int32, {2}, {-7, 9});
  EXPECT_THROW(run_op("DequantizeLinear", {i32, Tensor::from_floats({}, {1}), make<int32_t>(DType::Int32, {}, {1})}, {}, 1, 13), Error);
}

TEST(DequantizeLinear, Int32AndScaleDtypeOutput) {
  const Tensor i32 = make<int32_t>(DType::Int32, {2}, {-7, 9});
  const auto a = run_op("DequantizeLinear", {i32, Tensor::from_floats({}, {0.5f})}, {}, 1, 13);
  test::expect_tensor_near(a[0], {2}, {-3.5f, 4.5f}, 0);
  // Opset 19: float16 scale -> float16 output.
  Tensor s16(DType::Float16, {});
  s16.mutable_data<uint16_t>()[0] = float_to_half(0.25f);
  const Tensor q = make<uint8_t>(DType::UInt8, {3}, {0, 10, 255});
  const auto b = run_op("DequantizeLinear", {q, s16, make<uint8_t>(DType::UInt8, {}, {10})}, {}, 1, 19);
  EXPECT_EQ(b[0].dtype(), DType::Float16);
  test::expect_tensor_near(b[0], {3}, {-2.5f, 0, 61.25f}, 0);
  // Before opset 19 the output is float32 whatever the scale.
  const auto c = run_op("DequantizeLinear", {q, Tensor::from_floats({}, {0.25f}), make<uint8_t>(DType::UInt8, {}, {10})}, {}, 1, 13);
  EXPECT_EQ(c[0].dtype(), DType::Float);
}

TEST(Qdq, DynamicQuantizeLinear) {
  // x in [-1, 2.5]: range widened to include 0 is [-1, 2.5], scale 3.5 / 255, zero point
  // round(1 / scale) = round(72.857) = 73; y = round(x / scale) + 73, saturated to [0, 255].
  const Tensor x = Tensor::from_floats({4}, {-1, 0, 1, 2.5f});
  const auto out = run_op("DynamicQuantizeLinear", {x}, {}, 3);
  const float scale = 3.5f / 255.0f;
  EXPECT_FLOAT_EQ(out[1].data<float>()[0], scale);
  EXPECT_EQ(ints_of(out[2]), (std::vector<int64_t>{73}));
  EXPECT_EQ(out[0].dtype(), DType::UInt8);
  EXPECT_EQ(ints_of(out[0]), (std::vector<int64_t>{0, 73, 146, 255}));
  // All positive: min is taken as 0, zero point 0.
  const auto pos = run_op("DynamicQuantizeLinear", {Tensor::from_floats({2}, {0.2f, 1})}, {}, 3);
  EXPECT_EQ(ints_of(pos[2]), (std::vector<int64_t>{0}));
  EXPECT_EQ(ints_of(pos[0]), (std::vector<int64_t>{51, 255}));
  // All zero: scale 1 (onnxruntime-node 1.30 gives 1, zero point 0 and zeros; the specification's
  // formula would divide by 0), zero point 0 and zeros.
  const auto zero = run_op("DynamicQuantizeLinear", {Tensor::from_floats({2}, {0, 0})}, {}, 3);
  EXPECT_EQ(zero[1].data<float>()[0], 1.0f);
  EXPECT_EQ(ints_of(zero[2]), (std::vector<int64_t>{0}));
  EXPECT_EQ(ints_of(zero[0]), (std::vector<int64_t>{0, 0}));
  EXPECT_THROW(run_op("DynamicQuantizeLinear", {Tensor::from_floats({1}, {std::nanf("")})}, {}, 3), Error);
}
