#pragma once
// Dtype dispatch and whole-tensor elementwise drivers shared by the elementwise op families
// (binary, unary, activation, compare_logic). The dtype switch happens once per tensor; the loops
// inside are typed and contiguous (see broadcast.h), so kernels pass small inlinable functors.
#include <concepts>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "core/tensor.h"
#include "exec/kernel.h"
#include "ops/broadcast.h"
#include "ops/simd.h"

namespace ptq::ops {

// Sets of element types a kernel accepts (bit flags).
enum TypeSet : unsigned {
  kF32 = 1u,
  kF64 = 2u,
  kSignedInts = 4u,    // int8, int16, int32, int64
  kUnsignedInts = 8u,  // uint8, uint16, uint32, uint64
  kBool = 16u,         // visited as uint8_t (0/1)
  kFloats = kF32 | kF64,
  kInts = kSignedInts | kUnsignedInts,
  kSigned = kFloats | kSignedInts,
  kNumeric = kFloats | kInts,
};

inline bool is_half(DType t) { return t == DType::Float16 || t == DType::BFloat16; }
// Integer widths that are rare in models; they are computed in int64, which is exact for every
// elementwise op and reduction here (results are cast back with wrap-around), so that each kernel
// instantiates its loops for fewer types (this keeps the wasm small).
inline bool is_rare_int(DType t) {
  return t == DType::Int8 || t == DType::Int16 || t == DType::UInt16 || t == DType::UInt32;
}

// Calls f(T{}) with the C++ element type of `t` if it belongs to Set; returns false otherwise.
// Only the compute types are visited (float, double, int32, int64, uint8, uint64, bool): callers
// first map half types and rare integer widths to a compute type with widen_for().
template <unsigned Set, class F>
bool visit_dtype(DType t, F&& f) {
  switch (t) {
    case DType::Float: if constexpr ((Set & kF32) != 0) { f(float{}); return true; } break;
    case DType::Double: if constexpr ((Set & kF64) != 0) { f(double{}); return true; } break;
    case DType::Int32: if constexpr ((Set & kSignedInts) != 0) { f(int32_t{}); return true; } break;
    case DType::Int64: if constexpr ((Set & kSignedInts) != 0) { f(int64_t{}); return true; } break;
    case DType::UInt8: if constexpr ((Set & kUnsignedInts) != 0) { f(uint8_t{}); return true; } break;
    case DType::UInt64: if constexpr ((Set & kUnsignedInts) != 0) { f(uint64_t{}); return true; } break;
    case DType::Bool: if constexpr ((Set & kBool) != 0) { f(uint8_t{}); return true; } break;
    default: break;
  }
  return false;
}

// Maps a tensor to the type it is computed in: half types to float32 (when the kernel takes
// float32), rare integer widths to int64 (when the kernel takes that signedness); others as is.
template <unsigned Set>
Tensor widen_for(const Tensor& t) {
  const DType d = t.dtype();
  if constexpr ((Set & kF32) != 0) {
    if (is_half(d)) return t.to_float();
  }
  if (is_rare_int(d)) {
    const bool is_signed = d == DType::Int8 || d == DType::Int16;
    if ((Set & (is_signed ? kSignedInts : kUnsignedInts)) != 0) return cast_tensor(t, DType::Int64);
  }
  return t;
}

// Casts a result computed by widen_for() back to the caller's dtype.
inline Tensor narrow_to(const Tensor& t, DType original) {
  return t.dtype() == original || !(is_half(original) || is_rare_int(original)) ? t : cast_tensor(t, original);
}

// Integer arithmetic wraps modulo 2^bits like numpy/onnxruntime instead of being UB: computed in
// uint64_t, then truncated back (well-defined since C++20).
template <class T, class Op>
inline T wrap_int(T a, T b, Op op) {
  return static_cast<T>(op(static_cast<uint64_t>(a), static_cast<uint64_t>(b)));
}

// Plans a broadcast and reports an incompatibility as an error of this node.
template <size_t N>
BroadcastPlan<N> plan_or_fail(const exec::KernelContext& ctx, const std::array<const Shape*, N>& shapes) {
  try {
    return make_broadcast_plan<N>(shapes);
  } catch (const Error& e) {
    ctx.fail(e.what());
  }
}

[[noreturn]] inline void fail_dtype(const exec::KernelContext& ctx, DType t) {
  ctx.fail("unsupported input dtype " + dtype_name(t));
}

// A unary functor that also has a 4-lane float32 form, used by map_unary for float32 tensors.
template <class F>
concept VectorOp = requires(const F& f, simd::V4 v) {
  { f.vector(v) } -> std::same_as<simd::V4>;
};

namespace detail {
template <class T, class F>
void run_unary(const T* __restrict x, T* __restrict y, int64_t n, F& f) {
  if constexpr (std::is_same_v<T, float> && VectorOp<F>) {
    // Every element through the vector form (the tail via a padded copy), so results do not depend
    // on an element's position.
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) simd::store(y + i, f.vector(simd::load(x + i)));
    if (i < n) {
      float tmp[4] = {0, 0, 0, 0};
      std::memcpy(tmp, x + i, static_cast<size_t>(n - i) * sizeof(float));
      simd::store(tmp, f.vector(simd::load(tmp)));
      std::memcpy(y + i, tmp, static_cast<size_t>(n - i) * sizeof(float));
    }
    return;
  }
  for (int64_t i = 0; i < n; ++i) y[i] = static_cast<T>(f(x[i]));
}
}  // namespace detail

// y = f(x) elementwise, same dtype and shape as x. f is called with the element type T and must
// return something convertible to T.
template <unsigned Set, class F>
Tensor map_unary(const exec::KernelContext& ctx, const Tensor& x, F f) {
  const Tensor in = widen_for<Set>(x);
  Tensor out;
  const bool ok = visit_dtype<Set>(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    out = Tensor(in.dtype(), in.shape());
    detail::run_unary(in.data<T>(), out.mutable_data<T>(), in.numel(), f);
  });
  if (!ok) fail_dtype(ctx, x.dtype());
  return narrow_to(out, x.dtype());
}

// out = op(a, b) with numpy broadcasting; a and b must share a dtype. The output dtype is the
// input's unless `out_dtype` is given (comparisons produce Bool, stored as uint8_t 0/1).
template <unsigned Set, class Op>
Tensor map_binary(const exec::KernelContext& ctx, const Tensor& a0, const Tensor& b0, Op op,
                  DType out_dtype = DType::Undefined) {
  ctx.check(a0.dtype() == b0.dtype(),
            "input dtypes differ: " + dtype_name(a0.dtype()) + " and " + dtype_name(b0.dtype()));
  const Tensor a = widen_for<Set>(a0), b = widen_for<Set>(b0);
  const BroadcastPlan<2> plan = plan_or_fail<2>(ctx, {&a.shape(), &b.shape()});
  Tensor out;
  const bool ok = visit_dtype<Set>(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using R = decltype(op(T{}, T{}));
    out = Tensor(out_dtype == DType::Undefined ? a.dtype() : out_dtype, plan.out_shape);
    binary_apply(plan, a.data<T>(), b.data<T>(), out.mutable_data<R>(), op);
  });
  if (!ok) fail_dtype(ctx, a0.dtype());
  return out_dtype == DType::Undefined ? narrow_to(out, a0.dtype()) : out;
}

}  // namespace ptq::ops
