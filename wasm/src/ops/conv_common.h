#pragma once
// Shared by Conv, ConvTranspose and the pooling ops: spatial attribute parsing (kernel_shape, strides,
// dilations, pads, auto_pad), output-size rules, float dtype plumbing and the packed-weight cache.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "exec/kernel.h"

namespace ptq::ops {

enum class AutoPad { NotSet, SameUpper, SameLower, Valid };

AutoPad parse_auto_pad(const exec::KernelContext& ctx);

// Per spatial axis (NCHW-style layout: axes 2.. of the input).
struct Spatial {
  std::vector<int64_t> in, out, kernel, stride, dilation, pad_begin, pad_end;
  size_t rank() const { return in.size(); }
  int64_t in_size() const;   // product of `in`
  int64_t out_size() const;  // product of `out`
  int64_t kernel_size() const;
  int64_t span(size_t i) const { return (kernel[i] - 1) * dilation[i] + 1; }  // dilated kernel extent
};

// Reads strides / dilations / pads (defaults 1 / 1 / 0), validating their lengths against `kernel`.
// `dilations_allowed` is false for ops without the attribute (AveragePool < 19, LpPool).
Spatial read_spatial_attrs(const exec::KernelContext& ctx, const std::vector<int64_t>& in,
                           const std::vector<int64_t>& kernel, bool dilations_allowed = true);

// Forward (Conv / pooling) output size and effective pads, ONNX rules:
//   NOTSET: out = floor_or_ceil((in + pb + pe - span) / stride) + 1, where with ceil_mode a last window
//           that would start in the right padding is dropped (ONNX reference, PyTorch);
//   SAME_*: out = ceil(in / stride), total pad = max(0, (out-1)*stride + span - in), the odd pixel at
//           the end for SAME_UPPER and at the beginning for SAME_LOWER;
//   VALID:  pads 0, out = floor_or_ceil((in - span) / stride) + 1.
void resolve_forward_output(const exec::KernelContext& ctx, Spatial& s, bool ceil_mode = false);

// Conv geometry: X [batch, C, spatial...] and W [M, C / group, kernel...] with the group,
// strides, dilations and pads attributes resolved (shared by Conv and the integer convolutions).
struct ConvShape {
  int64_t batch = 0, C = 0, M = 0, group = 1, Cg = 0, Mg = 0;
  Spatial sp;
  int64_t K() const { return Cg * sp.kernel_size(); }
};
ConvShape conv_shape(const exec::KernelContext& ctx, const Tensor& x, const Tensor& w);

// The checks Conv and ConvTranspose open with: X [N, C, spatial...] of rank >= 3, W of X's rank, and
// attribute 'group' >= 1, which is returned.
int64_t check_conv_operands(const exec::KernelContext& ctx, const Tensor& x, const Tensor& w);
// W's spatial dims (checked against attribute 'kernel_shape' when present) with the strides,
// dilations and pads of the node, for X's spatial dims.
Spatial read_conv_window(const exec::KernelContext& ctx, const Tensor& x, const Tensor& w);

// Returns t as float32 (float16 / bfloat16 / double are converted); fails for other dtypes.
Tensor float_input(const exec::KernelContext& ctx, const Tensor& t, const char* what);
bool is_float_like(DType t);
// Casts a float32 result back to the dtype of the op's input, as ONNX requires T -> T.
Tensor to_dtype(Tensor y, DType dtype);

// Conv / ConvTranspose: the optional bias input 2 as float32 of shape [M] (undefined when absent),
// and the float32 output [batch, M, out spatial...].
Tensor optional_bias(const exec::KernelContext& ctx, int64_t M);
Tensor conv_output(int64_t batch, int64_t M, const std::vector<int64_t>& out_spatial);

// Data derived from a (normally constant) input, e.g. packed GEMM weights. When ctx.prepared is
// available and input `index` is a graph constant, the result is cached there, keyed by the source
// tensor's identity. Two entries per node: the first packing built, and the latest different one (a
// sensitivity sweep toggles a node between its float and its fake-quantised weights, for every
// sample; rebuilding the float packing after each item cost a fifth of a node sweep natively).
// Second entries of all nodes together are capped at kPackedSecondBudget bytes per thread: the oldest
// are dropped to make room (a packing larger than the whole cap is built for the call only). First
// entries are counted against the memory budget (core/size.h) and capped at 512 MiB per thread: one
// beyond either is built for the call only. The cache keeps the source tensors alive so their addresses cannot be
// reused while cached.
// `layout` names the packing (a node can switch between paths, e.g. when its input shape changes);
// a new layout replaces the first entry.
struct PackedConstant {
  Tensor source;
  std::vector<float> data;
  int layout = 0;
};
enum PackedLayout : int { kPackedGemm = 0, kPackedWinograd4 = 1, kPackedWinograd2 = 2 };
const std::vector<float>& packed_constant(exec::KernelContext& ctx, size_t index, PackedConstant& local,
                                          const std::function<void(std::vector<float>&)>& build,
                                          int layout = kPackedGemm);
inline constexpr size_t kPackedSecondBudget = size_t{64} << 20;
// For tests: this thread's cap on second entries (kPackedSecondBudget by default), the bytes they
// hold, and the number of packings built so far by this thread (cached or not: shows cache hits).
void set_packed_second_budget(size_t bytes);
size_t packed_second_bytes();
size_t packed_constant_builds();

inline int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }
inline int64_t ceil_div(int64_t a, int64_t b) { return -floor_div(-a, b); }

// Output positions o in [0, out) whose input coordinate o*stride + offset lies in [0, in).
struct ValidRange {
  int64_t lo, hi;
};
inline ValidRange valid_range(int64_t offset, int64_t stride, int64_t in, int64_t out) {
  int64_t lo = offset >= 0 ? 0 : ceil_div(-offset, stride);
  int64_t hi = floor_div(in - 1 - offset, stride) + 1;
  lo = lo < 0 ? 0 : (lo > out ? out : lo);
  hi = hi < lo ? lo : (hi > out ? out : hi);
  return {lo, hi};
}

// A 1-D or 2-D spatial geometry as 2-D (a 1-D op is a 2-D op over a single row).
struct Plane2D {
  int64_t H, W, OH, OW, kh, kw, sh, sw, dh, dw, pt, pl;
};
Plane2D as_plane(const Spatial& s);

// One input plane copied into a scratch buffer with `fill` all around (zeros for conv and average
// pooling, lowest() for max pooling), sized so that every window of the output grid, including
// ceil_mode overhang, reads inside it: window loops need no bounds checks. Outputs are produced in
// runs: output q of a run reads P[base + q*sw + tap_offset(ky, kx)]. With a vertical stride of 1 all
// rows form one flat run (row pitch pitch()/sw outputs, of which the first OW are kept), so small
// planes (7x7, 14x14) still vectorise; otherwise there is one run per output row.
class PaddedPlane {
 public:
  PaddedPlane(const Plane2D& p, int scratch_slot, int flat_slot);
  void load(const float* x, float fill);
  const Plane2D& geometry() const { return p_; }
  int64_t pitch() const { return wp_; }
  const std::vector<int64_t>& tap_offsets() const { return taps_; }  // ky*dh*pitch + kx*dw, row-major

  // run(base, count, dst): dst[q] for q < count from P reads at base + q*sw + tap offsets.
  template <class Run>
  void for_each_run(float* y, Run&& run) const {
    if (p_.sh != 1) {
      for (int64_t oy = 0; oy < p_.OH; ++oy) run(data_ + oy * p_.sh * wp_, p_.OW, y + oy * p_.OW);
      return;
    }
    const int64_t step = wp_ / p_.sw;
    const int64_t count = (p_.OH - 1) * step + p_.OW;
    float* flat = flat_buffer(count);
    run(data_, count, flat);
    for (int64_t oy = 0; oy < p_.OH; ++oy) copy_row(y + oy * p_.OW, flat + oy * step);
  }

 private:
  float* flat_buffer(int64_t count) const;
  void copy_row(float* dst, const float* src) const;

  Plane2D p_;
  int slot_, flat_slot_;
  int64_t rows_ = 0, wp_ = 0;
  std::vector<int64_t> taps_;
  float* data_ = nullptr;
};

}  // namespace ptq::ops
