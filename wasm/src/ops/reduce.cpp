// Reductions: ReduceMean, ReduceMax, ReduceMin, ReduceSum, ReduceL1, ReduceL2, ReduceProd,
// ReduceSumSquare, ReduceLogSum, ReduceLogSumExp, and ArgMax / ArgMin.
//
// The reduction reuses the broadcast planner backwards: the accumulator (the output in keepdims
// form) is "broadcast" over the input shape, so each innermost run is either a contiguous row
// folded into one accumulator (reduced innermost axis) or a row added elementwise into a row of
// accumulators (kept innermost axis). Both loops are contiguous; float sums accumulate in double.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "exec/registry.h"
#include "ops/shape_util.h"
#include "ops/elementwise.h"

namespace ptq::exec {
namespace {

template <class T>
using SumType = std::conditional_t<std::is_floating_point_v<T>, double, T>;

template <class T>
T plus(T a, T b) {
  if constexpr (std::is_integral_v<T>) return ops::wrap_int(a, b, [](uint64_t x, uint64_t y) { return x + y; });
  else return a + b;
}
template <class T>
T times(T a, T b) {
  if constexpr (std::is_integral_v<T>) return ops::wrap_int(a, b, [](uint64_t x, uint64_t y) { return x * y; });
  else return a * b;
}

// A reducer folds elements of type T into an accumulator A: add(acc, v), merge(acc, acc), and
// finish(acc, element_count) -> T. init() is the identity.
template <class T>
struct SumR {
  using A = SumType<T>;
  static A init() { return A(0); }
  static A add(A a, T v) { return plus(a, static_cast<A>(v)); }
  static A merge(A a, A b) { return plus(a, b); }
  static T finish(A a, int64_t) { return static_cast<T>(a); }
};
template <class T>
struct MeanR : SumR<T> {
  using A = SumType<T>;
  static T finish(A a, int64_t n) {
    if constexpr (std::is_integral_v<T>) return n ? static_cast<T>(a / static_cast<A>(n)) : T(0);
    else return static_cast<T>(a / static_cast<A>(n));  // an empty mean is NaN, as numpy
  }
};
template <class T>
struct SumSquareR : SumR<T> {
  using A = SumType<T>;
  static A add(A a, T v) { return plus(a, times(static_cast<A>(v), static_cast<A>(v))); }
};
template <class T>
struct L2R : SumSquareR<T> {
  using A = SumType<T>;
  static T finish(A a, int64_t) { return static_cast<T>(std::sqrt(static_cast<double>(a))); }
};
template <class T>
struct L1R : SumR<T> {
  using A = SumType<T>;
  static A add(A a, T v) {
    if constexpr (std::is_unsigned_v<T>) return plus(a, static_cast<A>(v));
    else return plus(a, static_cast<A>(v < T(0) ? T(0) - v : v));
  }
};
template <class T>
struct LogSumR : SumR<T> {
  using A = SumType<T>;
  static T finish(A a, int64_t) { return static_cast<T>(std::log(static_cast<double>(a))); }
};
// log(sum(exp(x))) accumulated as (running max m, sum of exp(x - m)), so large inputs do not
// overflow exp (onnxruntime subtracts the max too).
template <class T>
struct LogSumExpR {
  struct A {
    double m = -std::numeric_limits<double>::infinity();
    double s = 0;
  };
  static A init() { return A{}; }
  static A merge(A a, A b) {
    if (b.s == 0 && !std::isnan(b.m)) return a;
    if (a.s == 0 && !std::isnan(a.m)) return b;
    if (std::isnan(a.m) || std::isnan(b.m)) return A{std::numeric_limits<double>::quiet_NaN(), 1};
    if (b.m > a.m) std::swap(a, b);
    if (a.m == std::numeric_limits<double>::infinity()) return A{a.m, 1};
    return A{a.m, a.s + b.s * std::exp(b.m - a.m)};
  }
  static A add(A a, T v) {
    const auto x = static_cast<double>(v);
    if (x == -std::numeric_limits<double>::infinity()) return a;  // exp(-inf) adds nothing
    return merge(a, A{x, 1});
  }
  static T finish(A a, int64_t) { return static_cast<T>(a.m + std::log(a.s)); }
};
template <class T>
struct ProdR {
  using A = SumType<T>;
  static A init() { return A(1); }
  static A add(A a, T v) { return times(a, static_cast<A>(v)); }
  static A merge(A a, A b) { return times(a, b); }
  static T finish(A a, int64_t) { return static_cast<T>(a); }
};
// Max/Min propagate NaN (numpy); the identity of an empty reduction is -inf / +inf (or the limits).
template <class T>
struct MaxR {
  using A = T;
  static A init() {
    if constexpr (std::is_floating_point_v<T>) return -std::numeric_limits<T>::infinity();
    else return std::numeric_limits<T>::lowest();
  }
  static A add(A a, T v) { return (v > a || v != v) ? v : a; }
  static A merge(A a, A b) { return add(a, b); }
  static T finish(A a, int64_t) { return a; }
};
template <class T>
struct MinR {
  using A = T;
  static A init() {
    if constexpr (std::is_floating_point_v<T>) return std::numeric_limits<T>::infinity();
    else return std::numeric_limits<T>::max();
  }
  static A add(A a, T v) { return (v < a || v != v) ? v : a; }
  static A merge(A a, A b) { return add(a, b); }
  static T finish(A a, int64_t) { return a; }
};

// Folds a contiguous row with four independent partials, which breaks the dependency chain
// (FP reductions are not reassociated by the compiler without -ffast-math).
template <class R, class T>
typename R::A fold_row(typename R::A acc, const T* __restrict x, int64_t n) {
  using A = typename R::A;
  A p0 = R::init(), p1 = R::init(), p2 = R::init(), p3 = R::init();
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    p0 = R::add(p0, x[i]);
    p1 = R::add(p1, x[i + 1]);
    p2 = R::add(p2, x[i + 2]);
    p3 = R::add(p3, x[i + 3]);
  }
  for (; i < n; ++i) p0 = R::add(p0, x[i]);
  return R::merge(acc, R::merge(R::merge(p0, p1), R::merge(p2, p3)));
}

// acc[i] = add(acc[i], x[i]): the kept-innermost-axis case, vectorised across accumulators.
template <class R, class T>
void accumulate_row(typename R::A* __restrict acc, const T* __restrict x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) acc[i] = R::add(acc[i], x[i]);
}

struct ReducePlan {
  Shape keep_shape;  // output shape with reduced dims as 1
  Shape out_shape;   // what the node outputs (keepdims or not)
  int64_t count = 1; // elements folded into each output
};

// Axes come from the `axes` attribute, or from the optional int64 input 1 from `input_opset` on
// (13 for ReduceSum, 18 for the others). Empty axes reduce everything unless
// noop_with_empty_axes, in which case every element is "reduced" alone.
ReducePlan plan_reduce(const KernelContext& ctx, const Shape& shape, int input_opset) {
  const auto rank = static_cast<int64_t>(shape.size());
  std::vector<int64_t> axes;
  if (ctx.opset() >= input_opset) {
    ctx.check(!ctx.node.has_attr("axes"), "attribute 'axes' is not allowed from opset " +
                                               std::to_string(input_opset) + " on (axes is an input)");
    if (const Tensor* a = ctx.input(1)) {
      ctx.check(a->dtype() == DType::Int64 && a->rank() <= 1, "input 'axes' must be a 1-D int64 tensor");
      axes = a->to_int64_vector();
    }
  } else {
    ctx.check(ctx.input(1) == nullptr, "axes input is only allowed from opset " + std::to_string(input_opset));
    axes = ctx.node.attr_ints("axes");
  }
  const bool keepdims = ctx.node.attr_int("keepdims", 1) != 0;
  const bool noop = axes.empty() && ctx.node.attr_int("noop_with_empty_axes", 0) != 0;
  std::vector<bool> reduced(shape.size(), axes.empty() && !noop);
  for (int64_t a : axes) {
    if (a < 0) a += rank;
    ctx.check(a >= 0 && a < rank, "axis out of range for rank " + std::to_string(rank));
    reduced[static_cast<size_t>(a)] = true;
  }
  ReducePlan p;
  for (size_t d = 0; d < shape.size(); ++d) {
    p.keep_shape.push_back(reduced[d] ? 1 : shape[d]);
    if (reduced[d]) p.count *= shape[d];
    if (!reduced[d] || keepdims) p.out_shape.push_back(reduced[d] ? 1 : shape[d]);
  }
  return p;
}

template <template <class> class Reducer, class T>
Tensor reduce_typed(const Tensor& x, const ReducePlan& p, DType dtype) {
  using R = Reducer<T>;
  using A = typename R::A;
  const int64_t out_n = shape_numel(p.keep_shape);
  std::vector<A> acc(static_cast<size_t>(out_n), R::init());
  const auto plan = ops::make_broadcast_plan<1>({&p.keep_shape}, x.shape());
  const T* src = x.data<T>();
  A* dst = acc.data();
  const bool inner_kept = plan.inner_advances[0];
  ops::for_each_run(plan, [&](int64_t xo, const std::array<int64_t, 1>& ao, int64_t n) {
    if (inner_kept) accumulate_row<R>(dst + ao[0], src + xo, n);
    else dst[ao[0]] = fold_row<R>(dst[ao[0]], src + xo, n);
  });
  Tensor out(dtype, p.out_shape);
  T* o = out.mutable_data<T>();
  for (int64_t i = 0; i < out_n; ++i) o[i] = R::finish(acc[static_cast<size_t>(i)], p.count);
  return out;
}

template <template <class> class Reducer, int InputOpset>
void reduce_kernel(KernelContext& ctx) {
  const Tensor& x0 = ctx.required(0);
  const Tensor x = ops::widen_for<ops::kNumeric>(x0);
  const ReducePlan p = plan_reduce(ctx, x.shape(), InputOpset);
  Tensor out;
  const bool ok = ops::visit_dtype<ops::kNumeric>(x.dtype(), [&](auto tag) {
    out = reduce_typed<Reducer, decltype(tag)>(x, p, x.dtype());
  });
  if (!ok) ops::fail_dtype(ctx, x0.dtype());
  ctx.outputs[0] = ops::narrow_to(out, x0.dtype());
}

// ArgMax/ArgMin along `axis` (default 0); ties resolve to the first index, or the last with
// select_last_index. Output is int64.
template <bool IsMax>
void arg_kernel(KernelContext& ctx) {
  const Tensor& x0 = ctx.required(0);
  const Tensor x = ops::widen_for<ops::kNumeric>(x0);
  const auto rank = static_cast<int64_t>(x.rank());
  ctx.check(rank >= 1, "input must have rank >= 1");
  int64_t axis = ctx.node.attr_int("axis", 0);
  if (axis < 0) axis += rank;
  ctx.check(axis >= 0 && axis < rank, "attribute 'axis' out of range for rank " + std::to_string(rank));
  const bool keepdims = ctx.node.attr_int("keepdims", 1) != 0;
  const bool last = ctx.node.attr_int("select_last_index", 0) != 0;
  const auto ax = static_cast<size_t>(axis);
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < ax; ++d) outer *= x.dim(d);
  for (size_t d = ax + 1; d < x.rank(); ++d) inner *= x.dim(d);
  const int64_t n = x.dim(ax);
  ctx.check(n > 0 || outer * inner == 0, "cannot take an arg extreme over an empty axis");
  Shape out_shape;
  for (size_t d = 0; d < x.rank(); ++d)
    if (d != ax) out_shape.push_back(x.dim(d));
    else if (keepdims) out_shape.push_back(1);
  Tensor out(DType::Int64, out_shape);
  int64_t* idx = out.mutable_data<int64_t>();
  const bool ok = ops::visit_dtype<ops::kNumeric>(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* src = x.data<T>();
    std::vector<T> best(static_cast<size_t>(inner));
    for (int64_t o = 0; o < outer; ++o) {
      const T* block = src + o * n * inner;
      int64_t* oi = idx + o * inner;
      std::copy(block, block + inner, best.begin());
      std::fill(oi, oi + inner, 0);
      for (int64_t r = 1; r < n; ++r) {
        const T* row = block + r * inner;
        for (int64_t j = 0; j < inner; ++j) {
          const T v = row[j];
          const bool better = IsMax ? (last ? v >= best[j] : v > best[j]) : (last ? v <= best[j] : v < best[j]);
          if (better) {
            best[j] = v;
            oi[j] = r;
          }
        }
      }
    }
  });
  if (!ok) ops::fail_dtype(ctx, x0.dtype());
  ctx.outputs[0] = out;
}

}  // namespace

namespace shape {
namespace {

void reduce(const In& x, Outs& o) {
  o[0] = unranked(x.dtype(0));
  if (!x.ranked(0)) return;
  const Shp& X = *x.shape(0);
  const int since = x.node.op_type == "ReduceSum" ? 13 : 18;
  const auto axes = axes_input_or_attr(x, since);
  if (!axes) return;
  const bool keep = x.node.attr_int("keepdims", 1) != 0;
  std::vector<bool> red(X.rank(), axes->empty());
  if (axes->empty() && x.node.attr_int("noop_with_empty_axes", 0) != 0) red.assign(X.rank(), false);
  for (int64_t a : *axes) {
    const auto ax = axis_of(a, X.rank());
    if (!ax) return;
    red[*ax] = true;
  }
  Shp r = ranked(X.dtype, std::vector<Dim>{});
  for (size_t i = 0; i < X.rank(); ++i) {
    if (!red[i]) r.d.push_back(X.d[i]);
    else if (keep) r.d.push_back(dim(1));
  }
  o[0] = r;
}

void arg_reduce(const In& x, Outs& o) {
  o[0] = unranked(DType::Int64);
  if (!x.ranked(0)) return;
  const Shp& X = *x.shape(0);
  const auto ax = axis_of(x.node.attr_int("axis", 0), X.rank());
  if (!ax) return;
  Shp r = X;
  r.dtype = DType::Int64;
  if (x.node.attr_int("keepdims", 1) != 0) r.d[*ax] = dim(1);
  else r.d.erase(r.d.begin() + static_cast<std::ptrdiff_t>(*ax));
  o[0] = r;
}

}  // namespace
}  // namespace shape

void register_reduce(OpRegistry& r) {
  // The axes became an input in opset 13 for ReduceSum, in opset 18 for the others.
  auto reduce = [&r](const char* op, KernelFn fn, int axes_input_since) {
    r.add("", op, fn).versions(1, axes_input_since - 1).rule(shape::reduce).meta("", "data");
    r.add("", op, fn).versions(axes_input_since).rule(shape::reduce).meta("", "data axes?");
  };
  reduce("ReduceSum", &reduce_kernel<SumR, 13>, 13);
  reduce("ReduceMean", &reduce_kernel<MeanR, 18>, 18);
  reduce("ReduceMax", &reduce_kernel<MaxR, 18>, 18);
  reduce("ReduceMin", &reduce_kernel<MinR, 18>, 18);
  reduce("ReduceProd", &reduce_kernel<ProdR, 18>, 18);
  reduce("ReduceL1", &reduce_kernel<L1R, 18>, 18);
  reduce("ReduceL2", &reduce_kernel<L2R, 18>, 18);
  reduce("ReduceLogSum", &reduce_kernel<LogSumR, 18>, 18);
  reduce("ReduceLogSumExp", &reduce_kernel<LogSumExpR, 18>, 18);
  reduce("ReduceSumSquare", &reduce_kernel<SumSquareR, 18>, 18);
  r.add("", "ArgMax", &arg_kernel<true>).rule(shape::arg_reduce).meta("", "data");
  r.add("", "ArgMin", &arg_kernel<false>).rule(shape::arg_reduce).meta("", "data");
}

}  // namespace ptq::exec
