// Slice, Gather, GatherElements and ScatterND. All index arithmetic is in elements and every copy is
// by element size, so any dtype moves unchanged; only ScatterND's reductions look at values.
#include <algorithm>

#include "exec/registry.h"
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

// Index tensor values with negative entries wrapped; fails on out-of-range entries.
std::vector<int64_t> checked_indices(const KernelContext& ctx, const Tensor& indices, int64_t dim) {
  ctx.check(indices.dtype() == DType::Int64 || indices.dtype() == DType::Int32,
            "indices must be int64 or int32, got " + dtype_name(indices.dtype()));
  std::vector<int64_t> idx = indices.to_int64_vector();
  for (int64_t& v : idx) {
    ctx.check(v >= -dim && v < dim, "index " + std::to_string(v) + " is out of range for a dim of " +
                                        std::to_string(dim));
    if (v < 0) v += dim;
  }
  return idx;
}

void gather(KernelContext& ctx) {
  const Tensor& data = ctx.required(0);
  const Tensor& indices = ctx.required(1);
  const size_t axis = static_cast<size_t>(
      normalize_axis(ctx, ctx.node.attr_int("axis", 0), static_cast<int64_t>(data.rank())));
  const std::vector<int64_t> idx = checked_indices(ctx, indices, data.dim(axis));
  Shape shape(data.shape().begin(), data.shape().begin() + axis);
  shape.insert(shape.end(), indices.shape().begin(), indices.shape().end());
  shape.insert(shape.end(), data.shape().begin() + axis + 1, data.shape().end());

  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < data.rank(); ++d) {
    if (d < axis) outer *= data.dim(d);
    if (d > axis) inner *= data.dim(d);
  }
  const size_t esize = dtype_size(data.dtype());
  const size_t block = static_cast<size_t>(inner) * esize;
  // One index into the leading axis (e.g. x[3]) is a contiguous block: return a view.
  if (outer == 1 && idx.size() == 1) {
    ctx.outputs[0] = Tensor::alias(data, shape, static_cast<size_t>(idx[0]) * block);
    return;
  }
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
  ctx.outputs[0] = out;
}

void gather_elements(KernelContext& ctx) {
  const Tensor& data = ctx.required(0);
  const Tensor& indices = ctx.required(1);
  const int64_t rank = static_cast<int64_t>(data.rank());
  ctx.check(indices.rank() == data.rank(), "indices rank " + std::to_string(indices.rank()) +
                                               " differs from data rank " + std::to_string(rank));
  const size_t axis = static_cast<size_t>(normalize_axis(ctx, ctx.node.attr_int("axis", 0), rank));
  for (size_t d = 0; d < data.rank(); ++d) {
    ctx.check(d == axis || indices.dim(d) <= data.dim(d),
              "indices shape " + shape_str(indices.shape()) + " exceeds data shape " + shape_str(data.shape()));
  }
  const std::vector<int64_t> idx = checked_indices(ctx, indices, data.dim(axis));
  const std::vector<int64_t> strides = dense_strides(data.shape());
  Tensor out(data.dtype(), indices.shape());
  movement::with_element_type(dtype_size(data.dtype()), [&](auto tag) {
    using T = decltype(tag);
    const T* src = data.data<T>();
    T* dst = out.mutable_data<T>();
    std::vector<int64_t> pos(data.rank(), 0);
    int64_t base = 0;  // offset of pos with the axis coordinate zeroed
    for (size_t k = 0; k < idx.size(); ++k) {
      dst[k] = src[base + idx[k] * strides[axis]];
      for (size_t d = data.rank(); d-- > 0;) {
        if (++pos[d] < indices.dim(d)) {
          if (d != axis) base += strides[d];
          break;
        }
        if (d != axis) base -= strides[d] * (pos[d] - 1);
        pos[d] = 0;
      }
    }
  });
  ctx.outputs[0] = out;
}

// ScatterND reduction applied elementwise to one updated block.
template <class T>
void reduce_block(const std::string& reduction, T* dst, const T* upd, int64_t n) {
  if (reduction == "add") {
    for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<T>(dst[i] + upd[i]);
  } else if (reduction == "mul") {
    for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<T>(dst[i] * upd[i]);
  } else if (reduction == "max") {
    for (int64_t i = 0; i < n; ++i) dst[i] = std::max(dst[i], upd[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) dst[i] = std::min(dst[i], upd[i]);
  }
}

void scatter_nd(KernelContext& ctx) {
  const Tensor& data = ctx.required(0);
  const Tensor& indices = ctx.required(1);
  const Tensor& updates = ctx.required(2);
  const std::string reduction = ctx.node.attr_string("reduction", "none");
  ctx.check(reduction == "none" || reduction == "add" || reduction == "mul" || reduction == "max" ||
                reduction == "min",
            "unsupported reduction '" + reduction + "'");
  ctx.check(updates.dtype() == data.dtype(), "updates dtype differs from data dtype");
  ctx.check(indices.rank() >= 1, "indices must have rank >= 1");
  const size_t k = static_cast<size_t>(indices.dim(indices.rank() - 1));
  ctx.check(k <= data.rank(), "indices last dim " + std::to_string(k) + " exceeds data rank");
  Shape expect(indices.shape().begin(), indices.shape().end() - 1);
  expect.insert(expect.end(), data.shape().begin() + k, data.shape().end());
  ctx.check(updates.shape() == expect, "updates shape " + shape_str(updates.shape()) + " should be " +
                                           shape_str(expect));
  const std::vector<int64_t> idx = movement::int_input(ctx, 1);
  const std::vector<int64_t> strides = dense_strides(data.shape());
  const int64_t block = shape_numel(Shape(data.shape().begin() + k, data.shape().end()));
  const int64_t n_updates = shape_numel(Shape(indices.shape().begin(), indices.shape().end() - 1));
  Tensor out = data.clone();
  const size_t esize = dtype_size(data.dtype());
  auto* dst = static_cast<uint8_t*>(out.mutable_raw());
  const auto* upd = static_cast<const uint8_t*>(updates.raw());
  for (int64_t u = 0; u < n_updates; ++u) {
    int64_t offset = 0;
    for (size_t j = 0; j < k; ++j) {
      int64_t v = idx[static_cast<size_t>(u) * k + j];
      const int64_t dim = data.dim(j);
      ctx.check(v >= -dim && v < dim, "index " + std::to_string(v) + " is out of range for a dim of " +
                                          std::to_string(dim));
      offset += (v < 0 ? v + dim : v) * strides[j];
    }
    uint8_t* d = dst + static_cast<size_t>(offset) * esize;
    const uint8_t* s = upd + static_cast<size_t>(u * block) * esize;
    if (reduction == "none") {
      std::memcpy(d, s, static_cast<size_t>(block) * esize);
      continue;
    }
    const bool ok = movement::with_numeric_type(data.dtype(), [&](auto tag) {
      using T = decltype(tag);
      reduce_block(reduction, reinterpret_cast<T*>(d), reinterpret_cast<const T*>(s), block);
    });
    ctx.check(ok, "reduction '" + reduction + "' is not supported for " + dtype_name(data.dtype()));
  }
  ctx.outputs[0] = out;
}

}  // namespace

void register_slice_gather(OpRegistry& r) {
  r.add("", "Slice", &slice);
  r.add("", "Gather", &gather);
  r.add("", "GatherElements", &gather_elements);
  r.add("", "ScatterND", &scatter_nd);
}

}  // namespace ptq::exec
