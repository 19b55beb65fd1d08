// Transpose: small hand cases plus every 4-D permutation of an odd-sized tensor checked against a
// naive index loop (exercises the memcpy, tiled and generic copy paths) for 1/2/4/8-byte dtypes.
#include <algorithm>

#include "ops/op_test_util.h"

namespace ptq::test {
namespace {

TEST(Transpose, DefaultReversesDims) {
  const Tensor x = Tensor::from_floats({2, 3}, {1, 2, 3, 4, 5, 6});
  expect_tensor_near(run_op("Transpose", {x})[0], {3, 2}, {1, 4, 2, 5, 3, 6});
  expect_tensor_near(run_op("Transpose", {x}, {attr_ints("perm", {1, 0})})[0], {3, 2}, {1, 4, 2, 5, 3, 6});
}

TEST(Transpose, IdentityAndUnitDimMovesAreViews) {
  const Tensor x = Tensor::from_floats({2, 1, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_TRUE(run_op("Transpose", {x}, {attr_ints("perm", {0, 1, 2})})[0].shares_storage_with(x));
  const Tensor y = run_op("Transpose", {x}, {attr_ints("perm", {1, 0, 2})})[0];
  EXPECT_EQ(y.shape(), (Shape{1, 2, 3}));
  EXPECT_TRUE(y.shares_storage_with(x));
  EXPECT_THROW(run_op("Transpose", {x}, {attr_ints("perm", {0, 0, 1})}), Error);
  EXPECT_THROW(run_op("Transpose", {x}, {attr_ints("perm", {0, 1})}), Error);
}

// Reference: out[i0,i1,i2,i3] = in[index with in-dim perm[d] = i_d].
std::vector<int64_t> naive(const std::vector<int64_t>& in, const Shape& s, const std::vector<int64_t>& perm) {
  Shape os(4);
  for (size_t d = 0; d < 4; ++d) os[d] = s[static_cast<size_t>(perm[d])];
  std::vector<int64_t> out;
  int64_t i[4];
  for (i[0] = 0; i[0] < os[0]; ++i[0])
    for (i[1] = 0; i[1] < os[1]; ++i[1])
      for (i[2] = 0; i[2] < os[2]; ++i[2])
        for (i[3] = 0; i[3] < os[3]; ++i[3]) {
          int64_t src[4];
          for (size_t d = 0; d < 4; ++d) src[perm[d]] = i[d];
          out.push_back(in[static_cast<size_t>(((src[0] * s[1] + src[1]) * s[2] + src[2]) * s[3] + src[3])]);
        }
  return out;
}

TEST(Transpose, All4DPermutationsAllElementSizes) {
  const Shape s{2, 3, 17, 19};  // 17x19 planes exceed one 16x16 tile
  std::vector<int64_t> values(static_cast<size_t>(shape_numel(s)));
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<int64_t>((i * 7919) % 251);
  const Tensor base = Tensor::from_int64s(s, values);
  std::vector<int64_t> perm{0, 1, 2, 3};
  int checked = 0;
  do {
    const std::vector<int64_t> want = naive(values, s, perm);
    for (DType dt : {DType::Int64, DType::Float, DType::Float16, DType::UInt8, DType::Bool}) {
      const Tensor x = dt == DType::Bool ? cast_tensor(base, DType::Bool) : cast_tensor(base, dt);
      const Tensor y = run_op("Transpose", {x}, {attr_ints("perm", perm)})[0];
      ASSERT_EQ(y.dtype(), dt);
      const std::vector<int64_t> got = y.to_int64_vector();
      for (size_t i = 0; i < want.size(); ++i) {
        const int64_t w = dt == DType::Bool ? (want[i] != 0) : want[i];
        ASSERT_EQ(got[i], w) << "perm " << perm[0] << perm[1] << perm[2] << perm[3] << " " << dtype_name(dt) << " at " << i;
      }
    }
    ++checked;
  } while (std::next_permutation(perm.begin(), perm.end()));
  EXPECT_EQ(checked, 24);
}

}  // namespace
}  // namespace ptq::test
