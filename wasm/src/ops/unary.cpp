// Elementwise math: Exp, Log, Sqrt, Reciprocal, Neg, Abs, Erf, Floor, Ceil, Round, Sin, Cos, Sign.
// Float ops run in the input's float type (half types widened to float32); Neg/Abs/Sign also take
// integers, as their ONNX type constraints allow.
#include <cmath>
#include <type_traits>

#include "exec/registry.h"
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

}  // namespace

void register_unary(OpRegistry& r) {
  r.add("", "Exp", &unary_kernel<ExpOp, kFloats>);
  r.add("", "Log", &unary_kernel<LogOp, kFloats>);
  r.add("", "Sqrt", &unary_kernel<SqrtOp, kFloats>);
  r.add("", "Reciprocal", &unary_kernel<ReciprocalOp, kFloats>);
  r.add("", "Erf", &unary_kernel<ErfOp, kFloats>);
  r.add("", "Floor", &unary_kernel<FloorOp, kFloats>);
  r.add("", "Ceil", &unary_kernel<CeilOp, kFloats>);
  r.add("", "Round", &unary_kernel<RoundOp, kFloats>);
  r.add("", "Sin", &unary_kernel<SinOp, kFloats>);
  r.add("", "Cos", &unary_kernel<CosOp, kFloats>);
  r.add("", "Neg", &unary_kernel<NegOp, ops::kSigned>);
  r.add("", "Abs", &unary_kernel<AbsOp, ops::kNumeric>);
  r.add("", "Sign", &unary_kernel<SignOp, ops::kNumeric>);
}

}  // namespace ptq::exec
