#include "schema/result_json.h"

namespace ptq::schema {

void write_model_summary(JsonWriter& w, const exec::Executor& ex, const std::string& file_name) {
  const ir::Model& m = ex.model();
  const ir::Graph& g = m.graph;
  auto write_values = [&](const std::vector<int>& ids) {
    w.begin_array();
    for (int id : ids) {
      const ir::Value& v = g.value(id);
      w.begin_object().field("name", v.name).field("dtype", dtype_name(v.info.dtype)).key("dims").begin_array();
      for (size_t d = 0; d < v.info.dims.size(); ++d) {
        if (v.info.dims[d] >= 0) w.value(v.info.dims[d]);
        else if (d < v.info.dim_params.size() && !v.info.dim_params[d].empty()) w.value(v.info.dim_params[d]);
        else w.null();
      }
      w.end_array().end_object();
    }
    w.end_array();
  };
  w.begin_object();
  w.field("file", file_name).field("ir_version", m.ir_version).field("producer", m.producer_name + " " + m.producer_version);
  w.key("opsets").begin_object();
  for (const auto& o : m.opset_imports) w.field(o.domain.empty() ? "ai.onnx" : o.domain, o.version);
  w.end_object();
  w.key("inputs");
  write_values(g.inputs);
  w.key("outputs");
  write_values(g.outputs);
  w.field("node_count", g.nodes.size());
  w.key("calibration_nodes").begin_array();
  for (const auto& c : ex.calibrations()) {
    w.begin_object().field("name", c.node_name).field("kind", c.kind_name()).field("qtype", c.qtype.name);
    w.field("switch", c.switch_on ? "ON" : "OFF").field("axis", c.axis).field("asymmetric", c.asymmetric);
    w.key("thresholds").begin_array();
    for (float t : c.thresholds) w.value_float32(t);
    w.end_array().key("scales").begin_array();
    for (float s : c.scales) w.value_float32(s);
    w.end_array().end_object();
  }
  w.end_array();
  w.end_object();
}

void write_sensitivity_table(JsonWriter& w, const analysis::SensitivityResult& r) {
  w.begin_object();
  for (const auto& row : r.rows) {
    w.key(row.item).begin_object();
    if (r.node_type != "node") w.field("node", row.node);
    if (r.node_type == "activation") {
      w.key("threshold");
      if (row.has_threshold) w.value(row.threshold);
      else w.null();
      w.field("qtype", row.qtype);
    }
    for (size_t m = 0; m < r.metrics.size(); ++m) w.key(r.metrics[m]).value_float32(row.values[m]);
    w.end_object();
  }
  w.end_object();
}

void write_sensitivity_options(JsonWriter& w, const analysis::SensitivityOptions& o) {
  w.begin_object();
  w.field("node_type", o.node_type);
  w.key("metrics").string_array(o.metrics);
  w.key("output_node").string_array(o.output_nodes);
  w.field("data_num", o.data_num);
  w.field("sample_selection", o.selection == data::SampleSelection::Last ? "last"
                                  : o.selection == data::SampleSelection::First ? "first" : "all");
  w.key("interested_nodes");
  if (!o.has_interested) {
    w.null();
  } else {
    w.begin_array();
    for (const auto& group : o.interested) w.string_array(group);
    w.end_array();
  }
  w.field("leave_one_out", o.leave_one_out);
  w.end_object();
}

std::string sensitivity_document(const exec::Executor& ex, const std::string& model_file,
                                 const analysis::SensitivityOptions& o, const analysis::SensitivityResult& r,
                                 double elapsed_ms) {
  JsonWriter w;
  const std::string section = o.leave_one_out ? "leave_one_out" : "sensitivity";
  w.begin_object();
  w.field("schema", "ptqscope.result").field("version", kResultSchemaVersion);
  w.key("model");
  write_model_summary(w, ex, model_file);
  w.key("options").begin_object().key(section);
  write_sensitivity_options(w, o);
  w.end_object();
  w.key("samples").string_array(r.samples);
  w.key("compared_tensors").string_array(r.compared_tensors);
  w.key(section).begin_object().key(r.node_type);
  write_sensitivity_table(w, r);
  w.end_object();
  // JS objects reorder integer-like keys ("21"), so the sorted order is also given as a list.
  w.key(section + "_order").begin_object().key(r.node_type).begin_array();
  for (const auto& row : r.rows) w.value(row.item);
  w.end_array().end_object();
  w.field("cancelled", r.cancelled);
  w.key("timings_ms").begin_object().field(section, elapsed_ms).end_object();
  w.end_object();
  return w.str();
}

}  // namespace ptq::schema
