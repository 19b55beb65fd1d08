#include "api/analyze.h"

#include <algorithm>
#include <chrono>

#include "analysis/recalibrate.h"
#include "api/catalog.h"
#include "api/fix.h"
#include "io/json.h"
#include "api/request.h"
#include "core/error.h"
#include "config/config_doc.h"
#include "ops/gemm_kernel.h"
#include "config/config_export.h"
#include "schema/explain_json.h"
#include "schema/result_json.h"

namespace ptq::api {
namespace {

using io::Json;
using io::JsonWriter;

// The items one call computes: names in run order and their positions in the full sweep.
struct Sweep {
  std::string key;  // node_type for sensitivity sweeps, else ""
  size_t total = 0;
  std::vector<std::string> names;
  std::vector<size_t> indices;
};

// Writes the per-item events of one call.
class Events {
 public:
  Events(const EventFn& fn, std::string analysis, std::string section)
      : fn_(fn), analysis_(std::move(analysis)), section_(std::move(section)) {}

  bool enabled() const { return static_cast<bool>(fn_); }

  // `item` empty / index < 0: unknown (analyses whose progress is not per named item); `row` writes
  // the row value or is empty (null).
  void emit(const std::string& item, int64_t index, const std::function<void(JsonWriter&)>& row, size_t done,
            size_t total) const {
    if (!fn_) return;
    JsonWriter w;
    w.begin_object().field("type", "item").field("analysis", analysis_).field("section", section_).key("item");
    if (item.empty()) w.null();
    else w.value(item);
    w.key("index");
    if (index < 0) w.null();
    else w.value(index);
    w.key("row");
    if (row) row(w);
    else w.null();
    w.field("done", done).field("total", total).end_object();
    fn_(w.str());
  }

 private:
  const EventFn& fn_;
  std::string analysis_, section_;
};

std::vector<std::string> sensitivity_keys(const Context& c, const analysis::SensitivityOptions& o) {
  std::vector<std::string> keys;
  for (const auto& item : analysis::sensitivity_items(c.executor, c.relations, o)) keys.push_back(item.key);
  return keys;
}

// The curve keys of the result document (schema::acc_error_keys of the full plan), flattened in figure
// order: the items of an acc_error sweep.
std::vector<std::string> acc_error_curve_keys(const analysis::AccErrorResult& outline) {
  std::vector<std::string> keys;
  for (const auto& figure_keys : schema::acc_error_keys(outline)) keys.insert(keys.end(), figure_keys.begin(), figure_keys.end());
  return keys;
}

// The full item list of a splittable request ([] otherwise).
std::vector<std::string> sweep_items(const Context& c, const Request& r) {
  switch (r.analysis) {
    case Analysis::Sensitivity:
    case Analysis::LeaveOneOut: return sensitivity_keys(c, sensitivity_options(r));
    case Analysis::Distribution: return distribution_options(r).nodes;
    case Analysis::Channelwise: return channelwise_options(r).nodes;
    case Analysis::AccError: return acc_error_curve_keys(analysis::acc_error_outline(c.executor, c.relations, acc_error_options(r)));
    default: return {};
  }
}

Sweep make_sweep(const Request& r, const std::vector<std::string>& all) {
  Sweep s;
  s.total = all.size();
  s.indices = select_items(r.items, all);
  for (size_t i : s.indices) s.names.push_back(all[i]);
  return s;
}

bool contiguous(const std::vector<size_t>& v) { return v.empty() || v.back() - v.front() + 1 == v.size(); }

const data::CalibrationData& require_data(const Context& c) {
  check(c.data != nullptr, "analyze: no calibration data loaded (call loadCalibrationData first)");
  return *c.data;
}

// The request's configuration applied to the model (unset: the model as stored).
using Quantized = std::optional<exec::QuantConfig>;

bool run_sensitivity(const Context& c, const Request& r, const Quantized& q, JsonWriter& w, const EventFn& fn,
                     Sweep& sweep) {
  analysis::SensitivityOptions o = sensitivity_options(r);
  o.config = q;
  const std::string section = analysis_name(r.analysis);
  w.key("options").begin_object().key(section);
  schema::write_sensitivity_options(w, o);
  w.end_object();

  const auto items = analysis::sensitivity_items(c.executor, c.relations, o);
  std::vector<std::string> keys;
  for (const auto& item : items) keys.push_back(item.key);
  sweep = make_sweep(r, keys);
  sweep.key = o.node_type;

  analysis::SensitivityOptions run = o;
  if (contiguous(sweep.indices)) {
    run.item_begin = sweep.indices.empty() ? 0 : sweep.indices.front();
    run.item_end = sweep.indices.empty() ? 0 : sweep.indices.back() + 1;
  } else {
    // Scattered items: run exactly those, as interested groups (same ON-sets and keys, run order kept).
    run.has_interested = true;
    run.interested.clear();
    for (size_t i : sweep.indices) run.interested.push_back(o.has_interested ? o.interested[i] : std::vector<std::string>{keys[i]});
  }
  // One event per item and sample block (done / total in (item, sample) evaluations): the item's row
  // in the last block, progress only (item null) before it.
  const Events events(fn, section, o.node_type);
  size_t rows = 0;
  const analysis::SensitivityRow* finished = nullptr;
  if (events.enabled()) {
    run.on_row = [&](const analysis::SensitivityRow& row) { finished = &row; };
    run.progress = [&](size_t done, size_t total) {
      if (!finished) {
        events.emit("", -1, {}, done, total);
        return true;
      }
      const analysis::SensitivityRow& row = *finished;
      finished = nullptr;
      events.emit(row.item, static_cast<int64_t>(sweep.indices.at(rows++)),
                  [&](JsonWriter& rw) { schema::write_sensitivity_row(rw, o.node_type, o.metrics, row); }, done, total);
      return true;
    };
  }
  const analysis::SensitivityResult result = analysis::get_sensitivity_of_nodes(c.executor, c.relations, require_data(c), run);
  schema::write_sensitivity_section(w, section, result);
  return result.cancelled;
}

// A progress callback that emits one event per finished named item (`names[k]`, `indices[k]`).
std::function<bool(size_t, size_t)> named_progress(const Events& events, const Sweep& sweep) {
  return [&events, &sweep](size_t done, size_t total) {
    events.emit(sweep.names.at(done - 1), static_cast<int64_t>(sweep.indices.at(done - 1)), {}, done, total);
    return true;
  };
}

// A progress callback for analyses whose steps are not named items.
std::function<bool(size_t, size_t)> anonymous_progress(const Events& events) {
  return [&events](size_t done, size_t total) {
    events.emit("", -1, {}, done, total);
    return true;
  };
}

bool run_distribution(const Context& c, const Request& r, const Quantized& q, JsonWriter& w, const EventFn& fn,
                      Sweep& sweep) {
  analysis::DistributionOptions o = distribution_options(r);
  o.config = q;
  w.key("options").begin_object().key("distribution");
  schema::write_distribution_options(w, o);
  w.end_object();
  sweep = make_sweep(r, o.nodes);
  analysis::DistributionOptions run = o;
  run.nodes = sweep.names;
  const Events events(fn, "distribution", "distribution");
  if (events.enabled()) run.progress = named_progress(events, sweep);
  const analysis::DistributionResult result = analysis::plot_distribution(c.executor, c.relations, require_data(c), run);
  schema::write_distribution_section(w, result);
  return result.cancelled;
}

bool run_channelwise(const Context& c, const Request& r, const Quantized& q, JsonWriter& w, const EventFn& fn,
                     Sweep& sweep) {
  analysis::ChannelwiseOptions o = channelwise_options(r);
  o.config = q;
  w.key("options").begin_object().key("channelwise");
  schema::write_channelwise_options(w, o);
  w.end_object();
  sweep = make_sweep(r, o.nodes);
  analysis::ChannelwiseOptions run = o;
  run.nodes = sweep.names;
  const Events events(fn, "channelwise", "channelwise");
  if (events.enabled()) run.progress = named_progress(events, sweep);
  const analysis::ChannelwiseResult result =
      analysis::get_channelwise_data_distribution(c.executor, c.relations, require_data(c), run);
  schema::write_channelwise_section(w, result);
  return result.cancelled;
}

// The acc_error section keys ("acc_error", "acc_error_figures", ...) as written by the schema, parsed.
Json acc_error_section(const analysis::AccErrorResult& result) {
  JsonWriter w;
  w.begin_object();
  schema::write_acc_error_section(w, result);
  w.end_object();
  return Json::parse(w.str(), "acc_error section");
}

// A part's curves carry the keys of the full plan (`keys[position]`): the schema derives keys from the
// curves it is given, and a "<prefix>/<label>" key depends on curves of earlier figures that a part
// may not hold.
void rekey_acc_error(Json& section, const analysis::AccErrorResult& result, const std::vector<std::string>& keys) {
  std::vector<std::string> positional;
  for (const auto& figure : result.figures)
    for (const auto& curve : figure.curves) positional.push_back(keys.at(curve.position));
  Json curves = Json::object();
  size_t k = 0;
  for (const auto& m : section.find("acc_error")->members()) curves.set(positional.at(k++), m.second);
  section.set("acc_error", std::move(curves));
  k = 0;
  for (Json& figure : section.find("acc_error_figures")->items())
    for (Json& key : figure.find("curves")->items()) key = Json::string(positional.at(k++));
}

bool run_acc_error(const Context& c, const Request& r, const Quantized& q, JsonWriter& w, const EventFn& fn,
                   Sweep& sweep) {
  analysis::AccErrorOptions o = acc_error_options(r);
  o.config = q;
  w.key("options").begin_object().key("acc_error");
  schema::write_acc_error_options(w, o);
  w.end_object();
  const std::vector<std::string> keys = acc_error_curve_keys(analysis::acc_error_outline(c.executor, c.relations, o));
  sweep = make_sweep(r, keys);
  analysis::AccErrorOptions run = o;
  run.curves = sweep.indices;
  const Events events(fn, "acc_error", "acc_error");
  // Each event's row is the curve object of the section ({"label", "x", "y"}), written by the schema.
  if (events.enabled())
    run.on_curve = [&](const analysis::AccErrorCurve& curve, size_t done, size_t total) {
      analysis::AccErrorResult one;
      one.figures.push_back({"", o.metric, o.average_mode, {curve}});
      const Json row = acc_error_section(one).find("acc_error")->members().at(0).second;
      events.emit(keys.at(curve.position), static_cast<int64_t>(curve.position), [&](JsonWriter& rw) { row.write(rw); },
                  done, total);
      return true;
    };
  const analysis::AccErrorResult result = analysis::plot_acc_error(c.executor, c.relations, require_data(c), run);
  Json section = acc_error_section(result);
  rekey_acc_error(section, result, keys);
  for (const auto& m : section.members()) {
    w.key(m.first);
    m.second.write(w);
  }
  return result.cancelled;
}

bool run_stat_info(const Context& c, const Request& r, JsonWriter& w, const EventFn& fn) {
  analysis::StatInfoOptions o = stat_info_options(r);
  w.key("options").begin_object().key("stat_info");
  schema::write_stat_info_options(w, o);
  w.end_object();
  const data::CalibrationData& data = require_data(c);
  const Events events(fn, "stat_info", "stat_info");
  // Progress runs over all samples of the feature pass (in file-name order).
  if (events.enabled())
    o.progress = [&](size_t done, size_t total) {
      events.emit(data.sample_names().at(done - 1), static_cast<int64_t>(done - 1), {}, done, total);
      return true;
    };
  const analysis::StatInfoResult result = analysis::get_calibration_nodes_stat_info(c.executor, c.relations, data, o);
  schema::write_stat_info_section(w, result);
  return result.cancelled;
}

bool run_sensitivity_analysis(const Context& c, const Request& r, const Quantized& q, JsonWriter& w,
                              const EventFn& fn) {
  analysis::SensitivityAnalysisOptions o = sensitivity_analysis_options(r);
  o.config = q;
  w.key("options").begin_object().key("sensitivity_analysis");
  schema::write_sensitivity_analysis_options(w, o);
  w.end_object();
  const Events events(fn, "sensitivity_analysis", "sensitivity_analysis");
  if (events.enabled()) o.progress = anonymous_progress(events);
  const analysis::SensitivityAnalysisResult result =
      analysis::sensitivity_analysis(c.executor, c.relations, require_data(c), o);
  schema::write_sensitivity_analysis_section(w, result);
  return result.cancelled;
}

// One event per sample (what_if) or per node (node_errors: item = the node, row = {own, accumulated}).
bool run_what_if(const Context& c, const Request& r, const Quantized& q, JsonWriter& w, const EventFn& fn) {
  analysis::WhatIfOptions o = what_if_options(r);
  o.config = q;
  w.key("options").begin_object().key("what_if");
  schema::write_what_if_options(w, o);
  w.end_object();
  const data::CalibrationData& data = require_data(c);
  const Events events(fn, "what_if", "what_if");
  const std::vector<size_t> chosen = data.select(o.data_num, o.selection);
  const std::vector<size_t> samples = o.held_out ? analysis::split_samples(chosen).tune : chosen;  // the ones reported on
  if (events.enabled())
    o.progress = [&](size_t done, size_t total) {
      events.emit(data.sample_names().at(samples.at(done - 1)), static_cast<int64_t>(done - 1), {}, done, total);
      return true;
    };
  const analysis::WhatIfResult result = analysis::what_if(c.executor, c.relations, data, o);
  schema::write_what_if_section(w, result);
  return result.cancelled;
}

bool run_node_errors(const Context& c, const Request& r, const Quantized& q, JsonWriter& w, const EventFn& fn) {
  analysis::NodeErrorsOptions o = node_errors_options(r);
  o.config = q;
  w.key("options").begin_object().key("node_errors");
  schema::write_node_errors_options(w, o);
  w.end_object();
  const Events events(fn, "node_errors", "node_errors");
  if (events.enabled())
    o.progress = [&](size_t done, size_t total) {
      events.emit(c.relations.normal_nodes().at(done - 1).first, static_cast<int64_t>(done - 1), {}, done, total);
      return true;
    };
  const analysis::NodeErrorsResult result = analysis::node_errors(c.executor, c.relations, require_data(c), o);
  schema::write_node_errors_section(w, result);
  return result.cancelled;
}

// The fix search from the request's configuration (else the model as stored): one event per ranking
// item (row null) and per evaluation; the found configuration is the result's top-level config.
// `cancel` is asked before every evaluation.
bool run_fix(const Context& c, const Request& r, const std::optional<quant::ResolvedConfig>& start, JsonWriter& w,
             const EventFn& fn, const CancelFn& cancel) {
  analysis::FixOptions o = fix_options(r);
  const std::string export_format = fix_export_format(r);
  if (!export_format.empty())
    o.threshold_allowed = [&c, export_format](size_t i) {
      return quant::carries_thresholds(export_format, c.executor.calibrations()[i]);
    };
  w.key("options").begin_object().key("fix");
  write_fix_options(w, o, export_format);
  w.end_object();
  const Events events(fn, "fix", "fix");
  if (events.enabled())
    o.progress = [&](const analysis::FixOptions::Event& e) {
      const auto row = [&](JsonWriter& rw) { write_fix_event_row(rw, e); };
      events.emit(e.node, -1, e.phase == "rank" ? std::function<void(JsonWriter&)>() : row, e.done, e.total);
      return true;
    };
  o.cancel = cancel;
  const exec::QuantConfig base = start ? start->config : c.executor.stored_config();
  const analysis::FixResult result = analysis::find_fix(c.executor, c.relations, require_data(c), base, o);
  write_fix_section(w, result);
  // A cancelled search found nothing to use: no configuration (its path so far stays in `fix`).
  w.key("config");
  if (result.cancelled) w.null();
  else quant::write_config_document(w, c.executor, fix_config(c.executor, c.relations, start, result, r.model_file, c.data->sample_count()));
  return result.cancelled;
}

// The cause hints: one event per measured cure (item null).
bool run_explain(const Context& c, const Request& r, const Quantized& q, JsonWriter& w, const EventFn& fn) {
  analysis::ExplainOptions o = explain_options(r);
  o.config = q;
  w.key("options").begin_object().key("hints");  // options.<section>, as every analysis
  schema::write_explain_options(w, o);
  w.end_object();
  const Events events(fn, "explain", "hints");
  if (events.enabled()) o.progress = anonymous_progress(events);
  const analysis::ExplainResult result = analysis::explain(c.executor, c.relations, require_data(c), o);
  schema::write_explain_section(w, result);
  return result.cancelled;
}

// The comparison of calibration methods: one event per setting measured; its best setting is the
// result's top-level config (from the request's configuration, with the model-wide calibration).
bool run_calibration_methods(const Context& c, const Request& r, const std::optional<quant::ResolvedConfig>& start,
                             JsonWriter& w, const EventFn& fn) {
  analysis::CalibrationMethodsOptions o = calibration_methods_options(r);
  if (start) o.config = start->config;
  w.key("options").begin_object().key("calibration_methods");
  schema::write_calibration_methods_options(w, o);
  w.end_object();
  const Events events(fn, "calibration_methods", "calibration_methods");
  if (events.enabled()) o.progress = anonymous_progress(events);
  const analysis::CalibrationMethodsResult result =
      analysis::compare_calibration_methods(c.executor, c.relations, require_data(c), o);
  schema::write_calibration_methods_section(w, result);
  w.key("config");
  if (result.cancelled || result.best < 0) {
    w.null();
    return result.cancelled;
  }
  quant::ResolvedConfig out = start ? *start : quant::resolved_from(c.executor, c.executor.stored_config(), "stored");
  if (out.model.empty()) out.model = r.model_file;
  const analysis::CalibrationSetting& best = result.settings[static_cast<size_t>(result.best)];
  out.model_wide.assign(c.executor.calibrations().size(), 0);
  if (!best.stored) {
    out.calibration = best.method;
    out.config.thresholds.resize(c.executor.calibrations().size());
    for (size_t i = 0; i < result.best_targets.size(); ++i)
      if (result.best_targets[i]) {
        out.config.thresholds[i] = result.best_thresholds[i];
        out.model_wide[i] = 1;
      }
  }
  const size_t m = static_cast<size_t>(std::find(analysis::all_metrics().begin(), analysis::all_metrics().end(),
                                                 analysis::parse_metric(o.metric)) - analysis::all_metrics().begin());
  JsonWriter p;
  p.begin_object().field("tool", std::string(kToolName) + " " + kToolVersion).field("analysis", "calibration_methods");
  p.field("setting", best.label).field("metric", o.metric).key("reached").value_float32(best.tune[m]).end_object();
  out.provenance = Json::parse(p.str(), "provenance");
  quant::write_config_document(w, c.executor, out);
  return false;
}

void write_sweep(JsonWriter& w, const Request& r, const Sweep& s) {
  const std::string name = analysis_name(r.analysis);
  w.key("sweep").begin_object().field("analysis", name).field("section", name).field("key", s.key);
  w.field("total", s.total).key("items").string_array(s.names).key("indices").begin_array();
  for (size_t i : s.indices) w.value(i);
  w.end_array().end_object();
}

// A kernel's error during an analysis ("node '<name>' (<op>): ..." raised by the data, e.g. an
// out-of-range Gather index) also names the calibration sample: each sample is re-run alone (float,
// then as stored) until one raises the same message. Other errors are returned as they are.
[[noreturn]] void rethrow_naming_sample(const Context& c, const Error& e) {
  const std::string message = e.what();
  if (c.data != nullptr && message.rfind("node '", 0) == 0) {
    for (size_t k = 0; k < c.data->sample_count(); ++k)
      for (const exec::QuantConfig& config : {c.executor.uniform_config(false), c.executor.stored_config()}) {
        try {
          c.executor.run(c.data->sample(k), config);
        } catch (const Error& again) {
          if (message == again.what()) throw Error(message + " (calibration sample " + c.data->sample_files(k) + ")");
        }
      }
  }
  throw e;
}

// Thresholds chosen by a method observe the tuning half of the request's samples (§13.4); none
// without calibration data.
quant::ThresholdResolver threshold_resolver(const Context& c, const Request& r) {
  if (!c.data) return {};
  return analysis::threshold_resolver(c.executor, *c.data, analysis::split_samples(chosen_samples(r, *c.data)).tune);
}

// Why `spec` cannot run on a model with unsupported ops, and what still works without running it.
std::string cannot_run_message(const exec::Executor& ex, const AnalysisSpec& spec) {
  std::string still;
  for (const auto& a : analyses())
    if (a.needs_execution != "always") still += (still.empty() ? "" : ", ") + a.name;
  return "cannot run " + spec.name + ": " + ex.unsupported_message() + ". Without running the model, " + still +
         " work on weight calibration nodes";
}

}  // namespace

// What computed the document (docs/result-schema.md): the engine, and its GEMM's instruction set
// (ops/gemm_kernel.h; the wasm engine's is WebAssembly SIMD128). Their float results agree within
// float error, not bit for bit.
void write_engine(io::JsonWriter& w) {
#ifdef __EMSCRIPTEN__
  w.key("engine").begin_object().field("name", std::string("wasm")).field("simd", std::string("simd128")).end_object();
#else
  w.key("engine").begin_object().field("name", std::string("native"));
  w.field("simd", std::string(ops::gemm_isa_name(ops::gemm_isa()))).end_object();
#endif
}

std::string analyze(const Context& c, const std::string& request_json, const EventFn& on_event, const CancelFn& cancel) {
  const Request r = parse_request(request_json);
  const auto start = std::chrono::steady_clock::now();
  JsonWriter w;
  w.begin_object();
  schema::write_header(w, c.executor, r.model_file);
  // How many samples the calibration data holds, beside which ones each section used: every face says
  // "used K of N".
  if (c.data) w.field("calibration_samples", c.data->sample_count());
  // Relations (§1.9) other than the default rules are part of what the result means (its node items,
  // calibration sets and compared tensors); the default's documents are what they always were.
  if (c.relations.rules() != quant::relation_rules().front().rules)
    w.field("relations", quant::relation_rules_info(c.relations.rules()).name);
  // A configuration is resolved against the model before anything runs (names checked), and the result
  // records it in full; without one the document is what it always was.
  // fix writes the configuration it found there instead (and starts from this one).
  const AnalysisSpec& spec = analysis_spec(r.analysis);
  if (!c.executor.runnable() && spec.needs_execution == "always") fail(cannot_run_message(c.executor, spec));
  Quantized q;
  std::optional<quant::ResolvedConfig> resolved;
  if (r.config) {
    resolved = quant::apply_config(c.executor, c.relations, *r.config, "config", threshold_resolver(c, r));
    if (resolved->model.empty()) resolved->model = r.model_file;
    if (r.analysis != Analysis::Fix && r.analysis != Analysis::CalibrationMethods) {
      w.key("config");
      quant::write_config_document(w, c.executor, *resolved);
    }
    q = resolved->config;
  }
  Sweep sweep;
  bool cancelled = false;
  try {
    switch (r.analysis) {
      case Analysis::Sensitivity:
      case Analysis::LeaveOneOut: cancelled = run_sensitivity(c, r, q, w, on_event, sweep); break;
      case Analysis::Distribution: cancelled = run_distribution(c, r, q, w, on_event, sweep); break;
      case Analysis::Channelwise: cancelled = run_channelwise(c, r, q, w, on_event, sweep); break;
      case Analysis::AccError: cancelled = run_acc_error(c, r, q, w, on_event, sweep); break;
      case Analysis::StatInfo: cancelled = run_stat_info(c, r, w, on_event); break;
      case Analysis::SensitivityAnalysis: cancelled = run_sensitivity_analysis(c, r, q, w, on_event); break;
      case Analysis::WhatIf: cancelled = run_what_if(c, r, q, w, on_event); break;
      case Analysis::NodeErrors: cancelled = run_node_errors(c, r, q, w, on_event); break;
      case Analysis::Fix: cancelled = run_fix(c, r, resolved, w, on_event, cancel); break;
      case Analysis::Explain: cancelled = run_explain(c, r, q, w, on_event); break;
      case Analysis::CalibrationMethods: cancelled = run_calibration_methods(c, r, resolved, w, on_event); break;
    }
  } catch (const FormatError&) {
    throw;
  } catch (const Error& e) {
    // An analysis that runs the model only for activations reached one on a model that cannot run.
    if (!c.executor.runnable() && std::string(e.what()).rfind("cannot run: ", 0) == 0)
      fail(cannot_run_message(c.executor, spec));
    rethrow_naming_sample(c, e);
  }
  if (is_splittable(r.analysis)) write_sweep(w, r, sweep);
  const double elapsed = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  w.field("cancelled", cancelled);
  write_engine(w);
  w.key("timings_ms").begin_object().field(spec.section, elapsed).end_object();
  w.end_object();
  return w.str();
}

std::string resolve_config(const Context& c, const std::string& config_json) {
  return quant::config_document_json(c.executor, apply_config_document(c, config_json));
}

exec::QuantConfig quant_config_of(const Context& c, const std::string& config_json) {
  return apply_config_document(c, config_json).config;
}

quant::ResolvedConfig apply_config_document(const Context& c, const std::string& config_json) {
  const quant::ConfigDocument doc = quant::parse_config_document_text(config_json, "config");
  quant::ThresholdResolver resolver;
  if (c.data) resolver = analysis::threshold_resolver(c.executor, *c.data, analysis::split_samples(c.data->select(0)).tune);
  return quant::apply_config(c.executor, c.relations, doc, "config", resolver);
}

std::string list_items(const Context& c, const std::string& request_json) {
  const Request r = parse_request(request_json);
  JsonWriter w;
  w.string_array(sweep_items(c, r));
  return w.str();
}

}  // namespace ptq::api
