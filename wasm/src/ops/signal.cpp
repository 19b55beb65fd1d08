// Signal processing (opset 17): the window generators HannWindow, HammingWindow, BlackmanWindow,
// MelWeightMatrix, and the Fourier transforms DFT and STFT. Transforms are direct sums in double
// (exact twiddles from (j * k) mod n), stored in the input's dtype as [..., 2] (real, imaginary).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "exec/registry.h"
#include "ops/shape_util.h"
#include "ops/conv_common.h"  // is_float_like

namespace ptq::exec {
namespace {

constexpr double kPi = 3.14159265358979323846;

// A scalar integer input (rank 0 or one element, int32 or int64).
int64_t scalar_int(const KernelContext& ctx, size_t index, const char* what) {
  const Tensor& t = ctx.required(index);
  ctx.check((t.dtype() == DType::Int64 || t.dtype() == DType::Int32) && t.numel() == 1,
            std::string("input '") + what + "' must be a single int32/int64 value, got " + dtype_name(t.dtype()) +
                " " + shape_str(t.shape()));
  return t.get_as_int64(0);
}

// w[n] = a0 - a1 cos(2πn/N) + a2 cos(4πn/N), N = size (periodic, the default) or size - 1.
template <int A0Num, int A0Den, int A1Num, int A1Den, int A2Num, int A2Den>
void cosine_window(KernelContext& ctx) {
  const int64_t size = scalar_int(ctx, 0, "size");
  ctx.check(size >= 0, "size must be >= 0, got " + std::to_string(size));
  const int64_t periodic = ctx.node.attr_int("periodic", 1);
  ctx.check(periodic == 0 || periodic == 1, "attribute 'periodic' must be 0 or 1");
  const int64_t dt = ctx.node.attr_int("output_datatype", 1);
  ctx.check(dt > 0 && dt <= INT32_MAX && dtype_supported(static_cast<int32_t>(dt)) &&
                dtype_size(static_cast<DType>(dt)) > 0 && static_cast<DType>(dt) != DType::Bool,
            "unsupported output_datatype " + std::to_string(dt));
  const double a0 = static_cast<double>(A0Num) / A0Den, a1 = static_cast<double>(A1Num) / A1Den;
  const double a2 = static_cast<double>(A2Num) / A2Den;
  const double n_den = static_cast<double>(periodic ? size : size - 1);
  Tensor w(DType::Double, {size});
  double* out = w.mutable_data<double>();
  for (int64_t n = 0; n < size; ++n) {
    const double t = n_den > 0 ? 2 * kPi * static_cast<double>(n) / n_den : 0.0;
    out[n] = a0 - a1 * std::cos(t) + a2 * std::cos(2 * t);
  }
  ctx.outputs[0] = cast_tensor(w, static_cast<DType>(dt));
}

// One DFT of n complex values read at `in` (stride `in_stride` complex elements), of which only
// the first `avail` exist (the rest are zero padding); writes `bins` complex outputs at `out`.
void dft_1d(const double* in, int64_t in_stride, int64_t avail, int64_t n, bool inverse, int64_t bins, double* out,
            int64_t out_stride) {
  const double sign = inverse ? 1.0 : -1.0;
  for (int64_t k = 0; k < bins; ++k) {
    double re = 0, im = 0;
    for (int64_t j = 0; j < avail; ++j) {
      const double angle = sign * 2 * kPi * static_cast<double>((j * k) % n) / static_cast<double>(n);
      const double c = std::cos(angle), s = std::sin(angle);
      const double xr = in[j * in_stride * 2], xi = in[j * in_stride * 2 + 1];
      re += xr * c - xi * s;
      im += xr * s + xi * c;
    }
    if (inverse) {
      re /= static_cast<double>(n);
      im /= static_cast<double>(n);
    }
    out[k * out_stride * 2] = re;
    out[k * out_stride * 2 + 1] = im;
  }
}

// The input [..., 1 | 2] as complex doubles [..., 2].
Tensor as_complex(const KernelContext& ctx, const Tensor& x) {
  ctx.check(ops::is_float_like(x.dtype()), "unsupported input dtype " + dtype_name(x.dtype()));
  ctx.check(x.rank() >= 2 && (x.dim(x.rank() - 1) == 1 || x.dim(x.rank() - 1) == 2),
            "input must end in a dim of 1 (real) or 2 (complex), got " + shape_str(x.shape()));
  const Tensor d = cast_tensor(x, DType::Double);
  if (x.dim(x.rank() - 1) == 2) return d;
  Shape s = x.shape();
  s.back() = 2;
  Tensor c = Tensor::zeros(DType::Double, s);
  for (int64_t i = 0; i < d.numel(); ++i) c.mutable_data<double>()[i * 2] = d.data<double>()[i];
  return c;
}

// DFT (opset 17): along `axis` (default 1, the first after the batch dim) of length dft_length
// (input 1; zero-padded or truncated, default the axis length); onesided keeps bins [0, n/2].
void dft(KernelContext& ctx) {
  const Tensor x = as_complex(ctx, ctx.required(0));
  const auto rank = static_cast<int64_t>(x.rank());
  int64_t axis = ctx.node.attr_int("axis", 1);
  if (axis < 0) axis += rank;
  ctx.check(axis >= 1 && axis <= rank - 2, "attribute 'axis' must name a signal dim in [1, " +
                                               std::to_string(rank - 2) + "]");
  const int64_t inverse = ctx.node.attr_int("inverse", 0), onesided = ctx.node.attr_int("onesided", 0);
  ctx.check((inverse == 0 || inverse == 1) && (onesided == 0 || onesided == 1),
            "attributes 'inverse' and 'onesided' must be 0 or 1");
  ctx.check(!(inverse && onesided), "onesided is not supported with inverse");
  const auto ax = static_cast<size_t>(axis);
  const int64_t length = x.dim(ax);
  const int64_t n = ctx.input(1) ? scalar_int(ctx, 1, "dft_length") : length;
  ctx.check(n >= 1, "dft_length must be >= 1, got " + std::to_string(n));
  const int64_t bins = onesided ? n / 2 + 1 : n;
  Shape out_shape = x.shape();
  out_shape[ax] = bins;
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < ax; ++d) outer *= x.dim(d);
  for (size_t d = ax + 1; d + 1 < x.rank(); ++d) inner *= x.dim(d);
  Tensor y(DType::Double, out_shape);
  const double* src = x.data<double>();
  double* dst = y.mutable_data<double>();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i)
      dft_1d(src + (o * length * inner + i) * 2, inner, std::min(length, n), n, inverse != 0, bins,
             dst + (o * bins * inner + i) * 2, inner);
  ctx.outputs[0] = cast_tensor(y, ctx.required(0).dtype());
}

// STFT (opset 17): frames of frame_length (input 3, else the window's length) every frame_step
// samples of signal [batch, length, 1 | 2], each multiplied by the window (input 2, default ones)
// and transformed; output [batch, frames, bins, 2] with bins = frame_length / 2 + 1 when onesided.
void stft(KernelContext& ctx) {
  const Tensor x = as_complex(ctx, ctx.required(0));
  ctx.check(x.rank() == 3, "signal must be [batch, length, 1 | 2], got " + shape_str(x.shape()));
  const int64_t step = scalar_int(ctx, 1, "frame_step");
  ctx.check(step >= 1, "frame_step must be >= 1, got " + std::to_string(step));
  const Tensor* window = ctx.input(2);
  std::vector<double> win;
  if (window) {
    ctx.check(window->rank() == 1 && ops::is_float_like(window->dtype()), "window must be a 1-D float tensor");
    const Tensor w = cast_tensor(*window, DType::Double);
    win.assign(w.data<double>(), w.data<double>() + w.numel());
  }
  const int64_t frame = ctx.input(3) ? scalar_int(ctx, 3, "frame_length") : static_cast<int64_t>(win.size());
  ctx.check(frame >= 1, "frame_length (or the window) must give a length >= 1");
  ctx.check(win.empty() || static_cast<int64_t>(win.size()) == frame,
            "window length " + std::to_string(win.size()) + " differs from frame_length " + std::to_string(frame));
  if (win.empty()) win.assign(static_cast<size_t>(frame), 1.0);
  const int64_t onesided = ctx.node.attr_int("onesided", 1);
  ctx.check(onesided == 0 || onesided == 1, "attribute 'onesided' must be 0 or 1");
  const int64_t batch = x.dim(0), length = x.dim(1);
  ctx.check(frame <= length, "frame_length " + std::to_string(frame) + " exceeds the signal length " +
                                 std::to_string(length));
  const int64_t frames = (length - frame) / step + 1;
  const int64_t bins = onesided ? frame / 2 + 1 : frame;
  Tensor y(DType::Double, {batch, frames, bins, 2});
  std::vector<double> buf(static_cast<size_t>(frame * 2));
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t f = 0; f < frames; ++f) {
      const double* s = x.data<double>() + (b * length + f * step) * 2;
      for (int64_t j = 0; j < frame; ++j) {
        buf[static_cast<size_t>(j * 2)] = s[j * 2] * win[static_cast<size_t>(j)];
        buf[static_cast<size_t>(j * 2 + 1)] = s[j * 2 + 1] * win[static_cast<size_t>(j)];
      }
      dft_1d(buf.data(), 1, frame, frame, false, bins, y.mutable_data<double>() + (b * frames + f) * bins * 2, 1);
    }
  }
  ctx.outputs[0] = cast_tensor(y, ctx.required(0).dtype());
}

// A scalar float input as double.
double scalar_float(const KernelContext& ctx, size_t index, const char* what) {
  const Tensor& t = ctx.required(index);
  ctx.check(ops::is_float_like(t.dtype()) && t.numel() == 1,
            std::string("input '") + what + "' must be a single float value, got " + dtype_name(t.dtype()) + " " +
                shape_str(t.shape()));
  return t.get_as_double(0);
}

// MelWeightMatrix: [dft_length / 2 + 1, num_mel_bins] triangular filters whose edges are
// num_mel_bins + 2 points evenly spaced on the mel scale (2595 log10(1 + f / 700)) between the edge
// frequencies, each mapped to the DFT bin floor((dft_length + 1) * f / sample_rate).
void mel_weight_matrix(KernelContext& ctx) {
  const int64_t mels = scalar_int(ctx, 0, "num_mel_bins"), dft_length = scalar_int(ctx, 1, "dft_length");
  const int64_t rate = scalar_int(ctx, 2, "sample_rate");
  const double lower = scalar_float(ctx, 3, "lower_edge_hertz"), upper = scalar_float(ctx, 4, "upper_edge_hertz");
  ctx.check(mels >= 1 && dft_length >= 1 && rate >= 1, "num_mel_bins, dft_length and sample_rate must be >= 1");
  ctx.check(lower >= 0 && upper > lower, "edge frequencies must satisfy 0 <= lower < upper");
  const int64_t dt = ctx.node.attr_int("output_datatype", 1);
  ctx.check(dt > 0 && dt <= INT32_MAX && dtype_supported(static_cast<int32_t>(dt)) &&
                dtype_size(static_cast<DType>(dt)) > 0 && static_cast<DType>(dt) != DType::Bool,
            "unsupported output_datatype " + std::to_string(dt));
  const int64_t spectrum = dft_length / 2 + 1;
  const auto to_mel = [](double f) { return 2595.0 * std::log10(1.0 + f / 700.0); };
  const double lo_mel = to_mel(lower), step = (to_mel(upper) - lo_mel) / static_cast<double>(mels + 2);
  std::vector<int64_t> edge(static_cast<size_t>(mels + 2));
  for (int64_t i = 0; i < mels + 2; ++i) {
    const double hz = 700.0 * (std::pow(10.0, (static_cast<double>(i) * step + lo_mel) / 2595.0) - 1.0);
    const double bin = std::floor(static_cast<double>(dft_length + 1) * hz / static_cast<double>(rate));
    ctx.check(bin >= 0 && bin < static_cast<double>(spectrum),
              "edge frequency " + std::to_string(hz) + " Hz falls outside the " + std::to_string(spectrum) + " DFT bins");
    edge[static_cast<size_t>(i)] = static_cast<int64_t>(bin);
  }
  Tensor w = Tensor::zeros(DType::Double, {spectrum, mels});
  double* out = w.mutable_data<double>();
  for (int64_t m = 0; m < mels; ++m) {
    const int64_t left = edge[static_cast<size_t>(m)], centre = edge[static_cast<size_t>(m + 1)];
    const int64_t right = edge[static_cast<size_t>(m + 2)];
    if (centre == left) {
      out[centre * mels + m] = 1.0;
    } else {
      for (int64_t j = left; j <= centre; ++j)
        out[j * mels + m] = static_cast<double>(j - left) / static_cast<double>(centre - left);
    }
    for (int64_t j = centre; j < right; ++j)
      out[j * mels + m] = static_cast<double>(right - j) / static_cast<double>(right - centre);
  }
  ctx.outputs[0] = cast_tensor(w, static_cast<DType>(dt));
}

}  // namespace

void register_signal(OpRegistry& r) {
  r.add("", "HannWindow", &cosine_window<1, 2, 1, 2, 0, 1>).meta("", "size");
  r.add("", "HammingWindow", &cosine_window<25, 46, 21, 46, 0, 1>).meta("", "size");
  r.add("", "BlackmanWindow", &cosine_window<42, 100, 1, 2, 8, 100>).meta("", "size");
  // The axis became an input in opset 20.
  r.add("", "DFT", &dft).versions(1, 19).meta("", "input dft_length?");
  r.add("", "DFT", &dft).versions(20).meta("", "input dft_length? axis?");
  r.add("", "STFT", &stft).meta("", "signal frame_step window? frame_length?");
  r.add("", "MelWeightMatrix", &mel_weight_matrix)
      .meta("", "num_mel_bins dft_length sample_rate lower_edge_hertz upper_edge_hertz");
}

}  // namespace ptq::exec
