#pragma once
// The `qdq-onnx` export (docs/config-export.md): for a Q/DQ model (§1.11), the user's own model with
// a configuration applied to its QuantizeLinear/DequantizeLinear quantizers:
// - a quantizer switched OFF is removed: its QuantizeLinear and DequantizeLinear nodes go and the
//   nodes that read the DequantizeLinear output read the float tensor instead (an `Identity` named
//   after the DequantizeLinear keeps a graph output's name); a weight stored as integers becomes a
//   float initializer of its dequantized values under the DequantizeLinear output's name;
// - a quantizer given another qtype (int16, ...) keeps its nodes with new scale and zero-point
//   initializers: the core's override rule (derive_scales, derive_zero_points: the same real
//   range), the zero point in the new type; a weight stored as integers is stored again, quantized
//   to the new type. 16-bit types below opset 21 move the pair to the com.microsoft domain.
// Everything else is read and written back by reader/onnx_writer (doc strings are not kept). The
// result is read back, imported again and checked to hold the executor's state for every quantizer.
#include <cstdint>
#include <vector>

#include "config/config_export.h"

namespace ptq::quant {

std::vector<uint8_t> export_qdq_onnx(const exec::Executor& executor, const ExportInput& input, const uint8_t* model,
                                     size_t size);

}  // namespace ptq::quant
