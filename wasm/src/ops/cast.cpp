// Cast and CastLike, with ONNX Cast semantics from ptq::cast_tensor (float->int truncates toward
// zero, ->float16/bfloat16 rounds to nearest even, ->bool is != 0). Strings are not representable
// in a ptq::Tensor, so casts from/to STRING are rejected.
#include "exec/registry.h"
#include "ops/shape_util.h"

namespace ptq::exec {
namespace {

void cast_to(KernelContext& ctx, const Tensor& x, int64_t to) {
  ctx.check(to >= 0 && to <= 0x7fffffff && dtype_supported(static_cast<int32_t>(to)),
            "unsupported target type (attribute 'to' = " + std::to_string(to) + ")");
  ctx.check(dtype_size(x.dtype()) != 0, "unsupported input dtype " + dtype_name(x.dtype()));
  // Opset 19 adds `saturate` for float8 targets only; none of those types are supported here.
  ctx.outputs[0] = cast_tensor(x, static_cast<DType>(to));
}

void cast_kernel(KernelContext& ctx) {
  ctx.check(ctx.node.has_attr("to"), "attribute 'to' is required");
  cast_to(ctx, ctx.required(0), ctx.node.attr_int("to", 0));
}

void cast_like_kernel(KernelContext& ctx) {
  cast_to(ctx, ctx.required(0), static_cast<int64_t>(ctx.required(1).dtype()));
}

}  // namespace

namespace shape {
namespace {

void cast(const In& x, Outs& o) {
  same_as_input(x, o);
  o[0].dtype = static_cast<DType>(x.node.attr_int("to", 1));
}

void cast_like(const In& x, Outs& o) {
  same_as_input(x, o);
  o[0].dtype = x.dtype(1);
}

}  // namespace
}  // namespace shape

void register_cast(OpRegistry& r) {
  r.add("", "Cast", &cast_kernel).rule(shape::cast).meta("tensor", "input");
  r.add("", "CastLike", &cast_like_kernel).rule(shape::cast_like).meta("tensor", "input target_type");
}

}  // namespace ptq::exec
