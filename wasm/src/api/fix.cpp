#include "api/fix.h"

#include <algorithm>
#include <cmath>

#include "analysis/metrics.h"
#include "analysis/selection.h"
#include "api/catalog.h"
#include "core/error.h"
#include "config/config_export.h"
#include "schema/result_json.h"

namespace ptq::api {

using io::Json;
using io::JsonWriter;

void write_fix_options(JsonWriter& w, const analysis::FixOptions& o, const std::string& export_format) {
  w.begin_object().field("target", o.target.text()).key("prefer").string_array(o.prefer).key("max_nodes");
  if (o.max_nodes == 0) w.null();
  else w.value(o.max_nodes);
  w.key("candidates");
  if (o.candidates == "list") w.string_array(o.candidate_nodes);
  else w.value(o.candidates);
  w.key("data_num");
  if (o.data_num == 0) w.null();
  else w.value(o.data_num);
  w.field("sample_selection", schema::selection_name(o.selection)).key("export");
  if (export_format.empty()) w.null();
  else w.value(export_format);
  w.end_object();
}

void write_fix_section(JsonWriter& w, const analysis::FixResult& r) {
  w.key("fix").begin_object();
  w.key("target").begin_object().field("text", r.target.text()).field("metric", analysis::metric_name(r.target.metric));
  w.field("op", r.target.op).key("bound").value(r.target.bound).end_object();
  w.field("reached", r.reached).key("start").value_float32(r.start).key("final").value_float32(r.final_value);
  w.key("steps").begin_array();
  for (const auto& s : r.steps) {
    w.begin_object().field("phase", s.phase).field("node", s.node).field("action", s.action);
    w.key("value").value_float32(s.value).end_object();
  }
  w.end_array().key("pruned").string_array(r.pruned).key("nodes").begin_array();
  for (const auto& n : r.nodes) {
    w.begin_object().field("node", n.node).field("action", n.action).key("without");
    if (std::isnan(n.without)) w.null();
    else w.value_float32(n.without);
    // Whether the target needs this node: false when the choice meets it without the node too.
    w.key("needed");
    if (std::isnan(n.without)) w.null();
    else w.value(!r.target.holds(n.without));
    w.end_object();
  }
  w.end_array();
  w.key("candidates").begin_object().field("ranking", r.candidates).key("nodes").string_array(r.ranking).key("values").begin_array();
  for (float v : r.ranking_values) w.value_float32(v);
  w.end_array().end_object();
  w.field("evaluations", r.evaluations).key("message");
  if (r.message.empty()) w.null();
  else w.value(r.message);
  w.key("held_out");
  if (r.held_out.empty()) {
    w.null();
  } else {
    w.begin_object().key("samples").string_array(r.held_out).key("start").value_float32(r.held_out_start);
    w.key("final").value_float32(r.held_out_final).field("met", r.held_out_met).end_object();
  }
  w.key("warnings").string_array(r.warnings);
  w.end_object();
  w.key("fix_samples").string_array(r.samples);
}

void write_fix_event_row(JsonWriter& w, const analysis::FixOptions::Event& e) {
  w.begin_object().field("phase", e.phase).field("node", e.node).field("action", e.action).key("value");
  if (e.phase == "rank") w.null();
  else w.value_float32(e.value);
  w.field("accepted", e.accepted).end_object();
}

quant::ResolvedConfig fix_config(const exec::Executor& ex, const quant::CalibrationRelations& rel,
                                 const std::optional<quant::ResolvedConfig>& start, const analysis::FixResult& r,
                                 const std::string& model_file, size_t calibration_samples) {
  quant::ResolvedConfig out = start ? *start : quant::resolved_from(ex, ex.stored_config(), "stored");
  out.config = r.config;
  // A threshold choice is written as the thresholds it set, one intent per calibration node, so that
  // the document reads back to this state without the samples it was chosen on.
  std::vector<uint8_t> written(ex.calibrations().size(), 0);
  for (const auto& n : r.nodes) {
    if (n.action != "threshold") {
      out.intents.push_back({n.node, n.action, std::nullopt, std::nullopt, {}});
      continue;
    }
    for (int ci : analysis::calibration_set(ex, rel, {n.node})) {
      const size_t i = static_cast<size_t>(ci);
      const std::vector<float>* t = r.config.thresholds_of(i);
      const std::vector<float>* before = start ? start->config.thresholds_of(i) : nullptr;
      if (!t || written[i] || (before && *before == *t)) continue;
      written[i] = 1;
      out.intents.push_back({ex.calibrations()[i].node_name, "threshold", std::nullopt, std::nullopt, *t});
    }
  }
  if (out.model.empty()) out.model = model_file;
  JsonWriter w;
  w.begin_object().field("tool", std::string(kToolName) + " " + kToolVersion).field("analysis", "fix");
  w.field("target", r.target.text()).key("reached").value_float32(r.final_value).field("met", r.reached);
  w.key("samples").string_array(r.samples).field("calibration_samples", calibration_samples).end_object();
  out.provenance = Json::parse(w.str(), "provenance");
  return out;
}

std::vector<uint8_t> export_config(const Context& c, const std::string& config_json, const std::string& format,
                                   const uint8_t* model, size_t model_size) {
  if (!quant::find_export_format(format))
    fail("exportConfig: unknown format '" + format + "' (known: " + quant::export_format_names() + ")");
  const quant::ResolvedConfig resolved = apply_config_document(c, config_json);
  quant::ExportInput in;
  in.config = resolved.config;
  for (const auto& i : resolved.intents) in.intents.emplace_back(i.node, i.action);
  in.calibration = resolved.calibration;
  in.model_wide = resolved.model_wide;
  in.model = resolved.model;
  in.provenance = resolved.provenance;
  in.tool = std::string(kToolName) + " " + kToolVersion;
  if (quant::export_is_binary(format)) return quant::export_model_file(c.executor, in, format, model, model_size);
  const std::string text = quant::export_config_text(c.executor, c.relations, in, format);
  return {text.begin(), text.end()};
}

}  // namespace ptq::api
