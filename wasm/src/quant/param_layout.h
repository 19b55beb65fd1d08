#pragma once
// Which scale / zero-point element quantizes which element of a tensor: the three granularities of
// QuantizeLinear / DequantizeLinear (§1.11), shared by their kernels (ops/qdq.cpp), the calibration
// node's fake quantization (quant/calibration.cpp), the Q/DQ import's dequantized weights and the
// qdq-onnx export's re-quantized ones:
//   per tensor   one parameter;
//   per axis     one parameter per index along `axis`;
//   blocked      (opset 21 `block_size` B) a parameter tensor with the tensor's shape except along
//                `axis`, where it has ceil(D / B) entries: index i along the axis uses entry i / B.
// The tensor is viewed as [outer, channels, inner] around the axis; the run of `inner` consecutive
// elements at (o, c) uses the parameters base(o, c), base + step(), base + 2 step(), ...
#include <cstdint>

#include "core/tensor.h"

namespace ptq::quant {

struct ParamLayout {
  int64_t outer = 1, channels = 1, inner = 1;
  int64_t block = 0;  // > 0: blocked along the axis
  bool per_tensor = true;

  int64_t blocks() const { return block > 0 ? (channels + block - 1) / block : channels; }
  int64_t base(int64_t o, int64_t c) const {
    if (per_tensor) return 0;
    if (block == 0) return c;
    return (o * blocks() + c / block) * inner;
  }
  int64_t step() const { return !per_tensor && block > 0 ? 1 : 0; }
  // How many parameters the layout reads.
  int64_t count() const { return per_tensor ? 1 : block > 0 ? outer * blocks() * inner : channels; }
};

// One parameter for all `numel` elements.
inline ParamLayout per_tensor_layout(int64_t numel) {
  ParamLayout p;
  p.inner = numel;
  return p;
}

// Per axis (block 0) or blocked along `axis` (0 <= axis < rank, checked by the caller).
inline ParamLayout axis_layout(const Shape& shape, int64_t axis, int64_t block) {
  ParamLayout p;
  p.per_tensor = false;
  p.block = block;
  const int64_t rank = static_cast<int64_t>(shape.size());
  for (int64_t d = 0; d < axis; ++d) p.outer *= shape[static_cast<size_t>(d)];
  p.channels = shape[static_cast<size_t>(axis)];
  for (int64_t d = axis + 1; d < rank; ++d) p.inner *= shape[static_cast<size_t>(d)];
  return p;
}

// The parameter shape of blocked quantization of `shape` along `axis` by `block` (> 0).
inline Shape blocked_param_shape(Shape shape, int64_t axis, int64_t block) {
  int64_t& d = shape[static_cast<size_t>(axis)];
  d = (d + block - 1) / block;
  return shape;
}

// Calls f(offset, base, step) for each run of `layout.inner` elements starting at element `offset`,
// whose k-th element uses parameter base + k * step.
template <class F>
void for_each_param_run(const ParamLayout& layout, F&& f) {
  const int64_t step = layout.step();
  for (int64_t o = 0; o < layout.outer; ++o)
    for (int64_t c = 0; c < layout.channels; ++c) f((o * layout.channels + c) * layout.inner, layout.base(o, c), step);
}

}  // namespace ptq::quant
