// Elementwise math: Exp, Log, Sqrt, Reciprocal, Neg, Abs, Erf, Floor, Ceil, Round, Sign, the
// trigonometric and hyperbolic functions (Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh,
// Acosh, Atanh) and the float predicates IsNaN, IsInf.
// Float ops run in the input's float type (half types widened to float32); Neg/Abs/Sign also take
// integers, as their ONNX type constraints allow.
#include <cmath>
#include <type_traits>

#include "exec/registry.h"
#include "ops/shape_util.h"
#include "ops/elementwise.h"

namespace ptq::exec {
namespace {

using ops::kFloats;

struct ExpOp { template <class T> T operator()(T v) const { return std::exp(v); } };
struct LogOp { template <class T> T operator()(T v) const { return std::log(v); } };
struct SqrtOp { template <class T> T operator()(T v) const { return std::sqrt(v); } };
struct ReciprocalOp { template <class T> T operator()(T v) const { return T(1) / v; } };
struct ErfOp { template <class T> T operator()(T v) const { return std::erf(v); } };
struct FloorOp { template <class T> T operator()(T v) const { return std::floor(v); } };
struct CeilOp { template <class T> T operator()(T v) const { return std::ceil(v); } };
// ONNX Round is round-half-to-even, which is nearbyint under the default rounding mode.
struct RoundOp { template <class T> T operator()(T v) const { return std::nearbyint(v); } };
struct SinOp { template <class T> T operator()(T v) const { return std::sin(v); } };
struct CosOp { template <class T> T operator()(T v) const { return std::cos(v); } };
struct TanOp { template <class T> T operator()(T v) const { return std::tan(v); } };
struct AsinOp { template <class T> T operator()(T v) const { return std::asin(v); } };
struct AcosOp { template <class T> T operator()(T v) const { return std::acos(v); } };
struct AtanOp { template <class T> T operator()(T v) const { return std::atan(v); } };
struct SinhOp { template <class T> T operator()(T v) const { return std::sinh(v); } };
struct CoshOp { template <class T> T operator()(T v) const { return std::cosh(v); } };
struct AsinhOp { template <class T> T operator()(T v) const { return std::asinh(v); } };
struct AcoshOp { template <class T> T operator()(T v) const { return std::acosh(v); } };
struct AtanhOp { template <class T> T operator()(T v) const { return std::atanh(v); } };

struct NegOp {
  template <class T>
  T operator()(T v) const {
    if constexpr (std::is_integral_v<T>) return ops::wrap_int(T{0}, v, [](uint64_t a, uint64_t b) { return a - b; });
    else return -v;
  }
};
struct AbsOp {
  template <class T>
  T operator()(T v) const {
    if constexpr (std::is_unsigned_v<T>) return v;
    else if constexpr (std::is_integral_v<T>) return v < 0 ? NegOp{}(v) : v;  // MIN wraps to itself
    else return std::fabs(v);
  }
};
struct SignOp {
  template <class T>
  T operator()(T v) const {
    if constexpr (std::is_floating_point_v<T>) {
      if (v != v) return v;  // NaN stays NaN, as numpy.sign
    }
    return static_cast<T>((T(0) < v) - (v < T(0)));
  }
};

template <class Op, unsigned Set>
void unary_kernel(KernelContext& ctx) {
  ctx.outputs[0] = ops::map_unary<Set>(ctx, ctx.required(0), Op{});
}

// IsNaN / IsInf: a bool tensor of x's shape. IsInf's detect_negative / detect_positive (default 1)
// select which infinities count.
template <class Pred>
Tensor map_predicate(const KernelContext& ctx, const Tensor& x0, Pred pred) {
  const Tensor x = ops::widen_for<kFloats>(x0);
  Tensor out(DType::Bool, x.shape());
  uint8_t* y = out.mutable_data<uint8_t>();
  const bool ok = ops::visit_dtype<kFloats>(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* v = x.data<T>();
    for (int64_t i = 0; i < x.numel(); ++i) y[i] = pred(v[i]) ? 1 : 0;
  });
  if (!ok) ops::fail_dtype(ctx, x0.dtype());
  return out;
}

void isnan_kernel(KernelContext& ctx) {
  ctx.outputs[0] = map_predicate(ctx, ctx.required(0), [](auto v) { return v != v; });
}

void isinf_kernel(KernelContext& ctx) {
  const int64_t neg = ctx.node.attr_int("detect_negative", 1), pos = ctx.node.attr_int("detect_positive", 1);
  ctx.check((neg == 0 || neg == 1) && (pos == 0 || pos == 1),
            "attributes 'detect_negative' and 'detect_positive' must be 0 or 1");
  ctx.outputs[0] = map_predicate(ctx, ctx.required(0), [neg, pos](auto v) {
    return std::isinf(v) && (v < 0 ? neg != 0 : pos != 0);
  });
}

}  // namespace

void register_unary(OpRegistry& r) {
  const shape::Rule same = shape::same_as_input;
  r.add("", "Exp", &unary_kernel<ExpOp, kFloats>).rule(same).meta("", "input");
  r.add("", "Log", &unary_kernel<LogOp, kFloats>).rule(same).meta("", "input");
  r.add("", "Sqrt", &unary_kernel<SqrtOp, kFloats>).rule(same).meta("", "X");
  r.add("", "Reciprocal", &unary_kernel<ReciprocalOp, kFloats>).rule(same).meta("", "X");
  r.add("", "Erf", &unary_kernel<ErfOp, kFloats>).rule(same).meta("", "input");
  r.add("", "Floor", &unary_kernel<FloorOp, kFloats>).rule(same).meta("", "X");
  r.add("", "Ceil", &unary_kernel<CeilOp, kFloats>).rule(same).meta("", "X");
  r.add("", "Round", &unary_kernel<RoundOp, kFloats>).rule(same).meta("", "X");
  r.add("", "Sin", &unary_kernel<SinOp, kFloats>).rule(same).meta("", "input");
  r.add("", "Cos", &unary_kernel<CosOp, kFloats>).rule(same).meta("", "input");
  r.add("", "Tan", &unary_kernel<TanOp, kFloats>).rule(same).meta("", "input");
  r.add("", "Asin", &unary_kernel<AsinOp, kFloats>).meta("", "input");
  r.add("", "Acos", &unary_kernel<AcosOp, kFloats>).meta("", "input");
  r.add("", "Atan", &unary_kernel<AtanOp, kFloats>).meta("", "input");
  r.add("", "Sinh", &unary_kernel<SinhOp, kFloats>).meta("", "input");
  r.add("", "Cosh", &unary_kernel<CoshOp, kFloats>).meta("", "input");
  r.add("", "Asinh", &unary_kernel<AsinhOp, kFloats>).meta("", "input");
  r.add("", "Acosh", &unary_kernel<AcoshOp, kFloats>).meta("", "input");
  r.add("", "Atanh", &unary_kernel<AtanhOp, kFloats>).meta("", "input");
  r.add("", "IsNaN", &isnan_kernel).rule(shape::same_with_dtype(DType::Bool)).meta("", "X");
  r.add("", "IsInf", &isinf_kernel).rule(shape::same_with_dtype(DType::Bool)).meta("", "X");
  r.add("", "Neg", &unary_kernel<NegOp, ops::kSigned>).rule(same).meta("", "X");
  r.add("", "Abs", &unary_kernel<AbsOp, ops::kNumeric>).rule(same).meta("", "X");
  r.add("", "Sign", &unary_kernel<SignOp, ops::kNumeric>).rule(same).meta("", "input");
}

}  // namespace ptq::exec
