// Slice, Gather, Compress and ReverseSequence. All index arithmetic is in elements and every copy is by element
// size, so any dtype moves unchanged. (GatherElements, GatherND and the scatters: scatter_gather.cpp.)
#include <algorithm>

#include "exec/registry.h"
#include "ops/shape_util.h"
#include "ops/movement_util.h"

namespace ptq::exec {
namespace {

using movement::dense_strides;
using movement::normalize_axis;

// Number of elements and clamped start of one sliced axis (ONNX Slice-10 clamping rules).
struct SliceRange {
  int64_t start = 0;
  int64_t length = 0;
};

SliceRange slice_range(int64_t dim, int64_t start, int64_t end, int64_t step) {
  if (dim == 0) return {};
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    return {start, end > start ? (end - start - 1) / step + 1 : 0};
  }
  start = std::clamp<int64_t>(start, 0, dim - 1);
  end = std::clamp<int64_t>(end, -1, dim - 1);
  return {start, start > end ? (start - end - 1) / -step + 1 : 0};
}

void slice(KernelContext& ctx) {
  const Tensor& data = ctx.required(0);
  const int64_t rank = static_cast<int64_t>(data.rank());
  std::vector<int64_t> starts, ends, axes, steps;
  if (ctx.opset() < 10) {
    starts = ctx.node.attr_ints("starts");
    ends = ctx.node.attr_ints("ends");
    axes = ctx.node.attr_ints("axes");
  } else {
    starts = movement::int_input(ctx, 1);
    ends = movement::int_input(ctx, 2);
    axes = movement::int_input(ctx, 3);
    steps = movement::int_input(ctx, 4);
  }
  ctx.check(starts.size() == ends.size(), "starts and ends differ in length");
  if (axes.empty()) {
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  ctx.check(axes.size() == starts.size() && steps.size() == starts.size(),
            "starts, ends, axes and steps must have the same length");

  const std::vector<int64_t> in_strides = dense_strides(data.shape());
  Shape shape = data.shape();
  std::vector<int64_t> strides = in_strides;
  std::vector<bool> seen(data.rank(), false);
  int64_t offset = 0;
  for (size_t i = 0; i < axes.size(); ++i) {
    const size_t a = static_cast<size_t>(normalize_axis(ctx, axes[i], rank, "axes entry"));
    ctx.check(!seen[a], "axis " + std::to_string(a) + " is sliced twice");
    seen[a] = true;
    ctx.check(steps[i] != 0, "steps must not be zero");
    // A step longer than the axis takes one element like a step of the axis length; clamping keeps
    // -step and the stride product inside int64.
    const int64_t reach = std::max<int64_t>(data.dim(a), 1);
    const int64_t step = std::clamp(steps[i], -reach, reach);
    const SliceRange r = slice_range(data.dim(a), starts[i], ends[i], step);
    shape[a] = r.length;
    // With an empty axis anywhere the strides and offset address nothing and may wrap (defined
    // through __builtin_mul_overflow); otherwise they stay within the data.
    int64_t moved = 0;
    __builtin_mul_overflow(in_strides[a], step, &strides[a]);
    __builtin_mul_overflow(r.start, in_strides[a], &moved);
    __builtin_add_overflow(offset, moved, &offset);
  }
  ctx.outputs[0] = movement::strided_view_or_copy(data, shape_numel(shape) ? offset : 0, shape, strides);
}

// data[..., idx, ...] along `axis` (idx already checked and wrapped), the taken positions laid out
// as `idx_shape`.
Tensor take(const Tensor& data, size_t axis, const std::vector<int64_t>& idx, const Shape& idx_shape) {
  Shape shape(data.shape().begin(), data.shape().begin() + axis);
  shape.insert(shape.end(), idx_shape.begin(), idx_shape.end());
  shape.insert(shape.end(), data.shape().begin() + axis + 1, data.shape().end());

  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < data.rank(); ++d) {
    if (d < axis) outer *= data.dim(d);
    if (d > axis) inner *= data.dim(d);
  }
  const size_t esize = dtype_size(data.dtype());
  const size_t block = static_cast<size_t>(inner) * esize;
  // One index into the leading axis (e.g. x[3]) is a contiguous block: return a view.
  if (outer == 1 && idx.size() == 1) return Tensor::alias(data, shape, static_cast<size_t>(idx[0]) * block);
  Tensor out(data.dtype(), shape);
  const uint8_t* src = static_cast<const uint8_t*>(data.raw());
  uint8_t* dst = static_cast<uint8_t*>(out.mutable_raw());
  const size_t axis_bytes = static_cast<size_t>(data.dim(axis)) * block;
  for (int64_t o = 0; o < outer && block; ++o) {
    for (int64_t i : idx) {
      std::memcpy(dst, src + static_cast<size_t>(o) * axis_bytes + static_cast<size_t>(i) * block, block);
      dst += block;
    }
  }
  return out;
}

void gather(KernelContext& ctx) {
  const Tensor& data = ctx.required(0);
  const Tensor& indices = ctx.required(1);
  const size_t axis = static_cast<size_t>(
      normalize_axis(ctx, ctx.node.attr_int("axis", 0), static_cast<int64_t>(data.rank())));
  ctx.outputs[0] = take(data, axis, movement::checked_indices(ctx, indices, data.dim(axis)), indices.shape());
}

// Compress: the slices along `axis` whose condition entry is true (without `axis`, of the flattened
// input). A condition shorter than the axis leaves the rest out; a longer one may only be false there.
void compress(KernelContext& ctx) {
  const Tensor& input = ctx.required(0);
  const Tensor& condition = ctx.required(1);
  ctx.check(condition.dtype() == DType::Bool && condition.rank() == 1,
            "condition must be a 1-D bool tensor, got " + dtype_name(condition.dtype()) + " " +
                shape_str(condition.shape()));
  const bool has_axis = ctx.node.has_attr("axis");
  const Tensor data = has_axis ? input : Tensor::alias(input, Shape{input.numel()});
  const size_t axis = has_axis ? static_cast<size_t>(normalize_axis(ctx, ctx.node.attr_int("axis", 0),
                                                                     static_cast<int64_t>(data.rank())))
                               : 0;
  const uint8_t* c = condition.data<uint8_t>();
  std::vector<int64_t> idx;
  for (int64_t i = 0; i < condition.numel(); ++i) {
    if (!c[i]) continue;
    ctx.check(i < data.dim(axis), "condition is true at " + std::to_string(i) + ", beyond the axis length " +
                                      std::to_string(data.dim(axis)));
    idx.push_back(i);
  }
  ctx.outputs[0] = take(data, axis, idx, Shape{static_cast<int64_t>(idx.size())});
}

// ReverseSequence: for each batch entry b, the first sequence_lens[b] steps along time_axis are
// reversed and the rest copied. time_axis and batch_axis are 0 and 1 (either way round).
void reverse_sequence(KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  const Tensor& lens_t = ctx.required(1);
  ctx.check(x.rank() >= 2, "input must have rank >= 2, got " + shape_str(x.shape()));
  const int64_t time_axis = ctx.node.attr_int("time_axis", 0), batch_axis = ctx.node.attr_int("batch_axis", 1);
  ctx.check((time_axis == 0 && batch_axis == 1) || (time_axis == 1 && batch_axis == 0),
            "attributes 'time_axis' and 'batch_axis' must be 0 and 1 (in either order), got " +
                std::to_string(time_axis) + " and " + std::to_string(batch_axis));
  const int64_t steps = x.dim(static_cast<size_t>(time_axis)), batch = x.dim(static_cast<size_t>(batch_axis));
  ctx.check(lens_t.dtype() == DType::Int64 && lens_t.rank() == 1 && lens_t.dim(0) == batch,
            "sequence_lens must be a 1-D int64 tensor of the batch size " + std::to_string(batch));
  const int64_t* lens = lens_t.data<int64_t>();
  for (int64_t b = 0; b < batch; ++b)
    ctx.check(lens[b] >= 0 && lens[b] <= steps, "sequence_lens[" + std::to_string(b) + "] = " +
                                                    std::to_string(lens[b]) + " is outside [0, " +
                                                    std::to_string(steps) + "]");
  const int64_t inner = shape_numel(Shape(x.shape().begin() + 2, x.shape().end()));
  const size_t block = static_cast<size_t>(inner) * dtype_size(x.dtype());
  auto at = [&](int64_t t, int64_t b) { return static_cast<size_t>(time_axis == 0 ? t * batch + b : b * steps + t) * block; };
  Tensor out(x.dtype(), x.shape());
  const auto* src = static_cast<const uint8_t*>(x.raw());
  auto* dst = static_cast<uint8_t*>(out.mutable_raw());
  for (int64_t b = 0; b < batch && block; ++b)
    for (int64_t t = 0; t < steps; ++t) std::memcpy(dst + at(t, b), src + at(t < lens[b] ? lens[b] - 1 - t : t, b), block);
  ctx.outputs[0] = out;
}

}  // namespace

namespace shape {
namespace {

// Same clamping as the ONNX spec (and ops/slice_gather.cpp).
int64_t slice_len(int64_t n, int64_t start, int64_t end, int64_t step) {
  auto clamp = [](int64_t v, int64_t lo, int64_t hi) { return std::max(lo, std::min(v, hi)); };
  if (start < 0) start += n;
  if (end < 0) end += n;
  if (step > 0) {
    start = clamp(start, 0, n);
    end = clamp(end, 0, n);
    return end > start ? (end - start - 1) / step + 1 : 0;
  }
  start = clamp(start, 0, n - 1);
  end = clamp(end, -1, n - 1);
  // -step overflows for INT64_MIN: any step longer than the axis takes one element.
  const int64_t back = step < -n ? n + 1 : -step;
  return start > end ? (start - end - 1) / back + 1 : 0;
}

void slice(const In& x, Outs& o) {
  o[0] = unranked(x.dtype(0));
  if (!x.ranked(0)) return;
  const Shp& X = *x.shape(0);
  std::vector<int64_t> starts, ends, axes, steps;
  if (x.opset() < 10) {
    starts = x.node.attr_ints("starts");
    ends = x.node.attr_ints("ends");
    axes = x.node.attr_ints("axes");
  } else {
    auto s = x.ints(1), e = x.ints(2);
    auto a = x.shape(3) ? x.ints(3) : std::optional<std::vector<int64_t>>(std::vector<int64_t>{});
    auto t = x.shape(4) ? x.ints(4) : std::optional<std::vector<int64_t>>(std::vector<int64_t>{});
    if (!s || !e || !a || !t) {
      o[0] = ranked(X.dtype, std::vector<Dim>(X.rank()));
      // Axes not sliced keep their dims when the axes are known.
      if (a && !a->empty()) {
        o[0] = X;
        for (int64_t ax : *a)
          if (auto k = axis_of(ax, X.rank())) o[0].d[*k] = Dim{};
      }
      return;
    }
    starts = *s; ends = *e; axes = *a; steps = *t;
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size()) return;
  Shp r = X;
  for (size_t i = 0; i < starts.size(); ++i) {
    const auto ax = axis_of(axes[i], X.rank());
    if (!ax || steps[i] == 0) return;
    const Dim& in = X.d[*ax];
    r.d[*ax] = in.known() ? dim(slice_len(in.v, starts[i], ends[i], steps[i])) : Dim{};
  }
  o[0] = r;
}

void gather(const In& x, Outs& o) {
  o[0] = unranked(x.dtype(0));
  if (!x.ranked(0) || !x.ranked(1)) return;
  const Shp &X = *x.shape(0), &I = *x.shape(1);
  const auto ax = axis_of(x.node.attr_int("axis", 0), X.rank());
  if (!ax) return;
  Shp r = ranked(X.dtype, std::vector<Dim>(X.d.begin(), X.d.begin() + static_cast<std::ptrdiff_t>(*ax)));
  r.d.insert(r.d.end(), I.d.begin(), I.d.end());
  r.d.insert(r.d.end(), X.d.begin() + static_cast<std::ptrdiff_t>(*ax) + 1, X.d.end());
  o[0] = r;
}

}  // namespace
}  // namespace shape

void register_slice_gather(OpRegistry& r) {
  // starts, ends, axes and steps became inputs in opset 10.
  r.add("", "Slice", &slice).versions(1, 9).rule(shape::slice).meta("tensor", "data");
  r.add("", "Slice", &slice).versions(10).rule(shape::slice).meta("tensor", "data starts ends axes? steps?");
  r.add("", "Gather", &gather).rule(shape::gather).meta("tensor", "data indices");
  r.add("", "Compress", &compress).meta("", "input condition");
  r.add("", "ReverseSequence", &reverse_sequence).meta("", "input sequence_lens");
}

}  // namespace ptq::exec
