#include <gtest/gtest.h>

#include <any>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "ops/conv_test_util.h"
#include "ops/op_test_util.h"

using namespace ptq;
using ptq::test::all_close;
using ptq::test::attr_float;
using ptq::test::attr_int;
using ptq::test::numel_of;
using ptq::test::random_floats;
using ptq::test::run_op;

namespace {

// numpy.matmul written out: promote 1-D operands, broadcast batch dims right-aligned.
std::vector<float> naive_matmul(Shape as, const std::vector<float>& a, Shape bs, const std::vector<float>& b,
                                Shape* out_shape) {
  const bool av = as.size() == 1, bv = bs.size() == 1;
  if (av) as.insert(as.begin(), 1);
  if (bv) bs.push_back(1);
  const int64_t M = as[as.size() - 2], K = as.back(), N = bs.back();
  const size_t ra = as.size() - 2, rb = bs.size() - 2, r = std::max(ra, rb);
  Shape batch(r);
  for (size_t i = 0; i < r; ++i) {
    const int64_t da = i + ra >= r ? as[i + ra - r] : 1, db = i + rb >= r ? bs[i + rb - r] : 1;
    batch[i] = da == 1 ? db : da;
  }
  *out_shape = batch;
  if (!av) out_shape->push_back(M);
  if (!bv) out_shape->push_back(N);
  std::vector<float> y;
  const int64_t total = numel_of(batch);
  for (int64_t t = 0; t < total; ++t) {
    // Unravel t over `batch`, then ravel into A's and B's own batch dims (size-1 dims stay at 0).
    int64_t rem = t, a_off = 0, b_off = 0, a_mul = 1, b_mul = 1;
    for (size_t i = r; i-- > 0;) {
      const int64_t idx = rem % batch[i];
      rem /= batch[i];
      if (i + ra >= r) {
        const int64_t d = as[i + ra - r];
        a_off += (d == 1 ? 0 : idx) * a_mul;
        a_mul *= d;
      }
      if (i + rb >= r) {
        const int64_t d = bs[i + rb - r];
        b_off += (d == 1 ? 0 : idx) * b_mul;
        b_mul *= d;
      }
    }
    for (int64_t m = 0; m < M; ++m) {
      for (int64_t n = 0; n < N; ++n) {
        double s = 0;
        for (int64_t k = 0; k < K; ++k) s += double(a[(a_off * M + m) * K + k]) * b[(b_off * K + k) * N + n];
        y.push_back(static_cast<float>(s));
      }
    }
  }
  return y;
}

// Runs a kernel with input 1 flagged as a graph constant and a `prepared` slot, like the executor.
Tensor run_with_constant_b(const std::string& op, const std::vector<Tensor>& inputs,
                           std::vector<ir::Attribute> attrs, std::any& prepared) {
  ir::Node node;
  node.name = op;
  node.op_type = op;
  node.opset = 13;
  node.attributes = std::move(attrs);
  std::vector<const Tensor*> in;
  std::vector<bool> constant;
  for (size_t i = 0; i < inputs.size(); ++i) {
    node.inputs.push_back(static_cast<int>(i));
    in.push_back(&inputs[i]);
    constant.push_back(i == 1);
  }
  node.outputs = {100};
  std::vector<Tensor> out(1);
  exec::KernelContext ctx{node, in, out, &prepared, constant};
  exec::OpRegistry::global().find("", op)(ctx);
  return out[0];
}

}  // namespace

TEST(MatMul, BroadcastingAndPromotionMatchNumpyRules) {
  std::mt19937 rng(1);
  const std::pair<Shape, Shape> cases[] = {
      {{3, 4}, {4, 5}},       {{2, 3, 4}, {4, 5}},       {{4}, {4, 5}},          {{3, 4}, {4}},
      {{4}, {4}},             {{2, 1, 3, 4}, {5, 4, 6}}, {{1, 3, 4}, {2, 4, 5}}, {{2, 3, 4}, {2, 4, 5}},
      {{3, 4}, {2, 4, 5}},    {{2, 3, 4}, {1, 4, 5}},    {{6}, {2, 3, 6, 2}},    {{2, 70, 300}, {300, 270}},
      {{0, 4}, {4, 5}},       {{3, 0}, {0, 5}},
  };
  for (const auto& [as, bs] : cases) {
    const auto a = random_floats(rng, numel_of(as)), b = random_floats(rng, numel_of(bs));
    Shape want_shape;
    const auto want = naive_matmul(as, a, bs, b, &want_shape);
    const Tensor y = run_op("MatMul", {Tensor::from_floats(as, a), Tensor::from_floats(bs, b)})[0];
    ASSERT_EQ(y.shape(), want_shape) << shape_str(as) << " x " << shape_str(bs);
    EXPECT_TRUE(all_close(y.to_float_vector(), want)) << shape_str(as) << " x " << shape_str(bs);
    std::any prepared;
    const Tensor yc = run_with_constant_b("MatMul", {Tensor::from_floats(as, a), Tensor::from_floats(bs, b)}, {}, prepared);
    EXPECT_TRUE(all_close(yc.to_float_vector(), want)) << "constant B: " << shape_str(as) << " x " << shape_str(bs);
  }
}

TEST(MatMul, HandComputed) {
  // [[1,2],[3,4]] x [[5,6],[7,8]] = [[19,22],[43,50]]; the vector case [1,2] x [[5,6],[7,8]] = [19,22].
  const Tensor b = Tensor::from_floats({2, 2}, {5, 6, 7, 8});
  ptq::test::expect_tensor_near(run_op("MatMul", {Tensor::from_floats({2, 2}, {1, 2, 3, 4}), b})[0], {2, 2},
                                {19, 22, 43, 50});
  ptq::test::expect_tensor_near(run_op("MatMul", {Tensor::from_floats({2}, {1, 2}), b})[0], {2}, {19, 22});
  EXPECT_THROW(run_op("MatMul", {Tensor::from_floats({2, 3}, std::vector<float>(6)), b}), Error);
  EXPECT_THROW(run_op("MatMul", {Tensor::from_floats({3, 2, 2}, std::vector<float>(12)),
                                 Tensor::from_floats({2, 2, 2}, std::vector<float>(8))}),
               Error);
}

TEST(Gemm, AttributesAndBiasBroadcastMatchNaive) {
  std::mt19937 rng(2);
  const int64_t M = 5, N = 11, K = 7;
  const std::vector<Shape> c_shapes = {{}, {N}, {1, N}, {M, 1}, {M, N}, {1}, {1, 1}};
  for (int trans = 0; trans < 4; ++trans) {
    const bool ta = trans & 1, tb = trans & 2;
    const Shape as = ta ? Shape{K, M} : Shape{M, K}, bs = tb ? Shape{N, K} : Shape{K, N};
    const auto a = random_floats(rng, M * K), b = random_floats(rng, K * N);
    for (size_t ci = 0; ci <= c_shapes.size(); ++ci) {
      const bool has_c = ci < c_shapes.size();
      const Shape cs = has_c ? c_shapes[ci] : Shape{};
      const auto c = random_floats(rng, numel_of(cs));
      const float alpha = 0.75f, beta = -1.5f;
      std::vector<float> want(static_cast<size_t>(M * N));
      for (int64_t i = 0; i < M; ++i) {
        for (int64_t j = 0; j < N; ++j) {
          double s = 0;
          for (int64_t k = 0; k < K; ++k) s += double(ta ? a[k * M + i] : a[i * K + k]) * (tb ? b[j * K + k] : b[k * N + j]);
          double cv = 0;
          if (has_c) {
            const int64_t rows = cs.size() == 2 ? cs[0] : 1, cols = cs.empty() ? 1 : cs.back();
            cv = c[(rows == 1 ? 0 : i) * cols + (cols == 1 ? 0 : j)];
          }
          want[i * N + j] = static_cast<float>(alpha * s + beta * cv);
        }
      }
      std::vector<Tensor> inputs{Tensor::from_floats(as, a), Tensor::from_floats(bs, b)};
      if (has_c) inputs.push_back(Tensor::from_floats(cs, c));
      const std::vector<ir::Attribute> attrs{attr_int("transA", ta), attr_int("transB", tb), attr_float("alpha", alpha),
                                             attr_float("beta", beta)};
      const Tensor y = run_op("Gemm", inputs, attrs)[0];
      ASSERT_EQ(y.shape(), (Shape{M, N}));
      EXPECT_TRUE(all_close(y.to_float_vector(), want)) << "trans " << trans << " C " << shape_str(cs);
      std::any prepared;
      EXPECT_TRUE(all_close(run_with_constant_b("Gemm", inputs, attrs, prepared).to_float_vector(), want));
    }
  }
}

TEST(Gemm, LinearLayerShapeWithCachedWeights) {
  // PyTorch Linear export: transB=1, B = [out, in]; a second run reuses the packed weights.
  std::mt19937 rng(8);
  const int64_t M = 3, K = 300, N = 270;
  const auto a = random_floats(rng, M * K), b = random_floats(rng, N * K), c = random_floats(rng, N);
  std::vector<float> want(static_cast<size_t>(M * N));
  for (int64_t i = 0; i < M; ++i) {
    for (int64_t j = 0; j < N; ++j) {
      double s = c[j];
      for (int64_t k = 0; k < K; ++k) s += double(a[i * K + k]) * b[j * K + k];
      want[i * N + j] = static_cast<float>(s);
    }
  }
  const std::vector<Tensor> inputs{Tensor::from_floats({M, K}, a), Tensor::from_floats({N, K}, b),
                                   Tensor::from_floats({N}, c)};
  std::any prepared;
  for (int run = 0; run < 2; ++run) {
    EXPECT_TRUE(all_close(run_with_constant_b("Gemm", inputs, {attr_int("transB", 1)}, prepared).to_float_vector(), want));
  }
}

TEST(Gemm, ZeroBetaIgnoresNonFiniteC) {
  const Tensor a = Tensor::from_floats({1, 2}, {1, 2}), b = Tensor::from_floats({2, 1}, {3, 4});
  const Tensor c = Tensor::from_floats({1, 1}, {std::numeric_limits<float>::infinity()});
  ptq::test::expect_tensor_near(run_op("Gemm", {a, b, c}, {attr_float("beta", 0.0f)})[0], {1, 1}, {11});
  EXPECT_THROW(run_op("Gemm", {a, b, Tensor::from_floats({2}, {1, 2})}), Error);  // C [2] vs N = 1
}

TEST(MatMul, OnnxNodeTestData) {
  ptq::test::expect_node_cases({"test_matmul_2d", "test_matmul_3d", "test_matmul_4d"});
}

TEST(Gemm, OnnxNodeTestData) {
  ptq::test::expect_node_cases({"test_gemm_all_attributes", "test_gemm_alpha", "test_gemm_beta",
                                "test_gemm_default_matrix_bias", "test_gemm_default_no_bias",
                                "test_gemm_default_scalar_bias", "test_gemm_default_single_elem_vector_bias",
                                "test_gemm_default_vector_bias", "test_gemm_default_zero_bias",
                                "test_gemm_transposeA", "test_gemm_transposeB"});
}
