#include "ops/conv_common.h"

#include <algorithm>
#include <any>
#include <deque>
#include <memory>

#include "core/size.h"
#include "ops/gemm_kernel.h"
#include "ops/simd.h"

namespace ptq::ops {

namespace {

int64_t product(const std::vector<int64_t>& v, const char* what) {
  int64_t p = 1;
  for (int64_t x : v) p = size_mul(p, x, what);
  return p;
}

std::vector<int64_t> read_per_axis(const exec::KernelContext& ctx, const char* name, size_t rank, int64_t fallback,
                                   int64_t min_value) {
  std::vector<int64_t> v = ctx.node.attr_ints(name, std::vector<int64_t>(rank, fallback));
  ctx.check(v.size() == rank, std::string("attribute '") + name + "' has " + std::to_string(v.size()) +
                                  " values, expected " + std::to_string(rank));
  for (int64_t x : v) {
    ctx.check(x >= min_value, std::string("attribute '") + name + "' has invalid value " + std::to_string(x));
  }
  return v;
}

}  // namespace

int64_t Spatial::in_size() const { return product(in, "input plane size"); }
int64_t Spatial::out_size() const { return product(out, "output plane size"); }
int64_t Spatial::kernel_size() const { return product(kernel, "kernel size"); }

AutoPad parse_auto_pad(const exec::KernelContext& ctx) {
  const std::string s = ctx.node.attr_string("auto_pad", "NOTSET");
  if (s == "NOTSET" || s.empty()) return AutoPad::NotSet;
  if (s == "SAME_UPPER") return AutoPad::SameUpper;
  if (s == "SAME_LOWER") return AutoPad::SameLower;
  if (s == "VALID") return AutoPad::Valid;
  ctx.fail("attribute 'auto_pad' has unsupported value '" + s + "'");
}

Spatial read_spatial_attrs(const exec::KernelContext& ctx, const std::vector<int64_t>& in,
                           const std::vector<int64_t>& kernel, bool dilations_allowed) {
  const size_t rank = in.size();
  Spatial s;
  s.in = in;
  s.kernel = kernel;
  ctx.check(kernel.size() == rank, "kernel has " + std::to_string(kernel.size()) + " spatial dims, input has " +
                                       std::to_string(rank));
  for (int64_t k : kernel) ctx.check(k >= 1, "kernel size must be >= 1, got " + std::to_string(k));
  s.stride = read_per_axis(ctx, "strides", rank, 1, 1);
  if (dilations_allowed) {
    s.dilation = read_per_axis(ctx, "dilations", rank, 1, 1);
  } else {
    ctx.check(!ctx.node.has_attr("dilations"), "attribute 'dilations' is not supported by this op/opset");
    s.dilation.assign(rank, 1);
  }
  const std::vector<int64_t> pads = read_per_axis(ctx, "pads", 2 * rank, 0, 0);
  s.pad_begin.assign(pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(rank));
  s.pad_end.assign(pads.begin() + static_cast<std::ptrdiff_t>(rank), pads.end());
  // Everything the output-size rules compute from these stays within int64 from here on: the dilated
  // kernel extent and the padded input size (SizeError, which the executor prefixes with the node).
  for (size_t i = 0; i < rank; ++i) {
    size_add(size_mul(kernel[i] - 1, s.dilation[i], "dilated kernel extent"), 1, "dilated kernel extent");
    size_add(size_add(in[i], s.pad_begin[i], "padded input size"), s.pad_end[i], "padded input size");
  }
  return s;
}

void resolve_forward_output(const exec::KernelContext& ctx, Spatial& s, bool ceil_mode) {
  const AutoPad mode = parse_auto_pad(ctx);
  s.out.assign(s.rank(), 0);
  for (size_t i = 0; i < s.rank(); ++i) {
    const int64_t in = s.in[i], st = s.stride[i], span = s.span(i);
    if (mode == AutoPad::SameUpper || mode == AutoPad::SameLower) {
      s.out[i] = ceil_div(in, st);
      const int64_t total = std::max<int64_t>(0, (s.out[i] - 1) * st + span - in);
      const int64_t small = total / 2;
      s.pad_begin[i] = mode == AutoPad::SameUpper ? small : total - small;
      s.pad_end[i] = total - s.pad_begin[i];
      continue;
    }
    if (mode == AutoPad::Valid) s.pad_begin[i] = s.pad_end[i] = 0;
    const int64_t room = in + s.pad_begin[i] + s.pad_end[i] - span;
    ctx.check(room >= 0, "kernel extent " + std::to_string(span) + " exceeds padded input size " +
                             std::to_string(in + s.pad_begin[i] + s.pad_end[i]) + " on spatial axis " +
                             std::to_string(i));
    s.out[i] = (ceil_mode ? ceil_div(room, st) : room / st) + 1;
    // A window starting inside the right padding would see no input: ONNX/PyTorch drop it.
    if (ceil_mode && (s.out[i] - 1) * st >= in + s.pad_begin[i]) --s.out[i];
  }
}

bool is_float_like(DType t) {
  return t == DType::Float || t == DType::Float16 || t == DType::BFloat16 || t == DType::Double;
}

Tensor float_input(const exec::KernelContext& ctx, const Tensor& t, const char* what) {
  ctx.check(is_float_like(t.dtype()), std::string(what) + " has unsupported dtype " + dtype_name(t.dtype()));
  return t.to_float();
}

Tensor to_dtype(Tensor y, DType dtype) { return dtype == DType::Float ? y : cast_tensor(y, dtype); }

Tensor optional_bias(const exec::KernelContext& ctx, int64_t M) {
  const Tensor* b = ctx.input(2);
  if (!b) return Tensor();
  ctx.check(b->rank() == 1 && b->dim(0) == M,
            "bias B must have shape [" + std::to_string(M) + "], got " + shape_str(b->shape()));
  return float_input(ctx, *b, "B");
}

Tensor conv_output(int64_t batch, int64_t M, const std::vector<int64_t>& out_spatial) {
  Shape shape{batch, M};
  shape.insert(shape.end(), out_spatial.begin(), out_spatial.end());
  return Tensor(DType::Float, shape);
}

namespace {

struct SecondEntry;
thread_local size_t second_bytes = 0;  // bytes of all live second entries (this thread)
thread_local size_t second_budget = kPackedSecondBudget;
thread_local size_t builds = 0;
// First entries of all nodes together (this thread). They are as big as the model's weights, so a
// model of a gigabyte would hold a second gigabyte of packings and leave its quantized weights and
// activations no room in the budget: beyond this cap a packing is built for the call only.
constexpr size_t kPackedFirstBudget = size_t{512} << 20;
thread_local size_t first_bytes = 0;
thread_local std::deque<std::weak_ptr<SecondEntry>> second_order;  // oldest first, for eviction

// A second packing, counted against the budget while it holds data.
struct SecondEntry {
  PackedConstant entry;
  size_t bytes = 0;
  SecondEntry() = default;
  SecondEntry(const SecondEntry&) = delete;
  SecondEntry& operator=(const SecondEntry&) = delete;
  ~SecondEntry() { second_bytes -= bytes; }
  void release() {
    entry = PackedConstant{};  // an empty source matches nothing: the owner rebuilds when needed
    second_bytes -= bytes;
    bytes = 0;
  }
};

// A first entry's bytes, held against the memory budget (core/size.h) and the first-entry cap until
// the entry is dropped.
struct FirstHold {
  uint64_t bytes = 0;
  explicit FirstHold(uint64_t b) : bytes(b) { first_bytes += b; }
  FirstHold(const FirstHold&) = delete;
  FirstHold& operator=(const FirstHold&) = delete;
  ~FirstHold() {
    release_memory(bytes);
    first_bytes -= bytes;
  }
};

struct PackedCache {
  PackedConstant first;
  std::shared_ptr<FirstHold> first_hold;   // shared, like `second`: std::any copies what it holds
  std::shared_ptr<SecondEntry> second;     // shared: std::any copies what it holds
};

// Drops the oldest second entries (of any node) until `bytes` more fit; false if they cannot.
bool make_room(size_t bytes) {
  while (second_bytes + bytes > second_budget && !second_order.empty()) {
    if (auto oldest = second_order.front().lock()) oldest->release();
    second_order.pop_front();
  }
  return second_bytes + bytes <= second_budget;
}

bool holds(const PackedConstant& e, const Tensor& src, int layout) {
  return e.source.defined() && e.source.same_view_as(src) && e.layout == layout;
}

}  // namespace

void set_packed_second_budget(size_t bytes) { second_budget = bytes; }
size_t packed_second_bytes() { return second_bytes; }
size_t packed_constant_builds() { return builds; }

const std::vector<float>& packed_constant(exec::KernelContext& ctx, size_t index, PackedConstant& local,
                                          const std::function<void(std::vector<float>&)>& build, int layout) {
  const Tensor& src = ctx.required(index);
  const auto fill = [&](PackedConstant& e) -> const std::vector<float>& {
    ++builds;
    e = PackedConstant{src, {}, layout};
    build(e.data);
    return e.data;
  };
  const bool cacheable = ctx.prepared && index < ctx.constant_input.size() && ctx.constant_input[index];
  if (!cacheable) return fill(local);
  auto* cache = std::any_cast<PackedCache>(ctx.prepared);
  if (!cache) cache = &ctx.prepared->emplace<PackedCache>();
  if (holds(cache->first, src, layout)) return cache->first.data;
  if (cache->second && holds(cache->second->entry, src, layout)) return cache->second->entry.data;
  if (!cache->first.source.defined() || cache->first.layout != layout) {
    // A model's packed weights are as big as its weights: counted against the memory budget like its
    // tensors, and built for the call only beyond the cap or the budget.
    cache->second.reset();
    cache->first = PackedConstant{};
    cache->first_hold.reset();
    fill(local);
    const uint64_t bytes = static_cast<uint64_t>(local.data.size()) * sizeof(float);
    if (first_bytes + bytes > kPackedFirstBudget || !try_reserve_memory(bytes)) return local.data;
    cache->first = std::move(local);
    cache->first_hold = std::make_shared<FirstHold>(bytes);
    return cache->first.data;
  }
  cache->second.reset();  // returns its bytes to the budget before the new one is counted
  auto second = std::make_shared<SecondEntry>();
  fill(second->entry);
  const size_t bytes = second->entry.data.size() * sizeof(float);
  if (!make_room(bytes)) {  // larger than the whole budget
    local = std::move(second->entry);
    return local.data;
  }
  second->bytes = bytes;
  second_bytes += bytes;
  while (!second_order.empty() && second_order.front().expired()) second_order.pop_front();
  second_order.push_back(second);
  cache->second = std::move(second);
  return cache->second->entry.data;
}

Plane2D as_plane(const Spatial& s) {
  if (s.rank() == 1) return {1, s.in[0], 1, s.out[0], 1, s.kernel[0], 1, s.stride[0], 1, s.dilation[0], 0, s.pad_begin[0]};
  return {s.in[0],     s.in[1],     s.out[0],       s.out[1],      s.kernel[0],    s.kernel[1],
          s.stride[0], s.stride[1], s.dilation[0], s.dilation[1], s.pad_begin[0], s.pad_begin[1]};
}

PaddedPlane::PaddedPlane(const Plane2D& p, int scratch_slot, int flat_slot)
    : p_(p), slot_(scratch_slot), flat_slot_(flat_slot) {
  // Huge pads with a huge stride or dilation give a small output over an enormous padded plane.
  const char* what = "the zero-padded copy of an input plane";
  rows_ = size_add(size_mul(p.OH - 1, p.sh, what), size_mul(p.kh - 1, p.dh, what) + 1, what);
  wp_ = size_add(size_mul(p.OW - 1, p.sw, what), size_mul(p.kw - 1, p.dw, what) + 1, what);
  wp_ = size_mul(size_add(wp_, p.sw - 1, what) / p.sw, p.sw, what);  // whole output steps per padded row (flat runs)
  // 8 floats of slack: stride-2 vector loads read one element past the last sample they use.
  allocation_count(size_add(size_mul(rows_, wp_, what), 8, what), sizeof(float), what);
  if (p.sh == 1) allocation_count(size_add(size_mul(p.OH - 1, wp_ / p.sw, what), p.OW, what), sizeof(float), what);
  for (int64_t ky = 0; ky < p.kh; ++ky) {
    for (int64_t kx = 0; kx < p.kw; ++kx) taps_.push_back(ky * p.dh * wp_ + kx * p.dw);
  }
}

void PaddedPlane::load(const float* x, float fill) {
  const int64_t size = rows_ * wp_ + 8;  // checked by the constructor
  data_ = gemm_scratch(slot_, static_cast<size_t>(size));
  // Input rows [0, y1) and columns [0, x1) land at (pt + iy, pl + ix); everything else is `fill`.
  const int64_t y1 = std::max<int64_t>(0, std::min(p_.H, rows_ - p_.pt));
  const int64_t x1 = std::max<int64_t>(0, std::min(p_.W, wp_ - p_.pl));
  float* at = data_;
  for (int64_t iy = 0; iy < y1; ++iy) {
    float* row = data_ + (iy + p_.pt) * wp_;
    simd::fill(at, fill, row + p_.pl - at);
    simd::copy(row + p_.pl, x + iy * p_.W, x1);
    at = row + p_.pl + x1;
  }
  simd::fill(at, fill, data_ + size - at);
}

float* PaddedPlane::flat_buffer(int64_t count) const { return gemm_scratch(flat_slot_, static_cast<size_t>(count)); }

void PaddedPlane::copy_row(float* dst, const float* src) const { simd::copy(dst, src, p_.OW); }

int64_t check_conv_operands(const exec::KernelContext& ctx, const Tensor& x, const Tensor& w) {
  ctx.check(x.rank() >= 3, "input X must have rank >= 3 (N, C, spatial...), got " + shape_str(x.shape()));
  ctx.check(w.rank() == x.rank(), "weight W rank " + std::to_string(w.rank()) + " differs from X rank " +
                                      std::to_string(x.rank()));
  const int64_t group = ctx.node.attr_int("group", 1);
  ctx.check(group >= 1, "attribute 'group' must be >= 1");
  return group;
}

Spatial read_conv_window(const exec::KernelContext& ctx, const Tensor& x, const Tensor& w) {
  std::vector<int64_t> kernel(w.shape().begin() + 2, w.shape().end());
  if (ctx.node.has_attr("kernel_shape")) {
    ctx.check(ctx.node.attr_ints("kernel_shape") == kernel,
              "attribute 'kernel_shape' does not match W shape " + shape_str(w.shape()));
  }
  return read_spatial_attrs(ctx, std::vector<int64_t>(x.shape().begin() + 2, x.shape().end()), kernel);
}

ConvShape conv_shape(const exec::KernelContext& ctx, const Tensor& x, const Tensor& w) {
  ConvShape s;
  s.group = check_conv_operands(ctx, x, w);
  s.batch = x.dim(0);
  s.C = x.dim(1);
  s.M = w.dim(0);
  ctx.check(s.C % s.group == 0 && w.dim(1) * s.group == s.C,
            "W " + shape_str(w.shape()) + " does not match X channels " + std::to_string(s.C) + " with group " +
                std::to_string(s.group));
  ctx.check(s.M % s.group == 0, "output channels " + std::to_string(s.M) + " not divisible by group");
  s.Cg = s.C / s.group;
  s.Mg = s.M / s.group;
  s.sp = read_conv_window(ctx, x, w);
  resolve_forward_output(ctx, s.sp);
  return s;
}

}  // namespace ptq::ops
