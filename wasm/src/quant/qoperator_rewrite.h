#pragma once
// QOperator models (§1.12): onnxruntime's integer operators (QLinearConv, QLinearMatMul, com.microsoft
// QLinearAdd/Mul/Concat/Sigmoid/LeakyRelu/AveragePool/GlobalAveragePool) are rewritten when the model
// is loaded into the float operator between DequantizeLinear (each quantized input) and
// QuantizeLinear (the quantized output), so that the Q/DQ import (§1.11, quant/qdq_import.h) then
// turns every quantizer into a calibration node:
//   x_q -> QLinearConv(x_scale, x_zp, w_q, w_scale, w_zp, y_scale, y_zp, B) -> y_q
// becomes
//   x_q -> DequantizeLinear(x_scale, x_zp) -> Conv(DequantizeLinear(w_q), B·x_scale·w_scale) -> y
//       -> QuantizeLinear(y_scale, y_zp) -> y_q
// The float operator keeps the QOperator node's name; its float output is named after the integer
// tensor without the "_quantized" suffix onnxruntime's quantizer adds (or takes the integer tensor's
// own name, the integer tensor becoming "<name>_quantized"), so the calibration node of an activation
// is named as the tensor of the float model it came from.
// The rules are one table (one entry per operator, qoperator_rewrite.cpp). A node a rule cannot map
// (a scale or zero point that is not a constant, an attribute value it does not know, a per-row
// scale, ...) is kept as it is and named in a model warning: it runs (where a kernel exists) but is
// no switchable quantizer.
#include <cstddef>

#include "ir/graph.h"

namespace ptq::quant {

struct QOperatorRewriteSummary {
  size_t rewritten = 0;  // QOperator nodes replaced by their float operator between DQ and Q
  size_t left = 0;       // QOperator nodes kept as they are (warned)
};

// Rewrites `model` in place (a model without QOperator nodes is left untouched); warnings go to
// model.warnings.
QOperatorRewriteSummary rewrite_qoperators(ir::Model& model);

// Every load-time pass that makes a quantized model's quantizers calibration nodes, in order: the
// QOperator rewrite (§1.12), then the Q/DQ import (§1.11). The page, the CLI and the native tools call
// this once after reading a model.
void import_quantizers(ir::Model& model);

}  // namespace ptq::quant
