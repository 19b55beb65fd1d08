// GridSample (opset 16; opset 20's mode names "linear" / "cubic" accepted) on [N, C, H, W] inputs:
// every output pixel reads X at the grid's normalised (x, y) in [-1, 1], with nearest, bilinear or
// bicubic (Keys, a = -0.75) interpolation and zeros, border or reflection padding, as onnxruntime
// and PyTorch compute it (in float32).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "exec/registry.h"
#include "ops/shape_util.h"

namespace ptq::exec {
namespace {

enum class Mode { Nearest, Linear, Cubic };
enum class Padding { Zeros, Border, Reflection };

// Reflects x into [lo, hi] by folding at the borders until it lands inside (x finite).
float reflect(float x, float lo, float hi) {
  const double range = static_cast<double>(hi) - lo;
  if (range <= 0) return lo;
  if (x >= lo && x <= hi) return x;
  const double dx = x < lo ? static_cast<double>(lo) - x : static_cast<double>(x) - hi;
  const bool even = std::fmod(std::floor(dx / range), 2.0) == 0.0;
  const double r = std::fmod(dx, range);
  const bool from_lo = (x < lo) == even;  // measured from lo after an even number of folds below
  return static_cast<float>(from_lo ? lo + r : hi - r);
}

void cubic_coeffs(float t, float c[4]) {
  constexpr float a = -0.75f;
  const float x0 = t + 1, x1 = t, x2 = 1 - t, x3 = 2 - t;
  c[0] = ((a * x0 - 5 * a) * x0 + 8 * a) * x0 - 4 * a;
  c[1] = ((a + 2) * x1 - (a + 3)) * x1 * x1 + 1;
  c[2] = ((a + 2) * x2 - (a + 3)) * x2 * x2 + 1;
  c[3] = ((a * x3 - 5 * a) * x3 + 8 * a) * x3 - 4 * a;
}

struct Sampler {
  const float* plane;  // one [H, W] channel
  int64_t h, w;
  Padding padding;
  bool align_corners;

  // The border range a coordinate is reflected into: pixel centres with align_corners, else edges.
  float lo(int64_t) const { return align_corners ? 0.0f : -0.5f; }
  float hi(int64_t dim) const { return align_corners ? static_cast<float>(dim - 1) : static_cast<float>(dim) - 0.5f; }

  // Index of a tap along a dim of `dim`, or -1 for a zero pixel.
  int64_t tap(int64_t i, int64_t dim) const {
    switch (padding) {
      case Padding::Zeros: return i >= 0 && i < dim ? i : -1;
      case Padding::Border: return std::clamp<int64_t>(i, 0, dim - 1);
      case Padding::Reflection:
        return std::clamp<int64_t>(static_cast<int64_t>(reflect(static_cast<float>(i), lo(dim), hi(dim))), 0, dim - 1);
    }
    return -1;
  }
  float pixel(int64_t y, int64_t x) const {
    const int64_t ty = tap(y, h), tx = tap(x, w);
    return ty < 0 || tx < 0 ? 0.0f : plane[ty * w + tx];
  }
};

float denormalize(float n, int64_t dim, bool align_corners) {
  return align_corners ? (n + 1) / 2.0f * static_cast<float>(dim - 1) : ((n + 1) * static_cast<float>(dim) - 1) / 2.0f;
}

// A sampling coordinate outside the border range is clamped (border) or reflected (reflection)
// before interpolation; zeros padding keeps it and lets the taps read zeros.
float pad_coordinate(const Sampler& s, float v, int64_t dim) {
  if (v >= s.lo(dim) && v <= s.hi(dim)) return v;
  if (s.padding == Padding::Border) return std::clamp(v, 0.0f, static_cast<float>(dim - 1));
  if (s.padding == Padding::Reflection) return reflect(v, s.lo(dim), s.hi(dim));
  return v;
}

float sample(const Sampler& s, Mode mode, float x, float y) {
  if (mode == Mode::Nearest) {
    x = std::nearbyint(x);
    y = std::nearbyint(y);
  }
  x = pad_coordinate(s, x, s.w);
  y = pad_coordinate(s, y, s.h);
  if (std::isnan(x) || std::isnan(y)) return std::numeric_limits<float>::quiet_NaN();
  // Far outside the input every tap reads zeros padding; bounding the coordinate keeps the integer
  // conversions below defined (border and reflection have already brought it inside).
  x = std::clamp(x, -static_cast<float>(s.w + 4), static_cast<float>(s.w + 4));
  y = std::clamp(y, -static_cast<float>(s.h + 4), static_cast<float>(s.h + 4));
  if (mode == Mode::Nearest) return s.pixel(static_cast<int64_t>(y), static_cast<int64_t>(x));
  const float fx = std::floor(x), fy = std::floor(y);
  const auto x0 = static_cast<int64_t>(fx), y0 = static_cast<int64_t>(fy);
  const float tx = x - fx, ty = y - fy;
  if (mode == Mode::Linear) {
    const float top = (1 - tx) * s.pixel(y0, x0) + tx * s.pixel(y0, x0 + 1);
    const float bottom = (1 - tx) * s.pixel(y0 + 1, x0) + tx * s.pixel(y0 + 1, x0 + 1);
    return (1 - ty) * top + ty * bottom;
  }
  float cx[4], cy[4];
  cubic_coeffs(tx, cx);
  cubic_coeffs(ty, cy);
  float acc = 0.0f;
  for (int64_t i = 0; i < 4; ++i) {
    float row = 0.0f;
    for (int64_t j = 0; j < 4; ++j) row += cx[j] * s.pixel(y0 - 1 + i, x0 - 1 + j);
    acc += cy[i] * row;
  }
  return acc;
}

void grid_sample(KernelContext& ctx) {
  const Tensor& x0 = ctx.required(0);
  const Tensor& grid0 = ctx.required(1);
  for (const Tensor* t : {&x0, &grid0})
    ctx.check(t->dtype() == DType::Float || t->dtype() == DType::Double || t->dtype() == DType::Float16 ||
                  t->dtype() == DType::BFloat16,
              "unsupported input dtype " + dtype_name(t->dtype()));
  ctx.check(x0.rank() == 4, "only 4-D inputs [N, C, H, W] are supported, got " + shape_str(x0.shape()));
  ctx.check(grid0.rank() == 4 && grid0.dim(0) == x0.dim(0) && grid0.dim(3) == 2,
            "grid must have shape [N, H_out, W_out, 2] with N = " + std::to_string(x0.dim(0)) + ", got " +
                shape_str(grid0.shape()));
  const std::string mode_s = ctx.node.attr_string("mode", ctx.opset() >= 20 ? "linear" : "bilinear");
  Mode mode;
  if (mode_s == "nearest") mode = Mode::Nearest;
  else if (mode_s == "bilinear" || (ctx.opset() >= 20 && mode_s == "linear")) mode = Mode::Linear;
  else if (mode_s == "bicubic" || (ctx.opset() >= 20 && mode_s == "cubic")) mode = Mode::Cubic;
  else ctx.fail("unsupported mode '" + mode_s + "'");
  const std::string pad_s = ctx.node.attr_string("padding_mode", "zeros");
  Padding padding;
  if (pad_s == "zeros") padding = Padding::Zeros;
  else if (pad_s == "border") padding = Padding::Border;
  else if (pad_s == "reflection") padding = Padding::Reflection;
  else ctx.fail("unsupported padding_mode '" + pad_s + "'");
  const int64_t align = ctx.node.attr_int("align_corners", 0);
  ctx.check(align == 0 || align == 1, "attribute 'align_corners' must be 0 or 1, got " + std::to_string(align));

  const Tensor x = x0.to_float(), grid = grid0.to_float();
  const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3);
  const int64_t ho = grid.dim(1), wo = grid.dim(2);
  Tensor y(DType::Float, {n, c, ho, wo});
  float* out = y.mutable_data<float>();
  const float* g = grid.data<float>();
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t ch = 0; ch < c; ++ch) {
      const Sampler s{x.data<float>() + (b * c + ch) * h * w, h, w, padding, align != 0};
      for (int64_t p = 0; p < ho * wo; ++p) {
        const float* gp = g + (b * ho * wo + p) * 2;
        const float sx = denormalize(gp[0], w, s.align_corners), sy = denormalize(gp[1], h, s.align_corners);
        out[(b * c + ch) * ho * wo + p] = h * w != 0 ? sample(s, mode, sx, sy) : 0.0f;
      }
    }
  }
  ctx.outputs[0] = x0.dtype() == DType::Float ? y : cast_tensor(y, x0.dtype());
}

}  // namespace

void register_grid_sample(OpRegistry& r) { r.add("", "GridSample", &grid_sample).meta("", "X grid"); }

}  // namespace ptq::exec
