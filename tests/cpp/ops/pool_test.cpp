#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "core/half.h"
#include "ops/conv_test_util.h"
#include "ops/op_test_util.h"

using namespace ptq;
using ptq::test::all_close;
using ptq::test::attr_float;
using ptq::test::attr_int;
using ptq::test::attr_ints;
using ptq::test::attr_string;
using ptq::test::expect_tensor_near;
using ptq::test::next_index;
using ptq::test::numel_of;
using ptq::test::random_floats;
using ptq::test::run_op;

namespace {

struct PoolCase {
  Shape x;
  std::vector<int64_t> kernel, strides, dilations, pads;
  bool ceil_mode = false, count_include_pad = false;

  size_t rank() const { return kernel.size(); }
  // Spec: floor/ceil((in + pads - span) / stride) + 1, and with ceil_mode the last window must start
  // before the right padding.
  std::vector<int64_t> out() const {
    std::vector<int64_t> o(rank());
    for (size_t i = 0; i < rank(); ++i) {
      const int64_t room = x[i + 2] + pads[i] + pads[i + rank()] - ((kernel[i] - 1) * dilations[i] + 1);
      o[i] = room / strides[i] + 1;
      if (ceil_mode && room % strides[i] != 0) ++o[i];
      if (ceil_mode && (o[i] - 1) * strides[i] >= x[i + 2] + pads[i]) --o[i];
    }
    return o;
  }
};

enum class Kind { Max, Avg };

std::vector<float> naive_pool(const PoolCase& pc, Kind kind, const std::vector<float>& x) {
  const size_t r = pc.rank();
  const std::vector<int64_t> in(pc.x.begin() + 2, pc.x.end()), out = pc.out();
  const int64_t planes = pc.x[0] * pc.x[1], in_size = numel_of(in);
  std::vector<float> y;
  for (int64_t p = 0; p < planes; ++p) {
    std::vector<int64_t> o(r, 0);
    do {
      double sum = 0;
      float best = std::numeric_limits<float>::lowest();
      int64_t valid = 0;
      std::vector<int64_t> k(r, 0);
      do {
        int64_t xi = 0;
        bool ok = true;
        for (size_t i = 0; i < r; ++i) {
          const int64_t q = o[i] * pc.strides[i] - pc.pads[i] + k[i] * pc.dilations[i];
          ok = ok && q >= 0 && q < in[i];
          xi = xi * in[i] + q;
        }
        if (!ok) continue;
        const float v = x[p * in_size + xi];
        sum += v;
        best = std::max(best, v);
        ++valid;
      } while (next_index(k, pc.kernel));
      const int64_t divisor = pc.count_include_pad ? numel_of(pc.kernel) : valid;
      y.push_back(kind == Kind::Max ? best : static_cast<float>(sum / divisor));
    } while (next_index(o, out));
  }
  return y;
}

std::vector<ir::Attribute> pool_attrs(const PoolCase& pc, Kind kind) {
  std::vector<ir::Attribute> a = {attr_ints("kernel_shape", pc.kernel), attr_ints("strides", pc.strides),
                                  attr_ints("dilations", pc.dilations), attr_ints("pads", pc.pads),
                                  attr_int("ceil_mode", pc.ceil_mode)};
  if (kind == Kind::Avg) a.push_back(attr_int("count_include_pad", pc.count_include_pad));
  return a;
}

std::vector<float> iota(int64_t n, float start = 1.0f) {
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = start + static_cast<float>(i);
  return v;
}

}  // namespace

TEST(Pool, CeilModeByHand) {
  // 4x4 input 1..16, kernel 3, stride 2, ceil_mode: windows start at rows/cols 0 and 2; the second
  // window only covers rows/cols 2..3.
  const Tensor x = Tensor::from_floats({1, 1, 4, 4}, iota(16));
  const std::vector<ir::Attribute> a = {attr_ints("kernel_shape", {3, 3}), attr_ints("strides", {2, 2}),
                                        attr_int("ceil_mode", 1)};
  expect_tensor_near(run_op("MaxPool", {x}, a)[0], {1, 1, 2, 2}, {11, 12, 15, 16});
  // Averages: mean(1,2,3,5,6,7,9,10,11) = 6; mean(3,4,7,8,11,12) = 7.5; mean(9..12,13..15) rows 2-3 = 12; 13.5.
  expect_tensor_near(run_op("AveragePool", {x}, a)[0], {1, 1, 2, 2}, {6, 7.5f, 12, 13.5f});
  // 1-D, in 5, kernel 1, stride 2, pad end 1: ceil gives 4 windows but the 4th would start at 6,
  // inside the right padding, so it is dropped -> x[0], x[2], x[4].
  const Tensor x1 = Tensor::from_floats({1, 1, 5}, {4, -1, 7, 0, -3});
  expect_tensor_near(run_op("MaxPool", {x1}, {attr_ints("kernel_shape", {1}), attr_ints("strides", {2}),
                                              attr_ints("pads", {0, 1}), attr_int("ceil_mode", 1)})[0],
                     {1, 1, 3}, {4, 7, -3});
}

TEST(Pool, AveragePoolPaddingDivisorByHand) {
  const Tensor ones = Tensor::from_floats({1, 1, 3, 3}, std::vector<float>(9, 1.0f));
  const std::vector<ir::Attribute> a = {attr_ints("kernel_shape", {3, 3}), attr_ints("pads", {1, 1, 1, 1})};
  expect_tensor_near(run_op("AveragePool", {ones}, a)[0], {1, 1, 3, 3}, std::vector<float>(9, 1.0f));
  auto with_pad = a;
  with_pad.push_back(attr_int("count_include_pad", 1));
  // Corners see 4 of 9 taps, edges 6, the centre 9.
  const float c = 4.0f / 9, e = 6.0f / 9;
  expect_tensor_near(run_op("AveragePool", {ones}, with_pad)[0], {1, 1, 3, 3}, {c, e, c, e, 1, e, c, e, c});
  // MaxPool pads act as -inf: an all-negative input keeps its values at the borders.
  const Tensor neg = Tensor::from_floats({1, 1, 1, 3}, {-5, -2, -9});
  expect_tensor_near(run_op("MaxPool", {neg}, {attr_ints("kernel_shape", {1, 3}), attr_ints("pads", {0, 1, 0, 1})})[0],
                     {1, 1, 1, 3}, {-2, -2, -2});
}

TEST(Pool, MaxPoolIndicesByHand) {
  // Two channels of [[1, 5, 2], [7, 3, 4]] (+10 on the second), kernel 2x2, stride 1:
  // window 0 max 7 at (1,0), window 1 max 5 at (0,1).
  std::vector<float> xv = {1, 5, 2, 7, 3, 4, 11, 15, 12, 17, 13, 14};
  const Tensor x = Tensor::from_floats({1, 2, 2, 3}, xv);
  auto out = run_op("MaxPool", {x}, {attr_ints("kernel_shape", {2, 2})}, 2, 12);
  expect_tensor_near(out[0], {1, 2, 1, 2}, {7, 5, 17, 15});
  ASSERT_EQ(out[1].dtype(), DType::Int64);
  // Row-major flat indices: (1,0) -> 3, (0,1) -> 1; the second channel is offset by H*W = 6.
  EXPECT_EQ(out[1].to_int64_vector(), (std::vector<int64_t>{3, 1, 9, 7}));
  out = run_op("MaxPool", {x}, {attr_ints("kernel_shape", {2, 2}), attr_int("storage_order", 1)}, 2, 12);
  // Column-major within the plane: w*H + h -> (1,0) -> 1, (0,1) -> 2.
  EXPECT_EQ(out[1].to_int64_vector(), (std::vector<int64_t>{1, 2, 7, 8}));
}

TEST(Pool, IntegerAndHalfMaxPool) {
  Tensor u(DType::UInt8, {1, 1, 1, 4});
  const uint8_t uv[] = {3, 250, 7, 9};
  std::copy(uv, uv + 4, u.mutable_data<uint8_t>());
  const Tensor yu = run_op("MaxPool", {u}, {attr_ints("kernel_shape", {1, 2}), attr_ints("strides", {1, 2})}, 1, 12)[0];
  ASSERT_EQ(yu.dtype(), DType::UInt8);
  EXPECT_EQ(yu.to_int64_vector(), (std::vector<int64_t>{250, 9}));
  Tensor s(DType::Int8, {1, 1, 1, 4});
  const int8_t sv[] = {-3, -100, -7, -9};
  std::copy(sv, sv + 4, s.mutable_data<int8_t>());
  const Tensor ys = run_op("MaxPool", {s}, {attr_ints("kernel_shape", {1, 2}), attr_ints("strides", {1, 2})}, 1, 12)[0];
  EXPECT_EQ(ys.to_int64_vector(), (std::vector<int64_t>{-3, -7}));
  Tensor h(DType::Float16, {1, 1, 1, 2});
  h.mutable_data<uint16_t>()[0] = float_to_half(-1.5f);
  h.mutable_data<uint16_t>()[1] = float_to_half(0.25f);
  const Tensor yh = run_op("MaxPool", {h}, {attr_ints("kernel_shape", {1, 2})})[0];
  EXPECT_EQ(yh.dtype(), DType::Float16);
  expect_tensor_near(yh, {1, 1, 1, 1}, {0.25f});
}

TEST(Pool, GlobalAndLpPoolsByHand) {
  const Tensor x = Tensor::from_floats({1, 2, 2, 2}, {1, 2, 3, 6, -1, -2, -3, -4});
  expect_tensor_near(run_op("GlobalAveragePool", {x})[0], {1, 2, 1, 1}, {3, -2.5f});
  expect_tensor_near(run_op("GlobalMaxPool", {x})[0], {1, 2, 1, 1}, {6, -1});
  // sqrt(1 + 4 + 9 + 36) = sqrt(50); sqrt(1 + 4 + 9 + 16) = sqrt(30).
  expect_tensor_near(run_op("GlobalLpPool", {x})[0], {1, 2, 1, 1}, {std::sqrt(50.0f), std::sqrt(30.0f)});
  // LpPool p=2 over [3, 4] -> 5; p=1 -> 7.
  const Tensor v = Tensor::from_floats({1, 1, 2}, {3, -4});
  expect_tensor_near(run_op("LpPool", {v}, {attr_ints("kernel_shape", {2})})[0], {1, 1, 1}, {5});
  expect_tensor_near(run_op("LpPool", {v}, {attr_ints("kernel_shape", {2}), attr_int("p", 1)})[0], {1, 1, 1}, {7});
}

// The mean of a large plane (an early squeeze-excitation block's 112x112 at 224x224 input) against
// the mean in double: within one float32 spacing of it (a float running sum is tens of spacings off).
TEST(Pool, GlobalAveragePoolOfALargePlaneIsWithinOneUlpOfTheExactMean) {
  constexpr int64_t kSide = 112;
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> dist(1.0f, 2.0f);
  std::vector<float> xv(2 * kSide * kSide);
  for (float& v : xv) v = dist(rng);
  const Tensor y = run_op("GlobalAveragePool", {Tensor::from_floats({1, 2, kSide, kSide}, xv)})[0];
  for (int64_t c = 0; c < 2; ++c) {
    double sum = 0;
    for (int64_t j = 0; j < kSide * kSide; ++j) sum += xv[static_cast<size_t>(c * kSide * kSide + j)];
    const double exact = sum / static_cast<double>(kSide * kSide);
    const double spacing = std::ldexp(1.0, std::ilogb(exact) - 23);
    EXPECT_LE(std::fabs(double(y.data<float>()[c]) - exact), spacing) << "channel " << c;
  }
}

TEST(Pool, AutoPadModes) {
  // in 7, kernel 4, stride 2: SAME out = 4, total pad = 3*2 + 4 - 7 = 3 -> UPPER [1, 2], LOWER [2, 1].
  std::mt19937 rng(6);
  const auto xv = random_floats(rng, 2 * 7);
  const Tensor x = Tensor::from_floats({1, 2, 7}, xv);
  struct Mode {
    const char* name;
    std::vector<int64_t> pads;
  };
  for (const Mode& m : {Mode{"SAME_UPPER", {1, 2}}, Mode{"SAME_LOWER", {2, 1}}, Mode{"VALID", {0, 0}}}) {
    PoolCase pc{{1, 2, 7}, {4}, {2}, {1}, m.pads};
    for (Kind kind : {Kind::Max, Kind::Avg}) {
      const Tensor y = run_op(kind == Kind::Max ? "MaxPool" : "AveragePool", {x},
                              {attr_string("auto_pad", m.name), attr_ints("kernel_shape", {4}), attr_ints("strides", {2})})[0];
      ASSERT_EQ(y.shape(), (Shape{1, 2, pc.out()[0]})) << m.name;
      EXPECT_TRUE(all_close(y.to_float_vector(), naive_pool(pc, kind, xv))) << m.name;
    }
  }
}

TEST(Pool, RandomConfigurationsMatchNaive) {
  std::mt19937 rng(31);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  for (int trial = 0; trial < 200; ++trial) {
    const size_t r = static_cast<size_t>(pick(1, 3));
    PoolCase pc;
    pc.x = {pick(1, 2), pick(1, 3)};
    pc.pads.assign(2 * r, 0);
    for (size_t i = 0; i < r; ++i) {
      pc.kernel.push_back(pick(1, 4));
      pc.strides.push_back(pick(1, 3));
      pc.dilations.push_back(pick(1, 2));
      pc.pads[i] = pick(0, pc.kernel.back() - 1);
      pc.pads[i + r] = pick(0, pc.kernel.back() - 1);
      const int64_t span = (pc.kernel.back() - 1) * pc.dilations.back() + 1;
      pc.x.push_back(std::max<int64_t>(1, span - pc.pads[i] - pc.pads[i + r]) + pick(0, r == 3 ? 4 : 9));
    }
    pc.ceil_mode = pick(0, 1);
    pc.count_include_pad = pick(0, 1);
    const auto xv = random_floats(rng, numel_of(pc.x));
    const Tensor x = Tensor::from_floats(pc.x, xv);
    Shape ys{pc.x[0], pc.x[1]};
    for (int64_t o : pc.out()) ys.push_back(o);
    for (Kind kind : {Kind::Max, Kind::Avg}) {
      const Tensor y = run_op(kind == Kind::Max ? "MaxPool" : "AveragePool", {x}, pool_attrs(pc, kind), 1, 19)[0];
      ASSERT_EQ(y.shape(), ys) << "trial " << trial;
      EXPECT_TRUE(all_close(y.to_float_vector(), naive_pool(pc, kind, xv)))
          << "trial " << trial << (kind == Kind::Max ? " max" : " avg") << " x" << shape_str(pc.x) << " k"
          << shape_str(pc.kernel) << " s" << shape_str(pc.strides) << " d" << shape_str(pc.dilations) << " p"
          << shape_str(pc.pads) << " ceil " << pc.ceil_mode << " cip " << pc.count_include_pad;
    }
  }
}

TEST(Pool, RejectsInvalidNodes) {
  const Tensor x = Tensor::from_floats({1, 1, 4, 4}, std::vector<float>(16, 1.0f));
  EXPECT_THROW(run_op("MaxPool", {x}), Error);  // kernel_shape is required
  EXPECT_THROW(run_op("MaxPool", {x}, {attr_ints("kernel_shape", {2})}), Error);
  // AveragePool gained dilations only in opset 19.
  EXPECT_THROW(run_op("AveragePool", {x}, {attr_ints("kernel_shape", {2, 2}), attr_ints("dilations", {2, 2})}, 1, 11),
               Error);
  EXPECT_THROW(run_op("AveragePool", {x}, {attr_ints("kernel_shape", {5, 5})}), Error);  // window > input
}

TEST(Pool, OnnxNodeTestData) {
  ptq::test::expect_node_cases({
      "test_averagepool_1d_default", "test_averagepool_2d_ceil", "test_averagepool_2d_default",
      "test_averagepool_2d_pads", "test_averagepool_2d_pads_count_include_pad",
      "test_averagepool_2d_precomputed_pads", "test_averagepool_2d_precomputed_pads_count_include_pad",
      "test_averagepool_2d_precomputed_same_upper", "test_averagepool_2d_precomputed_strides",
      "test_averagepool_2d_same_lower", "test_averagepool_2d_same_upper", "test_averagepool_2d_strides",
      "test_averagepool_3d_default", "test_maxpool_1d_default", "test_maxpool_2d_ceil", "test_maxpool_2d_default",
      "test_maxpool_2d_dilations", "test_maxpool_2d_pads", "test_maxpool_2d_precomputed_pads",
      "test_maxpool_2d_precomputed_same_upper", "test_maxpool_2d_precomputed_strides", "test_maxpool_2d_same_lower",
      "test_maxpool_2d_same_upper", "test_maxpool_2d_strides", "test_maxpool_2d_uint8", "test_maxpool_3d_default",
      "test_maxpool_with_argmax_2d_precomputed_pads", "test_maxpool_with_argmax_2d_precomputed_strides",
      "test_globalaveragepool", "test_globalaveragepool_precomputed", "test_globalmaxpool",
      "test_globalmaxpool_precomputed"});
}

TEST(Pool, MaxUnpoolScattersAtIndices) {
  // 1x1x2x2 input pooled from 4x4 with kernel 2, stride 2: values go to the flat indices of the
  // 4x4 result, the rest is zero; a larger output_shape holds that 4x4 in its leading corner.
  const Tensor x = Tensor::from_floats({1, 1, 2, 2}, {5, 6, 7, 8});
  const Tensor i = Tensor::from_int64s({1, 1, 2, 2}, {5, 2, 8, 15});
  const std::vector<ir::Attribute> attrs = {attr_ints("kernel_shape", {2, 2}), attr_ints("strides", {2, 2})};
  std::vector<float> expect(16, 0.0f);
  expect[5] = 5;
  expect[2] = 6;
  expect[8] = 7;
  expect[15] = 8;
  expect_tensor_near(run_op("MaxUnpool", {x, i}, attrs)[0], {1, 1, 4, 4}, expect);
  const Tensor big = run_op("MaxUnpool", {x, i, Tensor::from_int64s({4}, {1, 1, 5, 5})}, attrs)[0];
  EXPECT_EQ(big.shape(), (Shape{1, 1, 5, 5}));
  std::vector<float> corner(25, 0.0f);
  corner[6] = 5;   // (1, 1)
  corner[2] = 6;   // (0, 2)
  corner[10] = 7;  // (2, 0)
  corner[18] = 8;  // (3, 3)
  expect_tensor_near(big, {1, 1, 5, 5}, corner);
  EXPECT_THROW(run_op("MaxUnpool", {x, i, Tensor::from_int64s({4}, {1, 1, 3, 5})}, attrs), Error);  // too small
  EXPECT_THROW(run_op("MaxUnpool", {x, Tensor::from_int64s({1, 1, 2, 2}, {5, 2, 8, 16})}, attrs), Error);
  EXPECT_THROW(run_op("MaxUnpool", {x, i}), Error);  // kernel_shape is required
}
