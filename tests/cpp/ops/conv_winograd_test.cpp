// Winograd F(4x4, 3x3) and F(2x2, 3x3) against a direct convolution in double precision. The error is measured
// relative to sum |w * x| of each output (the scale of the rounding of any summation order), so the
// bound does not depend on cancellation in the data.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "exec/registry.h"
#include "ops/conv_test_util.h"
#include "ops/op_test_util.h"
#include "ops/conv_winograd.h"

namespace ptq {
namespace {

struct Case {
  int64_t C, M, H, W, pad_top, pad_left, pad_bottom, pad_right;
};

struct Reference {
  std::vector<double> y, scale;  // exact output and sum |w x| per output
};

Reference direct(const Case& k, int64_t out_h, int64_t out_w, const std::vector<float>& x, const std::vector<float>& w,
                 const std::vector<float>& b) {
  Reference r{std::vector<double>(static_cast<size_t>(k.M * out_h * out_w)), {}};
  r.scale.assign(r.y.size(), 0.0);
  for (int64_t m = 0; m < k.M; ++m)
    for (int64_t oy = 0; oy < out_h; ++oy)
      for (int64_t ox = 0; ox < out_w; ++ox) {
        double acc = b[static_cast<size_t>(m)], scale = std::fabs(acc);
        for (int64_t c = 0; c < k.C; ++c)
          for (int64_t ky = 0; ky < 3; ++ky)
            for (int64_t kx = 0; kx < 3; ++kx) {
              const int64_t iy = oy + ky - k.pad_top, ix = ox + kx - k.pad_left;
              if (iy < 0 || iy >= k.H || ix < 0 || ix >= k.W) continue;
              const double p = double(w[static_cast<size_t>(((m * k.C + c) * 3 + ky) * 3 + kx)]) *
                               x[static_cast<size_t>((c * k.H + iy) * k.W + ix)];
              acc += p;
              scale += std::fabs(p);
            }
        const size_t i = static_cast<size_t>((m * out_h + oy) * out_w + ox);
        r.y[i] = acc;
        r.scale[i] = scale;
      }
  return r;
}

// Largest |winograd - exact| / sum|w x| over the outputs.
double relative_error(ops::WinogradKind kind, const Case& k, uint32_t seed) {
  std::mt19937 rng(seed);
  const int64_t out_h = k.H + k.pad_top + k.pad_bottom - 2, out_w = k.W + k.pad_left + k.pad_right - 2;
  const std::vector<float> x = test::random_floats(rng, k.C * k.H * k.W);
  const std::vector<float> w = test::random_floats(rng, k.M * k.C * 9);
  const std::vector<float> b = test::random_floats(rng, k.M);
  std::vector<float> packed(ops::winograd_packed_size(kind, k.M, k.C));
  ops::winograd_pack_weights(kind, w.data(), k.M, k.C, packed.data());
  ops::Winograd3x3Shape s;
  s.C = k.C, s.M = k.M, s.H = k.H, s.W = k.W, s.out_h = out_h, s.out_w = out_w, s.pad_top = k.pad_top,
  s.pad_left = k.pad_left;
  // Canaries around the output catch writes outside the plane of partial tiles.
  const size_t n = static_cast<size_t>(k.M * out_h * out_w);
  std::vector<float> y(n + 8, 12345.0f);
  ops::winograd_conv3x3(kind, s, x.data(), packed.data(), b.data(), y.data() + 4);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(y[i], 12345.0f) << "write before the output";
    EXPECT_EQ(y[n + 4 + i], 12345.0f) << "write after the output";
  }
  const Reference ref = direct(k, out_h, out_w, x, w, b);
  double worst = 0;
  for (size_t i = 0; i < n; ++i) worst = std::max(worst, std::fabs(y[i + 4] - ref.y[i]) / ref.scale[i]);
  return worst;
}

const std::vector<Case> kCases = {
    {4, 4, 8, 8, 1, 1, 1, 1},        // whole tiles, "same" padding
    {5, 7, 11, 13, 1, 1, 1, 1},      // partial tiles at the right and bottom, odd channel counts
    {16, 12, 9, 30, 0, 0, 0, 0},     // no padding
    {6, 9, 10, 10, 0, 2, 1, 0},      // asymmetric padding
    {3, 4, 6, 6, 2, 2, 2, 2},        // padding wider than the kernel's overhang
    {8, 8, 130, 130, 1, 1, 1, 1},    // several blocks of tile rows
    {64, 80, 20, 20, 1, 1, 1, 1},    // channel counts of a detector head
    {24, 20, 7, 7, 1, 1, 1, 1},      // a 7x7 plane (ResNet's last stage), odd tile counts
};

TEST(ConvWinograd, F4x4MatchesDirectConvolution) {
  uint32_t seed = 1;
  for (const Case& k : kCases) {
    const double err = relative_error(ops::WinogradKind::F4x4, k, seed++);
    // F(4x4, 3x3) rounds in its transforms (coefficients up to 8): measured up to 3.3e-6 on these
    // cases, against ~1e-7 for im2col + GEMM; 64 float32 ulps bound it.
    EXPECT_LT(err, 64 * 1.1920929e-7) << "C=" << k.C << " M=" << k.M << " H=" << k.H << " W=" << k.W;
  }
}

TEST(ConvWinograd, F2x2MatchesDirectConvolution) {
  uint32_t seed = 101;
  for (const Case& k : kCases) {
    const double err = relative_error(ops::WinogradKind::F2x2, k, seed++);
    // F(2x2, 3x3)'s transforms have coefficients 0, ±1, ±1/2 only: measured up to 1.8e-7, like
    // im2col + GEMM.
    EXPECT_LT(err, 8 * 1.1920929e-7) << "C=" << k.C << " M=" << k.M << " H=" << k.H << " W=" << k.W;
  }
}

// Through the Conv kernel in the fastest mode: batch, groups, bias; then the same node and weights on
// smaller inputs (F(2x2), then im2col), so the cached packing must be rebuilt for each path (layout tag).
TEST(ConvWinograd, ConvKernelUsesItPerGroupAndRepacksWhenThePathChanges) {
  std::mt19937 rng(11);
  const int64_t group = 2, Cg = 4, Mg = 5;
  const std::vector<float> w = test::random_floats(rng, group * Mg * Cg * 9), b = test::random_floats(rng, group * Mg);
  const Tensor wt = Tensor::from_floats({group * Mg, Cg, 3, 3}, w), bt = Tensor::from_floats({group * Mg}, b);
  ir::Node node;
  node.name = "conv";
  node.op_type = "Conv";
  node.opset = 17;
  node.inputs = {0, 1, 2};
  node.outputs = {3};
  node.attributes = {test::attr_int("group", group), test::attr_ints("pads", {1, 1, 1, 1})};
  std::any prepared;
  const test::ScopedWinogradMode fastest(ops::WinogradMode::Fastest);
  for (const int64_t size : {13, 7, 2}) {  // 13x13: F(4x4) (16 tiles); 7x7: F(2x2); 2x2: im2col
    const int64_t batch = 2, plane = size * size;
    const std::vector<float> x = test::random_floats(rng, batch * group * Cg * plane);
    const Tensor xt = Tensor::from_floats({batch, group * Cg, size, size}, x);
    std::vector<const Tensor*> in{&xt, &wt, &bt};
    std::vector<Tensor> out(1);
    exec::KernelContext ctx{node, in, out, &prepared, {false, true, true}};
    exec::OpRegistry::global().find("", "Conv")(ctx);
    ASSERT_EQ(out[0].shape(), (Shape{batch, group * Mg, size, size}));
    const std::vector<float> y = out[0].to_float_vector();
    const Case k{Cg, Mg, size, size, 1, 1, 1, 1};
    for (int64_t n = 0; n < batch; ++n)
      for (int64_t g = 0; g < group; ++g) {
        const std::vector<float> xs(x.begin() + (n * group + g) * Cg * plane, x.begin() + (n * group + g + 1) * Cg * plane);
        const std::vector<float> ws(w.begin() + g * Mg * Cg * 9, w.begin() + (g + 1) * Mg * Cg * 9);
        const std::vector<float> bs(b.begin() + g * Mg, b.begin() + (g + 1) * Mg);
        const Reference ref = direct(k, size, size, xs, ws, bs);
        for (size_t i = 0; i < ref.y.size(); ++i) {
          const float got = y[static_cast<size_t>((n * group + g) * Mg * plane) + i];
          ASSERT_LE(std::fabs(got - ref.y[i]), 64 * 1.1920929e-7 * ref.scale[i]) << "size " << size << " n " << n << " g " << g;
        }
      }
  }
}

TEST(ConvWinograd, ChoosesTheVariantByModeAndPlaneSize) {
  auto spatial = [](int64_t k, int64_t stride, int64_t dilation, int64_t out) {
    ops::Spatial s;
    s.in = {out + 2, out + 2};
    s.out = {out, out};
    s.kernel = {k, k};
    s.stride = {stride, stride};
    s.dilation = {dilation, dilation};
    s.pad_begin = s.pad_end = {0, 0};
    return s;
  };
  using ops::WinogradKind;
  // Default (accurate) mode: no Winograd at all (its float error exceeds im2col + GEMM's).
  EXPECT_EQ(ops::winograd_mode(), ops::WinogradMode::Accurate);
  EXPECT_EQ(ops::winograd_kind(spatial(3, 1, 1, 56), 64, 64), WinogradKind::None);
  EXPECT_EQ(ops::winograd_kind(spatial(3, 1, 1, 7), 8, 8), WinogradKind::None);
  {
    // Fast: F(2x2) on every plane with at least 4 of its tiles, never F(4x4).
    const test::ScopedWinogradMode fast(ops::WinogradMode::Fast);
    EXPECT_EQ(ops::winograd_kind(spatial(3, 1, 1, 56), 64, 64), WinogradKind::F2x2);
    EXPECT_EQ(ops::winograd_kind(spatial(3, 1, 1, 16), 8, 8), WinogradKind::F2x2);
    EXPECT_EQ(ops::winograd_kind(spatial(3, 1, 1, 3), 8, 8), WinogradKind::F2x2);
    EXPECT_EQ(ops::winograd_kind(spatial(3, 1, 1, 2), 8, 8), WinogradKind::None);
    EXPECT_EQ(ops::winograd_kind(spatial(3, 2, 1, 16), 8, 8), WinogradKind::None);
  }
  const test::ScopedWinogradMode fastest(ops::WinogradMode::Fastest);
  EXPECT_EQ(ops::winograd_kind(spatial(3, 1, 1, 16), 8, 8), WinogradKind::F4x4);
  EXPECT_EQ(ops::winograd_kind(spatial(3, 1, 1, 13), 8, 8), WinogradKind::F4x4);  // 4 x 4 tiles of 4x4
  EXPECT_EQ(ops::winograd_kind(spatial(3, 1, 1, 12), 8, 8), WinogradKind::F2x2);  // 3 x 3 tiles: too few
  EXPECT_EQ(ops::winograd_kind(spatial(3, 1, 1, 7), 8, 8), WinogradKind::F2x2);
  EXPECT_EQ(ops::winograd_kind(spatial(3, 1, 1, 3), 8, 8), WinogradKind::F2x2);   // 2 x 2 tiles of 2x2
  EXPECT_EQ(ops::winograd_kind(spatial(3, 1, 1, 2), 8, 8), WinogradKind::None);   // one tile
  EXPECT_EQ(ops::winograd_kind(spatial(3, 2, 1, 16), 8, 8), WinogradKind::None);
  EXPECT_EQ(ops::winograd_kind(spatial(3, 1, 2, 16), 8, 8), WinogradKind::None);
  EXPECT_EQ(ops::winograd_kind(spatial(5, 1, 1, 16), 8, 8), WinogradKind::None);
  EXPECT_EQ(ops::winograd_kind(spatial(3, 1, 1, 16), 1, 8), WinogradKind::None);  // depthwise-like: its own path
}


// The modes by name (describe().convolution_modes, the CLI's --conv): the default first, each name
// parsed to its mode, anything else an error naming every valid name.
TEST(ConvWinograd, ModesAreNamedOnceWithTheDefaultFirst) {
  const auto& modes = ops::convolution_modes();
  ASSERT_EQ(modes.size(), 3u);
  EXPECT_EQ(std::string(modes[0].name), "accurate");
  EXPECT_EQ(modes[0].mode, ops::winograd_mode());  // the process default
  for (const ops::ConvolutionModeInfo& m : modes) {
    EXPECT_EQ(ops::parse_winograd_mode(m.name), m.mode) << m.name;
    EXPECT_FALSE(std::string(m.doc).empty()) << m.name;
  }
  try {
    ops::parse_winograd_mode("off");
    FAIL() << "'off' is not a mode";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'accurate', 'fast', 'fastest'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ptq
