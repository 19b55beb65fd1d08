// Unique: the ONNX spec's examples (unsorted, sorted, along an axis) worked by hand.
#include "ops/op_test_util.h"

namespace ptq {
namespace {

using test::attr_int;
using test::run_op;

std::vector<int64_t> v(const Tensor& t) { return t.to_int64_vector(); }

TEST(Unique, WithoutAxis) {
  const Tensor x = Tensor::from_floats({6}, {2, 1, 1, 3, 4, 3});
  const auto u = run_op("Unique", {x}, {attr_int("sorted", 0)}, 4);
  EXPECT_EQ(v(u[0]), (std::vector<int64_t>{2, 1, 3, 4}));
  EXPECT_EQ(v(u[1]), (std::vector<int64_t>{0, 1, 3, 4}));
  EXPECT_EQ(v(u[2]), (std::vector<int64_t>{0, 1, 1, 2, 3, 2}));
  EXPECT_EQ(v(u[3]), (std::vector<int64_t>{1, 2, 2, 1}));
  const auto s = run_op("Unique", {x}, {}, 4);
  EXPECT_EQ(v(s[0]), (std::vector<int64_t>{1, 2, 3, 4}));
  EXPECT_EQ(v(s[1]), (std::vector<int64_t>{1, 0, 3, 4}));
  EXPECT_EQ(v(s[2]), (std::vector<int64_t>{1, 0, 0, 2, 3, 2}));
  EXPECT_EQ(v(s[3]), (std::vector<int64_t>{2, 1, 2, 1}));
}

TEST(Unique, AlongAxisAndEmpty) {
  // Rows [1, 0, 0], [1, 0, 0], [2, 3, 4]: two distinct rows.
  const Tensor x = Tensor::from_int64s({3, 3}, {1, 0, 0, 1, 0, 0, 2, 3, 4});
  const auto u = run_op("Unique", {x}, {attr_int("axis", 0)}, 4);
  EXPECT_EQ(u[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(v(u[0]), (std::vector<int64_t>{1, 0, 0, 2, 3, 4}));
  EXPECT_EQ(v(u[2]), (std::vector<int64_t>{0, 0, 1}));
  EXPECT_EQ(v(u[3]), (std::vector<int64_t>{2, 1}));
  // Columns along axis -1: [1,1,2], [0,0,3], [0,0,4] -> sorted [0,0,3] < [0,0,4] < [1,1,2].
  const auto c = run_op("Unique", {x}, {attr_int("axis", -1)}, 4);
  EXPECT_EQ(v(c[0]), (std::vector<int64_t>{0, 0, 1, 0, 0, 1, 3, 4, 2}));
  EXPECT_EQ(v(c[1]), (std::vector<int64_t>{1, 2, 0}));
  EXPECT_EQ(run_op("Unique", {Tensor::from_floats({0}, {})}, {}, 4)[0].shape(), (Shape{0}));
}

}  // namespace
}  // namespace ptq
