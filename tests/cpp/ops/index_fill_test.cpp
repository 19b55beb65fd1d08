// Trilu, EyeLike, OneHot: hand-worked cases and the spec's edge rules.
#include <string>

#include "ops/op_test_util.h"

namespace ptq {
namespace {

using test::attr_int;
using test::expect_tensor_near;
using test::run_op;
using test::floats;
using test::int64s;

TEST(IndexFill, TriluUpperLowerWithK) {
  const Tensor x = floats({3, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  expect_tensor_near(run_op("Trilu", {x})[0], {3, 4}, {1, 2, 3, 4, 0, 6, 7, 8, 0, 0, 11, 12});
  expect_tensor_near(run_op("Trilu", {x, int64s({}, {1})})[0], {3, 4}, {0, 2, 3, 4, 0, 0, 7, 8, 0, 0, 0, 12});
  expect_tensor_near(run_op("Trilu", {x, int64s({}, {-1})}, {attr_int("upper", 0)})[0], {3, 4},
                     {0, 0, 0, 0, 5, 0, 0, 0, 9, 10, 0, 0});
  // k beyond the matrix: upper keeps nothing, lower keeps everything.
  expect_tensor_near(run_op("Trilu", {x, int64s({}, {9})})[0], {3, 4}, std::vector<float>(12, 0.0f));
  expect_tensor_near(run_op("Trilu", {x, int64s({}, {9})}, {attr_int("upper", 0)})[0], {3, 4},
                     {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  // Batched int64 and an empty batch.
  const Tensor b = run_op("Trilu", {int64s({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8})}, {attr_int("upper", 0)})[0];
  EXPECT_EQ(b.to_int64_vector(), (std::vector<int64_t>{1, 0, 3, 4, 5, 0, 7, 8}));
  EXPECT_EQ(run_op("Trilu", {floats({0, 3, 3}, {})})[0].shape(), (Shape{0, 3, 3}));
  EXPECT_THROW(run_op("Trilu", {floats({3}, {1, 2, 3})}), Error);
}

TEST(IndexFill, EyeLike) {
  const Tensor x = floats({2, 3}, {9, 9, 9, 9, 9, 9});
  expect_tensor_near(run_op("EyeLike", {x})[0], {2, 3}, {1, 0, 0, 0, 1, 0});
  expect_tensor_near(run_op("EyeLike", {x}, {attr_int("k", 1)})[0], {2, 3}, {0, 1, 0, 0, 0, 1});
  expect_tensor_near(run_op("EyeLike", {x}, {attr_int("k", -1)})[0], {2, 3}, {0, 0, 0, 1, 0, 0});
  const Tensor y = run_op("EyeLike", {x}, {attr_int("dtype", 7)})[0];  // int64
  EXPECT_EQ(y.dtype(), DType::Int64);
  EXPECT_EQ(y.to_int64_vector(), (std::vector<int64_t>{1, 0, 0, 0, 1, 0}));
  EXPECT_THROW(run_op("EyeLike", {x}, {attr_int("dtype", 8)}), Error);  // string
}

TEST(IndexFill, OneHotNegativeAndOutOfRangeIndices) {
  // depth 3, values [off=0, on=5]: index -1 is 2; index 3 and -4 are outside [-3, 3): all off.
  const Tensor y = run_op("OneHot", {int64s({4}, {0, -1, 3, -4}), floats({}, {3}), floats({2}, {0, 5})})[0];
  expect_tensor_near(y, {4, 3}, {5, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0});
  // axis 0 puts depth first: out[d, i].
  const Tensor z = run_op("OneHot", {int64s({2}, {1, 0}), int64s({}, {2}), int64s({2}, {-1, 1})}, {attr_int("axis", 0)})[0];
  EXPECT_EQ(z.shape(), (Shape{2, 2}));
  EXPECT_EQ(z.to_int64_vector(), (std::vector<int64_t>{-1, 1, 1, -1}));
  EXPECT_THROW(run_op("OneHot", {int64s({1}, {0}), floats({}, {0}), floats({2}, {0, 1})}), Error);     // depth 0
  EXPECT_THROW(run_op("OneHot", {int64s({1}, {0}), floats({}, {2}), floats({3}, {0, 1, 2})}), Error);  // 3 values
}

}  // namespace
}  // namespace ptq
