// DepthToSpace / SpaceToDepth (and the Horizon Hz* variants) and HzChannelShuffle. Each is
// "view with more dims -> transpose -> view", so the copy is one movement::permute.
#include "core/size.h"
#include "exec/registry.h"
#include "ops/shape_util.h"
#include "ops/movement_util.h"

namespace ptq::exec {
namespace {

Tensor reshape_permute_reshape(const Tensor& x, const Shape& view, const std::vector<int64_t>& perm,
                               const Shape& out) {
  return movement::permute(x.reshaped(view), perm).reshaped(out);
}

int64_t block_size(const KernelContext& ctx) {
  // Horizon exports have been seen with either spelling; ONNX uses "blocksize".
  const int64_t b = ctx.node.attr_int("blocksize", ctx.node.attr_int("block_size", 0));
  ctx.check(b > 0, "attribute 'blocksize' must be a positive integer");
  return b;
}

void depth_to_space(KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  ctx.check(x.rank() == 4, "input must be 4-D NCHW, got " + shape_str(x.shape()));
  const int64_t b = block_size(ctx);
  const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3);
  const int64_t bb = size_mul(b, b, "blocksize^2");
  ctx.check(c % bb == 0, "channels " + std::to_string(c) + " are not divisible by blocksize^2");
  const int64_t oc = c / bb;
  const Shape out{n, oc, size_mul(h, b, "DepthToSpace output height"), size_mul(w, b, "DepthToSpace output width")};
  const std::string mode = ctx.node.attr_string("mode", "DCR");
  if (mode == "DCR") {
    ctx.outputs[0] = reshape_permute_reshape(x, {n, b, b, oc, h, w}, {0, 3, 4, 1, 5, 2}, out);
  } else if (mode == "CRD") {
    ctx.outputs[0] = reshape_permute_reshape(x, {n, oc, b, b, h, w}, {0, 1, 4, 2, 5, 3}, out);
  } else {
    ctx.fail("unsupported mode '" + mode + "'");
  }
}

void space_to_depth(KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  ctx.check(x.rank() == 4, "input must be 4-D NCHW, got " + shape_str(x.shape()));
  const int64_t b = block_size(ctx);
  const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3);
  // b <= h, w unless they are 0 (then any b divides them): c * b * b needs the checked product.
  ctx.check(h % b == 0 && w % b == 0, "spatial dims of " + shape_str(x.shape()) + " are not divisible by blocksize");
  ctx.outputs[0] = reshape_permute_reshape(x, {n, c, h / b, b, w / b, b}, {0, 3, 5, 1, 2, 4},
                                           {n, size_mul(c, size_mul(b, b, "blocksize^2"), "SpaceToDepth output channels"), h / b, w / b});
}

// HzChannelShuffle (Horizon export of torch.nn.ChannelShuffle, attributes `group` and `data_format`).
// Semantics chosen: the channel axis (1 for NCHW, the last for NHWC) of size C is viewed as
// [group, C/group], transposed to [C/group, group] and flattened back, i.e. output channel
// j*group + i takes input channel i*(C/group) + j — exactly torch.channel_shuffle. The common form
// has one output. A node with k > 1 outputs is the fused "shuffle then split" form (ShuffleNetV2):
// the shuffled tensor is split into k equal parts along the channel axis. With one output no split
// happens (the split-free variant).
void hz_channel_shuffle(KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  ctx.check(x.rank() >= 2, "input must have rank >= 2, got " + shape_str(x.shape()));
  const int64_t g = ctx.node.attr_int("group", 0);
  const std::string format = ctx.node.attr_string("data_format", "NCHW");
  ctx.check(format == "NCHW" || format == "NHWC", "unsupported data_format '" + format + "'");
  const size_t axis = format == "NCHW" ? 1 : x.rank() - 1;
  const int64_t c = x.dim(axis);
  ctx.check(g > 0 && c % g == 0, "group " + std::to_string(g) + " does not divide " + std::to_string(c) + " channels");
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < x.rank(); ++d) {
    if (d < axis) outer *= x.dim(d);
    if (d > axis) inner *= x.dim(d);
  }
  const Tensor shuffled = reshape_permute_reshape(x, {outer, g, c / g, inner}, {0, 2, 1, 3}, x.shape());
  const size_t parts = ctx.node.outputs.size();
  if (parts == 1) {
    ctx.outputs[0] = shuffled;
    return;
  }
  ctx.check(c % static_cast<int64_t>(parts) == 0, std::to_string(c) + " channels cannot be split equally into " +
                                                      std::to_string(parts) + " outputs");
  const int64_t part = c / static_cast<int64_t>(parts);
  const std::vector<int64_t> strides = movement::dense_strides(x.shape());
  Shape shape = x.shape();
  shape[axis] = part;
  for (size_t i = 0; i < parts; ++i) {
    if (ctx.has_output(i)) {
      ctx.outputs[i] = movement::strided_view_or_copy(shuffled, static_cast<int64_t>(i) * part * strides[axis], shape, strides);
    }
  }
}

}  // namespace

namespace shape {
namespace {

void depth_to_space(const In& x, Outs& o) {
  o[0] = unranked(x.dtype(0));
  if (!x.ranked(0) || x.shape(0)->rank() != 4) return;
  const int64_t b = x.node.attr_int("blocksize", 1);
  if (b <= 0) return;  // invalid: the kernel reports it
  const bool d2s = x.node.op_type.find("DepthToSpace") != std::string::npos;
  const Shp& X = *x.shape(0);
  auto scale = [&](const Dim& v, bool up) { return !v.known() ? Dim{} : dim(up ? mul(v.v, b) : v.v / b); };
  // Horizon variants may be NHWC (data_format); the ONNX ops are NCHW.
  const bool nhwc = x.node.attr_string("data_format", "NCHW") == "NHWC";
  const size_t c = nhwc ? 3 : 1, h = nhwc ? 1 : 2, w = nhwc ? 2 : 3;
  Shp r = X;
  r.d[c] = !X.d[c].known() ? Dim{} : dim(d2s ? X.d[c].v / mul(b, b) : mul(X.d[c].v, mul(b, b)));
  r.d[h] = scale(X.d[h], d2s);
  r.d[w] = scale(X.d[w], d2s);
  o[0] = r;
}

}  // namespace
}  // namespace shape

void register_depth_space(OpRegistry& r) {
  r.add("", "DepthToSpace", &depth_to_space).rule(shape::depth_to_space).meta("shape", "input");
  r.add("", "SpaceToDepth", &space_to_depth).rule(shape::depth_to_space).meta("shape", "input");
  r.add("horizon", "HzDepthToSpace", &depth_to_space).rule(shape::depth_to_space).meta("shape", "input");
  r.add("horizon", "HzSpaceToDepth", &space_to_depth).rule(shape::depth_to_space).meta("shape", "input");
  r.add("horizon", "HzChannelShuffle", &hz_channel_shuffle).rule(shape::same_as_input).meta("shape", "X");
}

}  // namespace ptq::exec
