// Resize (opset 10, 11, 13, 18, 19), Upsample (opset 7, 9) and Horizon HzResize11 (= Resize-11).
//
// Every axis gets a tap table: for each output index, which input indices it reads and with which
// weights (1 tap for nearest, 2 for linear, 4 for cubic) or "outside" (tf_crop_and_resize
// extrapolation). Nearest is then a gather by element size (any dtype); linear and cubic are
// separable float passes, innermost axis first like onnxruntime's bicubic. Coordinates are computed
// in float32 with onnxruntime's formulas (upsamplebase.h), so exact .5 ties pick the same pixel as
// onnxruntime rather than the float64 reference implementation.
//
// Deliberate choices: an axis whose scale is exactly 1 maps output i to input i (as onnxruntime
// does) except under tf_crop_and_resize, where the roi is still applied as the spec says; antialias
// (opset 18) is rejected; linear/cubic need a floating-point input (float16/bfloat16/double are
// computed in float32 and converted back).
#include <algorithm>
#include <array>
#include <cmath>

#include "core/size.h"
#include "exec/registry.h"
#include "ops/shape_util.h"
#include "ops/movement_util.h"

namespace ptq::exec {
namespace {

using movement::dense_strides;

enum class Mode { Nearest, Linear, Cubic };
enum class Coord { HalfPixel, PytorchHalfPixel, AlignCorners, Asymmetric, TfHalfPixelForNN, TfCropAndResize, HalfPixelSymmetric };
// Simple: Resize-10 / Upsample rule (ceil when downsampling, truncate when upsampling).
enum class Nearest { Simple, RoundPreferFloor, RoundPreferCeil, Floor, Ceil };

struct Config {
  Mode mode = Mode::Nearest;
  Coord coord = Coord::Asymmetric;
  Nearest nearest = Nearest::Simple;
  float cubic_a = -0.75f;
  bool exclude_outside = false;
  float extrapolation = 0.0f;
};

template <class E>
E lookup(const KernelContext& ctx, const char* attr, const std::string& value,
         std::initializer_list<std::pair<const char*, E>> table) {
  for (const auto& [name, e] : table) {
    if (value == name) return e;
  }
  ctx.fail("unsupported " + std::string(attr) + " '" + value + "'");
}

// `version`: the operator version whose inputs/attributes apply (Upsample 7/9, Resize 10+).
Config read_config(const KernelContext& ctx, int version) {
  Config c;
  const std::string mode = ctx.node.attr_string("mode", "nearest");
  c.mode = version >= 11 ? lookup<Mode>(ctx, "mode", mode, {{"nearest", Mode::Nearest}, {"linear", Mode::Linear}, {"cubic", Mode::Cubic}})
                         : lookup<Mode>(ctx, "mode", mode, {{"nearest", Mode::Nearest}, {"linear", Mode::Linear}});
  if (version < 11) return c;  // asymmetric coordinates and the "simple" nearest rule
  c.coord = lookup<Coord>(ctx, "coordinate_transformation_mode", ctx.node.attr_string("coordinate_transformation_mode", "half_pixel"),
                   {{"half_pixel", Coord::HalfPixel},
                    {"pytorch_half_pixel", Coord::PytorchHalfPixel},
                    {"align_corners", Coord::AlignCorners},
                    {"asymmetric", Coord::Asymmetric},
                    {"tf_half_pixel_for_nn", Coord::TfHalfPixelForNN},
                    {"tf_crop_and_resize", Coord::TfCropAndResize},
                    {"half_pixel_symmetric", Coord::HalfPixelSymmetric}});
  c.nearest = lookup<Nearest>(ctx, "nearest_mode", ctx.node.attr_string("nearest_mode", "round_prefer_floor"),
                     {{"round_prefer_floor", Nearest::RoundPreferFloor},
                      {"round_prefer_ceil", Nearest::RoundPreferCeil},
                      {"floor", Nearest::Floor},
                      {"ceil", Nearest::Ceil}});
  c.cubic_a = ctx.node.attr_float("cubic_coeff_a", -0.75f);
  c.exclude_outside = ctx.node.attr_int("exclude_outside", 0) != 0;
  c.extrapolation = ctx.node.attr_float("extrapolation_value", 0.0f);
  if (version >= 18) ctx.check(ctx.node.attr_int("antialias", 0) == 0, "antialias=1 is not supported");
  return c;
}

struct Plan {
  Shape out;
  std::vector<float> scales;  // per axis, the scale the coordinate math uses
  // Per axis, the "length_resized" of the coordinate formulas: the output size when `sizes` is
  // given, scale * input size (not truncated) when `scales` is — the ONNX reference's reading
  // (onnx/onnx#2462); onnxruntime uses the truncated size, which differs for align_corners,
  // pytorch_half_pixel and tf_crop_and_resize whenever scale * size is not an integer.
  std::vector<float> lengths;
  std::vector<float> roi;     // [start_0..start_{r-1}, end_0..end_{r-1}]
};

// A float output length as int64: truncated like onnxruntime, after checking it fits (the
// conversion of a float beyond int64 is undefined).
int64_t output_length(float length, size_t axis) {
  if (!(length < 9.0e18f))
    throw SizeError("Resize output size " + std::to_string(length) + " on axis " + std::to_string(axis) +
                    " overflows 64-bit arithmetic");
  return static_cast<int64_t>(length);
}

Plan plan_output(const KernelContext& ctx, const Tensor& x, int version, const Config& c) {
  const size_t rank = x.rank();
  std::vector<float> scales, roi;
  std::vector<int64_t> sizes;
  auto floats_of = [](const Tensor* t) { return t && t->numel() ? t->to_float_vector() : std::vector<float>{}; };
  if (version < 9) {
    scales = ctx.node.attr_floats("scales");
  } else if (version < 11) {
    scales = ctx.required(1).to_float_vector();
  } else {
    roi = floats_of(ctx.input(1));
    scales = floats_of(ctx.input(2));
    if (ctx.input(3) && ctx.input(3)->numel()) sizes = ctx.input(3)->to_int64_vector();
  }
  ctx.check(scales.empty() != sizes.empty(), "exactly one of scales and sizes must be given");
  std::vector<int64_t> axes;
  if (version >= 18) {
    for (int64_t a : ctx.node.attr_ints("axes")) {
      axes.push_back(movement::normalize_axis(ctx, a, static_cast<int64_t>(rank), "axes entry"));
    }
  }
  if (axes.empty()) {
    for (size_t d = 0; d < rank; ++d) axes.push_back(static_cast<int64_t>(d));
  }
  const size_t n = axes.size();
  Plan p;
  p.out = x.shape();
  p.scales.assign(rank, 1.0f);
  p.lengths.resize(rank);
  for (size_t d = 0; d < rank; ++d) p.lengths[d] = static_cast<float>(x.dim(d));
  if (!sizes.empty()) {
    ctx.check(sizes.size() == n, "sizes has " + std::to_string(sizes.size()) + " entries, expected " + std::to_string(n));
    for (size_t i = 0; i < n; ++i) {
      const size_t d = static_cast<size_t>(axes[i]);
      ctx.check(sizes[i] >= 0, "negative size " + std::to_string(sizes[i]));
      ctx.check(x.dim(d) > 0 || sizes[i] == 0, "cannot resize an empty axis to a non-zero size");
      p.out[d] = sizes[i];
      p.scales[d] = x.dim(d) == 0 ? 1.0f : static_cast<float>(sizes[i]) / static_cast<float>(x.dim(d));
      p.lengths[d] = static_cast<float>(sizes[i]);
    }
    const std::string policy = version >= 18 ? ctx.node.attr_string("keep_aspect_ratio_policy", "stretch") : "stretch";
    if (policy != "stretch") {
      ctx.check(policy == "not_larger" || policy == "not_smaller", "unsupported keep_aspect_ratio_policy '" + policy + "'");
      float s = p.scales[static_cast<size_t>(axes[0])];
      for (int64_t a : axes) {
        const float v = p.scales[static_cast<size_t>(a)];
        s = policy == "not_larger" ? std::min(s, v) : std::max(s, v);
      }
      for (int64_t a : axes) {
        const size_t d = static_cast<size_t>(a);
        p.scales[d] = s;
        p.out[d] = output_length(std::round(s * static_cast<float>(x.dim(d))), d);  // round half up
        p.lengths[d] = static_cast<float>(p.out[d]);
      }
    }
  } else {
    ctx.check(scales.size() == n, "scales has " + std::to_string(scales.size()) + " entries, expected " + std::to_string(n));
    for (size_t i = 0; i < n; ++i) {
      const size_t d = static_cast<size_t>(axes[i]);
      ctx.check(scales[i] > 0.0f && std::isfinite(scales[i]), "scales must be positive, got " + std::to_string(scales[i]));
      p.scales[d] = scales[i];
      // float32 product, truncated, as onnxruntime computes the output size.
      p.lengths[d] = scales[i] * static_cast<float>(x.dim(d));
      p.out[d] = output_length(p.lengths[d], d);
    }
  }
  p.roi.assign(rank, 0.0f);
  p.roi.resize(2 * rank, 1.0f);
  if (c.coord == Coord::TfCropAndResize) {
    ctx.check(roi.size() == 2 * n, "tf_crop_and_resize needs roi with " + std::to_string(2 * n) + " values");
    for (size_t i = 0; i < n; ++i) {
      p.roi[static_cast<size_t>(axes[i])] = roi[i];
      p.roi[rank + static_cast<size_t>(axes[i])] = roi[n + i];
    }
  }
  return p;
}

// Output coordinate -> input coordinate, in float32 exactly as onnxruntime evaluates it. out_len is
// the length_resized of the formulas (see Plan::lengths), out_int the actual output size.
float original_coordinate(Coord c, float x, float scale, float out_len, float out_int, float in_len, float roi_start,
                          float roi_end) {
  switch (c) {
    case Coord::Asymmetric: return x / scale;
    case Coord::PytorchHalfPixel: return out_len > 1 ? (x + 0.5f) / scale - 0.5f : 0.0f;
    case Coord::TfHalfPixelForNN: return (x + 0.5f) / scale;
    case Coord::AlignCorners: return out_len == 1 ? 0.0f : x * (in_len - 1) / (out_len - 1);
    case Coord::TfCropAndResize:
      return out_len > 1 ? roi_start * (in_len - 1) + (x * (roi_end - roi_start) * (in_len - 1)) / (out_len - 1)
                         : static_cast<float>(0.5 * (roi_start + roi_end) * (in_len - 1));
    case Coord::HalfPixelSymmetric: {
      const float output_width = scale * in_len;
      const float adjustment = out_int / output_width;
      const float center = in_len / 2;
      const float offset = center * (1 - adjustment);
      return static_cast<float>(offset + (x + 0.5) / scale - 0.5);
    }
    case Coord::HalfPixel: break;
  }
  return (x + 0.5f) / scale - 0.5f;
}

int64_t nearest_index(Nearest m, float x, bool downsample) {
  switch (m) {
    case Nearest::Simple: return static_cast<int64_t>(downsample ? std::ceil(x) : x);
    case Nearest::RoundPreferCeil: return static_cast<int64_t>(std::round(x));
    case Nearest::Floor: return static_cast<int64_t>(std::floor(x));
    case Nearest::Ceil: return static_cast<int64_t>(std::ceil(x));
    case Nearest::RoundPreferFloor: break;
  }
  // onnxruntime's tie test; std::round otherwise (ties away from zero, which matters below 0).
  if (x == static_cast<float>(static_cast<int64_t>(x)) + 0.5f) return static_cast<int64_t>(std::floor(x));
  return static_cast<int64_t>(std::round(x));
}

std::array<float, 4> cubic_coeffs(float s, float a) {
  const float t = 1 - s;
  return {((a * (s + 1) - 5 * a) * (s + 1) + 8 * a) * (s + 1) - 4 * a,
          ((a + 2) * s - (a + 3)) * s * s + 1,
          ((a + 2) * t - (a + 3)) * t * t + 1,
          ((a * (t + 1) - 5 * a) * (t + 1) + 8 * a) * (t + 1) - 4 * a};
}

struct Taps {
  int64_t in_len = 0, out_len = 0;
  int k = 1;
  std::vector<int64_t> idx;      // out_len * k input indices, clamped to [0, in_len)
  std::vector<float> w;          // out_len * k weights (unused for nearest)
  std::vector<uint8_t> outside;  // out_len flags: the output takes extrapolation_value
  bool identity = false;         // output i reads exactly input i
};

Taps build_taps(const Config& c, int64_t in_len, int64_t out_len, float length_resized, float scale, float roi_start,
                float roi_end) {
  Taps t;
  t.in_len = in_len;
  t.out_len = out_len;
  t.k = c.mode == Mode::Nearest ? 1 : c.mode == Mode::Linear ? 2 : 4;
  const size_t k = static_cast<size_t>(t.k);
  const char* what = "the Resize tap table of an axis";
  t.idx.assign(allocation_count(out_len, t.k, sizeof(int64_t), what), 0);
  t.w.assign(allocation_count(out_len, t.k, sizeof(float), what), 0.0f);
  t.outside.assign(allocation_count(out_len, 1, what), 0);
  const bool unit = scale == 1.0f && c.coord != Coord::TfCropAndResize;
  const float in_f = static_cast<float>(in_len), last = static_cast<float>(in_len - 1);
  for (int64_t o = 0; o < out_len; ++o) {
    const size_t base = static_cast<size_t>(o) * k;
    const float x = unit ? static_cast<float>(o)
                         : original_coordinate(c.coord, static_cast<float>(o), scale, length_resized,
                                               static_cast<float>(out_len), in_f, roi_start, roi_end);
    if (c.coord == Coord::TfCropAndResize && !(x >= 0 && x <= last)) {
      t.outside[static_cast<size_t>(o)] = 1;
      continue;
    }
    if (c.mode == Mode::Nearest) {
      // Clamping x to [-1, in] first keeps the float->int conversion defined and cannot change the
      // clamped index.
      const float xc = std::isnan(x) ? 0.0f : std::clamp(x, -1.0f, in_f);
      t.idx[base] = std::clamp<int64_t>(nearest_index(c.nearest, xc, scale < 1.0f), 0, in_len - 1);
      t.w[base] = 1.0f;
    } else if (c.mode == Mode::Linear) {
      const float xc = std::isnan(x) ? 0.0f : std::clamp(x, 0.0f, last);
      const int64_t x1 = std::min(static_cast<int64_t>(xc), in_len - 1);
      const int64_t x2 = std::min(x1 + 1, in_len - 1);
      t.idx[base] = x1;
      t.idx[base + 1] = x2;
      // onnxruntime: weight of x1 is |x - x2|, of x2 is |x - x1|; 0.5 each at the last pixel.
      t.w[base] = x1 == x2 ? 0.5f : std::fabs(xc - static_cast<float>(x2));
      t.w[base + 1] = x1 == x2 ? 0.5f : std::fabs(xc - static_cast<float>(x1));
    } else {
      const float xc = std::isnan(x) ? 0.0f : std::clamp(x, -2.0f, in_f + 1.0f);
      const float fl = std::floor(xc);
      const std::array<float, 4> coeff = cubic_coeffs(xc - fl, c.cubic_a);
      const int64_t start = static_cast<int64_t>(fl) - 1;
      float sum = 0.0f;
      for (size_t j = 0; j < 4; ++j) {
        const int64_t i = start + static_cast<int64_t>(j);
        const bool out_of_range = i < 0 || i >= in_len;
        t.idx[base + j] = std::clamp<int64_t>(i, 0, in_len - 1);
        t.w[base + j] = c.exclude_outside && out_of_range ? 0.0f : coeff[j];
        sum += t.w[base + j];
      }
      if (c.exclude_outside) {
        for (size_t j = 0; j < 4; ++j) t.w[base + j] /= sum;
      }
    }
  }
  // Identity axes (scale 1, or a trivial roi) are skipped by every path.
  t.identity = in_len == out_len;
  for (int64_t o = 0; o < out_len && t.identity; ++o) {
    float on = 0.0f, off = 0.0f;
    for (size_t j = 0; j < k; ++j) {
      const size_t at = static_cast<size_t>(o) * k + j;
      (t.idx[at] == o ? on : off) += std::fabs(t.w[at]);
    }
    t.identity = !t.outside[static_cast<size_t>(o)] && on == 1.0f && off == 0.0f;
  }
  return t;
}

// Integer-factor nearest upsampling where output i reads input i / f on every axis (what PyTorch's
// nn.Upsample(nearest) exports as asymmetric + floor): replicate elements, then whole rows/planes.
template <class T>
void replicate(const T* in, T* out, const Shape& in_shape, const std::vector<int64_t>& factor, size_t d) {
  const size_t last = in_shape.size() - 1;
  if (d == last) {
    const int64_t f = factor[d];
    if (f == 1) {
      std::memcpy(out, in, static_cast<size_t>(in_shape[d]) * sizeof(T));
      return;
    }
    for (int64_t i = 0; i < in_shape[d]; ++i, out += f) std::fill_n(out, f, in[i]);
    return;
  }
  int64_t in_block = 1, out_block = 1;
  for (size_t e = d + 1; e < in_shape.size(); ++e) {
    in_block *= in_shape[e];
    out_block *= in_shape[e] * factor[e];
  }
  for (int64_t i = 0; i < in_shape[d]; ++i) {
    replicate(in + i * in_block, out, in_shape, factor, d + 1);
    for (int64_t r = 1; r < factor[d]; ++r) {
      std::memcpy(out + r * out_block, out, static_cast<size_t>(out_block) * sizeof(T));
    }
    out += factor[d] * out_block;
  }
}

bool integer_upsample(const std::vector<Taps>& taps, std::vector<int64_t>& factor) {
  for (const Taps& t : taps) {
    if (t.in_len == 0 || t.out_len % t.in_len != 0) return false;
    const int64_t f = t.out_len / t.in_len;
    for (int64_t o = 0; o < t.out_len; ++o) {
      if (t.outside[static_cast<size_t>(o)] || t.idx[static_cast<size_t>(o)] != o / f) return false;
    }
    factor.push_back(f);
  }
  return true;
}

// Nearest: a gather by element size; rows whose outer coordinate is "outside" take `ext`.
template <class T>
void nearest_gather(const T* src, T* dst, const Shape& in_shape, const Shape& out_shape,
                    const std::vector<Taps>& taps, T ext) {
  const size_t rank = out_shape.size();
  const std::vector<int64_t> strides = dense_strides(in_shape);
  const size_t last = rank - 1;
  const Taps& row = taps[last];
  const int64_t out_len = out_shape[last];
  const int64_t rows = out_len ? shape_numel(out_shape) / out_len : 0;
  std::vector<int64_t> pos(rank, 0);
  for (int64_t r = 0; r < rows; ++r, dst += out_len) {
    int64_t base = 0;
    bool outside = false;
    for (size_t d = 0; d < last; ++d) {
      const size_t o = static_cast<size_t>(pos[d]);
      outside = outside || taps[d].outside[o];
      base += taps[d].idx[o] * strides[d];
    }
    if (outside) {
      std::fill_n(dst, out_len, ext);
    } else {
      const T* in_row = src + base;
      for (int64_t o = 0; o < out_len; ++o) {
        dst[o] = row.outside[static_cast<size_t>(o)] ? ext : in_row[row.idx[static_cast<size_t>(o)]];
      }
    }
    for (size_t d = last; d-- > 0;) {
      if (++pos[d] < out_shape[d]) break;
      pos[d] = 0;
    }
  }
}

Tensor resize_nearest(const Tensor& x, const Shape& out_shape, const std::vector<Taps>& taps, float extrapolation) {
  Tensor out(x.dtype(), out_shape);
  if (out.numel() == 0) return out;
  const Tensor ext = cast_tensor(Tensor::from_floats({1}, {extrapolation}), x.dtype());
  std::vector<int64_t> factor;
  const bool fast = integer_upsample(taps, factor);
  movement::with_element_type(dtype_size(x.dtype()), [&](auto tag) {
    using T = decltype(tag);
    if (fast) {
      replicate(x.data<T>(), out.mutable_data<T>(), x.shape(), factor, 0);
    } else {
      nearest_gather(x.data<T>(), out.mutable_data<T>(), x.shape(), out_shape, taps, ext.data<T>()[0]);
    }
  });
  return out;
}

// One separable pass: resample float tensor `in` along `axis` with the axis' taps.
Tensor resample_axis(const Tensor& in, size_t axis, const Taps& t) {
  Shape shape = in.shape();
  shape[axis] = t.out_len;
  Tensor out = Tensor::zeros(DType::Float, shape);
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (d < axis) outer *= shape[d];
    if (d > axis) inner *= shape[d];
  }
  const float* src = in.data<float>();
  float* dst = out.mutable_data<float>();
  const size_t k = static_cast<size_t>(t.k);
  for (int64_t o = 0; o < outer; ++o) {
    const float* plane = src + o * t.in_len * inner;
    for (int64_t j = 0; j < t.out_len; ++j, dst += inner) {
      if (t.outside[static_cast<size_t>(j)]) continue;  // filled by the extrapolation pass
      for (size_t tap = 0; tap < k; ++tap) {
        const size_t at = static_cast<size_t>(j) * k + tap;
        const float w = t.w[at];
        const float* s = plane + t.idx[at] * inner;
        for (int64_t i = 0; i < inner; ++i) dst[i] += w * s[i];
      }
    }
  }
  return out;
}

// tf_crop_and_resize: any output whose coordinate on some axis lies outside the input takes the
// extrapolation value exactly (not a blend of it).
void fill_outside(Tensor& out, const std::vector<Taps>& taps, float value) {
  const Shape& shape = out.shape();
  const std::vector<int64_t> strides = dense_strides(shape);
  for (size_t d = 0; d < taps.size(); ++d) {
    int64_t outer = 1;
    for (size_t e = 0; e < d; ++e) outer *= shape[e];
    const int64_t inner = strides[d];
    for (int64_t j = 0; j < shape[d]; ++j) {
      if (!taps[d].outside[static_cast<size_t>(j)]) continue;
      for (int64_t o = 0; o < outer; ++o) {
        std::fill_n(out.mutable_data<float>() + (o * shape[d] + j) * inner, inner, value);
      }
    }
  }
}

void resize_impl(KernelContext& ctx, int version) {
  const Tensor& x = ctx.required(0);
  ctx.check(x.rank() > 0, "input must have rank >= 1");
  const Config c = read_config(ctx, version);
  const Plan p = plan_output(ctx, x, version, c);
  const size_t rank = x.rank();
  // The output must fit before the per-axis tables are built (SizeError naming the shape).
  if (const int64_t n = shape_numel(p.out); n > 0) {
    const std::string what = "the Resize output of shape " + shape_str(p.out);
    allocation_count(n, dtype_size(x.dtype()), what.c_str());
  }
  std::vector<Taps> taps;
  bool all_identity = true;
  for (size_t d = 0; d < rank; ++d) {
    taps.push_back(build_taps(c, x.dim(d), p.out[d], p.lengths[d], p.scales[d], p.roi[d], p.roi[rank + d]));
    all_identity = all_identity && taps.back().identity;
  }
  if (all_identity) {
    ctx.outputs[0] = x;
    return;
  }
  if (c.mode == Mode::Nearest) {
    ctx.outputs[0] = resize_nearest(x, p.out, taps, c.extrapolation);
    return;
  }
  const DType dt = x.dtype();
  ctx.check(dt == DType::Float || dt == DType::Float16 || dt == DType::BFloat16 || dt == DType::Double,
            "mode linear/cubic needs a floating-point input, got " + dtype_name(dt));
  Tensor y = x.to_float();
  for (size_t d = rank; d-- > 0;) {
    if (!taps[d].identity) y = resample_axis(y, d, taps[d]);
  }
  if (c.coord == Coord::TfCropAndResize) fill_outside(y, taps, c.extrapolation);
  ctx.outputs[0] = dt == DType::Float ? y : cast_tensor(y, dt);
}

void resize(KernelContext& ctx) { resize_impl(ctx, ctx.opset() < 10 ? 10 : ctx.opset()); }
void upsample(KernelContext& ctx) { resize_impl(ctx, ctx.opset() >= 9 ? 9 : 7); }
void hz_resize11(KernelContext& ctx) { resize_impl(ctx, 11); }

}  // namespace

namespace shape {
namespace {

void resize(const In& x, Outs& o) {
  o[0] = unranked(x.dtype(0));
  if (!x.ranked(0)) return;
  const Shp& X = *x.shape(0);
  // Upsample-9 reads scales like Resize-10; HzResize11 is Resize-11 whatever its domain's opset.
  const int version = x.node.op_type == "Upsample"     ? std::min(x.opset(), 10)
                      : x.node.op_type == "HzResize11" ? 11
                                                       : std::max(x.opset(), 10);
  std::optional<std::vector<float>> scales;
  std::optional<std::vector<int64_t>> sizes;
  if (version < 9) scales = x.node.attr_floats("scales");
  else if (version < 11) scales = x.floats(1);
  else {
    if (x.shape(2)) scales = x.floats(2);
    if (x.shape(3)) sizes = x.ints(3);
    if (scales && scales->empty()) scales.reset();
    if (sizes && sizes->empty()) sizes.reset();
  }
  std::vector<int64_t> axes = version >= 18 ? x.node.attr_ints("axes") : std::vector<int64_t>{};
  if (axes.empty())
    for (size_t i = 0; i < X.rank(); ++i) axes.push_back(static_cast<int64_t>(i));
  Shp r = X;
  const std::string policy = version >= 18 ? x.node.attr_string("keep_aspect_ratio_policy", "stretch") : "stretch";
  if (sizes && sizes->size() == axes.size() && policy == "stretch") {
    for (size_t i = 0; i < axes.size(); ++i)
      if (auto ax = axis_of(axes[i], X.rank())) r.d[*ax] = dim((*sizes)[i]);
  } else if (scales && scales->size() == axes.size()) {
    for (size_t i = 0; i < axes.size(); ++i) {
      const auto ax = axis_of(axes[i], X.rank());
      if (!ax) return;
      // float32 product, truncated (as ops/resize.cpp and onnxruntime).
      if (X.d[*ax].known()) r.d[*ax] = dim(truncate((*scales)[i] * static_cast<float>(X.d[*ax].v)));
      else if ((*scales)[i] != 1.0f) r.d[*ax] = Dim{};
    }
  } else {
    return;  // not_larger/not_smaller or non-constant inputs: the probe may still work it out
  }
  o[0] = r;
}

}  // namespace
}  // namespace shape

void register_resize(OpRegistry& r) {
  // roi and sizes were added in opset 11; Upsample's scales became an input in opset 9.
  r.add("", "Resize", &resize).versions(1, 10).rule(shape::resize).meta("tensor", "X scales");
  r.add("", "Resize", &resize).versions(11).rule(shape::resize).meta("tensor", "X roi? scales? sizes?");
  r.add("", "Upsample", &upsample).versions(1, 8).rule(shape::resize).meta("tensor", "X");
  r.add("", "Upsample", &upsample).versions(9).rule(shape::resize).meta("tensor", "X scales");
  r.add("horizon", "HzResize11", &hz_resize11).rule(shape::resize).meta("tensor", "X roi? scales? sizes?");
}

}  // namespace ptq::exec
