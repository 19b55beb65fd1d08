// Slice, Gather, GatherElements, ScatterND: ONNX spec examples and hand-worked cases.
#include <limits>

#include "ops/op_test_util.h"

namespace ptq::test {
namespace {

Tensor ints(std::vector<int64_t> v) { return Tensor::from_int64s({static_cast<int64_t>(v.size())}, v); }
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

const Tensor& data_2x4() {
  static const Tensor t = Tensor::from_floats({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  return t;
}

TEST(SliceGather, SliceSpecExamples) {
  // starts [1,0], ends [2,3], steps [1,2] -> [[5, 7]].
  expect_tensor_near(run_op("Slice", {data_2x4(), ints({1, 0}), ints({2, 3}), ints({0, 1}), ints({1, 2})})[0], {1, 2},
                     {5, 7});
  // starts [0,1], ends [-1,1000] -> [[2,3,4]].
  expect_tensor_near(run_op("Slice", {data_2x4(), ints({0, 1}), ints({-1, 1000})})[0], {1, 3}, {2, 3, 4});
  // Opset 1 attributes.
  expect_tensor_near(run_op("Slice", {data_2x4()}, {attr_ints("starts", {1}), attr_ints("ends", {3}), attr_ints("axes", {1})},
                            1, 1)[0],
                     {2, 2}, {2, 3, 6, 7});
}

TEST(SliceGather, SliceNegativeStepsAndClamping) {
  const Tensor x = Tensor::from_floats({5}, {0, 1, 2, 3, 4});
  expect_tensor_near(run_op("Slice", {x, ints({-1}), ints({kMin}), ints({0}), ints({-1})})[0], {5}, {4, 3, 2, 1, 0});
  expect_tensor_near(run_op("Slice", {x, ints({kMax}), ints({kMin}), ints({0}), ints({-2})})[0], {3}, {4, 2, 0});
  expect_tensor_near(run_op("Slice", {x, ints({3}), ints({0}), ints({0}), ints({-1})})[0], {3}, {3, 2, 1});
  expect_tensor_near(run_op("Slice", {x, ints({1}), ints({kMax})})[0], {4}, {1, 2, 3, 4});
  EXPECT_EQ(run_op("Slice", {x, ints({10}), ints({kMax})})[0].shape(), (Shape{0}));  // start out of bounds
  EXPECT_EQ(run_op("Slice", {x, ints({3}), ints({1})})[0].shape(), (Shape{0}));       // end before start
  // Negative axes, and a contiguous window is a view.
  const Tensor y = run_op("Slice", {data_2x4(), ints({1}), ints({2}), ints({-2})})[0];
  expect_tensor_near(y, {1, 4}, {5, 6, 7, 8});
  EXPECT_FALSE(y.shares_storage_with(data_2x4()));  // offset view: different start pointer
  EXPECT_EQ(y.data<float>(), data_2x4().data<float>() + 4);
  EXPECT_THROW(run_op("Slice", {x, ints({0}), ints({2}), ints({0}), ints({0})}), Error);
}

TEST(SliceGather, SliceOtherDtypes) {
  const Tensor x = Tensor::from_int64s({2, 3}, {1, -2, int64_t{1} << 45, 4, 5, 6});
  const Tensor y = run_op("Slice", {x, ints({2}), ints({0}), ints({1}), ints({-1})})[0];
  EXPECT_EQ(y.to_int64_vector(), (std::vector<int64_t>{int64_t{1} << 45, -2, 6, 5}));
  const Tensor h = cast_tensor(Tensor::from_floats({4}, {1.5f, 2.5f, 3.5f, 4.5f}), DType::Float16);
  const Tensor hy = run_op("Slice", {h, ints({0}), ints({4}), ints({0}), ints({3})})[0];
  EXPECT_EQ(hy.dtype(), DType::Float16);
  expect_tensor_near(hy, {2}, {1.5f, 4.5f});
}

TEST(SliceGather, Gather) {
  // ONNX example: data [[1,1.2],[2.3,3.4],[4.5,5.7]], indices [[0,1],[1,2]], axis 0.
  const Tensor data = Tensor::from_floats({3, 2}, {1, 1.2f, 2.3f, 3.4f, 4.5f, 5.7f});
  expect_tensor_near(run_op("Gather", {data, Tensor::from_int64s({2, 2}, {0, 1, 1, 2})})[0], {2, 2, 2},
                     {1, 1.2f, 2.3f, 3.4f, 2.3f, 3.4f, 4.5f, 5.7f});
  // axis 1 with negative indices.
  expect_tensor_near(run_op("Gather", {data, Tensor::from_int64s({1, 2}, {-1, 0})}, {attr_int("axis", 1)})[0], {3, 1, 2},
                     {1.2f, 1, 3.4f, 2.3f, 5.7f, 4.5f});
  // A scalar index into axis 0 is a view of the row.
  const Tensor row = run_op("Gather", {data, Tensor::from_int64s({}, {2})})[0];
  expect_tensor_near(row, {2}, {4.5f, 5.7f});
  EXPECT_EQ(row.data<float>(), data.data<float>() + 4);
  const Tensor i32 = cast_tensor(Tensor::from_floats({2}, {2, 0}), DType::Int32);
  const Tensor b = cast_tensor(Tensor::from_floats({3}, {0, 1, 1}), DType::Bool);
  const Tensor yb = run_op("Gather", {b, i32})[0];
  EXPECT_EQ(yb.dtype(), DType::Bool);
  expect_tensor_near(yb, {2}, {1, 0});
  EXPECT_THROW(run_op("Gather", {data, Tensor::from_int64s({1}, {3})}), Error);
}

TEST(SliceGather, GatherElements) {
  // ONNX examples.
  const Tensor a = Tensor::from_floats({2, 2}, {1, 2, 3, 4});
  expect_tensor_near(run_op("GatherElements", {a, Tensor::from_int64s({2, 2}, {0, 0, 1, 0})}, {attr_int("axis", 1)})[0],
                     {2, 2}, {1, 1, 4, 3});
  const Tensor b = Tensor::from_floats({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  expect_tensor_near(run_op("GatherElements", {b, Tensor::from_int64s({2, 3}, {1, 2, 0, 2, 0, 0})})[0], {2, 3},
                     {4, 8, 3, 7, 2, 3});
  expect_tensor_near(run_op("GatherElements", {b, Tensor::from_int64s({2, 3}, {-1, -2, 0, -2, 0, 0})})[0], {2, 3},
                     {7, 5, 3, 4, 2, 3});
  // Indices smaller than the data on a non-axis dim.
  expect_tensor_near(run_op("GatherElements", {b, Tensor::from_int64s({2, 1}, {2, 0})}, {attr_int("axis", 1)})[0], {2, 1},
                     {3, 4});
}

TEST(SliceGather, ScatterND) {
  // ONNX example 1 and its reduction="add" variant.
  const Tensor data = Tensor::from_floats({8}, {1, 2, 3, 4, 5, 6, 7, 8});
  const Tensor idx = Tensor::from_int64s({4, 1}, {4, 3, 1, 7});
  const Tensor upd = Tensor::from_floats({4}, {9, 10, 11, 12});
  expect_tensor_near(run_op("ScatterND", {data, idx, upd})[0], {8}, {1, 11, 3, 10, 9, 6, 7, 12});
  expect_tensor_near(run_op("ScatterND", {data, idx, upd}, {attr_string("reduction", "add")}, 1, 16)[0], {8},
                     {1, 13, 3, 14, 14, 6, 7, 20});
  expect_tensor_near(run_op("ScatterND", {data, idx, upd}, {attr_string("reduction", "max")}, 1, 18)[0], {8},
                     {1, 11, 3, 10, 9, 6, 7, 12});
  // Slices: replace row 1 of a [2,2] int64 tensor; negative index.
  const Tensor d2 = Tensor::from_int64s({2, 2}, {1, 2, 3, 4});
  const Tensor y = run_op("ScatterND", {d2, Tensor::from_int64s({1, 1}, {-1}), Tensor::from_int64s({1, 2}, {7, 8})})[0];
  EXPECT_EQ(y.to_int64_vector(), (std::vector<int64_t>{1, 2, 7, 8}));
  EXPECT_EQ(d2.to_int64_vector(), (std::vector<int64_t>{1, 2, 3, 4}));  // input untouched
  EXPECT_THROW(run_op("ScatterND", {data, Tensor::from_int64s({1, 1}, {8}), Tensor::from_floats({1}, {0})}), Error);
}

TEST(SliceGather, Compress) {
  const Tensor x = Tensor::from_floats({3, 2}, {1, 2, 3, 4, 5, 6});
  const auto cond = [](std::vector<int64_t> v) {
    return cast_tensor(Tensor::from_int64s({static_cast<int64_t>(v.size())}, v), DType::Bool);
  };
  expect_tensor_near(run_op("Compress", {x, cond({0, 1, 1})}, {attr_int("axis", 0)})[0], {2, 2}, {3, 4, 5, 6});
  expect_tensor_near(run_op("Compress", {x, cond({1, 0})}, {attr_int("axis", -1)})[0], {3, 1}, {1, 3, 5});
  // No axis: the flattened input; a shorter condition leaves out the rest.
  expect_tensor_near(run_op("Compress", {x, cond({0, 1, 0, 1})})[0], {2}, {2, 4});
  EXPECT_EQ(run_op("Compress", {x, cond({0, 0, 0})}, {attr_int("axis", 0)})[0].shape(), (Shape{0, 2}));
  EXPECT_THROW(run_op("Compress", {x, cond({0, 0, 0, 1})}, {attr_int("axis", 0)}), Error);
  EXPECT_THROW(run_op("Compress", {x, ints({0, 1})}, {attr_int("axis", 0)}), Error);  // not bool
}

TEST(SliceGather, ReverseSequence) {
  // time_axis 0, batch_axis 1: x[t, b]; lengths [3, 1]: column 0 reversed in full, column 1 kept.
  const Tensor x = Tensor::from_floats({3, 2}, {1, 10, 2, 20, 3, 30});
  expect_tensor_near(run_op("ReverseSequence", {x, ints({3, 1})})[0], {3, 2}, {3, 10, 2, 20, 1, 30});
  // time_axis 1: x[b, t]; row 0 reverses its first 2 steps.
  const Tensor y = Tensor::from_floats({2, 3}, {1, 2, 3, 4, 5, 6});
  expect_tensor_near(run_op("ReverseSequence", {y, ints({2, 0})}, {attr_int("time_axis", 1), attr_int("batch_axis", 0)})[0],
                     {2, 3}, {2, 1, 3, 4, 5, 6});
  EXPECT_THROW(run_op("ReverseSequence", {x, ints({4, 1})}), Error);  // longer than the time axis
  EXPECT_THROW(run_op("ReverseSequence", {x, ints({1})}), Error);     // not one per batch entry
}

}  // namespace
}  // namespace ptq::test
