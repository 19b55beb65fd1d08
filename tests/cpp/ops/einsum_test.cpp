// Einsum against naive loops written out in the test, plus the parser's error cases.
#include <string>

#include "ops/op_test_util.h"

namespace ptq {
namespace {

using test::attr_string;
using test::expect_tensor_near;
using test::run_op;
using test::floats;

std::vector<float> ramp(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * static_cast<float>(static_cast<int>(i % 7) - 3);
  return v;
}

TEST(Einsum, BatchMatmulMatchesNaiveLoops) {
  const std::vector<float> a = ramp(2 * 3 * 4, 0.5f), b = ramp(2 * 4 * 5, 0.25f);
  std::vector<float> expect(2 * 3 * 5, 0.0f);
  for (int n = 0; n < 2; ++n)
    for (int i = 0; i < 3; ++i)
      for (int k = 0; k < 5; ++k)
        for (int j = 0; j < 4; ++j) expect[(n * 3 + i) * 5 + k] += a[(n * 3 + i) * 4 + j] * b[(n * 4 + j) * 5 + k];
  expect_tensor_near(run_op("Einsum", {floats({2, 3, 4}, a), floats({2, 4, 5}, b)}, {attr_string("equation", "bij, bjk -> bik")})[0],
                     {2, 3, 5}, expect);
  // The same through "..." broadcasting.
  expect_tensor_near(run_op("Einsum", {floats({2, 3, 4}, a), floats({2, 4, 5}, b)}, {attr_string("equation", "...ij,...jk")})[0],
                     {2, 3, 5}, expect);
}

TEST(Einsum, TraceDiagonalTransposeAndImplicitOutput) {
  const Tensor m = floats({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  expect_tensor_near(run_op("Einsum", {m}, {attr_string("equation", "ii")})[0], {}, {15});
  expect_tensor_near(run_op("Einsum", {m}, {attr_string("equation", "ii->i")})[0], {3}, {1, 5, 9});
  expect_tensor_near(run_op("Einsum", {m}, {attr_string("equation", "ji")})[0], {3, 3}, {1, 4, 7, 2, 5, 8, 3, 6, 9});
  expect_tensor_near(run_op("Einsum", {m}, {attr_string("equation", "ij->")})[0], {}, {45});
  // Outer product: implicit output "ij".
  expect_tensor_near(run_op("Einsum", {floats({2}, {1, 2}), floats({3}, {1, 10, 100})}, {attr_string("equation", "i,j")})[0],
                     {2, 3}, {1, 10, 100, 2, 20, 200});
  // Broadcast of a size-1 "..." dim.
  expect_tensor_near(run_op("Einsum", {floats({1, 2}, {1, 2}), floats({3, 2}, {1, 1, 2, 2, 3, 3})},
                            {attr_string("equation", "...i,...i->...")})[0],
                     {3}, {3, 6, 9});
}

TEST(Einsum, BadEquationsNameTheNode) {
  const Tensor m = floats({2, 3}, {1, 2, 3, 4, 5, 6});
  for (const char* eq : {"ijk", "ij,jk", "ij->k", "i2", "ij->ii"}) {
    try {
      run_op("Einsum", {m}, {attr_string("equation", eq)});
      ADD_FAILURE() << eq << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("Einsum_test"), std::string::npos) << e.what();
    }
  }
  // A label whose dims differ (i is 2 in one input and 3 in the other).
  EXPECT_THROW(run_op("Einsum", {m, floats({3, 2}, {1, 2, 3, 4, 5, 6})}, {attr_string("equation", "ij,ij->i")}), Error);
}

}  // namespace
}  // namespace ptq
