// Gathers and scatters addressed by an index tensor: GatherElements, GatherND, ScatterElements
// (and its opset 9-10 name Scatter), ScatterND. Elements move by their byte size, so any dtype
// works; only the scatter reductions (add, mul, max, min) look at values. Indices may be negative
// (counted from the end of their dim); an index outside [-dim, dim) fails naming the node.
#include <algorithm>
#include <string>
#include <type_traits>

#include "exec/registry.h"
#include "ops/shape_util.h"
#include "ops/movement_util.h"

namespace ptq::exec {
namespace {

using movement::dense_strides;
using movement::normalize_axis;

// Visits every position of `shape` in row-major order, passing the element offset of that position
// in a tensor with `strides` whose coordinate along `skip_axis` is zeroed (the indexed axis).
template <class F>
void for_each_index_position(const Shape& shape, const std::vector<int64_t>& strides, size_t skip_axis, F&& f) {
  const int64_t n = shape_numel(shape);
  std::vector<int64_t> pos(shape.size(), 0);
  int64_t base = 0;
  for (int64_t k = 0; k < n; ++k) {
    f(k, base);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++pos[d] < shape[d]) {
        if (d != skip_axis) base += strides[d];
        break;
      }
      if (d != skip_axis) base -= strides[d] * (pos[d] - 1);
      pos[d] = 0;
    }
  }
}

// Checks the shared GatherElements/ScatterElements rule: indices of data's rank, no dim longer than
// data's except along `axis`.
size_t elements_axis(const KernelContext& ctx, const Tensor& data, const Tensor& indices) {
  const int64_t rank = static_cast<int64_t>(data.rank());
  ctx.check(indices.rank() == data.rank(), "indices rank " + std::to_string(indices.rank()) +
                                               " differs from data rank " + std::to_string(rank));
  const size_t axis = static_cast<size_t>(normalize_axis(ctx, ctx.node.attr_int("axis", 0), rank));
  for (size_t d = 0; d < data.rank(); ++d) {
    ctx.check(d == axis || indices.dim(d) <= data.dim(d),
              "indices shape " + shape_str(indices.shape()) + " exceeds data shape " + shape_str(data.shape()));
  }
  return axis;
}

void gather_elements(KernelContext& ctx) {
  const Tensor& data = ctx.required(0);
  const Tensor& indices = ctx.required(1);
  const size_t axis = elements_axis(ctx, data, indices);
  const std::vector<int64_t> idx = movement::checked_indices(ctx, indices, data.dim(axis));
  const std::vector<int64_t> strides = dense_strides(data.shape());
  Tensor out(data.dtype(), indices.shape());
  movement::with_element_type(dtype_size(data.dtype()), [&](auto tag) {
    using T = decltype(tag);
    const T* src = data.data<T>();
    T* dst = out.mutable_data<T>();
    for_each_index_position(indices.shape(), strides, axis, [&](int64_t k, int64_t base) {
      dst[k] = src[base + idx[static_cast<size_t>(k)] * strides[axis]];
    });
  });
  ctx.outputs[0] = out;
}

// GatherND (opset 11; batch_dims from 12): indices [..., k] address data's dims b..b+k-1 within
// each of the first b (batch) dims, which indices and data share.
void gather_nd(KernelContext& ctx) {
  const Tensor& data = ctx.required(0);
  const Tensor& indices = ctx.required(1);
  ctx.check(indices.dtype() == DType::Int64, "indices must be int64, got " + dtype_name(indices.dtype()));
  const int64_t b = ctx.node.attr_int("batch_dims", 0);
  ctx.check(indices.rank() >= 1, "indices must have rank >= 1");
  ctx.check(b >= 0 && b < static_cast<int64_t>(std::min(data.rank(), indices.rank())),
            "attribute 'batch_dims' " + std::to_string(b) + " must be in [0, min(data rank, indices rank))");
  const auto nb = static_cast<size_t>(b);
  for (size_t d = 0; d < nb; ++d)
    ctx.check(data.dim(d) == indices.dim(d), "batch dims of data " + shape_str(data.shape()) + " and indices " +
                                                 shape_str(indices.shape()) + " differ");
  const int64_t k = indices.dim(indices.rank() - 1);
  ctx.check(k >= 1 && nb + static_cast<size_t>(k) <= data.rank(),
            "indices last dim " + std::to_string(k) + " must be in [1, data rank - batch_dims]");
  const auto nk = static_cast<size_t>(k);
  Shape shape(indices.shape().begin(), indices.shape().end() - 1);
  shape.insert(shape.end(), data.shape().begin() + static_cast<std::ptrdiff_t>(nb + nk), data.shape().end());
  const int64_t batches = shape_numel(Shape(data.shape().begin(), data.shape().begin() + static_cast<std::ptrdiff_t>(nb)));
  const int64_t batch_size = shape_numel(Shape(data.shape().begin() + static_cast<std::ptrdiff_t>(nb), data.shape().end()));
  const int64_t block = shape_numel(Shape(data.shape().begin() + static_cast<std::ptrdiff_t>(nb + nk), data.shape().end()));
  const int64_t per_batch = batches ? shape_numel(Shape(indices.shape().begin(), indices.shape().end() - 1)) / batches : 0;
  const std::vector<int64_t> strides = dense_strides(data.shape());
  const int64_t* idx = indices.data<int64_t>();
  Tensor out(data.dtype(), shape);
  const size_t esize = dtype_size(data.dtype());
  const auto* src = static_cast<const uint8_t*>(data.raw());
  auto* dst = static_cast<uint8_t*>(out.mutable_raw());
  for (int64_t i = 0; i < batches; ++i) {
    for (int64_t j = 0; j < per_batch; ++j) {
      const int64_t* t = idx + (i * per_batch + j) * k;
      int64_t offset = i * batch_size;
      for (size_t d = 0; d < nk; ++d) offset += movement::checked_index(ctx, t[d], data.dim(nb + d)) * strides[nb + d];
      std::memcpy(dst + static_cast<size_t>((i * per_batch + j) * block) * esize,
                  src + static_cast<size_t>(offset) * esize, static_cast<size_t>(block) * esize);
    }
  }
  ctx.outputs[0] = out;
}

enum class Reduction { None, Add, Mul, Max, Min };

// The `reduction` attribute of ScatterElements / ScatterND: add and mul from opset 16, max and min
// from 18; Scatter and earlier opsets have none.
Reduction reduction_attr(const KernelContext& ctx) {
  const std::string r = ctx.node.attr_string("reduction", "none");
  if (r == "none") return Reduction::None;
  const bool op16 = ctx.opset() >= 16 && ctx.node.op_type != "Scatter";
  if (op16 && r == "add") return Reduction::Add;
  if (op16 && r == "mul") return Reduction::Mul;
  if (op16 && ctx.opset() >= 18 && r == "max") return Reduction::Max;
  if (op16 && ctx.opset() >= 18 && r == "min") return Reduction::Min;
  ctx.fail("unsupported reduction '" + r + "' at opset " + std::to_string(ctx.opset()));
}

// Integer add/mul wrap modulo 2^bits (computed in uint64_t), like the elementwise ops.
template <class T>
T reduce_value(Reduction r, T a, T b) {
  using W = std::conditional_t<std::is_integral_v<T>, uint64_t, T>;
  switch (r) {
    case Reduction::Add: return static_cast<T>(static_cast<W>(a) + static_cast<W>(b));
    case Reduction::Mul: return static_cast<T>(static_cast<W>(a) * static_cast<W>(b));
    case Reduction::Max: return std::max(a, b);
    case Reduction::Min: return std::min(a, b);
    default: return b;
  }
}

// The scatter driver shared by ScatterElements and ScatterND: checks the reduction and the
// updates' dtype, copies data (input 0) and calls scatter(reduction, dst, updates) with typed
// pointers: any dtype by element size without a reduction, numeric dtypes with one.
template <class F>
void run_scatter(KernelContext& ctx, F&& scatter) {
  const Tensor& data = ctx.required(0);
  const Tensor& updates = ctx.required(2);
  const Reduction reduction = reduction_attr(ctx);
  ctx.check(updates.dtype() == data.dtype(), "updates dtype differs from data dtype");
  Tensor out = data.clone();
  auto typed = [&](auto tag) {
    using T = decltype(tag);
    scatter(reduction, out.mutable_data<T>(), updates.data<T>());
  };
  if (reduction == Reduction::None) {
    movement::with_element_type(dtype_size(data.dtype()), typed);
  } else {
    ctx.check(movement::with_numeric_type(data.dtype(), typed), "reduction '" + ctx.node.attr_string("reduction", "none") +
                                                                    "' is not supported for " + dtype_name(data.dtype()));
  }
  ctx.outputs[0] = out;
}

void scatter_elements(KernelContext& ctx) {
  const Tensor& data = ctx.required(0);
  const Tensor& indices = ctx.required(1);
  const Tensor& updates = ctx.required(2);
  ctx.check(updates.shape() == indices.shape(), "updates shape " + shape_str(updates.shape()) +
                                                    " differs from indices shape " + shape_str(indices.shape()));
  const size_t axis = elements_axis(ctx, data, indices);
  const std::vector<int64_t> idx = movement::checked_indices(ctx, indices, data.dim(axis));
  const std::vector<int64_t> strides = dense_strides(data.shape());
  run_scatter(ctx, [&](Reduction reduction, auto* dst, const auto* upd) {
    for_each_index_position(indices.shape(), strides, axis, [&](int64_t k, int64_t base) {
      auto& d = dst[base + idx[static_cast<size_t>(k)] * strides[axis]];
      d = reduce_value(reduction, d, upd[k]);
    });
  });
}

// ScatterND: indices [..., k] address data's first k dims; each addresses a block of updates.
void scatter_nd(KernelContext& ctx) {
  const Tensor& data = ctx.required(0);
  const Tensor& indices = ctx.required(1);
  const Tensor& updates = ctx.required(2);
  ctx.check(indices.rank() >= 1, "indices must have rank >= 1");
  const size_t k = static_cast<size_t>(indices.dim(indices.rank() - 1));
  ctx.check(k <= data.rank(), "indices last dim " + std::to_string(k) + " exceeds data rank");
  Shape expect(indices.shape().begin(), indices.shape().end() - 1);
  expect.insert(expect.end(), data.shape().begin() + static_cast<std::ptrdiff_t>(k), data.shape().end());
  ctx.check(updates.shape() == expect, "updates shape " + shape_str(updates.shape()) + " should be " +
                                           shape_str(expect));
  const std::vector<int64_t> idx = movement::int_input(ctx, 1);
  const std::vector<int64_t> strides = dense_strides(data.shape());
  const int64_t block = shape_numel(Shape(data.shape().begin() + static_cast<std::ptrdiff_t>(k), data.shape().end()));
  const int64_t n_updates = shape_numel(Shape(indices.shape().begin(), indices.shape().end() - 1));
  run_scatter(ctx, [&](Reduction reduction, auto* dst, const auto* upd) {
    for (int64_t u = 0; u < n_updates; ++u) {
      int64_t offset = 0;
      for (size_t j = 0; j < k; ++j)
        offset += movement::checked_index(ctx, idx[static_cast<size_t>(u) * k + j], data.dim(j)) * strides[j];
      for (int64_t i = 0; i < block; ++i) dst[offset + i] = reduce_value(reduction, dst[offset + i], upd[u * block + i]);
    }
  });
}

}  // namespace

namespace shape {
namespace {

void gather_elements(const In& x, Outs& o) {
  if (x.shape(1)) o[0] = *x.shape(1);
  o[0].dtype = x.dtype(0);
}

}  // namespace
}  // namespace shape

void register_scatter_gather(OpRegistry& r) {
  r.add("", "GatherElements", &gather_elements).rule(shape::gather_elements).meta("tensor", "data indices");
  r.add("", "GatherND", &gather_nd).meta("tensor", "data indices");
  r.add("", "ScatterElements", &scatter_elements).rule(shape::same_as_input).meta("tensor", "data indices updates");
  r.add("", "Scatter", &scatter_elements).meta("tensor", "data indices updates");
  r.add("", "ScatterND", &scatter_nd).rule(shape::same_as_input).meta("tensor", "data indices updates");
}

}  // namespace ptq::exec
