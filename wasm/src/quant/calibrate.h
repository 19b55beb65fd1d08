#pragma once
// Float ONNX model + calibration samples -> Horizon-format calibrated model (§1): an
// HzCalibration node (domain `horizon`, opset horizon:1) named `<tensor>_HzCalibration` with output
// `<tensor>_calibrated` in front of every quantized tensor, carrying the attributes the toolchain
// saves: thresholds, scales (= threshold / qmax, float32), qtype, switch "ON", constant 1, and for
// weights axis + group.
//
// Placement:
// - activations (per-tensor): the non-constant data inputs of the ops in `activation_ops` (for
//   Conv/ConvTranspose/Gemm/MatMul inputs 0 and 1, Resize and the pools input 0, otherwise every
//   input). One node per distinct tensor, shared by every such consumer; other consumers keep
//   reading the float tensor. Tensors observed as non-float during calibration are skipped.
// - weights (per-channel max|w|): the constant input 1 (initializer or Constant output) of Conv
//   (axis 0), ConvTranspose (axis 1, `group` copied, thresholds over the regrouped
//   [C_out, C_in/g, ...] view of §1.5), Gemm (axis 0 with transB=1, else 1), MatMul (last dim;
//   per-tensor for a 1-D B). Non-float32 weights are left alone.
#include <string>
#include <vector>

#include "core/tensor.h"
#include "ir/graph.h"

namespace ptq::quant {

enum class ActivationMethod { Max, Percentile, KL };

struct CalibrateOptions {
  ActivationMethod method = ActivationMethod::Max;
  // Percentile of |x| kept by ActivationMethod::Percentile, in percent (0, 100].
  double percentile = 99.99;
  // |x| histogram over [0, max|x|] used by Percentile and KL.
  int histogram_bins = 2048;
  // Target bins of the KL search (128 = the positive half of int8).
  int kl_quantized_bins = 128;
  // Ops whose activation inputs are calibrated (domain ai.onnx).
  std::vector<std::string> activation_ops = {"Conv", "ConvTranspose", "Gemm", "MatMul", "Add", "Mul", "Concat"};
  std::string qtype = "int8";
  // Names quantized as int16 instead: a calibration node name (`<tensor>_HzCalibration`), a tensor
  // name, or the name of a consuming node (then every calibrated input of that node). Unknown names
  // are an error.
  std::vector<std::string> int16;
};

// Runs the float model over `samples` (samples[k][i] = graph input i of sample k) and returns the
// calibrated model. The float model must not contain HzCalibration nodes; its ops must be supported
// by the executor when activations are calibrated.
ir::Model calibrate(const ir::Model& float_model, const std::vector<std::vector<Tensor>>& samples,
                    const CalibrateOptions& options = {});

ActivationMethod parse_activation_method(const std::string& name);  // "max" | "percentile" | "kl"

// ---- building blocks (exposed for tests) ----

// Histogram of |x| with `bins` equal bins over [0, max]; values equal to max fall in the last bin.
struct AbsHistogram {
  double max = 0.0;
  std::vector<double> counts;
  AbsHistogram(double max_abs, int bins) : max(max_abs), counts(static_cast<size_t>(bins), 0.0) {}
  void add(const float* x, int64_t n);
  double bin_width() const { return max / static_cast<double>(counts.size()); }
};

// max |x|; throws naming `what` when x holds a NaN.
float max_abs(const Tensor& x, const std::string& what);

// The upper edge of the first bin at which the cumulative count reaches `percentile`% of all
// values. Approximation: overestimates the exact sample percentile by less than one bin width
// (max/bins); percentile 100 gives exactly the max.
float percentile_threshold(const AbsHistogram& h, double percentile);

// TensorRT-style entropy calibration: for each candidate i in [quantized_bins, bins], the reference
// P = the first i bins with every count beyond folded into bin i-1, the candidate Q = the first i
// bins merged into `quantized_bins` groups (bin k in group floor(k·quantized_bins / i), so group
// sizes differ by at most one, as NVIDIA's pytorch-quantization does, rather than MXNet's
// remainder-in-the-last-group) and spread back evenly over the bins where P is non-zero;
// both smoothed (zeros get 1e-4, taken from the non-zeros, as MXNet does) and normalised. The
// threshold is the upper edge i·width of the i minimising KL(P||Q) (first one on ties).
float kl_threshold(const AbsHistogram& h, int quantized_bins);

// §1.4 hygiene for activation thresholds: +inf -> FLT_MAX, <= 0 -> 1.0, NaN -> error.
float refine_activation_threshold(float t, const std::string& node_name);

// Per-channel max|w| along `axis` (or over the ConvTranspose regrouped view [g·C_out/g] when
// `conv_transpose`), clipped to [FLT_MIN, FLT_MAX] as the weight calibrater does.
std::vector<float> weight_thresholds(const Tensor& w, int64_t axis, int64_t group, bool conv_transpose,
                                     const std::string& what);

}  // namespace ptq::quant
