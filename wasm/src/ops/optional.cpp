// Optional ops: Optional, OptionalHasElement and OptionalGetElement. An optional is a value of kind
// Optional (core/tensor.h): empty, or holding one tensor or one sequence. The two queries also take a
// tensor or a sequence, which has its element (opset 18 says so; before it, such a value reaches them
// where a Loop carries a value its body declares optional, as ONNX's reference evaluation treats an
// optional holding a value and the value alike), and from opset 18 OptionalHasElement takes an
// absent input (which has none).
#include <string>

#include "exec/registry.h"

namespace ptq::exec {
namespace {

// Optional(input?): holds the input, or is empty when there is none ('type' names the empty one's
// element type, which no op here reads).
void optional(KernelContext& ctx) {
  const Tensor* in = ctx.input(0);
  if (in) ctx.check(in->kind() != ValueKind::Optional, "input 'input' is an optional; an optional holds a tensor or a sequence");
  ctx.outputs[0] = Tensor::optional(in ? *in : Tensor());
}

void optional_has_element(KernelContext& ctx) {
  bool has = false;
  if (const Tensor* in = ctx.input(0)) {
    has = in->kind() != ValueKind::Optional || !in->items().empty();
  } else {
    ctx.check(ctx.opset() >= 18, "input 'input' is required before opset 18");
  }
  Tensor out(DType::Bool, {});
  *out.mutable_data<uint8_t>() = has ? 1 : 0;
  ctx.outputs[0] = std::move(out);
}

void optional_get_element(KernelContext& ctx) {
  const Tensor& in = ctx.required(0);
  if (in.kind() != ValueKind::Optional) {
    ctx.outputs[0] = in;
    return;
  }
  ctx.check(!in.items().empty(), "the optional is empty");
  ctx.outputs[0] = in.items()[0];
}

void no_static_shape(const shape::In&, shape::Outs&) {}
void bool_scalar(const shape::In&, shape::Outs& o) { o[0] = shape::ranked(DType::Bool, Shape{}); }

}  // namespace

void register_optional(OpRegistry& r) {
  r.add("", "Optional", optional).takes_values().rule(no_static_shape).meta("", "input?");
  r.add("", "OptionalHasElement", optional_has_element).takes_values().rule(bool_scalar).meta("", "input?");
  r.add("", "OptionalGetElement", optional_get_element).takes_values().rule(no_static_shape).meta("", "input");
}

}  // namespace ptq::exec
