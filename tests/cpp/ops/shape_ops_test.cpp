// Shape / Size / Reshape / Flatten / Squeeze / Unsqueeze / Identity / Dropout / Constant /
// ConstantOfShape / Expand / Tile / Range / NonZero. Expected values are worked out by hand or taken
// from the ONNX operator spec examples.
#include <limits>

#include "ops/op_test_util.h"

namespace ptq::test {
namespace {

Tensor iota(Shape shape, DType dtype = DType::Float) {
  std::vector<float> v(static_cast<size_t>(shape_numel(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  return cast_tensor(Tensor::from_floats(std::move(shape), v), dtype);
}

Tensor ints(std::vector<int64_t> v) { return Tensor::from_int64s({static_cast<int64_t>(v.size())}, v); }

TEST(ShapeOps, ShapeWithStartEnd) {
  const Tensor x = iota({2, 3, 4});
  Tensor y = run_op("Shape", {x})[0];
  EXPECT_EQ(y.dtype(), DType::Int64);
  EXPECT_EQ(y.to_int64_vector(), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(run_op("Shape", {x}, {attr_int("start", 1)}, 1, 15)[0].to_int64_vector(), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(run_op("Shape", {x}, {attr_int("end", -1)}, 1, 15)[0].to_int64_vector(), (std::vector<int64_t>{2, 3}));
  // Out-of-range start/end clamp; start past end gives an empty result.
  EXPECT_EQ(run_op("Shape", {x}, {attr_int("start", -10), attr_int("end", 10)}, 1, 15)[0].to_int64_vector(),
            (std::vector<int64_t>{2, 3, 4}));
  y = run_op("Shape", {x}, {attr_int("start", 2), attr_int("end", 1)}, 1, 15)[0];
  EXPECT_EQ(y.shape(), (Shape{0}));
}

TEST(ShapeOps, SizeIsInt64Scalar) {
  const Tensor y = run_op("Size", {iota({2, 3})})[0];
  EXPECT_EQ(y.dtype(), DType::Int64);
  EXPECT_EQ(y.shape(), Shape{});
  EXPECT_EQ(y.get_as_int64(0), 6);
}

TEST(ShapeOps, ReshapeZeroAndMinusOneIsZeroCopy) {
  const Tensor x = iota({2, 3, 4});
  const Tensor y = run_op("Reshape", {x, ints({0, -1})})[0];
  EXPECT_EQ(y.shape(), (Shape{2, 12}));
  EXPECT_TRUE(y.shares_storage_with(x));
  EXPECT_EQ(run_op("Reshape", {x, ints({-1, 2, 0})})[0].shape(), (Shape{3, 2, 4}));  // 0 copies dim 2 = 4
  // Opset 1: shape attribute.
  EXPECT_EQ(run_op("Reshape", {x}, {attr_ints("shape", {4, 6})}, 1, 1)[0].shape(), (Shape{4, 6}));
  EXPECT_THROW(run_op("Reshape", {x, ints({-1, -1})}), Error);
  EXPECT_THROW(run_op("Reshape", {x, ints({5, -1})}), Error);
}

TEST(ShapeOps, ReshapeAllowZero) {
  const Tensor x = Tensor::zeros(DType::Float, {0, 3});
  // allowzero=1: the 0 is a real zero-sized dim, not "copy the input dim".
  EXPECT_EQ(run_op("Reshape", {x, ints({3, 0})}, {attr_int("allowzero", 1)}, 1, 14)[0].shape(), (Shape{3, 0}));
  // allowzero=0: 0 copies input dim 0 (= 0), -1 then cannot be inferred from 0 elements.
  EXPECT_EQ(run_op("Reshape", {x, ints({0, 3})}, {}, 1, 14)[0].shape(), (Shape{0, 3}));
}

TEST(ShapeOps, Flatten) {
  const Tensor x = iota({2, 3, 4, 5});
  EXPECT_EQ(run_op("Flatten", {x})[0].shape(), (Shape{2, 60}));
  EXPECT_EQ(run_op("Flatten", {x}, {attr_int("axis", 0)})[0].shape(), (Shape{1, 120}));
  EXPECT_EQ(run_op("Flatten", {x}, {attr_int("axis", 2)})[0].shape(), (Shape{6, 20}));
  EXPECT_EQ(run_op("Flatten", {x}, {attr_int("axis", 4)})[0].shape(), (Shape{120, 1}));
  EXPECT_EQ(run_op("Flatten", {x}, {attr_int("axis", -1)})[0].shape(), (Shape{24, 5}));
  EXPECT_EQ(run_op("Flatten", {x}, {attr_int("axis", -4)})[0].shape(), (Shape{1, 120}));
  EXPECT_THROW(run_op("Flatten", {x}, {attr_int("axis", 5)}), Error);
}

TEST(ShapeOps, SqueezeAttributeAndInput) {
  const Tensor x = iota({1, 3, 1, 2});
  EXPECT_EQ(run_op("Squeeze", {x}, {attr_ints("axes", {0, 2})}, 1, 11)[0].shape(), (Shape{3, 2}));
  EXPECT_EQ(run_op("Squeeze", {x, ints({-2})}, {}, 1, 13)[0].shape(), (Shape{1, 3, 2}));
  EXPECT_EQ(run_op("Squeeze", {x}, {}, 1, 13)[0].shape(), (Shape{3, 2}));  // no axes: all unit dims
  EXPECT_THROW(run_op("Squeeze", {x, ints({1})}, {}, 1, 13), Error);     // dim 1 has size 3
  EXPECT_TRUE(run_op("Squeeze", {x}, {}, 1, 13)[0].shares_storage_with(x));
}

TEST(ShapeOps, UnsqueezeAttributeAndInput) {
  const Tensor x = iota({2, 3});
  EXPECT_EQ(run_op("Unsqueeze", {x, ints({0, 3})}, {}, 1, 13)[0].shape(), (Shape{1, 2, 3, 1}));
  EXPECT_EQ(run_op("Unsqueeze", {x, ints({-1})}, {}, 1, 13)[0].shape(), (Shape{2, 3, 1}));
  EXPECT_EQ(run_op("Unsqueeze", {x, ints({3, 0})}, {}, 1, 13)[0].shape(), (Shape{1, 2, 3, 1}));  // unsorted
  EXPECT_EQ(run_op("Unsqueeze", {x}, {attr_ints("axes", {1})}, 1, 11)[0].shape(), (Shape{2, 1, 3}));
  EXPECT_THROW(run_op("Unsqueeze", {x, ints({0, 0})}, {}, 1, 13), Error);
  EXPECT_THROW(run_op("Unsqueeze", {x, ints({4})}, {}, 1, 13), Error);
}

TEST(ShapeOps, IdentityShares) {
  const Tensor x = iota({3}, DType::Int64);
  const Tensor y = run_op("Identity", {x})[0];
  EXPECT_TRUE(y.shares_storage_with(x));
  EXPECT_EQ(y.dtype(), DType::Int64);
}

TEST(ShapeOps, DropoutInferenceAndMask) {
  const Tensor x = iota({2, 2});
  std::vector<Tensor> out = run_op("Dropout", {x}, {}, 2, 13);
  EXPECT_TRUE(out[0].shares_storage_with(x));
  EXPECT_EQ(out[1].dtype(), DType::Bool);
  expect_tensor_near(out[1], {2, 2}, {1, 1, 1, 1});
  // Opset 7: the mask has the input's type.
  out = run_op("Dropout", {x}, {attr_float("ratio", 0.3f)}, 2, 7);
  EXPECT_EQ(out[1].dtype(), DType::Float);
  expect_tensor_near(out[1], {2, 2}, {1, 1, 1, 1});
  const Tensor yes = cast_tensor(Tensor::from_floats({}, {1}), DType::Bool);
  EXPECT_THROW(run_op("Dropout", {x, Tensor::from_floats({}, {0.5f}), yes}, {}, 1, 13), Error);
  // Training mode with ratio 0 is still the identity.
  expect_tensor_near(run_op("Dropout", {x, Tensor::from_floats({}, {0.0f}), yes}, {}, 1, 13)[0], {2, 2}, {0, 1, 2, 3});
}

TEST(ShapeOps, ConstantAttributes) {
  ir::Attribute value;
  value.name = "value";
  value.type = ir::AttrType::Tensor;
  value.t = Tensor::from_int64s({2}, {7, -8});
  Tensor y = run_op("Constant", {}, {value})[0];
  EXPECT_EQ(y.dtype(), DType::Int64);
  EXPECT_EQ(y.to_int64_vector(), (std::vector<int64_t>{7, -8}));
  y = run_op("Constant", {}, {attr_float("value_float", 2.5f)})[0];
  EXPECT_EQ(y.shape(), Shape{});
  EXPECT_FLOAT_EQ(y.data<float>()[0], 2.5f);
  expect_tensor_near(run_op("Constant", {}, {attr_floats("value_floats", {1, 2})})[0], {2}, {1, 2});
  y = run_op("Constant", {}, {attr_int("value_int", 5)})[0];
  EXPECT_EQ(y.dtype(), DType::Int64);
  EXPECT_EQ(y.get_as_int64(0), 5);
  EXPECT_EQ(run_op("Constant", {}, {attr_ints("value_ints", {3, 4, 5})})[0].to_int64_vector(),
            (std::vector<int64_t>{3, 4, 5}));
  EXPECT_THROW(run_op("Constant", {}, {attr_string("value_string", "x")}), Error);
}

TEST(ShapeOps, ConstantOfShape) {
  Tensor y = run_op("ConstantOfShape", {ints({2, 3})})[0];
  EXPECT_EQ(y.dtype(), DType::Float);
  expect_tensor_near(y, {2, 3}, {0, 0, 0, 0, 0, 0});
  ir::Attribute value;
  value.name = "value";
  value.type = ir::AttrType::Tensor;
  value.t = Tensor::from_int64s({1}, {int64_t{1} << 40});
  y = run_op("ConstantOfShape", {ints({3})}, {value})[0];
  EXPECT_EQ(y.dtype(), DType::Int64);
  EXPECT_EQ(y.to_int64_vector(), (std::vector<int64_t>(3, int64_t{1} << 40)));
  EXPECT_EQ(run_op("ConstantOfShape", {ints({})}, {value})[0].shape(), Shape{});  // scalar
  EXPECT_EQ(run_op("ConstantOfShape", {ints({0})}, {value})[0].numel(), 0);
}

TEST(ShapeOps, ExpandBroadcastsBothWays) {
  // [3,1] -> shape [2,1,6]: result [2,3,6], row r of each copy is r repeated.
  const Tensor x = Tensor::from_floats({3, 1}, {1, 2, 3});
  Tensor y = run_op("Expand", {x, ints({2, 1, 6})})[0];
  ASSERT_EQ(y.shape(), (Shape{2, 3, 6}));
  std::vector<float> want;
  for (int n = 0; n < 2; ++n)
    for (int r = 1; r <= 3; ++r)
      for (int c = 0; c < 6; ++c) want.push_back(static_cast<float>(r));
  expect_tensor_near(y, {2, 3, 6}, want);
  // Target smaller than the input: the input shape wins (bidirectional broadcast).
  y = run_op("Expand", {x, ints({1, 1})})[0];
  EXPECT_EQ(y.shape(), (Shape{3, 1}));
  // Other element sizes move unchanged.
  const Tensor big = Tensor::from_int64s({2}, {int64_t{1} << 50, -3});
  EXPECT_EQ(run_op("Expand", {big, ints({2, 2})})[0].to_int64_vector(),
            (std::vector<int64_t>{int64_t{1} << 50, -3, int64_t{1} << 50, -3}));
  const Tensor flags = cast_tensor(Tensor::from_floats({1}, {1}), DType::Bool);
  y = run_op("Expand", {flags, ints({3})})[0];
  EXPECT_EQ(y.dtype(), DType::Bool);
  expect_tensor_near(y, {3}, {1, 1, 1});
  expect_tensor_near(run_op("Expand", {x, ints({2})})[0], {3, 2}, {1, 1, 2, 2, 3, 3});
  EXPECT_THROW(run_op("Expand", {x, ints({2, 3})}), Error);  // dim 0: 3 vs 2
}

TEST(ShapeOps, Tile) {
  // ONNX example: [[0,1],[2,3]] tiled [2,2].
  const Tensor x = Tensor::from_floats({2, 2}, {0, 1, 2, 3});
  expect_tensor_near(run_op("Tile", {x, ints({2, 2})})[0], {4, 4},
                     {0, 1, 0, 1, 2, 3, 2, 3, 0, 1, 0, 1, 2, 3, 2, 3});
  expect_tensor_near(run_op("Tile", {x, ints({1, 3})})[0], {2, 6}, {0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3});
  const Tensor u8 = cast_tensor(Tensor::from_floats({3}, {7, 8, 9}), DType::UInt8);
  const Tensor y = run_op("Tile", {u8, ints({2})})[0];
  EXPECT_EQ(y.dtype(), DType::UInt8);
  expect_tensor_near(y, {6}, {7, 8, 9, 7, 8, 9});
  EXPECT_EQ(run_op("Tile", {x, ints({0, 1})})[0].shape(), (Shape{0, 2}));
  EXPECT_THROW(run_op("Tile", {x, ints({2})}), Error);
}

TEST(ShapeOps, Range) {
  // ONNX examples: (1, 5, 2) float -> [1, 3]; (10, 4, -3) int32 -> [10, 7].
  Tensor y = run_op("Range", {Tensor::from_floats({}, {1}), Tensor::from_floats({}, {5}), Tensor::from_floats({}, {2})})[0];
  expect_tensor_near(y, {2}, {1, 3});
  auto i32 = [](float v) { return cast_tensor(Tensor::from_floats({}, {v}), DType::Int32); };
  y = run_op("Range", {i32(10), i32(4), i32(-3)})[0];
  EXPECT_EQ(y.dtype(), DType::Int32);
  expect_tensor_near(y, {2}, {10, 7});
  y = run_op("Range", {Tensor::from_int64s({}, {5}), Tensor::from_int64s({}, {1}), Tensor::from_int64s({}, {1})})[0];
  EXPECT_EQ(y.shape(), (Shape{0}));
  EXPECT_THROW(run_op("Range", {i32(0), i32(4), i32(0)}), Error);
}

TEST(ShapeOps, NonZero) {
  // ONNX example: [[1,0],[1,1]] -> [[0,1,1],[0,0,1]].
  const Tensor x = cast_tensor(Tensor::from_floats({2, 2}, {1, 0, 1, 1}), DType::Bool);
  const Tensor y = run_op("NonZero", {x})[0];
  EXPECT_EQ(y.dtype(), DType::Int64);
  ASSERT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(y.to_int64_vector(), (std::vector<int64_t>{0, 1, 1, 0, 0, 1}));
  EXPECT_EQ(run_op("NonZero", {Tensor::from_floats({3}, {0, -0.0f, 0})})[0].shape(), (Shape{1, 0}));
}

}  // namespace
}  // namespace ptq::test
