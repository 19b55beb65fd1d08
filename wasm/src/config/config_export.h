#pragma once
// Exports of a quantization configuration for the user's toolchain (docs/config-export.md). The core
// writes every format so that the page, the plugin and the CLI give the same bytes:
//   horizon-yaml     hb_mapper / hb_compile entries: model_parameters.node_info (int16 in/out on BPU,
//                    or ON: CPU) and calibration_parameters.run_on_cpu, with a comment naming the tool
//                    version and the metric the configuration reached
//   calibrated-onnx  the calibrated model with the HzCalibration `switch` / `qtype` attributes of the
//                    configuration written in, every other byte of meaning kept (patched on the wire)
//   qdq-onnx         a Q/DQ model with the configuration applied to its own QuantizeLinear/DequantizeLinear
//                    quantizers: removed (float) or re-quantized (int16, ...) (config/qdq_export.h)
//   ort-json         onnxruntime quantize_static: nodes_to_exclude + extra_options.TensorQuantOverrides
//   ort-python       the same as a Python snippet
//   rknn-cfg         rknn-toolkit2 hybrid quantization: a custom_quantize_layers block
// The node-level formats name the nodes the configuration raised above the model as stored (see
// raised_nodes).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "calibrate/threshold_methods.h"
#include "io/json.h"
#include "exec/executor.h"
#include "quant/relations.h"

namespace ptq::quant {

// One export format: what the faces need to offer it and save it (describe()'s export_formats).
struct ExportFormat {
  std::string name;        // the format argument: "horizon-yaml", ...
  std::string suffix;      // appended to the model's base name for the file saved: ".horizon.yaml"
  std::string media_type;  // of the file saved: "text/yaml"
  bool binary = false;     // a model file (bytes), not text
  std::string label;       // one line for menus and help texts
};
// horizon-yaml, horizon-quant-config, calibrated-onnx, qdq-onnx, ort-json, ort-python, rknn-cfg
const std::vector<ExportFormat>& export_formats();
const ExportFormat* find_export_format(const std::string& name);  // nullptr when unknown
std::string export_format_names();                  // "horizon-yaml, calibrated-onnx, ..." for messages
bool export_is_binary(const std::string& format);   // calibrated-onnx, qdq-onnx

// A configuration as the exports need it (from a configuration document: config/config_doc.h).
struct ExportInput {
  exec::QuantConfig config;                                 // indexed like Executor::calibrations()
  std::vector<std::pair<std::string, std::string>> intents;  // (node, action), document order
  std::string model;                                        // file name, informational
  io::Json provenance;                                     // {"tool","analysis","target","reached"} or null
  std::string tool;                                         // "ptqscope 0.1.0"
  std::optional<ThresholdMethod> calibration;               // the document's model-wide calibration method
  std::vector<uint8_t> model_wide;                          // per calibration node: thresholds from `calibration`
};

// Whether `format` can carry new thresholds for calibration node `spec` (docs/config-export.md):
// calibrated-onnx an HzCalibration node's, qdq-onnx a Q/DQ quantizer's (per tensor or per channel),
// ort-json / ort-python and rknn-cfg a per-tensor activation's range (ort also a weight's per channel);
// Horizon's files have no per-node thresholds.
bool carries_thresholds(const std::string& format, const CalibrationSpec& spec);
// Whether `format` can carry node thresholds at all.
bool exports_thresholds_at_all(const std::string& format);

// A Q/DQ model's quantizer (§1.11): the tensor it quantizes in the file (the calibration node's
// `qdq_tensor` attribute), or "" for an HzCalibration node.
std::string qdq_tensor_of(const exec::Executor& executor, const CalibrationSpec& spec);

// A normal node whose calibration nodes the configuration raised above the stored state.
struct RaisedNode {
  std::string node;
  std::string action;             // "float" when one of its raised calibration nodes is OFF, else their qtype
  std::vector<int> calibrations;  // the raised ones (indices into Executor::calibrations()), ascending
};

// The intents' nodes first (document order; intents that raise nothing are left out), then the
// consumers (graph order) of raised calibration nodes no intent accounts for.
std::vector<RaisedNode> raised_nodes(const exec::Executor& executor, const CalibrationRelations& relations,
                                     const ExportInput& input);

// The text formats. Throws ptq::Error naming the format when unknown.
std::string export_config_text(const exec::Executor& executor, const CalibrationRelations& relations,
                               const ExportInput& input, const std::string& format);

// calibrated-onnx: `model` are the bytes the executor was loaded from. Every calibration node whose
// state differs from the stored one gets its `switch` ("ON"/"OFF") and `qtype` attributes rewritten
// (added when absent; `scales` too for nodes whose scales are given rather than derived, constant=2);
// every other field is copied as read. The result is read back and checked to give the executor's
// state for every changed node; a node that cannot hold its state this way is an error naming it.
std::vector<uint8_t> export_calibrated_onnx(const exec::Executor& executor, const ExportInput& input,
                                            const uint8_t* model, size_t size);

// The model-file formats (calibrated-onnx, qdq-onnx) of the model `model` the executor was loaded from.
std::vector<uint8_t> export_model_file(const exec::Executor& executor, const ExportInput& input, const std::string& format,
                                       const uint8_t* model, size_t size);

}  // namespace ptq::quant
