#pragma once
// Q/DQ models (§1.11): the quantizers of a model in QuantizeLinear/DequantizeLinear form (domains
// ai.onnx and com.microsoft) become calibration nodes when the model is loaded, so that every
// analysis, the what-if and the fix search treat them as they treat HzCalibration nodes:
// - activation: x -> QuantizeLinear -> DequantizeLinear(s) -> y  becomes  x -> HzCalibration -> y
//   (further DequantizeLinear nodes sharing the QuantizeLinear become Identity nodes of y);
// - weight: DequantizeLinear on an integer initializer becomes a float initializer holding the
//   dequantized values -> HzCalibration -> y (re-quantizing them with the same scale and zero
//   point gives the stored integers back, so ON is the original model exactly); QuantizeLinear ->
//   DequantizeLinear on a float initializer is an activation-like pair on a constant (a weight);
// - an int32 DequantizeLinear on an initializer (a bias) is folded into a float initializer: it
//   is not a quantizer to switch (ON and OFF would be the same values).
// The calibration node (domain "horizon") is named after the quantized tensor (the QuantizeLinear's
// input, or the weight initializer), carries qtype (the zero point's type, or a DequantizeLinear's
// input type: int4/uint4/int8/uint8/int16/uint16), scales (constant = 2, a blocked scale tensor
// flattened), zero_point, axis (per-axis and blocked), block_size (blocked, opset 21), info_strings
// weight/feature and `qdq_nodes` (the original nodes' names), which makes it an affine quantizer
// (calibration.h): switched OFF it passes its input through; a qtype override re-quantizes the same
// real range (per channel or per block).
// Pairs this pass cannot map (float8 types, parameters that are not constants or differ between the
// QuantizeLinear and its DequantizeLinear, a quantized tensor read by other ops, non-float32 scales)
// keep their original nodes and run as they are: a model warning names each, since such a quantizer
// is quantized in every run, the float reference included. A blocked scale that does not fit its
// input (rank, shape, block_size < 0) is an error naming the node.
#include <cstddef>

#include "ir/graph.h"

namespace ptq::quant {

struct QdqImportSummary {
  size_t activations = 0;  // calibration nodes made from Q -> DQ pairs on computed tensors
  size_t weights = 0;      // from DQ on integer initializers and Q -> DQ on float initializers
  size_t folded = 0;       // int32 DequantizeLinear of constants folded to float initializers
  size_t left = 0;         // QuantizeLinear/DequantizeLinear nodes kept as they are (warned)
};

bool is_quantize_linear(const ir::Node& n);
bool is_dequantize_linear(const ir::Node& n);

// Rewrites `model` in place (a model without QuantizeLinear/DequantizeLinear is left untouched);
// warnings go to model.warnings.
QdqImportSummary import_qdq(ir::Model& model);

}  // namespace ptq::quant
