// Normalisations: BatchNormalization (inference, plus opset 14+ training_mode), InstanceNormalization,
// LayerNormalization, LpNormalization, MeanVarianceNormalization and LRN. Computed in float32 with statistics accumulated in double;
// half/double inputs are converted and the result cast back to the input dtype.
#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <vector>

#include "exec/registry.h"
#include "ops/shape_util.h"
#include "ops/broadcast.h"

namespace ptq::exec {
namespace {

bool is_float_type(DType t) {
  return t == DType::Float || t == DType::Double || t == DType::Float16 || t == DType::BFloat16;
}

Tensor float_input(const KernelContext& ctx, size_t i) {
  const Tensor& t = ctx.required(i);
  ctx.check(is_float_type(t.dtype()), "input " + std::to_string(i) + " has unsupported dtype " + dtype_name(t.dtype()));
  return t.to_float();
}

Tensor to_dtype(const Tensor& t, DType d) { return t.dtype() == d ? t : cast_tensor(t, d); }

// Mean and population variance of n values spaced `stride` apart (two passes in double).
struct Moments {
  double mean = 0.0, var = 0.0;
};
Moments moments(const float* x, int64_t n, int64_t stride = 1) {
  Moments m;
  if (n == 0) return m;
  double s = 0.0;
  for (int64_t i = 0; i < n; ++i) s += x[i * stride];
  m.mean = s / static_cast<double>(n);
  double q = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double d = x[i * stride] - m.mean;
    q += d * d;
  }
  m.var = q / static_cast<double>(n);
  return m;
}

// y[i] = x[i] * a + b over a contiguous run (the vectorised core of Batch/InstanceNorm).
void scale_shift(const float* __restrict x, float* __restrict y, int64_t n, float a, float b) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * a + b;
}

// Channel layout of an [N, C, D1, ...] tensor.
struct NcLayout {
  int64_t n = 1, c = 1, inner = 1;
};
NcLayout nc_layout(const KernelContext& ctx, const Shape& s) {
  ctx.check(s.size() >= 2, "input must have shape [N, C, ...], got " + shape_str(s));
  NcLayout l{s[0], s[1], 1};
  for (size_t d = 2; d < s.size(); ++d) l.inner *= s[d];
  return l;
}

// BatchNormalization. Inference: y = x * a[c] + b[c] with a = scale / sqrt(var + eps) and
// b = bias - mean * a (the folding onnxruntime uses). Before opset 9, spatial=0 gives per-element
// parameters of shape [C, D1, ...]; those are handled as a[c * inner + i].
void batch_norm_kernel(KernelContext& ctx) {
  const DType dt = ctx.required(0).dtype();
  const Tensor x = float_input(ctx, 0);
  const Tensor scale = float_input(ctx, 1), bias = float_input(ctx, 2);
  Tensor mean = float_input(ctx, 3), var = float_input(ctx, 4);
  const float eps = ctx.node.attr_float("epsilon", 1e-5f);
  const NcLayout l = nc_layout(ctx, x.shape());
  const bool training = ctx.opset() >= 14 && ctx.node.attr_int("training_mode", 0) != 0;
  if (ctx.opset() < 14) {
    for (size_t i = 1; i < 5; ++i)
      ctx.check(!ctx.has_output(i), "training outputs (mean/var/saved statistics) are not supported before opset 14");
  }
  const bool per_element = ctx.opset() < 9 && ctx.node.attr_int("spatial", 1) == 0;
  const int64_t pn = per_element ? l.c * l.inner : l.c;
  ctx.check(!(training && per_element), "attribute 'spatial'=0 is not supported in training mode");
  for (const Tensor* p : std::initializer_list<const Tensor*>{&scale, &bias, &mean, &var})
    ctx.check(p->numel() == pn, "parameter shape " + shape_str(p->shape()) + " does not match " +
                                     std::to_string(pn) + " channels/elements of input " + shape_str(x.shape()));
  const float* xs = x.data<float>();
  if (training) {
    // Batch statistics per channel over N and the spatial dims; running stats blend with momentum.
    const float momentum = ctx.node.attr_float("momentum", 0.9f);
    Tensor bm(DType::Float, {l.c}), bv(DType::Float, {l.c});
    Tensor run_mean(DType::Float, {l.c}), run_var(DType::Float, {l.c});
    for (int64_t c = 0; c < l.c; ++c) {
      double s = 0.0, q = 0.0;
      for (int64_t n = 0; n < l.n; ++n)
        for (int64_t i = 0; i < l.inner; ++i) s += xs[(n * l.c + c) * l.inner + i];
      const double cnt = static_cast<double>(l.n * l.inner);
      const double mu = s / cnt;
      for (int64_t n = 0; n < l.n; ++n)
        for (int64_t i = 0; i < l.inner; ++i) {
          const double d = xs[(n * l.c + c) * l.inner + i] - mu;
          q += d * d;
        }
      bm.mutable_data<float>()[c] = static_cast<float>(mu);
      bv.mutable_data<float>()[c] = static_cast<float>(q / cnt);
      run_mean.mutable_data<float>()[c] = mean.data<float>()[c] * momentum + static_cast<float>(mu) * (1 - momentum);
      run_var.mutable_data<float>()[c] = var.data<float>()[c] * momentum + static_cast<float>(q / cnt) * (1 - momentum);
    }
    if (ctx.has_output(1)) ctx.outputs[1] = to_dtype(run_mean, ctx.required(3).dtype());
    if (ctx.has_output(2)) ctx.outputs[2] = to_dtype(run_var, ctx.required(4).dtype());
    mean = bm;
    var = bv;
  }
  std::vector<float> a(static_cast<size_t>(pn)), b(static_cast<size_t>(pn));
  for (int64_t i = 0; i < pn; ++i) {
    const float inv_std = 1.0f / std::sqrt(var.data<float>()[i] + eps);
    a[static_cast<size_t>(i)] = scale.data<float>()[i] * inv_std;
    b[static_cast<size_t>(i)] = bias.data<float>()[i] - mean.data<float>()[i] * a[static_cast<size_t>(i)];
  }
  Tensor y(DType::Float, x.shape());
  float* ys = y.mutable_data<float>();
  for (int64_t n = 0; n < l.n; ++n) {
    for (int64_t c = 0; c < l.c; ++c) {
      const int64_t off = (n * l.c + c) * l.inner;
      if (per_element) {
        const float* pa = a.data() + c * l.inner;
        const float* pb = b.data() + c * l.inner;
        for (int64_t i = 0; i < l.inner; ++i) ys[off + i] = xs[off + i] * pa[i] + pb[i];
      } else {
        scale_shift(xs + off, ys + off, l.inner, a[static_cast<size_t>(c)], b[static_cast<size_t>(c)]);
      }
    }
  }
  ctx.outputs[0] = to_dtype(y, dt);
}

// InstanceNormalization: per (n, c) statistics over the spatial dims.
void instance_norm_kernel(KernelContext& ctx) {
  const DType dt = ctx.required(0).dtype();
  const Tensor x = float_input(ctx, 0);
  const Tensor scale = float_input(ctx, 1), bias = float_input(ctx, 2);
  const float eps = ctx.node.attr_float("epsilon", 1e-5f);
  const NcLayout l = nc_layout(ctx, x.shape());
  ctx.check(scale.numel() == l.c && bias.numel() == l.c,
            "scale and B must have C = " + std::to_string(l.c) + " elements");
  Tensor y(DType::Float, x.shape());
  for (int64_t n = 0; n < l.n; ++n) {
    for (int64_t c = 0; c < l.c; ++c) {
      const int64_t off = (n * l.c + c) * l.inner;
      const Moments m = moments(x.data<float>() + off, l.inner);
      const double a = scale.data<float>()[c] / std::sqrt(m.var + eps);
      const double b = bias.data<float>()[c] - m.mean * a;
      scale_shift(x.data<float>() + off, y.mutable_data<float>() + off, l.inner, static_cast<float>(a),
                  static_cast<float>(b));
    }
  }
  ctx.outputs[0] = to_dtype(y, dt);
}

// Materialises `t` broadcast (unidirectionally) to `shape`, as a flat float vector.
std::vector<float> expand_to(const KernelContext& ctx, const Tensor& t, const Shape& shape, const char* what) {
  std::vector<float> out(static_cast<size_t>(shape_numel(shape)));
  ops::BroadcastPlan<1> plan;
  try {
    plan = ops::make_broadcast_plan<1>({&t.shape()}, shape);
  } catch (const Error&) {
    ctx.fail(std::string(what) + " shape " + shape_str(t.shape()) + " does not broadcast to " + shape_str(shape));
  }
  const float* src = t.data<float>();
  ops::for_each_run(plan, [&](int64_t o, const std::array<int64_t, 1>& off, int64_t n) {
    for (int64_t i = 0; i < n; ++i) out[static_cast<size_t>(o + i)] = src[off[0] + (plan.inner_advances[0] ? i : 0)];
  });
  return out;
}

// LayerNormalization (opset 17): normalise over dims [axis, rank); Scale and optional B broadcast
// to those dims. Optional outputs Mean and InvStdDev have shape X.shape[:axis] + [1] * (rank - axis).
void layer_norm_kernel(KernelContext& ctx) {
  const DType dt = ctx.required(0).dtype();
  const Tensor x = float_input(ctx, 0);
  const Tensor scale = float_input(ctx, 1);
  const auto rank = static_cast<int64_t>(x.rank());
  int64_t axis = ctx.node.attr_int("axis", -1);
  if (axis < 0) axis += rank;
  ctx.check(axis >= 0 && axis < rank, "attribute 'axis' out of range for rank " + std::to_string(rank));
  const float eps = ctx.node.attr_float("epsilon", 1e-5f);
  const Shape norm_shape(x.shape().begin() + axis, x.shape().end());
  Shape stat_shape(x.shape().begin(), x.shape().begin() + axis);
  stat_shape.resize(x.rank(), 1);
  const int64_t m = shape_numel(norm_shape);
  const int64_t outer = m ? x.numel() / m : shape_numel(Shape(x.shape().begin(), x.shape().begin() + axis));
  const std::vector<float> w = expand_to(ctx, scale, norm_shape, "Scale");
  std::vector<float> bvec;
  if (ctx.input(2)) bvec = expand_to(ctx, float_input(ctx, 2), norm_shape, "B");
  Tensor y(DType::Float, x.shape());
  Tensor mean_t(DType::Float, stat_shape), inv_t(DType::Float, stat_shape);
  for (int64_t o = 0; o < outer; ++o) {
    const float* xs = x.data<float>() + o * m;
    float* ys = y.mutable_data<float>() + o * m;
    const Moments mo = moments(xs, m);
    const auto mu = static_cast<float>(mo.mean);
    const auto inv = static_cast<float>(1.0 / std::sqrt(mo.var + eps));
    mean_t.mutable_data<float>()[o] = mu;
    inv_t.mutable_data<float>()[o] = inv;
    if (bvec.empty()) {
      for (int64_t i = 0; i < m; ++i) ys[i] = (xs[i] - mu) * inv * w[static_cast<size_t>(i)];
    } else {
      for (int64_t i = 0; i < m; ++i) ys[i] = (xs[i] - mu) * inv * w[static_cast<size_t>(i)] + bvec[static_cast<size_t>(i)];
    }
  }
  ctx.outputs[0] = to_dtype(y, dt);
  if (ctx.has_output(1)) ctx.outputs[1] = mean_t;
  if (ctx.has_output(2)) ctx.outputs[2] = inv_t;
}

// LpNormalization: x / ||x||_p along `axis` (p = 1 or 2); a zero vector stays zero (onnxruntime).
void lp_norm_kernel(KernelContext& ctx) {
  const DType dt = ctx.required(0).dtype();
  const Tensor x = float_input(ctx, 0);
  const auto rank = static_cast<int64_t>(x.rank());
  ctx.check(rank >= 1, "input must have rank >= 1");
  int64_t axis = ctx.node.attr_int("axis", -1);
  if (axis < 0) axis += rank;
  ctx.check(axis >= 0 && axis < rank, "attribute 'axis' out of range for rank " + std::to_string(rank));
  const int64_t p = ctx.node.attr_int("p", 2);
  ctx.check(p == 1 || p == 2, "attribute 'p' must be 1 or 2, got " + std::to_string(p));
  const auto ax = static_cast<size_t>(axis);
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < ax; ++d) outer *= x.dim(d);
  for (size_t d = ax + 1; d < x.rank(); ++d) inner *= x.dim(d);
  const int64_t n = x.dim(ax);
  Tensor y(DType::Float, x.shape());
  const float* xs = x.data<float>();
  float* ys = y.mutable_data<float>();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < inner; ++j) {
      const int64_t base = o * n * inner + j;
      double acc = 0.0;
      for (int64_t i = 0; i < n; ++i) {
        const double v = xs[base + i * inner];
        acc += p == 1 ? std::fabs(v) : v * v;
      }
      const double norm = p == 1 ? acc : std::sqrt(acc);
      const auto nf = static_cast<float>(norm);
      for (int64_t i = 0; i < n; ++i) ys[base + i * inner] = nf != 0.0f ? xs[base + i * inner] / nf : 0.0f;
    }
  }
  ctx.outputs[0] = to_dtype(y, dt);
}

// MeanVarianceNormalization: (x - mean) / (sqrt(E[x^2] - mean^2) + 1e-9) with the statistics over
// `axes` (default [0, 2, 3]), as the ONNX function body defines it.
void mvn_kernel(KernelContext& ctx) {
  const DType dt = ctx.required(0).dtype();
  const Tensor x = float_input(ctx, 0);
  const auto rank = static_cast<int64_t>(x.rank());
  std::vector<bool> reduced(x.rank(), false);
  for (int64_t a : ctx.node.attr_ints("axes", {0, 2, 3})) {
    ctx.check(a >= -rank && a < rank, "axes entry " + std::to_string(a) + " is out of range for rank " +
                                          std::to_string(rank));
    reduced[static_cast<size_t>(a < 0 ? a + rank : a)] = true;
  }
  // Group of each element: its index in the shape with the reduced dims collapsed to 1.
  Shape group_shape = x.shape();
  for (size_t d = 0; d < x.rank(); ++d)
    if (reduced[d]) group_shape[d] = 1;
  const int64_t groups = shape_numel(group_shape);
  const int64_t count = groups ? x.numel() / groups : 0;
  std::vector<int64_t> group_of(static_cast<size_t>(x.numel()));
  ops::BroadcastPlan<1> plan = ops::make_broadcast_plan<1>({&group_shape}, x.shape());
  ops::for_each_run(plan, [&](int64_t o, const std::array<int64_t, 1>& off, int64_t n) {
    for (int64_t i = 0; i < n; ++i) group_of[static_cast<size_t>(o + i)] = off[0] + (plan.inner_advances[0] ? i : 0);
  });
  std::vector<double> sum(static_cast<size_t>(groups), 0.0), sum_sq(static_cast<size_t>(groups), 0.0);
  const float* xs = x.data<float>();
  for (int64_t i = 0; i < x.numel(); ++i) {
    const double v = xs[i];
    sum[static_cast<size_t>(group_of[static_cast<size_t>(i)])] += v;
    sum_sq[static_cast<size_t>(group_of[static_cast<size_t>(i)])] += v * v;
  }
  std::vector<float> mean(static_cast<size_t>(groups)), denom(static_cast<size_t>(groups));
  for (size_t g = 0; g < mean.size(); ++g) {
    const double mu = sum[g] / static_cast<double>(count);
    mean[g] = static_cast<float>(mu);
    denom[g] = static_cast<float>(std::sqrt(std::max(0.0, sum_sq[g] / static_cast<double>(count) - mu * mu)) + 1e-9);
  }
  Tensor y(DType::Float, x.shape());
  float* ys = y.mutable_data<float>();
  for (int64_t i = 0; i < x.numel(); ++i) {
    const auto g = static_cast<size_t>(group_of[static_cast<size_t>(i)]);
    ys[i] = (xs[i] - mean[g]) / denom[g];
  }
  ctx.outputs[0] = to_dtype(y, dt);
}

// LRN across channels of [N, C, D1, ...]: y = x / (bias + alpha / size * Σ x^2)^beta, the sum over
// channels [c - floor((size - 1) / 2), c + ceil((size - 1) / 2)] clipped to [0, C).
void lrn_kernel(KernelContext& ctx) {
  const DType dt = ctx.required(0).dtype();
  const Tensor x = float_input(ctx, 0);
  const NcLayout l = nc_layout(ctx, x.shape());
  ctx.check(ctx.node.has_attr("size"), "attribute 'size' is required");
  const int64_t size = ctx.node.attr_int("size", 0);
  ctx.check(size >= 1, "attribute 'size' must be >= 1, got " + std::to_string(size));
  const float alpha = ctx.node.attr_float("alpha", 1e-4f), beta = ctx.node.attr_float("beta", 0.75f);
  const float bias = ctx.node.attr_float("bias", 1.0f);
  const int64_t before = (size - 1) / 2, after = size - 1 - before;
  const float* xs = x.data<float>();
  Tensor y(DType::Float, x.shape());
  float* ys = y.mutable_data<float>();
  for (int64_t n = 0; n < l.n; ++n) {
    for (int64_t c = 0; c < l.c; ++c) {
      const int64_t lo = std::max<int64_t>(0, c - before), hi = std::min<int64_t>(l.c - 1, c + after);
      for (int64_t i = 0; i < l.inner; ++i) {
        float sq = 0.0f;
        for (int64_t k = lo; k <= hi; ++k) {
          const float v = xs[(n * l.c + k) * l.inner + i];
          sq += v * v;
        }
        const int64_t at = (n * l.c + c) * l.inner + i;
        ys[at] = xs[at] / std::pow(bias + alpha / static_cast<float>(size) * sq, beta);
      }
    }
  }
  ctx.outputs[0] = to_dtype(y, dt);
}

}  // namespace

namespace shape {
namespace {

// Outputs 1.. of LayerNormalization (mean, inv std dev): input shape with axes >= axis set to 1.
void layer_norm(const In& x, Outs& o) {
  same_as_input(x, o);
  if (!x.ranked(0)) return;
  const auto axis = axis_of(x.node.attr_int("axis", -1), x.shape(0)->rank());
  if (!axis) return;
  for (size_t k = 1; k < o.size(); ++k) {
    o[k] = *x.shape(0);
    o[k].dtype = DType::Float;
    for (size_t i = *axis; i < o[k].rank(); ++i) o[k].d[i] = dim(1);
  }
}

}  // namespace
}  // namespace shape

void register_norm(OpRegistry& r) {
  const shape::Rule same = shape::same_as_input;
  r.add("", "BatchNormalization", &batch_norm_kernel)
      .rule(same)
      .meta("normalization", "X scale B input_mean input_var");
  r.add("", "InstanceNormalization", &instance_norm_kernel).rule(same).meta("normalization", "input scale B");
  r.add("", "LayerNormalization", &layer_norm_kernel).rule(shape::layer_norm).meta("normalization", "X Scale B?");
  r.add("", "LpNormalization", &lp_norm_kernel).rule(same).meta("normalization", "input");
  r.add("", "MeanVarianceNormalization", &mvn_kernel).meta("normalization", "X");
  r.add("", "LRN", &lrn_kernel).rule(same).meta("normalization", "X");
  // Shown by the viewers, not executed.
  r.add("", "GroupNormalization", nullptr).meta("normalization", "X scale bias");
  r.add("com.microsoft", "SimplifiedLayerNormalization", nullptr).meta("normalization", "X scale");
}

}  // namespace ptq::exec
