// MaxPool, AveragePool, LpPool (1-3 spatial dims) and GlobalAveragePool / GlobalMaxPool / GlobalLpPool.
// Float max / average pooling of 1-D and 2-D inputs (the hot case) runs vectorised over a padded
// copy of each plane; 3-D, LpPool, int8/uint8 and MaxPool with Indices use a generic window loop.
//
// Windows follow the ONNX reference (onnx/reference/ops/op_pool_common.py): window o starts at
// o*stride - pad_begin; padding never contributes to MaxPool (it acts as -inf) and, with ceil_mode,
// a last window that would start inside the right padding is dropped (see resolve_forward_output).
// AveragePool divisor: count_include_pad=0 -> number of in-bounds taps; count_include_pad=1 -> the
// full kernel size, also for windows that reach past the explicit padding because of ceil_mode (the
// reference pads that overhang with zeros too). onnxruntime matches this before opset 19 (MLAS
// divides by the kernel size); for opset >= 19 it follows PyTorch and excludes the ceil_mode overhang
// from the divisor (onnxruntime PR #16752), so outputs differ there for such edge windows only.
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "core/half.h"
#include "exec/registry.h"
#include "ops/shape_util.h"
#include "ops/conv_common.h"
#include "ops/movement_util.h"
#include "ops/simd.h"

namespace ptq::exec {

namespace {

using ops::Spatial;

enum class PoolKind { Max, Average, Lp };

// In-bounds taps of one window along one axis: inputs start, start+dilation, ... (count of them).
struct AxisWindow {
  int64_t start, count;
};

// Geometry normalised to 3 spatial axes (leading axes of size 1 for 1-D / 2-D pools).
struct Pool3 {
  int64_t in[3], out[3], dil[3];
  std::vector<AxisWindow> win[3];
};

Pool3 normalise(const Spatial& s) {
  Pool3 p;
  const size_t lead = 3 - s.rank();
  for (size_t i = 0; i < 3; ++i) {
    if (i < lead) {
      p.in[i] = p.out[i] = p.dil[i] = 1;
      p.win[i] = {{0, 1}};
      continue;
    }
    const size_t a = i - lead;
    p.in[i] = s.in[a];
    p.out[i] = s.out[a];
    p.dil[i] = s.dilation[a];
    p.win[i].resize(static_cast<size_t>(s.out[a]));
    for (int64_t o = 0; o < s.out[a]; ++o) {
      // Taps j in [0, kernel) with 0 <= o*stride - pad + j*dil < in.
      const int64_t first = o * s.stride[a] - s.pad_begin[a];
      const ops::ValidRange j = ops::valid_range(first, s.dilation[a], s.in[a], s.kernel[a]);
      p.win[i][static_cast<size_t>(o)] = {first + j.lo * s.dilation[a], j.hi - j.lo};
    }
  }
  return p;
}

struct PoolOptions {
  PoolKind kind = PoolKind::Max;
  bool count_include_pad = false;
  int64_t kernel_elems = 1;
  float p = 2.0f;
  bool column_major_indices = false;  // MaxPool storage_order=1
};

// Pools one (n, c) plane. T is the element type (float, int8, uint8); idx (MaxPool Indices) may be null.
template <class T>
void pool_plane(const T* x, const Pool3& g, const PoolOptions& opt, T* y, int64_t* idx, int64_t idx_base) {
  const int64_t H = g.in[1], W = g.in[2];
  for (int64_t od = 0; od < g.out[0]; ++od) {
    const AxisWindow wd = g.win[0][static_cast<size_t>(od)];
    for (int64_t oh = 0; oh < g.out[1]; ++oh) {
      const AxisWindow wh = g.win[1][static_cast<size_t>(oh)];
      for (int64_t ow = 0; ow < g.out[2]; ++ow) {
        const AxisWindow ww = g.win[2][static_cast<size_t>(ow)];
        const int64_t o = (od * g.out[1] + oh) * g.out[2] + ow;
        if (opt.kind == PoolKind::Max) {
          // Strict '>' skips NaN inputs, like onnxruntime; an all-padding window gives lowest().
          T best = std::numeric_limits<T>::lowest();
          int64_t best_at = -1;
          for (int64_t a = 0; a < wd.count; ++a) {
            const int64_t d = wd.start + a * g.dil[0];
            for (int64_t b = 0; b < wh.count; ++b) {
              const int64_t h = wh.start + b * g.dil[1];
              const T* row = x + (d * H + h) * W;
              for (int64_t c = 0; c < ww.count; ++c) {
                const int64_t w = ww.start + c * g.dil[2];
                if (row[w] > best) {
                  best = row[w];
                  best_at = opt.column_major_indices ? (w * H + h) * g.in[0] + d : (d * H + h) * W + w;
                }
              }
            }
          }
          y[o] = best;
          if (idx) idx[o] = best_at < 0 ? -1 : idx_base + best_at;
          continue;
        }
        float acc = 0.0f;
        for (int64_t a = 0; a < wd.count; ++a) {
          const int64_t d = wd.start + a * g.dil[0];
          for (int64_t b = 0; b < wh.count; ++b) {
            const T* row = x + (d * H + wh.start + b * g.dil[1]) * W;
            for (int64_t c = 0; c < ww.count; ++c) {
              const float v = static_cast<float>(row[ww.start + c * g.dil[2]]);
              acc += opt.kind == PoolKind::Average ? v : (opt.p == 2.0f ? v * v : std::pow(std::fabs(v), opt.p));
            }
          }
        }
        if (opt.kind == PoolKind::Average) {
          const int64_t n = opt.count_include_pad ? opt.kernel_elems : wd.count * wh.count * ww.count;
          y[o] = static_cast<T>(acc / static_cast<float>(n));
        } else {
          y[o] = static_cast<T>(opt.p == 2.0f ? std::sqrt(acc) : std::pow(acc, 1.0f / opt.p));
        }
      }
    }
  }
}

// ---- float max / average pooling of 1-D and 2-D inputs: window loops over a padded plane ----------

// dst[q] = max or sum over taps t of base[q*stride + taps[t]], the padded plane supplying lowest()
// (max) or 0 (sum) outside the input. S = compile-time stride (1, 2) or 0 for the scalar loop.
template <bool Max, int S>
void window_run(const float* base, const int64_t* taps, int64_t nt, int64_t stride, int64_t count, float* dst) {
  using ops::simd::V4;
  const float init = Max ? std::numeric_limits<float>::lowest() : 0.0f;
  int64_t q = 0;
  if constexpr (S != 0) {
    for (; q + 4 <= count; q += 4) {
      V4 acc = ops::simd::splat(init);
      for (int64_t t = 0; t < nt; ++t) {
        const V4 v = ops::simd::load_every<S>(base + q * S + taps[t]);
        acc = Max ? ops::simd::max_skip_nan(acc, v) : acc + v;
      }
      ops::simd::store(dst + q, acc);
    }
  }
  for (; q < count; ++q) {
    float acc = init;
    for (int64_t t = 0; t < nt; ++t) {
      const float v = base[q * stride + taps[t]];
      acc = Max ? (v > acc ? v : acc) : acc + v;
    }
    dst[q] = acc;
  }
}

using WindowRunFn = void (*)(const float*, const int64_t*, int64_t, int64_t, int64_t, float*);

template <bool Max>
WindowRunFn pick_window_run(int64_t stride) {
  return stride == 1 ? &window_run<Max, 1> : stride == 2 ? &window_run<Max, 2> : &window_run<Max, 0>;
}

// Number of in-bounds taps of each output's window along one axis.
std::vector<int64_t> valid_taps(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t dilation,
                                int64_t pad) {
  std::vector<int64_t> n(static_cast<size_t>(out));
  for (int64_t o = 0; o < out; ++o) {
    const ops::ValidRange j = ops::valid_range(o * stride - pad, dilation, in, kernel);
    n[static_cast<size_t>(o)] = j.hi - j.lo;
  }
  return n;
}

void pool_planes_2d(const Tensor& x, const Spatial& s, const PoolOptions& opt, Tensor& y) {
  const ops::Plane2D p = ops::as_plane(s);
  ops::PaddedPlane plane(p, 2, 3);
  const bool max = opt.kind == PoolKind::Max;
  const WindowRunFn run = max ? pick_window_run<true>(p.sw) : pick_window_run<false>(p.sw);
  const std::vector<int64_t>& taps = plane.tap_offsets();
  const std::vector<int64_t> ny = valid_taps(p.H, p.OH, p.kh, p.sh, p.dh, p.pt);
  const std::vector<int64_t> nx = valid_taps(p.W, p.OW, p.kw, p.sw, p.dw, p.pl);
  const int64_t planes = x.dim(0) * x.dim(1), in_size = p.H * p.W, out_size = p.OH * p.OW;
  for (int64_t c = 0; c < planes; ++c) {
    float* yc = y.mutable_data<float>() + c * out_size;
    plane.load(x.data<float>() + c * in_size, max ? std::numeric_limits<float>::lowest() : 0.0f);
    plane.for_each_run(yc, [&](const float* base, int64_t count, float* dst) {
      run(base, taps.data(), static_cast<int64_t>(taps.size()), p.sw, count, dst);
    });
    if (max) continue;
    for (int64_t oy = 0; oy < p.OH; ++oy) {
      for (int64_t ox = 0; ox < p.OW; ++ox) {
        const int64_t n = opt.count_include_pad ? opt.kernel_elems : ny[oy] * nx[ox];
        yc[oy * p.OW + ox] /= static_cast<float>(n);
      }
    }
  }
}

// ---- generic path ----------------------------------------------------------------------------------

template <class T>
void pool_all(const Tensor& x, const Spatial& s, const PoolOptions& opt, Tensor& y, Tensor* indices) {
  const Pool3 g = normalise(s);
  const int64_t planes = x.dim(0) * x.dim(1), in_size = s.in_size(), out_size = s.out_size();
  const T* xd = x.data<T>();
  T* yd = y.mutable_data<T>();
  int64_t* id = indices ? indices->mutable_data<int64_t>() : nullptr;
  for (int64_t p = 0; p < planes; ++p) {
    pool_plane<T>(xd + p * in_size, g, opt, yd + p * out_size, id ? id + p * out_size : nullptr, p * in_size);
  }
}

// LpPool-1 / GlobalLpPool-1 have a float `p`, later opsets an int.
float lp_exponent(const KernelContext& ctx) {
  const ir::Attribute* pa = ctx.node.attr("p");
  const float p = !pa ? 2.0f : pa->type == ir::AttrType::Float ? pa->f : static_cast<float>(pa->i);
  ctx.check(p > 0.0f, "attribute 'p' must be positive");
  return p;
}

void pool(KernelContext& ctx, PoolKind kind) {
  const Tensor& x_in = ctx.required(0);
  ctx.check(x_in.rank() >= 3 && x_in.rank() <= 5,
            "pooling supports inputs of rank 3 to 5 (1-3 spatial dims), got " + shape_str(x_in.shape()));
  ctx.check(ctx.node.has_attr("kernel_shape"), "attribute 'kernel_shape' is required");
  const std::vector<int64_t> kernel = ctx.node.attr_ints("kernel_shape");
  const bool dilations_allowed = kind == PoolKind::Max || ctx.opset() >= (kind == PoolKind::Lp ? 18 : 19);
  Spatial s = ops::read_spatial_attrs(ctx, std::vector<int64_t>(x_in.shape().begin() + 2, x_in.shape().end()),
                                      kernel, dilations_allowed);
  ops::resolve_forward_output(ctx, s, ctx.node.attr_int("ceil_mode", 0) != 0);

  PoolOptions opt;
  opt.kind = kind;
  opt.count_include_pad = ctx.node.attr_int("count_include_pad", 0) != 0;
  opt.kernel_elems = s.kernel_size();
  if (kind == PoolKind::Lp) opt.p = lp_exponent(ctx);
  const int64_t storage_order = ctx.node.attr_int("storage_order", 0);
  ctx.check(storage_order == 0 || storage_order == 1, "attribute 'storage_order' must be 0 or 1");
  opt.column_major_indices = storage_order == 1;

  Shape y_shape{x_in.dim(0), x_in.dim(1)};
  y_shape.insert(y_shape.end(), s.out.begin(), s.out.end());
  const bool want_indices = kind == PoolKind::Max && ctx.has_output(1);
  Tensor indices = want_indices ? Tensor(DType::Int64, y_shape) : Tensor();
  Tensor* idx = want_indices ? &indices : nullptr;

  const DType dt = x_in.dtype();
  if (kind == PoolKind::Max && (dt == DType::Int8 || dt == DType::UInt8)) {
    Tensor y(dt, y_shape);
    if (dt == DType::Int8) {
      pool_all<int8_t>(x_in, s, opt, y, idx);
    } else {
      pool_all<uint8_t>(x_in, s, opt, y, idx);
    }
    ctx.outputs[0] = y;
  } else {
    const Tensor x = ops::float_input(ctx, x_in, "X");
    Tensor y(DType::Float, y_shape);
    if (kind != PoolKind::Lp && !idx && s.rank() <= 2 && y.numel() > 0) {
      pool_planes_2d(x, s, opt, y);
    } else {
      pool_all<float>(x, s, opt, y, idx);
    }
    ctx.outputs[0] = ops::to_dtype(y, dt);
  }
  if (want_indices) ctx.outputs[1] = indices;
}

void max_pool(KernelContext& ctx) { pool(ctx, PoolKind::Max); }
void average_pool(KernelContext& ctx) { pool(ctx, PoolKind::Average); }
void lp_pool(KernelContext& ctx) { pool(ctx, PoolKind::Lp); }

void global_pool(KernelContext& ctx, PoolKind kind) {
  const Tensor& x_in = ctx.required(0);
  ctx.check(x_in.rank() >= 3, "input must have rank >= 3 (N, C, spatial...), got " + shape_str(x_in.shape()));
  const float p = kind == PoolKind::Lp ? lp_exponent(ctx) : 2.0f;
  const Tensor x = ops::float_input(ctx, x_in, "X");
  Shape y_shape(x.rank(), 1);
  y_shape[0] = x.dim(0);
  y_shape[1] = x.dim(1);
  Tensor y(DType::Float, y_shape);
  const int64_t planes = x.dim(0) * x.dim(1);
  const int64_t n = planes ? x.numel() / planes : 0;
  const float* xd = x.data<float>();
  float* yd = y.mutable_data<float>();
  for (int64_t i = 0; i < planes; ++i) {
    const float* v = xd + i * n;
    if (kind == PoolKind::Max) {
      float best = std::numeric_limits<float>::lowest();
      for (int64_t j = 0; j < n; ++j) best = v[j] > best ? v[j] : best;
      yd[i] = best;
    } else if (kind == PoolKind::Average) {
      // Summed in double, as the Reduce ops do: a float running sum over a large plane (an early
      // squeeze-excitation block's 112x112) loses tens of ulps of the mean.
      double acc = 0.0;
      for (int64_t j = 0; j < n; ++j) acc += v[j];
      yd[i] = static_cast<float>(acc / static_cast<double>(n));
    } else {
      double acc = 0.0;
      for (int64_t j = 0; j < n; ++j) acc += std::pow(std::fabs(v[j]), p);
      yd[i] = static_cast<float>(std::pow(acc, 1.0 / p));
    }
  }
  ctx.outputs[0] = ops::to_dtype(y, x_in.dtype());
}

void global_max_pool(KernelContext& ctx) { global_pool(ctx, PoolKind::Max); }
void global_average_pool(KernelContext& ctx) { global_pool(ctx, PoolKind::Average); }
void global_lp_pool(KernelContext& ctx) { global_pool(ctx, PoolKind::Lp); }

// MaxUnpool: scatters X into zeros at the flat indices I (MaxPool's Indices output) of the
// unpooled shape [N, C, (in - 1) * stride + kernel - pad_begin - pad_end, ...]. A larger
// output_shape (input 2) holds that result in its leading corner, zeros elsewhere (ONNX reference).
void max_unpool(KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  const Tensor& idx_t = ctx.required(1);
  ctx.check(x.rank() >= 3, "X must be [N, C, D1, ...], got " + shape_str(x.shape()));
  ctx.check(idx_t.dtype() == DType::Int64 && idx_t.shape() == x.shape(),
            "I must be an int64 tensor of X's shape " + shape_str(x.shape()));
  const size_t spatial = x.rank() - 2;
  ctx.check(ctx.node.has_attr("kernel_shape"), "attribute 'kernel_shape' is required");
  const std::vector<int64_t> kernel = ctx.node.attr_ints("kernel_shape");
  const std::vector<int64_t> strides = ctx.node.attr_ints("strides", std::vector<int64_t>(spatial, 1));
  const std::vector<int64_t> pads = ctx.node.attr_ints("pads", std::vector<int64_t>(2 * spatial, 0));
  ctx.check(kernel.size() == spatial && strides.size() == spatial && pads.size() == 2 * spatial,
            "kernel_shape, strides and pads must match the " + std::to_string(spatial) + " spatial dims");
  Shape unpooled = x.shape();
  for (size_t d = 0; d < spatial; ++d) {
    ctx.check(kernel[d] >= 1 && strides[d] >= 1 && pads[d] >= 0 && pads[d + spatial] >= 0,
              "kernel_shape and strides must be >= 1, pads >= 0");
    unpooled[d + 2] = (x.dim(d + 2) - 1) * strides[d] + kernel[d] - pads[d] - pads[d + spatial];
    ctx.check(unpooled[d + 2] >= 0, "kernel_shape, strides and pads give a negative size");
  }
  Tensor y = Tensor::zeros(x.dtype(), unpooled);
  const int64_t total = y.numel();
  const size_t esize = dtype_size(x.dtype());
  const int64_t* idx = idx_t.data<int64_t>();
  const auto* src = static_cast<const uint8_t*>(x.raw());
  auto* dst = static_cast<uint8_t*>(y.mutable_raw());
  for (int64_t i = 0; i < x.numel(); ++i) {
    ctx.check(idx[i] >= 0 && idx[i] < total, "index " + std::to_string(idx[i]) + " is outside the unpooled " +
                                                 shape_str(unpooled));
    std::memcpy(dst + static_cast<size_t>(idx[i]) * esize, src + static_cast<size_t>(i) * esize, esize);
  }
  if (const Tensor* os = ctx.input(2)) {
    const std::vector<int64_t> given = os->to_int64_vector();
    const Shape out(given.begin(), given.end());
    bool fits = out.size() == x.rank();
    for (size_t d = 0; fits && d < out.size(); ++d) fits = d < 2 ? out[d] == x.dim(d) : out[d] >= unpooled[d];
    ctx.check(fits, "output_shape " + shape_str(out) + " cannot hold the unpooled " + shape_str(unpooled));
    if (out != unpooled) {
      Tensor padded = Tensor::zeros(x.dtype(), out);
      movement::strided_copy(y.raw(), 0, movement::dense_strides(unpooled), padded.mutable_raw(), 0,
                             movement::dense_strides(out), unpooled, esize);
      y = padded;
    }
  }
  ctx.outputs[0] = y;
}

}  // namespace

namespace shape {
namespace {

void pool(const In& x, Outs& o) {
  o[0] = unranked(x.dtype(0));
  if (!x.ranked(0) || x.shape(0)->rank() < 3) return;
  const Shp& X = *x.shape(0);
  const size_t sp = X.rank() - 2;
  const Window w = read_window(x.node, sp, x.node.attr_ints("kernel_shape"));
  if (!window_ok(w, sp)) return;
  const bool ceil_mode = x.node.attr_int("ceil_mode", 0) != 0;
  o[0] = ranked(X.dtype, {X.d[0], X.d[1]});
  for (size_t i = 0; i < sp; ++i) o[0].d.push_back(forward_extent(w, i, X.d[2 + i], ceil_mode));
  if (o.size() > 1) {  // MaxPool Indices
    o[1] = o[0];
    o[1].dtype = DType::Int64;
  }
}

void global_pool(const In& x, Outs& o) {
  same_as_input(x, o);
  for (size_t i = 2; i < o[0].rank(); ++i) o[0].d[i] = dim(1);
}

}  // namespace
}  // namespace shape

void register_pool(OpRegistry& r) {
  r.add("", "MaxUnpool", &max_unpool).meta("pool", "X I output_shape?");
  r.add("", "MaxPool", &max_pool).rule(shape::pool).meta("pool", "X");
  r.add("", "AveragePool", &average_pool).rule(shape::pool).meta("pool", "X");
  r.add("", "LpPool", &lp_pool).rule(shape::pool).meta("pool", "X");
  r.add("", "GlobalMaxPool", &global_max_pool).rule(shape::global_pool).meta("pool", "X");
  r.add("", "GlobalAveragePool", &global_average_pool).rule(shape::global_pool).meta("pool", "X");
  r.add("", "GlobalLpPool", &global_lp_pool).rule(shape::global_pool).meta("pool", "X");
}

}  // namespace ptq::exec
