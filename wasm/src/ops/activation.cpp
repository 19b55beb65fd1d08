// Activations: Relu, LeakyRelu, PRelu, Elu, Selu, Clip, Sigmoid, Tanh, HardSigmoid, HardSwish,
// Softplus, Softsign, Mish, Gelu, Shrink, ThresholdedRelu, Celu, and the Horizon fused activations
// (HzSwish, HzHardSwish, HzMish, HzGelu, HzRsqrt). Each op is a small functor built once per call
// from the node's attributes, then mapped over the tensor in its own float type (half types
// widened to float32).
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

#include "exec/registry.h"
#include "ops/shape_util.h"
#include "ops/elementwise.h"

namespace ptq::exec {
namespace {

using ops::kFloats;

struct NoParams {
  explicit NoParams(const KernelContext&) {}
};

template <class T>
T sigmoid(T v) {
  return T(1) / (T(1) + std::exp(-v));
}
// log(1 + e^v) without overflow for large v.
template <class T>
T softplus(T v) {
  return v > T(0) ? v + std::log1p(std::exp(-v)) : std::log1p(std::exp(v));
}
template <class T>
T hard_sigmoid(T v, T alpha, T beta) {
  const T y = alpha * v + beta;
  return y < T(0) ? T(0) : (y > T(1) ? T(1) : y);
}

struct ReluOp : NoParams {
  using NoParams::NoParams;
  template <class T> T operator()(T v) const { return v > T(0) ? v : T(0); }
};
struct LeakyReluOp {
  float alpha;
  explicit LeakyReluOp(const KernelContext& c) : alpha(c.node.attr_float("alpha", 0.01f)) {}
  template <class T> T operator()(T v) const { return v < T(0) ? static_cast<T>(alpha) * v : v; }
};
struct EluOp {
  float alpha;
  explicit EluOp(const KernelContext& c) : alpha(c.node.attr_float("alpha", 1.0f)) {}
  template <class T> T operator()(T v) const { return v < T(0) ? static_cast<T>(alpha) * std::expm1(v) : v; }
};
struct SeluOp {
  float alpha, gamma;
  explicit SeluOp(const KernelContext& c)
      : alpha(c.node.attr_float("alpha", 1.67326319217681884765625f)),
        gamma(c.node.attr_float("gamma", 1.05070102214813232421875f)) {}
  template <class T>
  T operator()(T v) const {
    const T g = static_cast<T>(gamma);
    return v > T(0) ? g * v : g * static_cast<T>(alpha) * std::expm1(v);
  }
};
// Sigmoid and Swish on float32 use the vector exp (they are ~15% of a YOLO's forward pass with
// std::exp); within a few ulps of the scalar form.
inline ops::simd::V4 sigmoid(ops::simd::V4 v, const ops::simd::ExpConstants& k) {
  return k.one / (k.one + ops::simd::exp(-v, k));
}

struct SigmoidOp : NoParams {
  using NoParams::NoParams;
  const ops::simd::ExpConstants& k = ops::simd::exp_constants();
  template <class T> T operator()(T v) const { return sigmoid(v); }
  ops::simd::V4 vector(ops::simd::V4 v) const { return sigmoid(v, k); }
};
struct TanhOp : NoParams {
  using NoParams::NoParams;
  template <class T> T operator()(T v) const { return std::tanh(v); }
};
struct HardSigmoidOp {
  float alpha, beta;
  explicit HardSigmoidOp(const KernelContext& c)
      : alpha(c.node.attr_float("alpha", 0.2f)), beta(c.node.attr_float("beta", 0.5f)) {}
  template <class T> T operator()(T v) const { return hard_sigmoid(v, static_cast<T>(alpha), static_cast<T>(beta)); }
};
// HardSwish is x * HardSigmoid(x) with alpha = 1/6, beta = 0.5 (HzHardSwish is the same op).
struct HardSwishOp : NoParams {
  using NoParams::NoParams;
  template <class T> T operator()(T v) const { return v * hard_sigmoid(v, T(1) / T(6), T(0.5)); }
};
struct SoftplusOp : NoParams {
  using NoParams::NoParams;
  template <class T> T operator()(T v) const { return softplus(v); }
};
struct SoftsignOp : NoParams {
  using NoParams::NoParams;
  template <class T> T operator()(T v) const { return v / (T(1) + std::fabs(v)); }
};
// Shrink: x < -lambd -> x + bias, x > lambd -> x - bias, else 0.
struct ShrinkOp {
  float lambd, bias;
  explicit ShrinkOp(const KernelContext& c) : lambd(c.node.attr_float("lambd", 0.5f)), bias(c.node.attr_float("bias", 0.0f)) {}
  template <class T>
  T operator()(T v) const {
    const T l = static_cast<T>(lambd), b = static_cast<T>(bias);
    return v < -l ? v + b : (v > l ? v - b : T(0));
  }
};
struct ThresholdedReluOp {
  float alpha;
  explicit ThresholdedReluOp(const KernelContext& c) : alpha(c.node.attr_float("alpha", 1.0f)) {}
  template <class T> T operator()(T v) const { return v > static_cast<T>(alpha) ? v : T(0); }
};
// Celu: max(0, x) + min(0, alpha * (exp(x / alpha) - 1)); alpha must not be 0.
struct CeluOp {
  float alpha;
  explicit CeluOp(const KernelContext& c) : alpha(c.node.attr_float("alpha", 1.0f)) {
    c.check(alpha != 0.0f, "attribute 'alpha' must not be 0");
  }
  template <class T>
  T operator()(T v) const {
    const T a = static_cast<T>(alpha);
    return v > T(0) ? v : a * std::expm1(v / a);
  }
};
struct MishOp : NoParams {
  using NoParams::NoParams;
  template <class T> T operator()(T v) const { return v * std::tanh(softplus(v)); }
};
struct SwishOp : NoParams {
  using NoParams::NoParams;
  const ops::simd::ExpConstants& k = ops::simd::exp_constants();
  template <class T> T operator()(T v) const { return v * sigmoid(v); }
  ops::simd::V4 vector(ops::simd::V4 v) const { return v * sigmoid(v, k); }
};
struct RsqrtOp : NoParams {
  using NoParams::NoParams;
  template <class T> T operator()(T v) const { return T(1) / std::sqrt(v); }
};
struct GeluOp {
  bool tanh_approx;
  explicit GeluOp(const KernelContext& c) {
    const std::string a = c.node.attr_string("approximate", "none");
    c.check(a == "none" || a == "tanh", "attribute 'approximate' must be \"none\" or \"tanh\", got \"" + a + "\"");
    tanh_approx = a == "tanh";
  }
  template <class T>
  T operator()(T v) const {
    if (tanh_approx) {
      const T k = static_cast<T>(0.7978845608028654);  // sqrt(2/pi)
      return T(0.5) * v * (T(1) + std::tanh(k * (v + T(0.044715) * v * v * v)));
    }
    // 0.5 v (1 + erf(v / sqrt 2)) as 0.5 v erfc(-v / sqrt 2): the same value, without the
    // cancellation of 1 + erf for negative v (below -4 it loses every digit of the tail); in double,
    // since a float32 argument v / sqrt 2 alone puts the tail ~100 ulps off (erfc's relative slope).
    const double d = static_cast<double>(v);
    return static_cast<T>(0.5 * d * std::erfc(-d * 0.70710678118654752440));  // 1/sqrt(2)
  }
};

template <class Op, unsigned Set = kFloats>
void activation_kernel(KernelContext& ctx) {
  ctx.outputs[0] = ops::map_unary<Set>(ctx, ctx.required(0), Op(ctx));
}

// PRelu: y = x < 0 ? slope * x : x, slope broadcast (numpy rules) to x's shape, e.g. a per-channel
// slope of shape [C, 1, 1] against [N, C, H, W].
void prelu_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  const Tensor& slope = ctx.required(1);
  Tensor y = ops::map_binary<ops::kSigned>(ctx, x, slope, [](auto v, auto s) {
    using T = decltype(v);
    if constexpr (std::is_integral_v<T>) {
      return v < 0 ? ops::wrap_int(s, v, [](uint64_t a, uint64_t b) { return a * b; }) : v;
    } else {
      return v < T(0) ? s * v : v;
    }
  });
  ctx.check(y.shape() == x.shape(),
            "slope " + shape_str(slope.shape()) + " does not broadcast to input " + shape_str(x.shape()));
  ctx.outputs[0] = y;
}

// Clip: bounds are attributes before opset 11 and optional scalar inputs from opset 11 on. An
// absent bound is the type's limit; when min > max every element becomes max (ONNX spec).
void clip_kernel(KernelContext& ctx) {
  const Tensor x = ops::widen_for<ops::kNumeric>(ctx.required(0));
  const Tensor* lo_t = ctx.opset() >= 11 ? ctx.input(1) : nullptr;
  const Tensor* hi_t = ctx.opset() >= 11 ? ctx.input(2) : nullptr;
  for (const Tensor* b : {lo_t, hi_t}) {
    if (!b) continue;
    ctx.check(b->numel() == 1, "min/max inputs must be scalars, got shape " + shape_str(b->shape()));
    ctx.check(b->dtype() == ctx.required(0).dtype(), "min/max dtype differs from input dtype");
  }
  Tensor out;
  const bool ok = ops::visit_dtype<ops::kNumeric>(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T lo = std::numeric_limits<T>::lowest(), hi = std::numeric_limits<T>::max();
    if constexpr (std::is_floating_point_v<T>) {
      if (ctx.opset() < 11) {
        lo = static_cast<T>(ctx.node.attr_float("min", -std::numeric_limits<float>::infinity()));
        hi = static_cast<T>(ctx.node.attr_float("max", std::numeric_limits<float>::infinity()));
      }
    }
    if (lo_t) lo = ops::widen_for<ops::kNumeric>(*lo_t).template data<T>()[0];
    if (hi_t) hi = ops::widen_for<ops::kNumeric>(*hi_t).template data<T>()[0];
    auto clamp = [lo, hi](T v) {
      v = v < lo ? lo : v;  // NaN compares false both ways and passes through
      return v > hi ? hi : v;
    };
    out = Tensor(x.dtype(), x.shape());
    ops::detail::run_unary(x.data<T>(), out.mutable_data<T>(), x.numel(), clamp);
  });
  if (!ok) ops::fail_dtype(ctx, x.dtype());
  ctx.outputs[0] = ops::narrow_to(out, ctx.required(0).dtype());
}

}  // namespace

void register_activation(OpRegistry& r) {
  const shape::Rule same = shape::same_as_input;
  r.add("", "Relu", &activation_kernel<ReluOp, ops::kSigned>).rule(same).meta("activation", "X");
  r.add("", "LeakyRelu", &activation_kernel<LeakyReluOp>).rule(same).meta("activation", "X");
  r.add("", "PRelu", &prelu_kernel).rule(same).meta("activation", "X slope");
  r.add("", "Elu", &activation_kernel<EluOp>).rule(same).meta("activation", "X");
  r.add("", "Selu", &activation_kernel<SeluOp>).rule(same).meta("activation", "X");
  // min and max became inputs in opset 11.
  r.add("", "Clip", &clip_kernel).versions(1, 10).rule(same).meta("activation", "input");
  r.add("", "Clip", &clip_kernel).versions(11).rule(same).meta("activation", "input min? max?");
  r.add("", "Sigmoid", &activation_kernel<SigmoidOp>).rule(same).meta("activation", "X");
  r.add("", "Tanh", &activation_kernel<TanhOp>).rule(same).meta("activation", "input");
  r.add("", "HardSigmoid", &activation_kernel<HardSigmoidOp>).rule(same).meta("activation", "X");
  r.add("", "HardSwish", &activation_kernel<HardSwishOp>).rule(same).meta("activation", "X");
  r.add("", "Softplus", &activation_kernel<SoftplusOp>).rule(same).meta("activation", "X");
  r.add("", "Mish", &activation_kernel<MishOp>).rule(same).meta("activation", "X");
  r.add("", "Softsign", &activation_kernel<SoftsignOp>).rule(same).meta("activation", "input");
  r.add("", "Shrink", &activation_kernel<ShrinkOp>).meta("", "input");
  r.add("", "ThresholdedRelu", &activation_kernel<ThresholdedReluOp>).rule(same).meta("activation", "X");
  r.add("", "Celu", &activation_kernel<CeluOp>).rule(same).meta("activation", "X");
  r.add("", "Gelu", &activation_kernel<GeluOp>).rule(same).meta("activation", "X");
  r.add("horizon", "HzSwish", &activation_kernel<SwishOp>).rule(same).meta("activation", "X");
  r.add("horizon", "HzHardSwish", &activation_kernel<HardSwishOp>).rule(same).meta("activation", "X");
  r.add("horizon", "HzMish", &activation_kernel<MishOp>).rule(same).meta("activation", "X");
  r.add("horizon", "HzGelu", &activation_kernel<GeluOp>).rule(same).meta("activation", "X");
  r.add("horizon", "HzRsqrt", &activation_kernel<RsqrtOp>).rule(same).meta("activation", "X");
}

}  // namespace ptq::exec
