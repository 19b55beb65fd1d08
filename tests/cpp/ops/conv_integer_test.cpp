// ConvInteger / QLinearConv and MatMulInteger / QLinearMatMul against sums worked by hand.
#include <cstdint>

#include "ops/op_test_util.h"

namespace ptq {
namespace {

using test::attr_ints;
using test::run_op;

template <class T>
Tensor bytes(DType dtype, Shape shape, const std::vector<int>& v) {
  Tensor t(dtype, std::move(shape));
  for (size_t i = 0; i < v.size(); ++i) t.mutable_data<T>()[i] = static_cast<T>(v[i]);
  return t;
}
Tensor u8(Shape s, const std::vector<int>& v) { return bytes<uint8_t>(DType::UInt8, std::move(s), v); }
Tensor i8(Shape s, const std::vector<int>& v) { return bytes<int8_t>(DType::Int8, std::move(s), v); }

TEST(IntegerOps, ConvIntegerZeroPointsAndPadding) {
  // x 1x1x2x2 = [[3, 4], [5, 6]] with x_zero_point 2 -> [[1, 2], [3, 4]]; w 1x1x2x2 all 1 with
  // w_zero_point 0: without padding one output 1 + 2 + 3 + 4 = 10; with pads 1 the corners see one
  // pixel each (padding adds nothing): the 3x3 output is the 2x2 box sums.
  const Tensor x = u8({1, 1, 2, 2}, {3, 4, 5, 6});
  const Tensor w = u8({1, 1, 2, 2}, {1, 1, 1, 1});
  const Tensor y = run_op("ConvInteger", {x, w, u8({}, {2})})[0];
  EXPECT_EQ(y.dtype(), DType::Int32);
  EXPECT_EQ(y.to_int64_vector(), (std::vector<int64_t>{10}));
  const Tensor p = run_op("ConvInteger", {x, w, u8({}, {2})}, {attr_ints("pads", {1, 1, 1, 1})})[0];
  EXPECT_EQ(p.shape(), (Shape{1, 1, 3, 3}));
  EXPECT_EQ(p.to_int64_vector(), (std::vector<int64_t>{1, 3, 2, 4, 10, 6, 3, 7, 4}));
  EXPECT_THROW(run_op("ConvInteger", {x, w, i8({}, {2})}), Error);  // zero point of another type
}

TEST(IntegerOps, QLinearConvPerChannelScale) {
  // Two output channels, 1x1 kernels of weight 2 (zero point 0): acc = 2 * (x - 1) for x = [5, 9].
  // Channel scales 0.5 and 0.25, x_scale 1, y_scale 1, bias [1, 0], y_zero_point 10:
  // channel 0: round((8 + 1) * 0.5) = round(4.5) = 4 (half to even) + 10 = 14; (16 + 1) * 0.5 = 8.5
  // -> 8 + 10 = 18. Channel 1: 8 * 0.25 = 2 -> 12; 16 * 0.25 = 4 -> 14.
  const Tensor x = u8({1, 1, 1, 2}, {5, 9});
  const Tensor w = u8({2, 1, 1, 1}, {2, 2});
  Tensor bias(DType::Int32, {2});
  bias.mutable_data<int32_t>()[0] = 1;
  bias.mutable_data<int32_t>()[1] = 0;
  const Tensor y = run_op("QLinearConv", {x, Tensor::from_floats({}, {1}), u8({}, {1}), w,
                                          Tensor::from_floats({2}, {0.5f, 0.25f}), u8({}, {0}),
                                          Tensor::from_floats({}, {1}), u8({}, {10}), bias})[0];
  EXPECT_EQ(y.dtype(), DType::UInt8);
  EXPECT_EQ(y.to_int64_vector(), (std::vector<int64_t>{14, 18, 12, 14}));
}

TEST(IntegerOps, MatMulIntegerAndQLinearMatMul) {
  // A int8 [[1, -2], [3, 4]] with per-row zero points [1, 0]: [[0, -3], [3, 4]]; B uint8 [[2], [1]]
  // with zero point 1: [[1], [0]] -> [[0], [3]].
  const Tensor a = i8({2, 2}, {1, -2, 3, 4});
  const Tensor b = u8({2, 1}, {2, 1});
  const Tensor y = run_op("MatMulInteger", {a, b, i8({2}, {1, 0}), u8({}, {1})})[0];
  EXPECT_EQ(y.dtype(), DType::Int32);
  EXPECT_EQ(y.to_int64_vector(), (std::vector<int64_t>{0, 3}));
  // QLinearMatMul uint8: acc = [[1*1 + 2*1]] = 3 (zero points 0), scale 0.5 * 1 / 0.25 = 2 -> 6 + 100;
  // a result past 255 saturates.
  const Tensor one = Tensor::from_floats({}, {1});
  const Tensor q = run_op("QLinearMatMul", {u8({1, 2}, {1, 2}), Tensor::from_floats({}, {0.5f}), u8({}, {0}),
                                            u8({2, 1}, {1, 1}), one, u8({}, {0}), Tensor::from_floats({}, {0.25f}),
                                            u8({}, {100})})[0];
  EXPECT_EQ(q.to_int64_vector(), (std::vector<int64_t>{106}));
  const Tensor s = run_op("QLinearMatMul", {u8({1, 1}, {200}), one, u8({}, {0}), u8({1, 1}, {200}), one, u8({}, {0}),
                                            one, u8({}, {0})})[0];
  EXPECT_EQ(s.to_int64_vector(), (std::vector<int64_t>{255}));
  EXPECT_THROW(run_op("MatMulInteger", {Tensor::from_floats({1, 1}, {1}), b}), Error);
}

}  // namespace
}  // namespace ptq
