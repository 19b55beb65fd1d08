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

#include "calibrate/observers.h"
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

}  // namespace ptq::quant
