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
// What the file held is kept (FileProvenance): each rewritten node as the file holds it, the nodes it
// became and the calibration nodes quantizing its integer tensors, so that a viewer can draw the model
// as the file holds it while selection and analyses act on the loaded graph's nodes.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/graph.h"

namespace ptq::quant {

constexpr int64_t kFileTensorValues = 16;  // constants up to this many elements keep their values

// A tensor that a file node reads or writes, as the file holds it.
struct FileTensor {
  std::string name;
  DType dtype = DType::Undefined;
  bool has_dims = false;  // dims known from the file (a constant, a declared shape)
  std::vector<int64_t> dims;
  std::string shape_of;          // else: a tensor of the loaded graph of the same shape ("" unknown)
  bool constant = false;         // an initializer or a Constant node's output in the file
  bool initializer = false;      // an initializer of the file
  std::optional<Tensor> values;  // a constant of at most kFileTensorValues elements
};

// A node of the file that the rewrite replaced.
struct FileNode {
  std::string name;
  std::string op_type;
  std::string domain;
  std::vector<std::string> inputs;  // the file's tensor names; "" for an absent input
  std::vector<std::string> outputs;
  std::vector<ir::Attribute> attributes;
  // The nodes the rewrite made of it: its float operator, a Relu, Q/DQ nodes (which the Q/DQ import
  // then folds into calibration nodes), a DynamicQuantizeLinear's calibration node.
  std::vector<std::string> became;
  // Its integer tensors -> the calibration node quantizing each (named once the Q/DQ import ran).
  std::vector<std::pair<std::string, std::string>> quantizers;
  // The loaded graph's node it stands for: its output's calibration node, else the node of its own
  // name it became, else another node it became ("" when none is left).
  std::string stands;
};

struct FileProvenance {
  std::vector<FileNode> nodes;      // file order
  std::vector<FileTensor> tensors;  // each tensor they read or write, once
};

struct QOperatorRewriteSummary {
  size_t rewritten = 0;  // QOperator nodes replaced by their float operator between DQ and Q
  size_t left = 0;       // QOperator nodes kept as they are (warned)
  FileProvenance file;   // the nodes replaced (QOperator nodes, the integer operators between them, the
                         // DynamicQuantizeLinear, Cast and Mul nodes of a dynamic chain)
};

// Rewrites `model` in place (a model without QOperator nodes is left untouched); warnings go to
// model.warnings.
QOperatorRewriteSummary rewrite_qoperators(ir::Model& model);

// Every load-time pass that makes a quantized model's quantizers calibration nodes, in order: the
// QOperator rewrite (§1.12), then the Q/DQ import (§1.11). The page, the CLI and the native tools call
// this once after reading a model. Returns the rewrite's provenance, its quantizers and the node each
// file node stands for named in the loaded graph (empty unless a QOperator model was rewritten).
FileProvenance import_quantizers(ir::Model& model);

}  // namespace ptq::quant
