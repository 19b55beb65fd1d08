#pragma once
// Rewrites a Horizon calibrated model so that plain onnxruntime can run it (the reference for our
// fake-quant executor in cross-checks):
// - switched-ON integer HzCalibration (int8 / uint8 / int16 / uint16) -> QuantizeLinear ->
//   DequantizeLinear with y_scale = the node's scales (float32 initializer; per-axis along `axis`
//   when there is more than one) and a zero-point initializer of the target type (the asymmetric
//   zero point, else 0). ONNX QuantizeLinear computes saturate(round_half_even(x / scale) + zp),
//   the executor's default fake-quant rounding. ConvTranspose weights with group > 1 (whose scale
//   index mixes two axes, §1.5) are regrouped around the Q/DQ pair with Reshape/Transpose.
// - switched-ON float16 / bfloat16 -> Cast -> Cast back to float; float32 and switched-OFF nodes
//   -> Identity.
// The DequantizeLinear (or last) node keeps the calibration node's output name, so consumers and
// graph outputs are unchanged. The default-domain opset becomes at least 13 (per-axis Q/DQ), 21
// when a 16-bit type is present; nodes whose meaning changes across that bump are upgraded (see
// opset_upgrade.h). The `horizon` opset import is dropped when no Horizon op remains.
#include "ir/graph.h"

namespace ptq::quant {

ir::Model hz_to_qdq(const ir::Model& calibrated);

}  // namespace ptq::quant
