// Running reductions along one axis: CumSum. Accumulates in the element type, as onnxruntime
// (float32 sums in float32); integer sums wrap modulo 2^bits.
#include <algorithm>
#include <type_traits>
#include <vector>

#include "exec/registry.h"
#include "ops/shape_util.h"
#include "ops/elementwise.h"
#include "ops/movement_util.h"

namespace ptq::exec {
namespace {

// CumSum (opset 11/14): axis is a scalar int32/int64 input; exclusive leaves out the element itself,
// reverse runs from the end of the axis.
void cumsum(KernelContext& ctx) {
  const Tensor& x0 = ctx.required(0);
  const Tensor& axis_t = ctx.required(1);
  ctx.check((axis_t.dtype() == DType::Int64 || axis_t.dtype() == DType::Int32) && axis_t.numel() == 1 &&
                axis_t.rank() <= 1,
            "input 'axis' must be a scalar int32 or int64, got " + dtype_name(axis_t.dtype()) + " " +
                shape_str(axis_t.shape()));
  const int64_t exclusive = ctx.node.attr_int("exclusive", 0), reverse = ctx.node.attr_int("reverse", 0);
  ctx.check((exclusive == 0 || exclusive == 1) && (reverse == 0 || reverse == 1),
            "attributes 'exclusive' and 'reverse' must be 0 or 1");
  const Tensor x = ops::widen_for<ops::kNumeric>(x0);
  const auto axis = static_cast<size_t>(
      movement::normalize_axis(ctx, axis_t.get_as_int64(0), static_cast<int64_t>(x.rank())));
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < x.rank(); ++d) {
    if (d < axis) outer *= x.dim(d);
    if (d > axis) inner *= x.dim(d);
  }
  const int64_t n = x.rank() ? x.dim(axis) : 1;
  Tensor out;
  const bool ok = ops::visit_dtype<ops::kNumeric>(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using W = std::conditional_t<std::is_integral_v<T>, uint64_t, T>;  // wrap-around for integers
    out = Tensor(x.dtype(), x.shape());
    const T* src = x.data<T>();
    T* dst = out.mutable_data<T>();
    std::vector<W> acc(static_cast<size_t>(inner));
    for (int64_t o = 0; o < outer; ++o) {
      std::fill(acc.begin(), acc.end(), W(0));
      for (int64_t s = 0; s < n; ++s) {
        const int64_t a = reverse ? n - 1 - s : s;
        const T* row = src + (o * n + a) * inner;
        T* out_row = dst + (o * n + a) * inner;
        for (int64_t i = 0; i < inner; ++i) {
          const W before = acc[static_cast<size_t>(i)];
          acc[static_cast<size_t>(i)] = before + static_cast<W>(row[i]);
          out_row[i] = static_cast<T>(exclusive ? before : acc[static_cast<size_t>(i)]);
        }
      }
    }
  });
  if (!ok) ops::fail_dtype(ctx, x0.dtype());
  ctx.outputs[0] = ops::narrow_to(out, x0.dtype());
}

}  // namespace

void register_scan(OpRegistry& r) { r.add("", "CumSum", &cumsum).rule(shape::same_as_input).meta("", "x axis"); }

}  // namespace ptq::exec
