#pragma once
// Helpers shared by the shape / data-movement op families (shape_ops, concat_split, slice_gather,
// transpose, pad, depth_space, resize, topk). Data movement never looks at values: it copies
// elements by their byte size, so every dtype (float32, int64, bool, uint8, float16, ...) works.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "exec/kernel.h"

namespace ptq::exec::movement {

// Maps a possibly negative axis into [0, rank); fails naming `what` (e.g. "axis") when out of range.
int64_t normalize_axis(const KernelContext& ctx, int64_t axis, int64_t rank, const char* what = "axis");

// An index into a dim of size `dim` with a negative value counted from the end; fails naming the
// value and the dim when it is outside [-dim, dim).
inline int64_t checked_index(const KernelContext& ctx, int64_t v, int64_t dim) {
  if (v < -dim || v >= dim) {
    ctx.fail("index " + std::to_string(v) + " is out of range for a dim of " + std::to_string(dim));
  }
  return v < 0 ? v + dim : v;
}

// The values of an int64/int32 index tensor, each checked and wrapped by checked_index.
std::vector<int64_t> checked_indices(const KernelContext& ctx, const Tensor& indices, int64_t dim);

// Row-major element strides of a dense tensor of `shape`.
std::vector<int64_t> dense_strides(const Shape& shape);

// Values of an optional int tensor input (int64 or int32); empty when absent.
std::vector<int64_t> int_input(const KernelContext& ctx, size_t index);

// dst[dst_offset + Σ i_d·dst_strides[d]] = src[src_offset + Σ i_d·src_strides[d]] for every index i
// of `shape` (offsets and strides in elements of size `elem_size`). Merges dims whose layout allows
// it, copies contiguous rows with memcpy and runs a tiled 2-D copy when a transpose moved the
// source's unit-stride dim away from the innermost position.
void strided_copy(const void* src, int64_t src_offset, const std::vector<int64_t>& src_strides, void* dst,
                  int64_t dst_offset, const std::vector<int64_t>& dst_strides, const Shape& shape,
                  size_t elem_size);

// A new tensor of `shape` whose element i reads src at offset + Σ i_d·strides[d]. Returns a
// zero-copy alias of `src` when that window is one contiguous run (e.g. a leading-axis slice).
Tensor strided_view_or_copy(const Tensor& src, int64_t offset, const Shape& shape,
                            const std::vector<int64_t>& strides);

// out[i] = in[perm applied]: out.shape[d] = in.shape[perm[d]]. `perm` must be a permutation.
Tensor permute(const Tensor& input, const std::vector<int64_t>& perm);

// A tensor of `shape` with every element equal to the `dtype_size(dtype)` bytes at `element`.
Tensor filled(DType dtype, const Shape& shape, const void* element);

// Calls f(T{}) with an unsigned integer type of the given byte size (1, 2, 4 or 8), so element
// copies compile to plain loads and stores.
template <class F>
void with_element_type(size_t elem_size, F&& f) {
  switch (elem_size) {
    case 1: f(uint8_t{}); break;
    case 2: f(uint16_t{}); break;
    case 4: f(uint32_t{}); break;
    case 8: f(uint64_t{}); break;
    default: fail("unsupported element size " + std::to_string(elem_size));
  }
}

// Calls f(T{}) with the C++ type of a numeric dtype that has a native type (not float16/bfloat16,
// bool or string); returns false without calling f otherwise.
template <class F>
bool with_numeric_type(DType dtype, F&& f) {
  switch (dtype) {
    case DType::Float: f(float{}); return true;
    case DType::Double: f(double{}); return true;
    case DType::Int8: f(int8_t{}); return true;
    case DType::UInt8: f(uint8_t{}); return true;
    case DType::Int16: f(int16_t{}); return true;
    case DType::UInt16: f(uint16_t{}); return true;
    case DType::Int32: f(int32_t{}); return true;
    case DType::UInt32: f(uint32_t{}); return true;
    case DType::Int64: f(int64_t{}); return true;
    case DType::UInt64: f(uint64_t{}); return true;
    default: return false;
  }
}

}  // namespace ptq::exec::movement
