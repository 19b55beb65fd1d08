// Concat and Split: byte-block copies along one axis, for any dtype. Split outputs that are one
// contiguous run of the input (splitting the outermost non-unit axis) are zero-copy aliases.
#include <algorithm>

#include "core/size.h"
#include "exec/registry.h"
#include "ops/shape_util.h"
#include "ops/movement_util.h"

namespace ptq::exec {
namespace {

using movement::normalize_axis;

void concat(KernelContext& ctx) {
  std::vector<const Tensor*> parts;
  for (size_t i = 0; i < ctx.input_count(); ++i) {
    if (ctx.input(i)) parts.push_back(ctx.input(i));
  }
  ctx.check(!parts.empty(), "needs at least one input");
  const Tensor& first = *parts[0];
  // Opset 1 defaulted axis to 1; from opset 4 it is required.
  ctx.check(ctx.opset() < 4 || ctx.node.has_attr("axis"), "attribute 'axis' is required");
  const int64_t rank = static_cast<int64_t>(first.rank());
  const size_t axis = static_cast<size_t>(normalize_axis(ctx, ctx.node.attr_int("axis", 1), rank));
  Shape out_shape = first.shape();
  out_shape[axis] = 0;
  for (const Tensor* t : parts) {
    ctx.check(t->dtype() == first.dtype(), "inputs mix " + dtype_name(first.dtype()) + " and " +
                                               dtype_name(t->dtype()));
    bool same = t->rank() == first.rank();
    for (size_t d = 0; same && d < first.rank(); ++d) same = d == axis || t->dim(d) == first.dim(d);
    ctx.check(same, "input shapes " + shape_str(first.shape()) + " and " + shape_str(t->shape()) +
                        " differ outside axis " + std::to_string(axis));
    out_shape[axis] = size_add(out_shape[axis], t->dim(axis), "Concat output dimension");
  }
  if (parts.size() == 1) {
    ctx.outputs[0] = first;
    return;
  }
  int64_t outer = 1;
  for (size_t d = 0; d < axis; ++d) outer *= first.dim(d);
  const size_t esize = dtype_size(first.dtype());
  const size_t inner_bytes = static_cast<size_t>(shape_numel(Shape(first.shape().begin() + axis + 1, first.shape().end()))) * esize;
  Tensor out(first.dtype(), out_shape);
  uint8_t* dst = static_cast<uint8_t*>(out.mutable_raw());
  for (int64_t o = 0; o < outer; ++o) {
    for (const Tensor* t : parts) {
      const size_t block = static_cast<size_t>(t->dim(axis)) * inner_bytes;
      if (block) std::memcpy(dst, static_cast<const uint8_t*>(t->raw()) + static_cast<size_t>(o) * block, block);
      dst += block;
    }
  }
  ctx.outputs[0] = out;
}

// Split lengths: explicit (attribute before opset 13, input after), num_outputs (opset 18: ceil-sized
// chunks, the last one smaller), or an equal split over the node's outputs.
std::vector<int64_t> split_lengths(const KernelContext& ctx, int64_t dim) {
  const int64_t n_out = static_cast<int64_t>(ctx.node.outputs.size());
  std::vector<int64_t> lengths = ctx.opset() < 13 ? ctx.node.attr_ints("split") : movement::int_input(ctx, 1);
  if (!lengths.empty()) {
    ctx.check(static_cast<int64_t>(lengths.size()) == n_out,
              "split has " + std::to_string(lengths.size()) + " entries for " + std::to_string(n_out) + " outputs");
    int64_t total = 0;
    for (int64_t l : lengths) {
      ctx.check(l >= 0, "negative split length " + std::to_string(l));
      total = size_add(total, l, "sum of split lengths");
    }
    ctx.check(total == dim,
              "split lengths do not sum to the axis size " + std::to_string(dim));
    return lengths;
  }
  if (ctx.opset() >= 18 && ctx.node.has_attr("num_outputs")) {
    const int64_t n = ctx.node.attr_int("num_outputs", n_out);
    ctx.check(n == n_out && n > 0, "num_outputs " + std::to_string(n) + " does not match the " +
                                       std::to_string(n_out) + " outputs");
    const int64_t chunk = (dim + n - 1) / n;
    for (int64_t i = 0; i < n; ++i) lengths.push_back(std::max<int64_t>(0, std::min(chunk, dim - i * chunk)));
    return lengths;
  }
  ctx.check(n_out > 0 && dim % n_out == 0, "axis size " + std::to_string(dim) + " cannot be split equally into " +
                                               std::to_string(n_out) + " outputs");
  return std::vector<int64_t>(static_cast<size_t>(n_out), dim / n_out);
}

void split(KernelContext& ctx) {
  const Tensor& data = ctx.required(0);
  const int64_t axis = normalize_axis(ctx, ctx.node.attr_int("axis", 0), static_cast<int64_t>(data.rank()));
  const size_t ax = static_cast<size_t>(axis);
  const std::vector<int64_t> lengths = split_lengths(ctx, data.dim(ax));
  const std::vector<int64_t> strides = movement::dense_strides(data.shape());
  int64_t start = 0;
  for (size_t i = 0; i < lengths.size(); ++i) {
    Shape shape = data.shape();
    shape[ax] = lengths[i];
    if (ctx.has_output(i)) ctx.outputs[i] = movement::strided_view_or_copy(data, start * strides[ax], shape, strides);
    start += lengths[i];
  }
}

}  // namespace

namespace shape {
namespace {

void concat(const In& x, Outs& o) {
  o[0] = unranked(x.dtype(0));
  const Shp* first = nullptr;
  for (const Shp* s : x.s) {
    if (!s || !s->ranked) return;
    if (!first) first = s;
  }
  if (!first) return;
  const auto axis = axis_of(x.node.attr_int("axis", 0), first->rank());
  if (!axis) return;
  Shp r = *first;
  int64_t total = 0;
  for (const Shp* s : x.s) {
    if (s->rank() != r.rank()) return;
    total = total >= 0 && s->d[*axis].known() ? add(total, s->d[*axis].v) : -1;
    for (size_t i = 0; i < r.rank(); ++i)
      if (i != *axis && !r.d[i].known() && s->d[i].known()) r.d[i] = s->d[i];
  }
  r.d[*axis] = dim(total);
  o[0] = r;
}

void split(const In& x, Outs& o) {
  for (auto& s : o) s = unranked(x.dtype(0));
  if (!x.ranked(0)) return;
  const Shp& X = *x.shape(0);
  const auto axis = axis_of(x.node.attr_int("axis", 0), X.rank());
  if (!axis) return;
  std::vector<int64_t> sizes;
  if (x.opset() >= 13 && x.shape(1)) {
    auto v = x.ints(1);
    if (!v) return;
    sizes = *v;
  } else if (x.opset() < 13) {
    sizes = x.node.attr_ints("split");
  }
  if (sizes.empty()) {
    if (!X.d[*axis].known()) return;
    const int64_t n = static_cast<int64_t>(o.size()), len = X.d[*axis].v;
    if (n == 0) return;
    const int64_t chunk = (len + n - 1) / n;  // opset 18 num_outputs: the last chunk may be smaller
    for (int64_t i = 0; i < n; ++i) sizes.push_back(std::max<int64_t>(0, std::min(chunk, len - i * chunk)));
  }
  if (sizes.size() != o.size()) return;
  for (size_t k = 0; k < o.size(); ++k) {
    o[k] = X;
    o[k].d[*axis] = dim(sizes[k]);
  }
}

}  // namespace
}  // namespace shape

void register_concat_split(OpRegistry& r) {
  r.add("", "Concat", &concat).rule(shape::concat).meta("tensor", "inputs...");
  // The split lengths became an input in opset 13.
  r.add("", "Split", &split).versions(1, 12).rule(shape::split).meta("tensor", "input");
  r.add("", "Split", &split).versions(13).rule(shape::split).meta("tensor", "input split?");
}

}  // namespace ptq::exec
