#include "schema/explain_json.h"

#include <cmath>

#include "analysis/metrics.h"
#include "schema/result_json.h"

namespace ptq::schema {
namespace {

// A share or ratio: float32 precision is plenty for evidence; NaN as "nan".
void number(io::JsonWriter& w, const char* key, double v) { w.key(key).value_float32(static_cast<float>(v)); }

// The scalar evidence of a node (what a hint carries).
void write_evidence_numbers(io::JsonWriter& w, const analysis::NodeEvidence& e) {
  w.field("kind", e.kind).field("qtype", e.qtype).field("asymmetric", e.asymmetric).field("per_channel", e.per_channel);
  w.key("thresholds").float32_array(e.thresholds).key("scales").float32_array(e.scales);
  w.key("range")
      .begin_array()
      .value_float32(static_cast<float>(e.range_lo))
      .value_float32(static_cast<float>(e.range_hi))
      .end_array();
  w.field("values", e.values);
  number(w, "min", e.data_min);
  number(w, "max", e.data_max);
  number(w, "p99_99", e.p9999);
  number(w, "clipped", e.clipped);
  number(w, "occupied", e.occupied);
  number(w, "levels_used", e.levels_used);
  number(w, "zero_rounded", e.zero_rounded);
  number(w, "negative", e.negative);
  w.field("channels", e.channels);
  number(w, "channel_spread", e.channel_spread);
  w.key("branch_op");
  if (e.branch_op.empty()) w.null();
  else w.value(e.branch_op);
  number(w, "branch_ratio", e.branch_ratio);
  w.field("branch_along_axis", e.branch_along_axis);
  w.key("own").value_float32(e.own).key("accumulated").value_float32(e.accumulated);
  w.key("causes").string_array(e.causes);
}

}  // namespace

void write_explain_options(io::JsonWriter& w, const analysis::ExplainOptions& o) {
  w.begin_object().key("data_num");
  if (o.data_num == 0) w.null();
  else w.value(o.data_num);
  w.field("sample_selection", selection_name(o.selection)).field("metric", o.metric);
  w.key("min_recovery").value(o.min_recovery).field("inherited_top", o.inherited_top).end_object();
}

void write_hint(io::JsonWriter& w, const analysis::Hint& h, const analysis::NodeEvidence& e,
                const std::string& metric) {
  w.begin_object().field("calibration_node", h.calibration_node).field("node", h.node).field("cause", h.cause);
  w.key("evidence").begin_object();
  write_evidence_numbers(w, e);
  w.end_object();
  const analysis::HintSuggestion& s = h.suggestion;
  w.key("suggestion").begin_object().field("node", s.node).field("action", s.action);
  if (s.action == "threshold") {
    w.key("value").float32_array(s.value);
    w.field("method", s.method).field("per_channel", s.per_channel);
  }
  w.field("text", s.text).end_object();
  const analysis::HintEffect& f = h.effect;
  w.key("effect").begin_object().field("metric", metric).key("before").value_float32(f.before);
  w.key("after").value_float32(f.after).key("recovered").value_float32(f.recovered).key("held_out");
  if (f.has_held_out) {
    w.begin_object()
        .key("before")
        .value_float32(f.held_out_before)
        .key("after")
        .value_float32(f.held_out_after)
        .end_object();
  } else {
    w.null();
  }
  w.end_object().end_object();
}

void write_explain_section(io::JsonWriter& w, const analysis::ExplainResult& r) {
  auto evidence_of = [&](const std::string& name) -> const analysis::NodeEvidence* {
    for (const auto& e : r.evidence)
      if (e.calibration_node == name) return &e;
    return nullptr;
  };
  static const analysis::NodeEvidence none;
  w.key("hints").begin_array();
  for (const auto& h : r.hints) {
    const analysis::NodeEvidence* e = evidence_of(h.calibration_node);
    write_hint(w, h, e ? *e : none, r.metric);
  }
  w.end_array();
  w.key("hints_evidence").begin_object();
  std::vector<std::string> order;
  for (const auto& e : r.evidence) {
    order.push_back(e.calibration_node);
    w.key(e.calibration_node).begin_object().field("node", e.node);
    write_evidence_numbers(w, e);
    w.key("channel_max_abs").begin_array();
    for (double m : e.channel_max_abs) w.value_float32(static_cast<float>(m));
    w.end_array().key("branches").begin_array();
    for (const auto& b : e.branches) {
      w.begin_object().field("tensor", b.tensor);
      number(w, "max_abs", b.max_abs);
      w.end_object();
    }
    w.end_array().key("histogram").begin_object();
    number(w, "lo", e.histogram.lo);
    number(w, "hi", e.histogram.hi);
    w.key("counts").begin_array();
    for (double c : e.histogram.counts) w.value(static_cast<int64_t>(std::llround(c)));
    w.end_array().end_object().end_object();
  }
  w.end_object().key("hints_evidence_order").string_array(order);
  w.key("hints_samples").begin_object().key("tune").string_array(r.tune_samples);
  w.key("held_out").string_array(r.held_out_samples).end_object();
  w.key("hints_start").begin_object().field("metric", r.metric).key("tune").value_float32(r.start).key("held_out");
  if (r.has_held_out) w.value_float32(r.start_held_out);
  else w.null();
  w.end_object().field("hints_evaluations", r.evaluations);
}

void write_calibration_methods_options(io::JsonWriter& w, const analysis::CalibrationMethodsOptions& o) {
  w.begin_object().key("data_num");
  if (o.data_num == 0) w.null();
  else w.value(o.data_num);
  w.field("sample_selection", selection_name(o.selection)).field("metric", o.metric).key("percentiles").begin_array();
  for (double p : o.percentiles) w.value(p);
  w.end_array().field("per_channel", o.per_channel).field("toolchain", o.toolchain).end_object();
}

namespace {

void write_metrics(io::JsonWriter& w, const std::vector<float>& values) {
  w.begin_object();
  for (size_t m = 0; m < values.size() && m < analysis::all_metrics().size(); ++m)
    w.key(analysis::metric_name(analysis::all_metrics()[m])).value_float32(values[m]);
  w.end_object();
}

void write_setting_ref(io::JsonWriter& w, const analysis::CalibrationMethodsResult& r, int index) {
  if (index < 0) w.null();
  else w.value(r.settings[static_cast<size_t>(index)].label);
}

}  // namespace

void write_calibration_methods_section(io::JsonWriter& w, const analysis::CalibrationMethodsResult& r) {
  w.key("calibration_methods").begin_object().field("metric", r.metric).field("toolchain", r.toolchain);
  w.key("settings").begin_array();
  for (const auto& s : r.settings) {
    w.begin_object().field("label", s.label).field("stored", s.stored).key("method");
    if (s.stored) w.null();
    else w.value(s.method.name);
    w.key("percentile");
    if (!s.stored && s.method.name == "percentile") w.value(s.method.percentile);
    else w.null();
    w.field("per_channel", !s.stored && s.method.per_channel).key("tune");
    write_metrics(w, s.tune);
    w.key("held_out");
    if (s.held_out.empty()) w.null();
    else write_metrics(w, s.held_out);
    w.key("toolchains").string_array(s.toolchains).end_object();
  }
  w.end_array().key("skipped").string_array(r.skipped).key("best");
  write_setting_ref(w, r, r.best);
  w.key("best_by_toolchain").begin_object();
  for (const auto& [toolchain, index] : r.best_by_toolchain) {
    w.key(toolchain);
    write_setting_ref(w, r, index);
  }
  w.end_object().field("evaluations", r.evaluations).key("warnings").string_array(r.warnings).end_object();
  w.key("calibration_methods_samples").begin_object().key("tune").string_array(r.tune_samples);
  w.key("held_out").string_array(r.held_out_samples).end_object();
}

}  // namespace ptq::schema
