// Elementwise arithmetic with numpy broadcasting: Add, Sub, Mul, Div, Mod, BitShift, Pow and the variadic
// Min, Max, Sum, Mean. Computed in the inputs' own type (float32 for the model path, integers for
// shape arithmetic); half types are widened to float32.
#include <cmath>
#include <string>
#include <type_traits>

#include "exec/registry.h"
#include "ops/elementwise.h"
#include "ops/shape_util.h"

namespace ptq::exec {
namespace {

using ops::kFloats;
using ops::kNumeric;

struct AddOp {
  template <class T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) return ops::wrap_int(a, b, [](uint64_t x, uint64_t y) { return x + y; });
    else return a + b;
  }
};
struct SubOp {
  template <class T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) return ops::wrap_int(a, b, [](uint64_t x, uint64_t y) { return x - y; });
    else return a - b;
  }
};
struct MulOp {
  template <class T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) return ops::wrap_int(a, b, [](uint64_t x, uint64_t y) { return x * y; });
    else return a * b;
  }
};
struct DivOp {
  template <class T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      // Integer division truncates (C++ and onnxruntime). x/0 has no defined result in ONNX; give 0
      // rather than trap, and let MIN/-1 wrap like the other integer ops.
      if (b == 0) return 0;
      if constexpr (std::is_signed_v<T>) {
        if (b == -1) return ops::wrap_int(T{0}, a, [](uint64_t x, uint64_t y) { return x - y; });
      }
      return static_cast<T>(a / b);
    } else {
      return a / b;
    }
  }
};
// Mod with fmod = 0: the remainder takes the divisor's sign (Python %, integers only); fmod = 1:
// the dividend's sign (C fmod). x mod 0 has no defined result in ONNX; integers give 0 as Div does.
template <bool Fmod>
struct ModOp {
  template <class T>
  T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) {
      return std::fmod(a, b);
    } else {
      if (b == 0) return 0;
      if constexpr (std::is_signed_v<T>) {
        if (b == -1) return 0;  // MIN % -1 would trap
        const T r = static_cast<T>(a % b);
        if constexpr (!Fmod) {
          if (r != 0 && ((r < 0) != (b < 0))) return static_cast<T>(r + b);
        }
        return r;
      } else {
        return static_cast<T>(a % b);
      }
    }
  }
};

void mod_kernel(KernelContext& ctx) {
  const int64_t fmod = ctx.node.attr_int("fmod", 0);
  ctx.check(fmod == 0 || fmod == 1, "attribute 'fmod' must be 0 or 1, got " + std::to_string(fmod));
  const Tensor& a = ctx.required(0);
  const bool floats = a.dtype() == DType::Float || a.dtype() == DType::Double || ops::is_half(a.dtype());
  ctx.check(!floats || fmod == 1, "attribute 'fmod' must be 1 for floating-point inputs");
  ctx.outputs[0] = fmod ? ops::map_binary<kNumeric>(ctx, a, ctx.required(1), ModOp<true>{})
                        : ops::map_binary<ops::kInts>(ctx, a, ctx.required(1), ModOp<false>{});
}

// BitShift on unsigned integers; a shift by the type's width or more gives 0 (numpy). uint16 and
// uint32 are computed in int64 (ops::widen_for) and cut back to their width, which leaves exactly
// the bits the narrow shift keeps.
template <bool Left>
struct BitShiftOp {
  template <class T>
  T operator()(T a, T b) const {
    if constexpr (std::is_signed_v<T>) {
      if (b < 0) return T(0);
    }
    if (b >= static_cast<T>(sizeof(T) * 8)) return T(0);
    const auto u = static_cast<uint64_t>(a);  // int64 holds a widened uint16/uint32: never negative
    return static_cast<T>(Left ? u << b : u >> b);
  }
};

void bit_shift_kernel(KernelContext& ctx) {
  ctx.check(ctx.node.has_attr("direction"), "attribute 'direction' is required");
  const std::string dir = ctx.node.attr_string("direction", "");
  ctx.check(dir == "LEFT" || dir == "RIGHT",
            "attribute 'direction' must be \"LEFT\" or \"RIGHT\", got \"" + dir + "\"");
  const Tensor& a = ctx.required(0);
  const Tensor& b = ctx.required(1);
  const DType t = a.dtype();
  ctx.check(t == DType::UInt8 || t == DType::UInt16 || t == DType::UInt32 || t == DType::UInt64,
            "unsupported input dtype " + dtype_name(t) + " (BitShift takes unsigned integers)");
  ctx.outputs[0] = dir == "LEFT" ? ops::map_binary<ops::kInts>(ctx, a, b, BitShiftOp<true>{})
                                 : ops::map_binary<ops::kInts>(ctx, a, b, BitShiftOp<false>{});
}

// numpy.maximum/minimum semantics: a NaN in either operand propagates.
struct MaxOp {
  template <class T>
  T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) return (a > b || a != a) ? a : b;
    else return a > b ? a : b;
  }
};
struct MinOp {
  template <class T>
  T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) return (a < b || a != a) ? a : b;
    else return a < b ? a : b;
  }
};

template <class Op, unsigned Set>
void binary_kernel(KernelContext& ctx) {
  ctx.outputs[0] = ops::map_binary<Set>(ctx, ctx.required(0), ctx.required(1), Op{});
}

// Pow: the output has the base's dtype; the exponent may be any numeric type (opset 12+).
void pow_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  const Tensor& y = ctx.required(1);
  if (x.dtype() == DType::Float && y.dtype() == DType::Float) {
    // A scalar exponent of 2 (the usual case in LayerNorm-style subgraphs) is an exact square.
    if (y.numel() == 1 && y.data<float>()[0] == 2.0f && y.rank() <= x.rank()) {
      ctx.outputs[0] = ops::map_unary<ops::kF32>(ctx, x, [](float v) { return v * v; });
      return;
    }
    ctx.outputs[0] = ops::map_binary<ops::kF32>(ctx, x, y, [](float a, float b) { return std::pow(a, b); });
    return;
  }
  // Mixed or integer types: compute in double (onnxruntime promotes mixed operands to double too)
  // and convert to the base type (truncating for integers, as numpy's astype does).
  const Tensor xd = cast_tensor(x, DType::Double);
  const Tensor yd = cast_tensor(y, DType::Double);
  const Tensor r = ops::map_binary<ops::kF64>(ctx, xd, yd, [](double a, double b) { return std::pow(a, b); });
  ctx.outputs[0] = cast_tensor(r, x.dtype());
}

// Min/Max/Sum/Mean take 1..N inputs, folded pairwise with broadcasting.
template <class Op, unsigned Set>
Tensor fold_inputs(KernelContext& ctx) {
  ctx.check(ctx.input_count() >= 1, "needs at least one input");
  Tensor acc = ctx.required(0);
  for (size_t i = 1; i < ctx.input_count(); ++i) acc = ops::map_binary<Set>(ctx, acc, ctx.required(i), Op{});
  return acc;
}

template <class Op, unsigned Set>
void variadic_kernel(KernelContext& ctx) {
  Tensor r = fold_inputs<Op, Set>(ctx);
  // A single input passes through unchanged; still reject dtypes the op does not support.
  if (ctx.input_count() == 1) r = ops::map_unary<Set>(ctx, r, [](auto v) { return v; });
  ctx.outputs[0] = r;
}

void mean_kernel(KernelContext& ctx) {
  const Tensor sum = ops::widen_for<kFloats>(fold_inputs<AddOp, kFloats>(ctx));
  const auto inv = static_cast<double>(ctx.input_count());
  const Tensor mean = ops::map_unary<kFloats>(ctx, sum, [inv](auto v) { return v / static_cast<decltype(v)>(inv); });
  ctx.outputs[0] = ops::narrow_to(mean, ctx.required(0).dtype());
}

}  // namespace

void register_binary(OpRegistry& r) {
  const shape::Rule bc = shape::broadcast_rule(std::nullopt);
  r.add("", "Add", &binary_kernel<AddOp, kNumeric>).rule(bc).meta("", "A B");
  r.add("", "Sub", &binary_kernel<SubOp, kNumeric>).rule(bc).meta("", "A B");
  r.add("", "Mul", &binary_kernel<MulOp, kNumeric>).rule(bc).meta("", "A B");
  r.add("", "Div", &binary_kernel<DivOp, kNumeric>).rule(bc).meta("", "A B");
  r.add("", "Mod", &mod_kernel).rule(bc).meta("", "A B");
  r.add("", "BitShift", &bit_shift_kernel).rule(bc).meta("", "X Y");
  r.add("", "Pow", &pow_kernel).rule(bc).meta("", "X Y");
  r.add("", "Max", &variadic_kernel<MaxOp, kNumeric>).rule(bc).meta("", "data_0...");
  r.add("", "Min", &variadic_kernel<MinOp, kNumeric>).rule(bc).meta("", "data_0...");
  r.add("", "Sum", &variadic_kernel<AddOp, kFloats>).rule(bc).meta("", "data_0...");
  r.add("", "Mean", &mean_kernel).rule(bc).meta("", "data_0...");
}

}  // namespace ptq::exec
