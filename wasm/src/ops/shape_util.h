#pragma once
// Helpers the ops' shape rules share (exec/shape_rule.h): checked dim arithmetic, axes, numpy
// broadcasting, and the window arithmetic of convolution and pooling.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/size.h"
#include "exec/shape_rule.h"

namespace ptq::exec::shape {

// The rules' int64 arithmetic on dims and attribute values, checked: an overflow throws SizeError,
// which infer_shapes catches around each rule (the outputs stay unknown; the kernel reports the size).
inline int64_t add(int64_t a, int64_t b) { return int64_add(a, b, "inferred dimension"); }
inline int64_t sub(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_sub_overflow(a, b, &r)) throw SizeError("inferred dimension overflows 64-bit arithmetic");
  return r;
}
inline int64_t mul(int64_t a, int64_t b) { return int64_mul(a, b, "inferred dimension"); }
// A float size truncated to int64 (undefined beyond int64 in C++).
inline int64_t truncate(double v) {
  if (!(v > -9.0e18 && v < 9.0e18)) throw SizeError("inferred dimension overflows 64-bit arithmetic");
  return static_cast<int64_t>(v);
}
// A rank read from a tensor's dim (the length of a shape input): no real rank is anywhere near this.
constexpr int64_t kMaxInferredRank = 64;

inline Dim mul(const Dim& a, const Dim& b) {
  if (a.known() && b.known()) return dim(mul(a.v, b.v));
  if (a.known() && a.v == 1) return b;
  if (b.known() && b.v == 1) return a;
  return Dim{};
}

// Normalises an axis; nullopt when out of range (the kernel will report it).
inline std::optional<size_t> axis_of(int64_t a, size_t rank) {
  const int64_t r = static_cast<int64_t>(rank);
  if (a < -r || a >= r) return std::nullopt;
  return static_cast<size_t>(a < 0 ? a + r : a);
}

// Axes from input 1 from opset `input_since` on (absent input: empty), from the attribute before.
inline std::optional<std::vector<int64_t>> axes_input_or_attr(const In& x, int input_since) {
  if (x.opset() >= input_since) {
    if (!x.shape(1)) return std::vector<int64_t>{};
    return x.ints(1);
  }
  return x.node.attr_ints("axes");
}

// ---- elementwise ------------------------------------------------------------------------------

inline void same_as_input(const In& x, Outs& o) {
  if (x.shape(0)) o[0] = *x.shape(0);
}

// Input 0's shape with dtype `t`.
inline Rule same_with_dtype(DType t) {
  return [t](const In& x, Outs& o) {
    same_as_input(x, o);
    o[0].dtype = t;
  };
}

// Numpy multidirectional broadcasting of every present input.
inline Shp broadcast(const std::vector<const Shp*>& shapes) {
  Shp r = ranked(DType::Undefined, std::vector<Dim>{});
  for (const Shp* s : shapes) {
    if (!s) continue;
    if (!s->ranked) return unranked(DType::Undefined);
    if (s->rank() > r.rank()) r.d.insert(r.d.begin(), s->rank() - r.rank(), dim(1));
    const size_t off = r.rank() - s->rank();
    for (size_t i = 0; i < s->rank(); ++i) {
      Dim& a = r.d[off + i];
      const Dim& b = s->d[i];
      if (a.known() && a.v == 1) a = b;
      else if (b.known() && b.v == 1) continue;
      else if (a.known() && b.known()) a = dim(std::max(a.v, b.v));  // equal in a valid graph
      else if (b.known()) a = b;                                     // the unknown side must be 1 or equal
      else if (!a.known() && a.sym != b.sym) a = Dim{};
    }
  }
  return r;
}

// Broadcast of every input; dtype `out_dtype`, or that of input `dtype_input` when not given.
inline Rule broadcast_rule(std::optional<DType> out_dtype, size_t dtype_input = 0) {
  return [out_dtype, dtype_input](const In& x, Outs& o) {
    o[0] = broadcast(x.s);
    o[0].dtype = out_dtype ? *out_dtype : x.dtype(dtype_input);
  };
}

// ---- conv and pooling windows ------------------------------------------------------------------

struct Window {
  std::vector<int64_t> kernel, stride, dilation, pads;
  std::string auto_pad;
};

inline Window read_window(const ir::Node& n, size_t spatial, const std::vector<int64_t>& kernel) {
  Window w;
  w.kernel = kernel;
  w.stride = n.attr_ints("strides", std::vector<int64_t>(spatial, 1));
  w.dilation = n.attr_ints("dilations", std::vector<int64_t>(spatial, 1));
  w.pads = n.attr_ints("pads", std::vector<int64_t>(2 * spatial, 0));
  w.auto_pad = n.attr_string("auto_pad", "NOTSET");
  return w;
}

inline bool window_ok(const Window& w, size_t spatial) {
  return w.kernel.size() == spatial && w.stride.size() == spatial && w.dilation.size() == spatial &&
         w.pads.size() == 2 * spatial;
}

// Same rules as ops::resolve_forward_output (conv_common.h).
inline Dim forward_extent(const Window& w, size_t i, const Dim& in, bool ceil_mode) {
  if (!in.known()) return Dim{};
  const int64_t st = w.stride[i];
  if (st <= 0 || w.kernel[i] <= 0 || w.dilation[i] <= 0) return Dim{};  // invalid: the kernel reports it
  const int64_t span = add(mul(w.kernel[i] - 1, w.dilation[i]), 1);
  if (w.auto_pad == "SAME_UPPER" || w.auto_pad == "SAME_LOWER") return dim(add(in.v, st - 1) / st);
  const size_t r = w.kernel.size();
  const int64_t pb = w.auto_pad == "VALID" ? 0 : w.pads[i], pe = w.auto_pad == "VALID" ? 0 : w.pads[r + i];
  const int64_t room = sub(add(add(in.v, pb), pe), span);
  if (room < 0) return Dim{};
  int64_t out = (ceil_mode ? add(room, st - 1) / st : room / st) + 1;
  if (ceil_mode && mul(out - 1, st) >= add(in.v, pb)) --out;
  return dim(out);
}

}  // namespace ptq::exec::shape
