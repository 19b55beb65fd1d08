#include "config/config_export.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <map>
#include <set>

#include "analysis/selection.h"
#include "config/qdq_export.h"
#include "core/error.h"
#include "io/pb_wire.h"
#include "io/pb_writer.h"
#include "quant/calibration.h"
#include "quant/precision.h"
#include "reader/onnx.h"
#include "io/json_writer.h"

namespace ptq::quant {
namespace {

// A string as a JSON string literal: also a valid YAML double-quoted scalar and Python str literal.
std::string quoted(const std::string& s) {
  io::JsonWriter w;
  w.value(s);
  return w.str();
}

const std::string& effective_qtype(const exec::Executor& ex, const exec::QuantConfig& c, size_t i) {
  return i < c.qtype.size() && !c.qtype[i].empty() ? c.qtype[i] : ex.calibrations()[i].qtype.name;
}

// " on 1 of 32 samples": what the provenance's metric was judged on, when it says ("" otherwise).
std::string judged_on(const io::Json& provenance) {
  const io::Json* samples = provenance.find("samples");
  const io::Json* of = provenance.find("calibration_samples");
  if (!samples || !samples->is_array()) return "";
  const std::string used = std::to_string(samples->items().size());
  const bool counted = of && of->is_numeric();
  const std::string total = counted ? of->as_string() : used;
  return " on " + used + (counted ? " of " + total : "") + (total == "1" ? " sample" : " samples");
}

// The first comment lines of every text format: the tool and version, the model, what the
// configuration reached.
std::string provenance_line(const ExportInput& in) {
  std::string line = "Written by " + in.tool + (in.model.empty() ? "" : " for " + in.model) + ".";
  const io::Json& p = in.provenance;
  const io::Json* reached = p.is_object() ? p.find("reached") : nullptr;
  const io::Json* target = p.is_object() ? p.find("target") : nullptr;
  const io::Json* analysis = p.is_object() ? p.find("analysis") : nullptr;
  const io::Json* metric_field = p.is_object() ? p.find("metric") : nullptr;
  const io::Json* setting = p.is_object() ? p.find("setting") : nullptr;
  std::string metric = metric_field && metric_field->is_string() ? metric_field->as_string() : "";
  if (target && target->is_string()) {
    const std::string& t = target->as_string();
    metric = t.substr(0, t.find_first_of("<>"));
  }
  if (reached && reached->is_numeric()) {
    line += " Metric reached: " + (metric.empty() ? std::string() : metric + " ") + reached->as_string();
    if (target && target->is_string()) line += " (target " + target->as_string() + ")";
    if (setting && setting->is_string()) line += " (calibration " + setting->as_string() + ")";
    if (analysis && analysis->is_string()) line += ", found by " + analysis->as_string();
    line += judged_on(p);
    line += ".";
  } else {
    line += " Metric reached: not recorded in the configuration.";
  }
  return line;
}

std::string comment_block(const std::vector<std::string>& lines, const std::string& prefix = "# ") {
  std::string out;
  for (const auto& l : lines) out += prefix + l + "\n";
  return out;
}

std::string node_summary(const std::vector<RaisedNode>& nodes) {
  if (nodes.empty()) return "The configuration raises no node above the model as calibrated.";
  std::string s = "Nodes raised (" + std::to_string(nodes.size()) + "): ";
  for (size_t i = 0; i < nodes.size(); ++i) s += (i ? ", " : "") + nodes[i].node + " " + nodes[i].action;
  return s + ".";
}

// A float as the JSON writer spells a float32 (the shortest text that reads back as it): also valid
// YAML and Python.
std::string number_text(float v) {
  io::JsonWriter w;
  w.value_float32(v);
  return w.str();
}

// The calibration nodes whose thresholds the configuration sets node by node (an intent or a
// calibrations entry; not the model-wide calibration's), in model order.
std::vector<size_t> node_thresholds(const ExportInput& in) {
  std::vector<size_t> out;
  for (size_t i = 0; i < in.config.on.size(); ++i)
    if (in.config.thresholds_of(i) && !(i < in.model_wide.size() && in.model_wide[i])) out.push_back(i);
  return out;
}

// The real range [lo, hi] a threshold override sets on calibration node i, per tensor: [min, max] of
// an asymmetric node; [0, T] of a symmetric one on an unsigned qtype (it clamps negatives), else [−T, T].
std::pair<float, float> threshold_range(const exec::Executor& ex, const ExportInput& in, size_t i) {
  const CalibrationSpec& spec = ex.calibrations()[i];
  const std::vector<float>& t = *in.config.thresholds_of(i);
  if (spec.asymmetric) return {t[0], t[1]};
  return {QType::parse(effective_qtype(ex, in.config, i)).is_unsigned() ? 0.0f : -t[0], t[0]};
}

// The formats without per-node thresholds refuse a configuration that sets some, naming the node.
void refuse_node_thresholds(const exec::Executor& ex, const ExportInput& in, const std::string& format) {
  const std::vector<size_t> nodes = node_thresholds(in);
  check(nodes.empty(), format + ": calibration node '" + (nodes.empty() ? "" : ex.calibrations()[nodes[0]].node_name) +
                           "' has thresholds set by the configuration, which " + format +
                           " cannot carry (Horizon's files have no per-node thresholds); export calibrated-onnx, the "
                           "calibrated model with them written in");
}

// Horizon's activation calibration setting of a method (quant_config model_config.activation, or the
// YAML's calibration_parameters): calibration_type max (with max_percentile for a percentile) or kl.
struct HorizonCalibration {
  std::string type;
  double max_percentile = 1.0;
  bool per_channel = false;
};
HorizonCalibration horizon_calibration(const ThresholdMethod& m, const std::string& format) {
  check(m.name != "mse", format + ": the calibration method mse has no Horizon calibration_type (max, kl, and max with "
                                  "max_percentile for a percentile); choose another method");
  return {m.name == "kl" ? "kl" : "max", m.name == "percentile" ? m.percentile / 100.0 : 1.0, m.per_channel};
}

// onnxruntime's calibrate_method of a method; per-channel activations and mse have none.
std::string ort_calibrate_method(const ThresholdMethod& m, const std::string& format) {
  check(!m.per_channel, format + ": onnxruntime calibrates activations per tensor only; the calibration method " + m.text() +
                            " has no calibrate_method");
  check(m.name != "mse", format + ": the calibration method mse has no onnxruntime calibrate_method (MinMax, Percentile, Entropy)");
  return m.name == "max" ? "MinMax" : m.name == "percentile" ? "Percentile" : "Entropy";
}

// rknn-toolkit2's quantized_algorithm of a method; percentiles and per-channel activations have none.
std::string rknn_algorithm(const ThresholdMethod& m) {
  check(!m.per_channel, "rknn-cfg: rknn-toolkit2 calibrates activations per tensor only; the calibration method " + m.text() +
                            " has no quantized_algorithm");
  check(m.name != "percentile", "rknn-cfg: the calibration method percentile has no rknn-toolkit2 quantized_algorithm "
                                "(normal, kl_divergence, mmse)");
  return m.name == "max" ? "normal" : m.name == "kl" ? "kl_divergence" : "mmse";
}

// ---- horizon-yaml ----------------------------------------------------------------------------

std::string horizon_yaml(const std::vector<RaisedNode>& nodes, const ExportInput& in) {
  std::string out = comment_block({provenance_line(in), node_summary(nodes),
                                   "hb_mapper / hb_compile YAML entries: merge them into the groups of the same name.",
                                   "node_info needs a march with int16 support (bayes, bayes-e, nash); on bernoulli2 (X3)",
                                   "only run_on_cpu applies. Names are the calibrated model's node names."});
  std::vector<std::string> cpu;
  out += "model_parameters:\n";
  if (nodes.empty()) {
    out += "  node_info: {}\n";
  } else {
    out += "  node_info: {\n";
    for (size_t i = 0; i < nodes.size(); ++i) {
      const RaisedNode& n = nodes[i];
      out += "    " + quoted(n.node) + ": ";
      if (is_float_action(n.action)) {
        out += "{\"ON\": \"CPU\"}";
        cpu.push_back(n.node);
      } else {
        out += "{\"ON\": \"BPU\", \"InputType\": " + quoted(n.action) + ", \"OutputType\": " + quoted(n.action) + "}";
      }
      out += i + 1 < nodes.size() ? ",\n" : "\n";
    }
    out += "  }\n";
  }
  std::string calibration;
  if (in.calibration) {
    const HorizonCalibration h = horizon_calibration(*in.calibration, "horizon-yaml");
    calibration += "  calibration_type: " + quoted(h.type) + "\n";
    if (in.calibration->name == "percentile") calibration += "  max_percentile: " + number_text(static_cast<float>(h.max_percentile)) + "\n";
    calibration += std::string("  per_channel: ") + (h.per_channel ? "True" : "False") + "\n";
  }
  if (!cpu.empty()) {
    std::string list;
    for (size_t i = 0; i < cpu.size(); ++i) {
      check(cpu[i].find(';') == std::string::npos,
            "horizon-yaml: node '" + cpu[i] + "' contains ';', which run_on_cpu uses to separate names");
      list += (i ? ";" : "") + cpu[i];
    }
    calibration += "  run_on_cpu: " + quoted(list) + "\n";
  }
  if (!calibration.empty()) out += "calibration_parameters:\n" + calibration;
  return out;
}

// ---- horizon-quant-config --------------------------------------------------------------------

// HMCT's quant_config JSON (hb_compile on J6 / S100): model_config.activation for the model-wide
// calibration, node_config for the raised nodes. HMCT rejects any other top-level key and strips
// comments with a regex, so the file holds nothing else.
std::string horizon_quant_config(const std::vector<RaisedNode>& nodes, const ExportInput& in) {
  std::string out = "{\n";
  if (in.calibration) {
    const HorizonCalibration h = horizon_calibration(*in.calibration, "horizon-quant-config");
    out += "  \"model_config\": {\"activation\": {\"calibration_type\": " + quoted(h.type);
    if (in.calibration->name == "percentile") out += ", \"max_percentile\": " + number_text(static_cast<float>(h.max_percentile));
    out += std::string(", \"per_channel\": ") + (h.per_channel ? "true" : "false") + ", \"asymmetric\": false}},\n";
  }
  out += "  \"node_config\": {";
  for (size_t i = 0; i < nodes.size(); ++i) {
    const RaisedNode& n = nodes[i];
    out += std::string(i ? "," : "") + "\n    " + quoted(n.node) + ": ";
    out += is_float_action(n.action) ? "{\"ON\": \"CPU\"}"
                                     : "{\"InputType\": " + quoted(n.action) + ", \"OutputType\": " + quoted(n.action) + "}";
  }
  out += nodes.empty() ? "}\n}\n" : "\n  }\n}\n";
  return out;
}

// ---- ort-json / ort-python -------------------------------------------------------------------

// onnxruntime QuantType member for an integer qtype; "" when it has none (the node is excluded instead).
std::string ort_quant_type(const std::string& qtype) {
  static const std::map<std::string, std::string> types = {{"int4", "QInt4"},   {"uint4", "QUInt4"}, {"int8", "QInt8"},
                                                           {"uint8", "QUInt8"}, {"int16", "QInt16"}, {"uint16", "QUInt16"}};
  auto it = types.find(qtype);
  return it == types.end() ? "" : it->second;
}

struct OrtPlan {
  std::vector<std::string> exclude;  // node names
  struct Override {
    std::string tensor, quant_type, node;
    // New thresholds: one (rmin, rmax) per tensor, or per channel along `axis` (a weight).
    std::vector<std::pair<float, float>> ranges;
    int64_t axis = -1;
  };
  std::vector<Override> overrides;  // per tensor, first node wins
  bool sixteen_bit = false;
};

// One override's value: [{"quant_type"?, "rmin"?, "rmax"?}] or per channel [{"axis", ...}, {...}, ...].
// `type`: how a quant type is written (JSON: "QInt16"; Python: QuantType.QInt16).
std::string ort_override_value(const OrtPlan::Override& o, const std::function<std::string(const std::string&)>& type) {
  std::vector<std::string> dicts;
  const size_t n = std::max<size_t>(1, o.ranges.size());
  for (size_t c = 0; c < n; ++c) {
    std::vector<std::string> fields;
    if (c == 0 && o.axis >= 0) fields.push_back("\"axis\": " + std::to_string(o.axis));
    if (c == 0 && !o.quant_type.empty()) fields.push_back("\"quant_type\": " + type(o.quant_type));
    if (c < o.ranges.size()) {
      fields.push_back("\"rmin\": " + number_text(o.ranges[c].first));
      fields.push_back("\"rmax\": " + number_text(o.ranges[c].second));
    }
    std::string d;
    for (size_t k = 0; k < fields.size(); ++k) d += (k ? ", " : "") + fields[k];
    dicts.push_back("{" + d + "}");
  }
  std::string out = "[";
  for (size_t k = 0; k < dicts.size(); ++k) out += (k ? ", " : "") + dicts[k];
  return out + "]";
}

// The tensor an override names: the one the calibration node reads; for a Q/DQ model's quantizer
// the tensor it quantizes in the file (§1.11), and for a weight stored as integers under
// onnxruntime's name `<W>_quantized` the float weight `<W>` quantize_static reads.
std::string ort_tensor_name(const exec::Executor& ex, const CalibrationSpec& spec) {
  const std::string t = qdq_tensor_of(ex, spec);
  if (t.empty()) return spec.graph->value(spec.input_value).name;
  static const std::string suffix = "_quantized";
  const bool stored_integers = spec.qdq_nodes.size() == 1;
  if (stored_integers && t.size() > suffix.size() && t.compare(t.size() - suffix.size(), suffix.size(), suffix) == 0)
    return t.substr(0, t.size() - suffix.size());
  return t;
}

OrtPlan ort_plan(const exec::Executor& ex, const CalibrationRelations& rel, const std::vector<RaisedNode>& nodes,
                 const ExportInput& in, const std::string& format) {
  OrtPlan plan;
  std::map<std::string, size_t> by_tensor;
  for (const auto& n : nodes) {
    const std::string type = is_float_action(n.action) ? "" : ort_quant_type(n.action);
    if (type.empty()) {
      plan.exclude.push_back(n.node);
      continue;
    }
    for (int ci : n.calibrations) {
      const std::string tensor = ort_tensor_name(ex, ex.calibrations()[static_cast<size_t>(ci)]);
      if (by_tensor.count(tensor)) continue;
      by_tensor[tensor] = plan.overrides.size();
      plan.overrides.push_back({tensor, type, n.node, {}, -1});
      plan.sixteen_bit = plan.sixteen_bit || type.find("16") != std::string::npos;
    }
  }
  // New thresholds: rmin / rmax on the tensor's override (with its quant type when it has one).
  for (size_t i : node_thresholds(in)) {
    const CalibrationSpec& spec = ex.calibrations()[i];
    check(carries_thresholds(format, spec) || spec.kind == TensorKind::Weight,
          format + ": calibration node '" + spec.node_name + "' cannot take a range override here");
    const std::vector<float>& t = *in.config.thresholds_of(i);
    const bool channels = !spec.asymmetric && t.size() > 1;
    check(!channels || spec.kind == TensorKind::Weight,
          format + ": calibration node '" + spec.node_name + "' has per-channel thresholds, which onnxruntime takes for "
                   "weights (initializers) only");
    const std::string tensor = ort_tensor_name(ex, spec);
    auto it = by_tensor.find(tensor);
    if (it == by_tensor.end()) {
      const auto consumers = rel.cali_normal_map().find(spec.node_name);
      const std::string node = consumers == rel.cali_normal_map().end() ? spec.node_name : consumers->second;
      it = by_tensor.emplace(tensor, plan.overrides.size()).first;
      plan.overrides.push_back({tensor, "", node, {}, -1});
    }
    OrtPlan::Override& o = plan.overrides[it->second];
    if (channels) {
      o.axis = spec.axis;
      for (float v : t) o.ranges.push_back({-v, v});
    } else {
      o.ranges.push_back(threshold_range(ex, in, i));
    }
  }
  return plan;
}

std::string ort_json(const exec::Executor& ex, const CalibrationRelations& rel, const std::vector<RaisedNode>& nodes,
                     const ExportInput& in) {
  const OrtPlan plan = ort_plan(ex, rel, nodes, in, "ort-json");
  std::string out = "{\n  \"ptqscope\": {\n    \"comment\": " + quoted(provenance_line(in)) + ",\n";
  out += "    \"tool\": " + quoted(in.tool) + ",\n    \"model\": " + quoted(in.model) + ",\n    \"provenance\": ";
  out += in.provenance.is_null() ? "null" : in.provenance.dump();
  out += ",\n    \"nodes\": {";
  for (size_t i = 0; i < nodes.size(); ++i) {
    out += std::string(i ? "," : "") + "\n      " + quoted(nodes[i].node) + ": {\"action\": " + quoted(nodes[i].action) +
           ", \"tensors\": [";
    size_t k = 0;
    for (const auto& o : plan.overrides)
      if (o.node == nodes[i].node) out += std::string(k++ ? ", " : "") + quoted(o.tensor);
    out += "]}";
  }
  out += nodes.empty() ? "}\n  },\n" : "\n    }\n  },\n";
  if (in.calibration) out += "  \"calibrate_method\": " + quoted(ort_calibrate_method(*in.calibration, "ort-json")) + ",\n";
  out += "  \"nodes_to_exclude\": [";
  for (size_t i = 0; i < plan.exclude.size(); ++i) out += (i ? ", " : "") + quoted(plan.exclude[i]);
  out += "],\n  \"extra_options\": {\n    \"TensorQuantOverrides\": {";
  for (size_t i = 0; i < plan.overrides.size(); ++i)
    out += std::string(i ? "," : "") + "\n      " + quoted(plan.overrides[i].tensor) + ": " +
           ort_override_value(plan.overrides[i], [](const std::string& t) { return quoted(t); });
  out += plan.overrides.empty() ? "}" : "\n    }";
  if (plan.sixteen_bit) out += ",\n    \"UseQDQContribOps\": true";
  if (in.calibration && in.calibration->name == "percentile")
    out += ",\n    \"CalibPercentile\": " + number_text(static_cast<float>(in.calibration->percentile));
  out += "\n  }\n}\n";
  return out;
}

std::string ort_python(const exec::Executor& ex, const CalibrationRelations& rel, const std::vector<RaisedNode>& nodes,
                       const ExportInput& in) {
  const OrtPlan plan = ort_plan(ex, rel, nodes, in, "ort-python");
  std::string out = comment_block({provenance_line(in), node_summary(nodes),
                                   "onnxruntime.quantization settings: nodes kept in float, and per-tensor quant types",
                                   "(TensorQuantOverrides keys are tensor names: the inputs of the raised nodes)."});
  out += std::string("from onnxruntime.quantization import ") + (in.calibration ? "CalibrationMethod, " : "") +
         "QuantFormat, QuantType, quantize_static\n\n";
  out += "nodes_to_exclude = [\n";
  for (const auto& n : plan.exclude) out += "    " + quoted(n) + ",\n";
  out += "]\n\ntensor_quant_overrides = {\n";
  for (const auto& o : plan.overrides)
    out += "    " + quoted(o.tensor) + ": " + ort_override_value(o, [](const std::string& t) { return "QuantType." + t; }) +
           ",  # " + o.node + "\n";
  out += "}\n\nextra_options = {\n    \"TensorQuantOverrides\": tensor_quant_overrides,\n";
  if (plan.sixteen_bit) out += "    \"UseQDQContribOps\": True,  # 16-bit Q/DQ below opset 21\n";
  if (in.calibration && in.calibration->name == "percentile")
    out += "    \"CalibPercentile\": " + number_text(static_cast<float>(in.calibration->percentile)) + ",\n";
  out += "}\n\n";
  std::string method;
  if (in.calibration) {
    method = "calibrate_method=CalibrationMethod." + ort_calibrate_method(*in.calibration, "ort-python") + ", ";
    out += "calibrate_method = CalibrationMethod." + ort_calibrate_method(*in.calibration, "ort-python") +
           "  # " + in.calibration->text() + "\n\n";
  }
  out += "# quantize_static(\"model.onnx\", \"model.qdq.onnx\", calibration_data_reader, quant_format=QuantFormat.QDQ,\n";
  out += "#                 " + method + "nodes_to_exclude=nodes_to_exclude, extra_options=extra_options)\n";
  return out;
}

// ---- rknn-cfg --------------------------------------------------------------------------------

std::string rknn_cfg(const exec::Executor& ex, const CalibrationRelations& rel, const std::vector<RaisedNode>& nodes,
                     const ExportInput& in) {
  std::string out = comment_block(
      {provenance_line(in), node_summary(nodes),
       "rknn-toolkit2 hybrid quantization: replace the custom_quantize_layers block of the <stem>.quantization.cfg",
       "that hybrid_quantization_step1 wrote, then run hybrid_quantization_step2. Keys are the output tensor names",
       "of the raised ONNX nodes (rknn names a layer by its output operand); the comment names the node. int16",
       "stays int16; float becomes float16, rknn's most precise hybrid type."});
  std::string body;
  for (const auto& n : nodes) {
    const int rank = action_rank(n.action);
    if (rank <= 8) continue;
    const std::string type = rank <= 16 && QType::parse(n.action).is_integer() ? "int16" : "float16";
    for (const auto& tensor : rel.node_outputs(n.node))
      body += "    " + quoted(tensor) + ": " + type + "  # " + n.node + " (" + n.action + ")\n";
  }
  if (in.calibration) out = comment_block({"rknn.config(quantized_algorithm='" + rknn_algorithm(*in.calibration) + "')  # " +
                                            in.calibration->text() + ", the model-wide calibration"}) + out;
  out += body.empty() ? "custom_quantize_layers: {}\n" : "custom_quantize_layers:\n" + body;
  // New thresholds: the min and max of those tensors' quantize_parameters entries.
  std::string params;
  for (size_t i : node_thresholds(in)) {
    const CalibrationSpec& spec = ex.calibrations()[i];
    check(carries_thresholds("rknn-cfg", spec) && in.config.thresholds_of(i)->size() == (spec.asymmetric ? 2u : 1u),
          "rknn-cfg: calibration node '" + spec.node_name + "' has thresholds rknn-toolkit2's quantize_parameters cannot "
          "take here (per-tensor activation ranges only)");
    const auto [lo, hi] = threshold_range(ex, in, i);
    params += "    " + quoted(spec.graph->value(spec.input_value).name) + ":\n        min: [" + number_text(lo) +
              "]\n        max: [" + number_text(hi) + "]\n";
  }
  if (!params.empty())
    out += comment_block({"New ranges: set min and max of these entries of quantize_parameters in the step-1 file (as text;",
                          "keep their other fields). Not confirmed: that step2 derives scale and zero_point from them."}) +
           "quantize_parameters:\n" + params;
  return out;
}

// ---- calibrated-onnx -------------------------------------------------------------------------

namespace onnx_f {
enum : uint32_t { model_graph = 7, graph_node = 1, node_name = 3, node_op_type = 4, node_attribute = 5, node_domain = 7 };
enum : uint32_t { attr_name = 1, attr_s = 4, attr_floats = 7, attr_type = 20 };
enum : int64_t { type_string = 3, type_floats = 6 };
}  // namespace onnx_f

// The new attribute values of one calibration node.
struct NodeChange {
  bool set_switch = false, set_qtype = false, set_scales = false, set_thresholds = false;
  std::string switch_value, qtype;
  std::vector<float> scales, thresholds;
  bool written = false;
};

void copy_field(pb::Writer& w, const pb::Field& f) {
  switch (f.wire) {
    case pb::WireType::Varint: w.varint(f.number, f.varint); break;
    case pb::WireType::Fixed64: w.fixed64(f.number, f.varint); break;
    case pb::WireType::Fixed32: w.fixed32(f.number, static_cast<uint32_t>(f.varint)); break;
    case pb::WireType::Bytes: w.bytes(f.number, f.bytes.data, f.bytes.size); break;
    default: fail("calibrated-onnx: the model uses protobuf groups (field " + std::to_string(f.number) + "), which ONNX does not");
  }
}

void write_string_attribute(pb::Writer& w, const std::string& name, const std::string& value) {
  w.message(onnx_f::node_attribute, [&](pb::Writer& a) {
    a.string(onnx_f::attr_name, name);
    a.string(onnx_f::attr_s, value);
    a.int64(onnx_f::attr_type, onnx_f::type_string);
  });
}

void write_floats_attribute(pb::Writer& w, const std::string& name, const std::vector<float>& values) {
  w.message(onnx_f::node_attribute, [&](pb::Writer& a) {
    a.string(onnx_f::attr_name, name);
    a.packed_floats(onnx_f::attr_floats, values);
    a.int64(onnx_f::attr_type, onnx_f::type_floats);
  });
}

// An attribute with field `replaced` set to the new value, every other field as read.
void rewrite_attribute(pb::Writer& w, pb::Bytes attribute, uint32_t replaced, const std::function<void(pb::Writer&)>& value) {
  w.message(onnx_f::node_attribute, [&](pb::Writer& a) {
    pb::Reader r(attribute, "AttributeProto");
    pb::Field f;
    bool done = false;
    while (r.next(f)) {
      if (f.number == replaced) {
        if (!done) value(a);
        done = true;
      } else {
        copy_field(a, f);
      }
    }
    if (!done) value(a);
  });
}

void write_node(pb::Writer& w, pb::Bytes node, std::map<std::string, NodeChange>& changes) {
  std::string name, op_type, domain;
  {
    pb::Reader r(node, "NodeProto");
    pb::Field f;
    while (r.next(f)) {
      if (f.wire != pb::WireType::Bytes) continue;
      if (f.number == onnx_f::node_name) name = f.bytes.str();
      else if (f.number == onnx_f::node_op_type) op_type = f.bytes.str();
      else if (f.number == onnx_f::node_domain) domain = f.bytes.str();
    }
  }
  auto it = op_type == "HzCalibration" && (domain.empty() || domain == "horizon") ? changes.find(name) : changes.end();
  if (it == changes.end()) {
    w.bytes(onnx_f::graph_node, node.data, node.size);
    return;
  }
  NodeChange& change = it->second;
  check(!change.written, "calibrated-onnx: the model has two calibration nodes named '" + name + "'");
  change.written = true;
  w.message(onnx_f::graph_node, [&](pb::Writer& n) {
    bool has_switch = false, has_qtype = false, has_scales = false, has_thresholds = false;
    pb::Reader r(node, "NodeProto");
    pb::Field f;
    while (r.next(f)) {
      if (f.number != onnx_f::node_attribute || f.wire != pb::WireType::Bytes) {
        copy_field(n, f);
        continue;
      }
      std::string attr;
      {
        pb::Reader a(f.bytes, "AttributeProto");
        pb::Field af;
        while (a.next(af))
          if (af.number == onnx_f::attr_name && af.wire == pb::WireType::Bytes) attr = af.bytes.str();
      }
      if (attr == "switch" && change.set_switch) {
        has_switch = true;
        rewrite_attribute(n, f.bytes, onnx_f::attr_s, [&](pb::Writer& a) { a.string(onnx_f::attr_s, change.switch_value); });
      } else if (attr == "qtype" && change.set_qtype) {
        has_qtype = true;
        rewrite_attribute(n, f.bytes, onnx_f::attr_s, [&](pb::Writer& a) { a.string(onnx_f::attr_s, change.qtype); });
      } else if (attr == "scales" && change.set_scales) {
        has_scales = true;
        rewrite_attribute(n, f.bytes, onnx_f::attr_floats, [&](pb::Writer& a) { a.packed_floats(onnx_f::attr_floats, change.scales); });
      } else if (attr == "thresholds" && change.set_thresholds) {
        has_thresholds = true;
        rewrite_attribute(n, f.bytes, onnx_f::attr_floats,
                          [&](pb::Writer& a) { a.packed_floats(onnx_f::attr_floats, change.thresholds); });
      } else {
        copy_field(n, f);
      }
    }
    if (change.set_switch && !has_switch) write_string_attribute(n, "switch", change.switch_value);
    if (change.set_qtype && !has_qtype) write_string_attribute(n, "qtype", change.qtype);
    if (change.set_thresholds && !has_thresholds) write_floats_attribute(n, "thresholds", change.thresholds);
    check(!change.set_scales || has_scales, "calibrated-onnx: calibration node '" + name + "' has constant=2 but no scales");
  });
}

}  // namespace

const std::vector<ExportFormat>& export_formats() {
  static const std::vector<ExportFormat> formats = {
      {"horizon-yaml", ".horizon.yaml", "text/yaml", false, "Horizon YAML (node_info, run_on_cpu, calibration_type)"},
      {"horizon-quant-config", ".quant_config.json", "application/json", false,
       "Horizon quant_config JSON (model_config.activation, node_config; hb_compile)"},
      {"calibrated-onnx", ".calibrated.onnx", "application/octet-stream", true,
       "calibrated ONNX (HzCalibration switch / qtype attributes rewritten)"},
      {"qdq-onnx", ".qdq.onnx", "application/octet-stream", true,
       "Q/DQ ONNX (the model's own quantizers removed or re-quantized, for Q/DQ models)"},
      {"ort-json", ".ort.json", "application/json", false, "onnxruntime JSON (nodes_to_exclude, TensorQuantOverrides)"},
      {"ort-python", ".ort.py", "text/x-python", false, "onnxruntime Python snippet (quantize_static settings)"},
      {"rknn-cfg", ".rknn.cfg", "text/plain", false, "RKNN custom_quantize_layers (rknn-toolkit2 hybrid quantization)"},
  };
  return formats;
}

const ExportFormat* find_export_format(const std::string& name) {
  for (const auto& f : export_formats())
    if (f.name == name) return &f;
  return nullptr;
}

std::string export_format_names() {
  std::string known;
  for (const auto& f : export_formats()) known += (known.empty() ? "" : ", ") + f.name;
  return known;
}

bool export_is_binary(const std::string& format) {
  const ExportFormat* f = find_export_format(format);
  return f != nullptr && f->binary;
}

bool exports_thresholds_at_all(const std::string& format) {
  return format != "horizon-yaml" && format != "horizon-quant-config";
}

bool carries_thresholds(const std::string& format, const CalibrationSpec& spec) {
  if (spec.dynamic || spec.block_size > 0 || !spec.qtype.is_integer()) return false;
  if (format == "calibrated-onnx") return !spec.affine && !spec.in_subgraph();
  if (format == "qdq-onnx") return spec.affine;
  if (format == "ort-json" || format == "ort-python" || format == "rknn-cfg")
    return spec.kind != TensorKind::Weight && spec.scales.size() == 1;
  return false;
}

std::string qdq_tensor_of(const exec::Executor& ex, const CalibrationSpec& spec) {
  if (!spec.affine || spec.node_id < 0) return "";
  return spec.graph->node(spec.node_id).attr_string("qdq_tensor", "");
}

std::vector<RaisedNode> raised_nodes(const exec::Executor& ex, const CalibrationRelations& rel, const ExportInput& in) {
  const size_t count = ex.calibrations().size();
  check(in.config.on.size() == count, "export: the configuration has " + std::to_string(in.config.on.size()) +
                                          " calibration entries, the model " + std::to_string(count));
  std::vector<uint8_t> raised(count, 0), accounted(count, 0);
  for (size_t i = 0; i < count; ++i) {
    const auto& spec = ex.calibrations()[i];
    raised[i] = precision_rank(in.config.on[i] != 0, effective_qtype(ex, in.config, i)) > precision_rank(spec.switch_on, spec.qtype.name);
  }
  std::vector<RaisedNode> out;
  std::set<std::string> listed;
  auto add = [&](const std::string& node) {
    if (listed.count(node)) return;
    RaisedNode n{node, "", {}};
    int best = 0;
    for (int ci : analysis::calibration_set(ex, rel, {node})) {
      const size_t i = static_cast<size_t>(ci);
      if (!raised[i]) continue;
      n.calibrations.push_back(ci);
      accounted[i] = 1;
      const std::string action = in.config.on[i] ? effective_qtype(ex, in.config, i) : "float";
      const int rank = action_rank(action);
      if (rank > best) best = rank, n.action = action;
    }
    if (n.calibrations.empty()) return;
    listed.insert(node);
    out.push_back(std::move(n));
  };
  for (const auto& [node, action] : in.intents) add(node);
  for (const auto& [node, outputs] : rel.normal_nodes()) {
    bool has = false;
    for (int ci : analysis::calibration_set(ex, rel, {node})) has = has || (raised[static_cast<size_t>(ci)] && !accounted[static_cast<size_t>(ci)]);
    if (has) add(node);
  }
  return out;
}

std::string export_config_text(const exec::Executor& ex, const CalibrationRelations& rel, const ExportInput& in,
                               const std::string& format) {
  const std::vector<RaisedNode> nodes = raised_nodes(ex, rel, in);
  if (format == "horizon-yaml" || format == "horizon-quant-config") refuse_node_thresholds(ex, in, format);
  if (format == "horizon-yaml") return horizon_yaml(nodes, in);
  if (format == "horizon-quant-config") return horizon_quant_config(nodes, in);
  if (format == "ort-json") return ort_json(ex, rel, nodes, in);
  if (format == "ort-python") return ort_python(ex, rel, nodes, in);
  if (format == "rknn-cfg") return rknn_cfg(ex, rel, nodes, in);
  check(!export_is_binary(format), "export: format '" + format + "' is a model file, not text");
  fail("export: unknown format '" + format + "' (known: " + export_format_names() + ")");
}

std::vector<uint8_t> export_model_file(const exec::Executor& ex, const ExportInput& in, const std::string& format,
                                       const uint8_t* model, size_t size) {
  if (format == "calibrated-onnx") return export_calibrated_onnx(ex, in, model, size);
  if (format == "qdq-onnx") return export_qdq_onnx(ex, in, model, size);
  check(find_export_format(format) != nullptr, "export: unknown format '" + format + "' (known: " + export_format_names() + ")");
  fail("export: format '" + format + "' is text, not a model file");
}

std::vector<uint8_t> export_calibrated_onnx(const exec::Executor& ex, const ExportInput& in, const uint8_t* model, size_t size) {
  const auto& cals = ex.calibrations();
  check(in.config.on.size() == cals.size(), "export: the configuration has " + std::to_string(in.config.on.size()) +
                                                " calibration entries, the model " + std::to_string(cals.size()));
  std::map<std::string, NodeChange> changes;
  std::map<std::string, CalibrationSpec> expected;  // the state each changed node must read back as
  for (size_t i = 0; i < cals.size(); ++i) {
    const CalibrationSpec& spec = cals[i];
    const bool on = in.config.on[i] != 0;
    const std::string& q = effective_qtype(ex, in.config, i);
    const std::vector<float>* thresholds = in.config.thresholds_of(i);
    NodeChange c;
    c.set_switch = on != spec.switch_on;
    c.switch_value = on ? "ON" : "OFF";
    c.set_qtype = q != spec.qtype.name;
    c.qtype = q;
    c.set_thresholds = thresholds && *thresholds != spec.thresholds;
    if (c.set_thresholds) {
      check(!spec.affine && !spec.in_subgraph() && !(spec.constant == 2 && spec.asymmetric),
            "calibrated-onnx: calibration node '" + spec.node_name + "' cannot hold new thresholds in its attributes " +
                (spec.affine ? "(a Q/DQ quantizer: qdq-onnx writes its scales)" : "(inside a subgraph, or asymmetric with stored scales)"));
      c.thresholds = *thresholds;
    }
    const CalibrationSpec configured = thresholds ? with_thresholds(spec, *thresholds) : spec;
    if ((c.set_qtype || c.set_thresholds) && spec.constant == 2) {
      c.set_scales = true;
      c.scales = derive_scales(configured, QType::parse(q));
    }
    if (!c.set_switch && !c.set_qtype && !c.set_thresholds) continue;
    check(!spec.affine, "calibrated-onnx: '" + spec.node_name +
                            "' is a QuantizeLinear/DequantizeLinear quantizer of the model, not an HzCalibration node; "
                            "qdq-onnx writes a Q/DQ model's configuration");
    check(!spec.in_subgraph(), "calibrated-onnx: calibration node '" + spec.node_name +
                                   "' is inside a subgraph; this format writes the main graph's calibration nodes "
                                   "only: leave its state as stored, or export a configuration document");
    CalibrationSpec e = configured;
    if (c.set_qtype) e.scales = derive_scales(configured, QType::parse(q));
    expected[spec.node_name] = std::move(e);
    changes[spec.node_name] = std::move(c);
  }

  pb::Writer w;
  w.reserve(size + 64 * changes.size());
  pb::Reader r(model, size, "ModelProto");
  pb::Field f;
  bool has_graph = false;
  while (r.next(f)) {
    if (f.number != onnx_f::model_graph || f.wire != pb::WireType::Bytes) {
      copy_field(w, f);
      continue;
    }
    has_graph = true;
    w.message(onnx_f::model_graph, [&](pb::Writer& g) {
      pb::Reader gr(f.bytes, "GraphProto");
      pb::Field gf;
      while (gr.next(gf)) {
        if (gf.number == onnx_f::graph_node && gf.wire == pb::WireType::Bytes) write_node(g, gf.bytes, changes);
        else copy_field(g, gf);
      }
    });
  }
  check(has_graph, "calibrated-onnx: the model has no graph");
  for (const auto& [name, c] : changes)
    check(c.written, "calibrated-onnx: calibration node '" + name + "' was not found in the model's main graph");
  std::vector<uint8_t> out = w.take();

  // Read back: every changed node must give the state the executor simulated.
  const ir::Model written = reader::read_onnx(out.data(), out.size());
  for (size_t i = 0; i < cals.size(); ++i) {
    const CalibrationSpec& spec = cals[i];
    auto it = changes.find(spec.node_name);
    if (it == changes.end()) continue;
    const int id = written.graph.find_node(spec.node_name);
    check(id >= 0, "calibrated-onnx: calibration node '" + spec.node_name + "' is missing after writing");
    const CalibrationSpec back = parse_calibration(written.graph, id);
    const CalibrationSpec& e = expected[spec.node_name];
    const bool same = back.switch_on == (in.config.on[i] != 0) && back.qtype.name == effective_qtype(ex, in.config, i) &&
                      back.scales == e.scales && back.zero_points == e.zero_points &&
                      back.asymmetric == spec.asymmetric;
    check(same, "calibrated-onnx: calibration node '" + spec.node_name + "' cannot hold qtype '" +
                    effective_qtype(ex, in.config, i) + (it->second.set_thresholds ? "' and its new thresholds" : "'") +
                    " in its attributes so that it computes what ptqscope simulated (legacy asymq or asymmetric "
                    "attributes); leave this node's qtype as stored or switch it OFF");
  }
  return out;
}

}  // namespace ptq::quant
