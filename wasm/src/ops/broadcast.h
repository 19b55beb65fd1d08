#pragma once
// Numpy multidirectional broadcasting for elementwise kernels with 1-3 inputs.
//
// Why a "plan": the broadcast pattern is reduced to a few collapsed dims before any data is touched,
// so equal shapes become one flat loop, a scalar operand becomes a loop against a register value,
// and a per-channel bias ([C,1,1] against [N,C,H,W]) becomes an outer loop over N*C runs of H*W
// with the bias held constant. Kernels then only write the innermost contiguous loop, which the
// compiler vectorises; there is no per-element index arithmetic or dtype switch.
#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/tensor.h"

namespace ptq::ops {

// Output shape of broadcasting `a` with `b` (numpy rules: align right, 1 stretches). Throws
// ptq::Error naming both shapes when a pair of dims differs and neither is 1.
inline Shape broadcast_shape(const Shape& a, const Shape& b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      fail("shapes " + shape_str(a) + " and " + shape_str(b) + " cannot be broadcast together");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

// Iteration plan for N inputs read as the broadcast output shape. Dims of extent 1 are dropped and
// adjacent dims are merged while every input either advances through both or repeats both.
template <size_t N>
struct BroadcastPlan {
  Shape out_shape;
  int64_t out_numel = 0;
  // Collapsed outer dims (everything but the innermost run) and per-input element strides
  // (0 where that input is repeated).
  std::vector<int64_t> outer_dims;
  std::vector<std::array<int64_t, N>> outer_strides;
  // Length of each innermost run, and whether each input advances along it (stride 1) or holds
  // a single value for the whole run (stride 0).
  int64_t inner = 1;
  std::array<bool, N> inner_advances{};

  bool all_advance() const {
    for (bool b : inner_advances)
      if (!b) return false;
    return true;
  }
};

// Plans reading `in` shapes as `out` (each input must broadcast unidirectionally to `out`).
template <size_t N>
BroadcastPlan<N> make_broadcast_plan(const std::array<const Shape*, N>& in, const Shape& out) {
  BroadcastPlan<N> plan;
  plan.out_shape = out;
  plan.out_numel = shape_numel(out);
  const size_t rank = out.size();
  // Per output dim: whether each input advances along it (its extent equals the output's).
  std::vector<int64_t> dims;
  std::vector<std::array<bool, N>> adv;
  for (size_t d = 0; d < rank; ++d) {
    std::array<bool, N> a{};
    for (size_t i = 0; i < N; ++i) {
      const Shape& s = *in[i];
      // The messages are built only on failure: they are as long as the shapes, and building them
      // for every dimension made a rank-65536 broadcast quadratic (model_exec_fuzz).
      if (s.size() > rank) fail("shape " + shape_str(s) + " cannot be broadcast to " + shape_str(out));
      const size_t pad = rank - s.size();
      const int64_t e = d < pad ? 1 : s[d - pad];
      if (e != out[d] && e != 1) fail("shape " + shape_str(s) + " cannot be broadcast to " + shape_str(out));
      a[i] = e == out[d];
    }
    if (out[d] == 1) continue;  // contributes no iteration
    if (!dims.empty() && adv.back() == a) {
      dims.back() *= out[d];
    } else {
      dims.push_back(out[d]);
      adv.push_back(a);
    }
  }
  if (dims.empty()) {  // scalar-like output: one run of length 1
    plan.inner = 1;
    plan.inner_advances.fill(true);
    return plan;
  }
  // Element strides per collapsed dim: the product of the later dims the input advances through.
  const size_t k = dims.size();
  std::vector<std::array<int64_t, N>> strides(k);
  std::array<int64_t, N> running;
  running.fill(1);
  for (size_t j = k; j-- > 0;) {
    for (size_t i = 0; i < N; ++i) {
      strides[j][i] = adv[j][i] ? running[i] : 0;
      if (adv[j][i]) running[i] *= dims[j];
    }
  }
  plan.inner = dims.back();
  plan.inner_advances = adv.back();
  plan.outer_dims.assign(dims.begin(), dims.end() - 1);
  plan.outer_strides.assign(strides.begin(), strides.end() - 1);
  return plan;
}

// Plans the multidirectional broadcast of all `in` shapes.
template <size_t N>
BroadcastPlan<N> make_broadcast_plan(const std::array<const Shape*, N>& in) {
  Shape out = *in[0];
  for (size_t i = 1; i < N; ++i) out = broadcast_shape(out, *in[i]);
  return make_broadcast_plan<N>(in, out);
}

// Calls body(out_offset, in_offsets, run_length) once per innermost run, in output order.
template <size_t N, class Body>
void for_each_run(const BroadcastPlan<N>& plan, Body&& body) {
  if (plan.out_numel == 0) return;
  const size_t k = plan.outer_dims.size();
  std::vector<int64_t> idx(k, 0);
  std::array<int64_t, N> off{};
  const int64_t runs = plan.out_numel / plan.inner;
  int64_t out_off = 0;
  for (int64_t r = 0; r < runs; ++r, out_off += plan.inner) {
    body(out_off, static_cast<const std::array<int64_t, N>&>(off), plan.inner);
    for (size_t j = k; j-- > 0;) {  // odometer step over the outer dims
      if (++idx[j] < plan.outer_dims[j]) {
        for (size_t i = 0; i < N; ++i) off[i] += plan.outer_strides[j][i];
        break;
      }
      idx[j] = 0;
      for (size_t i = 0; i < N; ++i) off[i] -= plan.outer_strides[j][i] * (plan.outer_dims[j] - 1);
    }
  }
}

namespace detail {
// The inner loops take restrict-qualified parameters (which GCC honours, unlike restrict locals
// inside a lambda), so they vectorise without a runtime aliasing check.
template <class A, class B, class R, class Op>
void run_both(const A* __restrict a, const B* __restrict b, R* __restrict out, int64_t n, Op& op) {
  for (int64_t i = 0; i < n; ++i) out[i] = op(a[i], b[i]);
}
template <class A, class B, class R, class Op>
void run_a(const A* __restrict a, B b, R* __restrict out, int64_t n, Op& op) {
  for (int64_t i = 0; i < n; ++i) out[i] = op(a[i], b);
}
template <class A, class B, class R, class Op>
void run_b(A a, const B* __restrict b, R* __restrict out, int64_t n, Op& op) {
  for (int64_t i = 0; i < n; ++i) out[i] = op(a, b[i]);
}
}  // namespace detail

// out[i] = op(a[i], b[i]) over the broadcast plan. The specialised inner loops (both advance, one
// held in a register) are what the compiler vectorises; `op` must be an inlinable functor.
template <class A, class B, class R, class Op>
void binary_apply(const BroadcastPlan<2>& plan, const A* a, const B* b, R* out, Op op) {
  const bool adv_a = plan.inner_advances[0], adv_b = plan.inner_advances[1];
  for_each_run(plan, [&](int64_t o, const std::array<int64_t, 2>& off, int64_t n) {
    if (adv_a && adv_b) detail::run_both(a + off[0], b + off[1], out + o, n, op);
    else if (adv_a) detail::run_a(a + off[0], b[off[1]], out + o, n, op);
    else if (adv_b) detail::run_b(a[off[0]], b + off[1], out + o, n, op);
    else std::fill_n(out + o, n, static_cast<R>(op(a[off[0]], b[off[1]])));
  });
}

namespace detail {
template <class A, class B, class C, class R, class Op>
void run_three(const A* __restrict a, const B* __restrict b, const C* __restrict c, R* __restrict out, int64_t n,
               Op& op) {
  for (int64_t i = 0; i < n; ++i) out[i] = op(a[i], b[i], c[i]);
}
}  // namespace detail

// out[i] = op(a[i], b[i], c[i]) over the broadcast plan (Where). Only the all-advancing run has a
// dedicated loop; runs with held operands use 0/1 index multipliers.
template <class A, class B, class C, class R, class Op>
void ternary_apply(const BroadcastPlan<3>& plan, const A* a, const B* b, const C* c, R* out, Op op) {
  const int64_t sa = plan.inner_advances[0], sb = plan.inner_advances[1], sc = plan.inner_advances[2];
  const bool all = plan.all_advance();
  for_each_run(plan, [&](int64_t o, const std::array<int64_t, 3>& off, int64_t n) {
    const A* pa = a + off[0];
    const B* pb = b + off[1];
    const C* pc = c + off[2];
    if (all) {
      detail::run_three(pa, pb, pc, out + o, n, op);
    } else {
      for (int64_t i = 0; i < n; ++i) out[o + i] = op(pa[i * sa], pb[i * sb], pc[i * sc]);
    }
  });
}

}  // namespace ptq::ops
