#include "schema/result_json.h"

#include <map>
#include <set>

namespace ptq::schema {
namespace {

void float32_array(io::JsonWriter& w, const std::vector<float>& v) {
  w.begin_array();
  for (float f : v) w.value_float32(f);
  w.end_array();
}

void double_array(io::JsonWriter& w, const std::vector<double>& v) {
  w.begin_array();
  for (double d : v) w.value(d);
  w.end_array();
}

template <class T>
void int_array(io::JsonWriter& w, const std::vector<T>& v) {
  w.begin_array();
  for (T i : v) w.value(static_cast<int64_t>(i));
  w.end_array();
}

// None -> null, a name -> "name", a list -> [name | [names]].
void write_node_argument(io::JsonWriter& w, const analysis::NodeArgument& a) {
  if (a.is_none) {
    w.null();
  } else if (!a.is_list) {
    w.value(a.elements.at(0).names.at(0));
  } else {
    w.begin_array();
    for (const auto& e : a.elements) {
      if (e.is_list) w.string_array(e.names);
      else w.value(e.names.at(0));
    }
    w.end_array();
  }
}

void write_box_stats(io::JsonWriter& w, const analysis::BoxStats& b) {
  w.begin_object().field("count", b.count).key("mean").value_float32(b.mean);
  w.field("q1", b.q1).field("median", b.median).field("q3", b.q3);
  w.field("whisker_low", b.whisker_low).field("whisker_high", b.whisker_high);
  w.field("outlier_count", b.outlier_count).key("outliers");
  float32_array(w, b.outliers);
  w.end_object();
}

void write_histogram(io::JsonWriter& w, const analysis::Histogram& h) {
  w.begin_object().field("label", h.label).field("color", h.color).key("edges");
  float32_array(w, h.edges);
  w.key("counts");
  int_array(w, h.counts);
  w.field("zeros_excluded", h.zeros_excluded).field("non_finite", h.non_finite).end_object();
}

// Number or null (the optional fields of a channel histogram).
void optional_float32(io::JsonWriter& w, bool present, float v) {
  if (present) w.value_float32(v);
  else w.null();
}

// node_errors' option measure.
const char* measure_name(bool converter) { return converter ? "converter" : "output"; }

void write_channel_histogram(io::JsonWriter& w, const analysis::ChannelHistogram& h) {
  w.begin_object().field("channel", h.channel).field("count", h.count).key("min");
  optional_float32(w, h.has_range, h.min);
  w.key("max");
  optional_float32(w, h.has_range, h.max);
  w.key("max_abs").value_float32(h.max_abs).key("threshold");
  optional_float32(w, h.has_threshold, h.threshold);
  w.key("histogram");
  write_histogram(w, h.histogram);
  w.end_object();
}

}  // namespace

std::string selection_name(data::SampleSelection s) {
  return s == data::SampleSelection::Last ? "last" : s == data::SampleSelection::First ? "first" : "all";
}

void write_model_summary(io::JsonWriter& w, const exec::Executor& ex, const std::string& file_name) {
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

void write_sensitivity_row(io::JsonWriter& w, const std::string& node_type, const std::vector<std::string>& metrics,
                           const analysis::SensitivityRow& row) {
  w.begin_object();
  if (node_type != "node") w.field("node", row.node);
  if (node_type == "activation") {
    w.key("threshold");
    if (row.has_threshold) w.value(row.threshold);
    else w.null();
    w.field("qtype", row.qtype);
  }
  for (size_t m = 0; m < metrics.size(); ++m) w.key(metrics[m]).value_float32(row.values[m]);
  w.end_object();
}

void write_sensitivity_table(io::JsonWriter& w, const analysis::SensitivityResult& r) {
  w.begin_object();
  for (const auto& row : r.rows) {
    w.key(row.item);
    write_sensitivity_row(w, r.node_type, r.metrics, row);
  }
  w.end_object();
}

void write_sensitivity_options(io::JsonWriter& w, const analysis::SensitivityOptions& o) {
  w.begin_object();
  w.field("node_type", o.node_type);
  w.key("metrics").string_array(o.metrics);
  w.key("output_node").string_array(o.output_nodes);
  w.field("data_num", o.data_num);
  w.field("sample_selection", selection_name(o.selection));
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

void write_header(io::JsonWriter& w, const exec::Executor& ex, const std::string& model_file) {
  w.field("schema", "ptqscope.result").field("version", kResultSchemaVersion);
  w.key("model");
  write_model_summary(w, ex, model_file);
}

void write_sensitivity_section(io::JsonWriter& w, const std::string& section, const analysis::SensitivityResult& r) {
  w.key("samples").string_array(r.samples);
  w.key("compared_tensors").string_array(r.compared_tensors);
  w.key(section).begin_object().key(r.node_type);
  write_sensitivity_table(w, r);
  w.end_object();
  // JS objects reorder integer-like keys ("21"), so the sorted order is also given as a list.
  w.key(section + "_order").begin_object().key(r.node_type).begin_array();
  for (const auto& row : r.rows) w.value(row.item);
  w.end_array().end_object();
}

std::string sensitivity_document(const exec::Executor& ex, const std::string& model_file,
                                 const analysis::SensitivityOptions& o, const analysis::SensitivityResult& r,
                                 double elapsed_ms) {
  io::JsonWriter w;
  const std::string section = o.leave_one_out ? "leave_one_out" : "sensitivity";
  w.begin_object();
  write_header(w, ex, model_file);
  w.key("options").begin_object().key(section);
  write_sensitivity_options(w, o);
  w.end_object();
  write_sensitivity_section(w, section, r);
  w.field("cancelled", r.cancelled);
  w.key("timings_ms").begin_object().field(section, elapsed_ms).end_object();
  w.end_object();
  return w.str();
}

std::vector<std::vector<std::string>> acc_error_keys(const analysis::AccErrorResult& r) {
  std::set<std::string> taken;
  std::vector<std::vector<std::string>> keys;
  for (const auto& f : r.figures) {
    keys.emplace_back();
    for (const auto& c : f.curves) {
      std::string key = c.name;
      if (taken.count(key)) key = f.prefix + "/" + c.name;
      for (int n = 2; taken.count(key); ++n) key = f.prefix + "/" + c.name + "#" + std::to_string(n);
      taken.insert(key);
      keys.back().push_back(key);
    }
  }
  return keys;
}

void write_acc_error_section(io::JsonWriter& w, const analysis::AccErrorResult& r) {
  const auto keys = acc_error_keys(r);
  w.key("acc_error").begin_object();
  for (size_t f = 0; f < r.figures.size(); ++f)
    for (size_t c = 0; c < r.figures[f].curves.size(); ++c) {
      const auto& curve = r.figures[f].curves[c];
      w.key(keys[f][c]).begin_object().field("label", curve.name);
      w.key("x").string_array(curve.x).key("y");
      float32_array(w, curve.y);
      w.end_object();
    }
  w.end_object();
  w.key("acc_error_figures").begin_array();
  for (size_t f = 0; f < r.figures.size(); ++f) {
    const auto& fig = r.figures[f];
    w.begin_object().field("prefix", fig.prefix).field("metric", fig.metric).field("average_mode", fig.average_mode);
    w.field("file_name", fig.file_name()).key("curves").string_array(keys[f]).end_object();
  }
  w.end_array();
  w.field("acc_error_sample", r.sample);
  w.key("acc_error_messages").string_array(r.messages);
}

std::vector<std::string> distribution_keys(const analysis::DistributionResult& r) {
  std::map<std::string, int> plots_per_name;
  for (const auto& p : r.plots) ++plots_per_name[p.name];
  std::vector<std::string> keys;
  for (const auto& p : r.plots) keys.push_back(plots_per_name[p.name] > 1 ? p.name + ":" + p.tensor : p.name);
  return keys;
}

void write_distribution_section(io::JsonWriter& w, const analysis::DistributionResult& r) {
  const auto keys = distribution_keys(r);
  w.key("distribution").begin_object();
  for (size_t k = 0; k < r.plots.size(); ++k) {
    const auto& p = r.plots[k];
    w.key(keys[k]).begin_object();
    w.field("name", p.name).field("kind", p.kind).field("tensor", p.tensor).field("title", p.title);
    w.field("file_name", p.file_name).key("threshold");
    optional_float32(w, p.has_threshold, p.threshold);
    w.key("max_abs").value_float32(p.max_abs).key("cosine");
    optional_float32(w, p.has_cosine, p.cosine);
    w.key("histograms").begin_array();
    for (const auto& h : p.histograms) write_histogram(w, h);
    w.end_array().end_object();
  }
  w.end_object();
  w.key("distribution_order").string_array(keys);
  w.field("distribution_sample", r.sample);
  if (!r.not_run.empty()) w.key("distribution_not_run").string_array(r.not_run);
}

void write_channelwise_section(io::JsonWriter& w, const analysis::ChannelwiseResult& r) {
  w.key("channelwise").begin_object();
  std::vector<std::string> order;
  for (const auto& p : r.plots) {
    order.push_back(p.name);
    w.key(p.name).begin_object().field("kind", p.kind).key("shape");
    int_array(w, p.shape);
    w.field("axis", p.axis).field("file_name", p.file_name).field("figure_width", p.figure_width);
    w.field("rotate_labels", p.rotate_labels).key("channels").begin_array();
    for (const auto& c : p.channels) write_box_stats(w, c);
    w.end_array();
    // Only on request (options.channels): hundreds of channels x 1024 bins would swamp every result.
    if (!p.histograms.empty()) {
      w.key("channel_histograms").begin_array();
      for (const auto& h : p.histograms) write_channel_histogram(w, h);
      w.end_array();
    }
    w.end_object();
  }
  w.end_object();
  w.key("channelwise_order").string_array(order);
  w.field("channelwise_sample", r.sample);
  if (!r.not_run.empty()) w.key("channelwise_not_run").string_array(r.not_run);
}

void write_stat_info_section(io::JsonWriter& w, const analysis::StatInfoResult& r) {
  w.key("stat_info").begin_object();
  std::vector<std::string> order;
  for (const auto& n : r.nodes) {
    order.push_back(n.node);
    w.key(n.node).begin_object().field("tensor_type", n.tensor_type).field("granularity", n.granularity);
    w.key("thresholds");
    float32_array(w, n.thresholds);
    w.key("scales");
    float32_array(w, n.scales);
    w.key("max_vals");
    float32_array(w, n.max_vals);
    w.key("min_nz_vals");
    float32_array(w, n.min_nz_vals);
    w.key("cells").string_array(analysis::stat_info_cells(n)).end_object();
  }
  w.end_object();
  w.key("stat_info_order").string_array(order);
  w.key("stat_info_curves").begin_object();
  for (const char* type : {"weight", "feature"}) {
    const auto c = analysis::stat_info_curves(r, type);
    w.key(type).begin_object().key("nodes").string_array(c.nodes);
    w.key("thresholds");
    double_array(w, c.thresholds);
    w.key("scales");
    double_array(w, c.scales);
    w.key("max_vals");
    double_array(w, c.max_vals);
    w.key("min_nz_vals");
    double_array(w, c.min_nz_vals);
    w.end_object();
  }
  w.end_object();
  w.field("stat_info_table", analysis::format_stat_info_table(r));
  w.key("stat_info_samples").string_array(r.samples);
  if (!r.messages.empty()) w.key("stat_info_messages").string_array(r.messages);
}

void write_sensitivity_analysis_section(io::JsonWriter& w, const analysis::SensitivityAnalysisResult& r) {
  w.key("sensitivity_analysis").begin_object();
  w.key("x").string_array(r.x).key("cumulative");
  float32_array(w, r.cumulative);
  w.key("per_node");
  float32_array(w, r.per_node);
  w.field("qtype", r.qtype).field("ranked", r.ranked);
  analysis::SensitivityResult ranking;
  ranking.node_type = "node";
  ranking.metrics = {"cosine-similarity"};
  ranking.rows = r.ranking;
  w.key("ranking");
  write_sensitivity_table(w, ranking);
  w.key("ranking_order").begin_array();
  for (const auto& row : r.ranking) w.value(row.item);
  w.end_array();
  w.field("file_name", "partial_quantization.png").end_object();
  w.key("sensitivity_analysis_samples").string_array(r.samples);
  w.key("sensitivity_analysis_messages").string_array(r.messages);
}

namespace {
// {"cosine-similarity": v, ...}: one value per metric, in the metrics' order.
void metric_object(io::JsonWriter& w, const std::vector<float>& values) {
  const auto& metrics = analysis::all_metrics();
  w.begin_object();
  for (size_t m = 0; m < metrics.size(); ++m) w.key(analysis::metric_name(metrics[m])).value_float32(values[m]);
  w.end_object();
}
}  // namespace

void write_output_metrics(io::JsonWriter& w, const std::vector<std::string>& outputs,
                          const std::vector<std::vector<float>>& per_output, const std::vector<float>& mean) {
  w.key("outputs").begin_object();
  for (size_t t = 0; t < outputs.size(); ++t) {
    w.key(outputs[t]);
    metric_object(w, per_output[t]);
  }
  w.end_object().key("output_order").string_array(outputs).key("mean");
  metric_object(w, mean);
}

void write_what_if_section(io::JsonWriter& w, const analysis::WhatIfResult& r) {
  w.key("what_if").begin_object();
  write_output_metrics(w, r.outputs, r.output_metrics, r.mean);
  w.field("metric", r.metric).key("nodes").begin_object();
  for (size_t n = 0; n < r.nodes.size(); ++n) w.key(r.nodes[n]).value_float32(r.node_values[n]);
  w.end_object().key("order").string_array(r.nodes).key("samples").string_array(r.samples);
  if (r.split) {  // asked for (option held_out): the held-out samples' output metrics, null without any
    w.key("held_out");
    if (r.held_out_samples.empty()) {
      w.null();
    } else {
      w.begin_object().key("samples").string_array(r.held_out_samples).key("mean");
      metric_object(w, r.held_out_mean);
      w.end_object();
    }
  }
  w.field("executed_nodes", r.nodes_executed).field("graph_nodes", r.node_count).end_object();
}

void write_node_errors_section(io::JsonWriter& w, const analysis::NodeErrorsResult& r) {
  w.key("node_errors").begin_object().field("metric", r.metric).field("measure", measure_name(r.converter));
  w.key("nodes").begin_object();
  for (size_t n = 0; n < r.nodes.size(); ++n) {
    w.key(r.nodes[n]).begin_object().key("own").value_float32(r.own[n]);
    w.key("accumulated").value_float32(r.accumulated[n]).end_object();
  }
  w.end_object().key("order").string_array(r.nodes).key("samples").string_array(r.samples).end_object();
}

void write_what_if_options(io::JsonWriter& w, const analysis::WhatIfOptions& o) {
  w.begin_object().field("data_num", o.data_num).field("sample_selection", selection_name(o.selection));
  w.field("metric", o.metric);
  if (o.held_out) w.field("held_out", true);  // documents without it stay as they were
  w.end_object();
}

void write_node_errors_options(io::JsonWriter& w, const analysis::NodeErrorsOptions& o) {
  w.begin_object().field("data_num", o.data_num).field("sample_selection", selection_name(o.selection));
  w.field("metric", o.metric).field("measure", measure_name(o.converter)).end_object();
}

void write_acc_error_options(io::JsonWriter& w, const analysis::AccErrorOptions& o) {
  w.begin_object().key("quantize_node");
  write_node_argument(w, o.quantize_node);
  w.key("non_quantize_node");
  write_node_argument(w, o.non_quantize_node);
  w.field("metric", o.metric).field("average_mode", o.average_mode);
  w.field("sample_selection", selection_name(o.selection)).end_object();
}

void write_distribution_options(io::JsonWriter& w, const analysis::DistributionOptions& o) {
  w.begin_object().key("nodes_list").string_array(o.nodes).field("bins", o.bins);
  w.field("sample_selection", selection_name(o.selection)).end_object();
}

void write_channelwise_options(io::JsonWriter& w, const analysis::ChannelwiseOptions& o) {
  w.begin_object().key("nodes_list").string_array(o.nodes).key("axis");
  if (o.has_axis) w.value(o.axis);
  else w.null();
  w.field("outlier_cap", o.outlier_cap).field("sample_selection", selection_name(o.selection));
  if (!o.channels.empty()) {
    w.key("channels");
    int_array(w, o.channels);
    w.field("bins", o.bins);
  }
  w.end_object();
}

void write_stat_info_options(io::JsonWriter& w, const analysis::StatInfoOptions& o) {
  w.begin_object().key("nodes_list");
  if (o.has_nodes) w.string_array(o.nodes);
  else w.null();
  w.end_object();
}

void write_sensitivity_analysis_options(io::JsonWriter& w, const analysis::SensitivityAnalysisOptions& o) {
  w.begin_object().field("pick_threshold", o.pick_threshold).field("data_num", o.data_num);
  w.field("sample_selection", selection_name(o.selection)).key("sensitive_nodes").string_array(o.sensitive_nodes);
  w.field("qtype", o.qtype).field("override_scales", o.stored_scales ? "stored" : "derived").end_object();
}

}  // namespace ptq::schema
