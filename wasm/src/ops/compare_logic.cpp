// Comparisons (Equal, Less, Greater, LessOrEqual, GreaterOrEqual -> bool), boolean logic (Not, And,
// Or, Xor) and Where, all with numpy broadcasting. Bool tensors are one byte per element, 0 or 1.
#include <cstdint>

#include "exec/registry.h"
#include "ops/shape_util.h"
#include "ops/elementwise.h"

namespace ptq::exec {
namespace {

// Comparators return uint8_t so the Bool output buffer is written as bytes.
struct EqualOp { template <class T> uint8_t operator()(T a, T b) const { return a == b; } };
struct LessOp { template <class T> uint8_t operator()(T a, T b) const { return a < b; } };
struct GreaterOp { template <class T> uint8_t operator()(T a, T b) const { return a > b; } };
struct LessOrEqualOp { template <class T> uint8_t operator()(T a, T b) const { return a <= b; } };
struct GreaterOrEqualOp { template <class T> uint8_t operator()(T a, T b) const { return a >= b; } };
// Logic ops read any nonzero byte as true and write canonical 0/1.
struct AndOp { uint8_t operator()(uint8_t a, uint8_t b) const { return (a != 0) & (b != 0); } };
struct OrOp { uint8_t operator()(uint8_t a, uint8_t b) const { return (a != 0) | (b != 0); } };
struct XorOp { uint8_t operator()(uint8_t a, uint8_t b) const { return (a != 0) ^ (b != 0); } };

template <class Op, unsigned Set>
void compare_kernel(KernelContext& ctx) {
  ctx.outputs[0] = ops::map_binary<Set>(ctx, ctx.required(0), ctx.required(1), Op{}, DType::Bool);
}

template <class Op>
void logic_kernel(KernelContext& ctx) {
  const Tensor& a = ctx.required(0);
  const Tensor& b = ctx.required(1);
  ctx.check(a.dtype() == DType::Bool && b.dtype() == DType::Bool,
            "inputs must be bool, got " + dtype_name(a.dtype()) + " and " + dtype_name(b.dtype()));
  ctx.outputs[0] = ops::map_binary<ops::kBool>(ctx, a, b, Op{}, DType::Bool);
}

void not_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  ctx.check(x.dtype() == DType::Bool, "input must be bool, got " + dtype_name(x.dtype()));
  ctx.outputs[0] = ops::map_unary<ops::kBool>(ctx, x, [](uint8_t v) { return static_cast<uint8_t>(v == 0); });
}

// Where(condition, X, Y): values are only copied, so any dtype is handled by its element width.
template <class V>
Tensor where_typed(const ops::BroadcastPlan<3>& plan, const Tensor& c, const Tensor& x, const Tensor& y) {
  Tensor out(x.dtype(), plan.out_shape);
  ops::ternary_apply(plan, c.data<uint8_t>(), x.data<V>(), y.data<V>(), out.mutable_data<V>(),
                     [](uint8_t k, V a, V b) { return k ? a : b; });
  return out;
}

void where_kernel(KernelContext& ctx) {
  const Tensor& c = ctx.required(0);
  const Tensor& x = ctx.required(1);
  const Tensor& y = ctx.required(2);
  ctx.check(c.dtype() == DType::Bool, "condition must be bool, got " + dtype_name(c.dtype()));
  ctx.check(x.dtype() == y.dtype(), "X and Y dtypes differ: " + dtype_name(x.dtype()) + " and " + dtype_name(y.dtype()));
  const auto plan = ops::plan_or_fail<3>(ctx, {&c.shape(), &x.shape(), &y.shape()});
  switch (dtype_size(x.dtype())) {
    case 1: ctx.outputs[0] = where_typed<uint8_t>(plan, c, x, y); break;
    case 2: ctx.outputs[0] = where_typed<uint16_t>(plan, c, x, y); break;
    case 4: ctx.outputs[0] = where_typed<uint32_t>(plan, c, x, y); break;
    case 8: ctx.outputs[0] = where_typed<uint64_t>(plan, c, x, y); break;
    default: ops::fail_dtype(ctx, x.dtype());
  }
}

}  // namespace

namespace shape {
namespace {

void where(const In& x, Outs& o) {
  o[0] = broadcast(x.s);
  o[0].dtype = x.dtype(1);
}

}  // namespace
}  // namespace shape

void register_compare_logic(OpRegistry& r) {
  constexpr unsigned kOrdered = ops::kNumeric;
  const shape::Rule cmp = shape::broadcast_rule(DType::Bool);
  r.add("", "Equal", &compare_kernel<EqualOp, ops::kNumeric | ops::kBool>).rule(cmp).meta("", "A B");
  r.add("", "Less", &compare_kernel<LessOp, kOrdered>).rule(cmp).meta("", "A B");
  r.add("", "Greater", &compare_kernel<GreaterOp, kOrdered>).rule(cmp).meta("", "A B");
  r.add("", "LessOrEqual", &compare_kernel<LessOrEqualOp, kOrdered>).rule(cmp).meta("", "A B");
  r.add("", "GreaterOrEqual", &compare_kernel<GreaterOrEqualOp, kOrdered>).rule(cmp).meta("", "A B");
  r.add("", "Not", &not_kernel).rule(shape::same_with_dtype(DType::Bool)).meta("", "X");
  r.add("", "And", &logic_kernel<AndOp>).rule(cmp).meta("", "A B");
  r.add("", "Or", &logic_kernel<OrOp>).rule(cmp).meta("", "A B");
  r.add("", "Xor", &logic_kernel<XorOp>).rule(cmp).meta("", "A B");
  r.add("", "Where", &where_kernel).rule(shape::where).meta("tensor", "condition X Y");
}

}  // namespace ptq::exec
