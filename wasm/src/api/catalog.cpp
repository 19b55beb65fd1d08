#include "api/catalog.h"

#include "analysis/accumulated_error.h"
#include "analysis/calibration_methods.h"
#include "analysis/channelwise.h"
#include "analysis/distribution.h"
#include "analysis/explain.h"
#include "analysis/fix_search.h"
#include "analysis/metrics.h"
#include "analysis/node_errors.h"
#include "analysis/sensitivity.h"
#include "analysis/sensitivity_analysis.h"
#include "analysis/stat_info.h"
#include "analysis/what_if.h"
#include "calibrate/threshold_methods.h"
#include "config/config_export.h"
#include "core/error.h"
#include "exec/registry.h"
#include "ops/conv_winograd.h"
#include "quant/precision.h"
#include "quant/relations.h"
#include "schema/result_json.h"

namespace ptq::api {

using io::Json;
namespace {

namespace T = option_type;

Json strings_json(const std::vector<std::string>& v) {
  Json a = Json::array();
  for (const auto& s : v) a.push(Json::string(s));
  return a;
}

Json number(double d) {
  io::JsonWriter w;
  w.value(d);
  return Json::number_text(w.str());
}

Json integer(int64_t i) { return Json::number_text(std::to_string(i)); }

std::vector<std::string> metric_names() {
  std::vector<std::string> names;
  for (const auto& m : metric_specs()) names.push_back(m.name);
  return names;
}

std::vector<std::string> selections(bool with_all) {
  std::vector<std::string> out = {schema::selection_name(data::SampleSelection::Last),
                                  schema::selection_name(data::SampleSelection::First)};
  if (with_all) out.push_back(schema::selection_name(data::SampleSelection::All));
  return out;
}

OptionSpec sample_selection(data::SampleSelection fallback, bool with_all) {
  return {"sample_selection", T::kString, Json::string(schema::selection_name(fallback)), selections(with_all),
          with_all ? "which data_num samples in file-name order: the last (the original's rule), the first, or all"
                   : "which sample in file-name order: the last (the original's rule) or the first"};
}

OptionSpec data_num(size_t fallback) {
  OptionSpec o{"data_num", T::kInteger, integer(static_cast<int64_t>(fallback)), {},
               "number of samples (null or 0 = every sample)"};
  o.null_is_all = true;
  o.interactive_default = integer(0);
  o.min = integer(0);
  return o;
}

OptionSpec bins(int fallback) {
  OptionSpec o{"bins", T::kInteger, integer(fallback), {}, "histogram bins"};
  o.min = integer(1);
  o.max = integer(1 << 20);  // a typo cannot ask for gigabytes of counts
  return o;
}

// The samples of a search: at most data_num, split into tuning and held-out samples.
OptionSpec searched_samples(size_t fallback) {
  OptionSpec o = data_num(fallback);
  o.doc = "at most this many samples (null or 0 = every sample): the odd ones in order are tuned on, the even ones held "
          "out and reported";
  return o;
}

std::vector<std::string> export_names() {
  std::vector<std::string> out;
  for (const auto& f : quant::export_formats()) out.push_back(f.name);
  return out;
}

OptionSpec min_recovery(double fallback) {
  OptionSpec o{"min_recovery", T::kNumber, number(fallback), {},
               "keep a hint when its cure recovers at least this share of the output loss (0 = every hint)"};
  return o;
}

OptionSpec inherited_top(size_t fallback) {
  OptionSpec o{"inherited_top", T::kInteger, integer(static_cast<int64_t>(fallback)), {},
               "inherited hints: among this many nodes with the largest accumulated loss (0 = none)"};
  o.min = integer(0);
  return o;
}

const char* kSensitivitySort =
    "by the first metric, most sensitive first: ascending where higher is better, descending where lower is better; "
    "ties keep the sweep order; NaN and missing values last";

std::vector<OptionSpec> sweep_options() {
  const analysis::SensitivityOptions s;
  return {
      {"node_type", T::kString, Json::string(s.node_type), analysis::node_types(),
       "the items measured: normal nodes, weight or activation calibration nodes, or tae activations"},
      {"metrics", T::kStrings, strings_json(s.metrics), metric_names(), "metric or list of metrics; the first ranks the rows"},
      {"output_node", T::kStrings, Json::null(), {}, "compare the outputs of these nodes instead of the model outputs"},
      data_num(s.data_num),
      sample_selection(s.selection, true),
      {"interested_nodes", T::kNodes, Json::null(), {},
       "only these items: names, or lists of names switched together (key \"A+B\")"},
  };
}

std::vector<AnalysisSpec> build() {
  const analysis::AccErrorOptions acc;
  const analysis::DistributionOptions dist;
  const analysis::ChannelwiseOptions cw;
  const analysis::SensitivityAnalysisOptions sa;
  const analysis::WhatIfOptions wi;
  const analysis::NodeErrorsOptions ne;
  const analysis::FixOptions fix;
  const analysis::ExplainOptions ex;
  const analysis::CalibrationMethodsOptions cm;
  Json percentiles = Json::array();
  for (double p : cm.percentiles) percentiles.push(number(p));
  std::vector<std::string> toolchains = {"any"};
  for (const auto& t : analysis::calibration_toolchains()) toolchains.push_back(t);
  OptionSpec max_nodes{"max_nodes", T::kInteger, Json::null(), {}, "raise at most this many nodes (null = no limit)"};
  max_nodes.min = integer(1);
  OptionSpec axis{"axis", T::kInteger, Json::null(), {}, "channel axis (null = the node's axis for weights, 1 for activations)"};
  axis.min = integer(-64);
  OptionSpec outlier_cap{"outlier_cap", T::kInteger, integer(static_cast<int64_t>(cw.outlier_cap)), {},
                         "outliers kept per channel (an evenly spaced sample, both extremes included)"};
  outlier_cap.min = integer(2);
  OptionSpec channels{"channels", T::kIntegers, Json::null(), {},
                      "0-based channels whose full histogram each item also carries"};
  channels.min = integer(0);
  OptionSpec nodes_required{"nodes_list", T::kStrings, Json::null(), {}, "node names (or calibration node names)"};
  nodes_required.required = true;
  OptionSpec cali_required = nodes_required;
  cali_required.doc = "calibration node names";
  return {
      {Analysis::Sensitivity, "sensitivity", "sensitivity", true, true, "node_type", kSensitivitySort, sweep_options()},
      {Analysis::LeaveOneOut, "leave_one_out", "leave_one_out", true, true, "node_type", kSensitivitySort, sweep_options()},
      {Analysis::AccError, "acc_error", "acc_error", true, true, "", "",
       {{"quantize_node", T::kNodes, Json::null(), {}, "nodes quantized alone: names, lists of names, or weight / activation"},
        {"non_quantize_node", T::kNodes, Json::null(), {}, "nodes left unquantized: names or lists of names"},
        {"metric", T::kString, Json::string(acc.metric), metric_names(), "metric of the curves"},
        {"average_mode", T::kBoolean, Json::boolean(acc.average_mode), {}, "running mean of the curves"},
        sample_selection(acc.selection, false)}},
      {Analysis::Distribution, "distribution", "distribution", true, false, "", "",
       {nodes_required, bins(dist.bins), sample_selection(dist.selection, false)}, "activations"},
      {Analysis::Channelwise, "channelwise", "channelwise", true, false, "", "",
       {cali_required, axis, outlier_cap, sample_selection(cw.selection, false), channels, bins(cw.bins)}},
      {Analysis::StatInfo, "stat_info", "stat_info", false, false, "", "",
       {{"nodes_list", T::kStrings, Json::null(), {}, "calibration node names (null = every calibration node)"}}, "activations"},
      {Analysis::SensitivityAnalysis, "sensitivity_analysis", "sensitivity_analysis", false, false, "", "",
       {{"pick_threshold", T::kNumber, number(sa.pick_threshold), {}, "ranked nodes with cosine-similarity <= this are sensitive"},
        data_num(sa.data_num),
        sample_selection(sa.selection, true),
        {"sensitive_nodes", T::kStrings, Json::null(), {}, "the sensitive nodes (empty = ranked by node sensitivity and picked)"},
        {"qtype", T::kString, Json::string(sa.qtype), {}, "what the sensitive nodes become: float32 (not quantized) or e.g. int16"},
        {"override_scales", T::kString, Json::string(sa.stored_scales ? "stored" : "derived"), {"stored", "derived"},
         "the scales of a re-quantized node with constant = 2: stored (the original's: its step, a wider clamp) or "
         "derived for the new type (as the toolchain re-calibrates, and as what-if and fix do)"}}},
      {Analysis::WhatIf, "what_if", "what_if", false, false, "", "",
       {data_num(wi.data_num), sample_selection(wi.selection, true),
        {"metric", T::kString, Json::string(wi.metric), metric_names(), "metric of the per-node error layer (the outputs get all five)"},
        {"held_out", T::kBoolean, Json::boolean(wi.held_out), {},
         "split the samples: the numbers on the tuning ones (1st, 3rd, ...), the others' output metrics beside"}}},
      {Analysis::NodeErrors, "node_errors", "node_errors", false, false, "", "",
       {data_num(ne.data_num), sample_selection(ne.selection, true),
        {"metric", T::kString, Json::string(ne.metric), metric_names(), "metric of the own and accumulated errors"},
        {"measure", T::kString, Json::string(ne.converter ? "converter" : "output"), {"output", "converter"},
         "output: at the node's first output, per sample and averaged; converter: as the Horizon converter log "
         "measures its cosine, at the output of the calibration node that directly follows the node (if any), "
         "the samples flattened together"}}},
      {Analysis::Fix, "fix", "fix", false, false, "", "",
       {{"target", T::kString, Json::string(fix.target.text()), {},
         "what the model outputs must reach, <metric><op><bound> (mean over the outputs and the chosen samples)"},
        {"prefer", T::kStrings, strings_json(fix.prefer), {},
         "the allowed actions from the least to the most costly: threshold (re-calibrated, free at run time), qtypes such "
         "as int16, then float"},
        max_nodes,
        {"candidates", T::kStrings, Json::string(fix.candidates), {},
         "the order nodes are tried in: sensitivity, leave_one_out (the gain of restoring each node), own_error (each "
         "node's own error) or a list of node names"},
        searched_samples(fix.data_num),
        sample_selection(fix.selection, true),
        {"export", T::kString, Json::null(), export_names(),
         "the export the fix is for: threshold is tried only on nodes whose thresholds it can carry (null = any)"}}},
      {Analysis::Explain, "explain", "hints", false, false, "", "by the share of the output loss the hint's cure recovers, largest first",
       {searched_samples(ex.data_num), sample_selection(ex.selection, true),
        {"metric", T::kString, Json::string(ex.metric), metric_names(), "metric of the cures' effects and of the node errors"},
        min_recovery(ex.min_recovery), inherited_top(ex.inherited_top)}},
      {Analysis::CalibrationMethods, "calibration_methods", "calibration_methods", false, false, "",
       "the settings in the order compared (as calibrated, then each method per tensor, then per channel)",
       {searched_samples(cm.data_num), sample_selection(cm.selection, true),
        {"metric", T::kString, Json::string(cm.metric), metric_names(), "metric that ranks the settings (tuning samples)"},
        {"percentiles", T::kNumbers, percentiles, {}, "the percentiles of |x| compared (in percent)"},
        {"per_channel", T::kBoolean, Json::boolean(cm.per_channel), {}, "also compare every method per channel"},
        {"toolchain", T::kString, Json::string(cm.toolchain), toolchains,
         "the best setting among those this toolchain can express (any: among all)"}}},
  };
}

void write_option(io::JsonWriter& w, const OptionSpec& o) {
  w.begin_object().field("name", o.name).field("type", o.type).key("default");
  o.default_value.write(w);
  w.key("interactive_default");
  o.interactive_default.write(w);
  w.key("choices").string_array(o.choices).field("required", o.required).field("null_is_all", o.null_is_all);
  w.key("min");
  o.min.write(w);
  w.key("max");
  o.max.write(w);
  w.field("doc", o.doc).end_object();
}

void write_analysis(io::JsonWriter& w, const AnalysisSpec& a) {
  w.begin_object().field("name", a.name).field("section", a.section).field("splittable", a.splittable);
  w.field("streams_items", a.streams_items).key("keyed_by");
  if (a.keyed_by.empty()) w.null();
  else w.value(a.keyed_by);
  w.key("sort");
  if (a.sort.empty()) w.null();
  else w.value(a.sort);
  w.field("needs_execution", a.needs_execution).key("options").begin_array();
  for (const auto& o : a.options) write_option(w, o);
  w.end_array().end_object();
}

// The facts of the cause hints a face needs to show them (docs/behaviour.md §13): the cause
// vocabulary, the rules' cut-offs, the threshold methods and the sample split.
void write_hint_facts(io::JsonWriter& w) {
  w.key("causes").begin_array();
  for (const auto& c : analysis::causes())
    w.begin_object().field("name", c.name).field("doc", c.doc).field("rule", c.rule).field("cure", c.cure).end_object();
  const analysis::ExplainRules& r = analysis::explain_rules();
  w.end_array().key("hint_rules").begin_object();
  w.key("clipped").value(r.clipped).key("occupied").value(r.occupied).key("channel_spread").value(r.channel_spread);
  w.key("branch_ratio").value(r.branch_ratio).key("negative").value(r.negative).key("inherited").value(r.inherited);
  w.end_object().key("threshold_methods").begin_array();
  for (const auto& m : quant::threshold_methods()) w.begin_object().field("name", m.name).field("doc", m.doc).end_object();
  // The hints as a heat layer: per node the largest share of the output loss one of its cures recovers.
  w.end_array().key("hint_layer").begin_object().field("name", "recovered").field("better", "lower");
  w.field("doc", "per node, the largest share of the output loss one cure of its quantizers recovers: the larger, the "
                 "more of the loss comes from there");
  w.end_object().key("sample_split").begin_object().field("rule", "alternate");
  w.field("doc", "of the chosen samples in file-name order, the 1st, 3rd, 5th, ... are tuned on and the 2nd, 4th, ... are "
                 "held out and only reported on; a single sample is tuned on and nothing is held out");
  w.end_object();
}

}  // namespace

const OptionSpec* AnalysisSpec::option(const std::string& option_name) const {
  for (const auto& o : options)
    if (o.name == option_name) return &o;
  return nullptr;
}

const std::vector<AnalysisSpec>& analyses() {
  static const std::vector<AnalysisSpec> table = build();
  return table;
}

const AnalysisSpec& analysis_spec(Analysis a) {
  for (const auto& e : analyses())
    if (e.id == a) return e;
  fail("unknown analysis");
}

const AnalysisSpec* find_analysis(const std::string& name) {
  for (const auto& e : analyses())
    if (e.name == name) return &e;
  return nullptr;
}

std::vector<MetricSpec> metric_specs() {
  std::vector<MetricSpec> out;
  for (analysis::Metric m : analysis::all_metrics()) out.push_back({analysis::metric_name(m), analysis::higher_is_better(m)});
  return out;
}

std::string describe_json() {
  io::JsonWriter w;
  w.begin_object().field("schema", "ptqscope.describe").field("version", 1);
  w.key("tool").begin_object().field("name", kToolName).field("version", kToolVersion).end_object();
  w.key("metrics").begin_array();
  for (const auto& m : metric_specs())
    w.begin_object().field("name", m.name).field("better", m.higher_is_better ? "higher" : "lower").end_object();
  w.end_array();
  w.key("node_types").string_array(analysis::node_types());
  w.key("analyses").begin_array();
  for (const auto& a : analyses()) write_analysis(w, a);
  w.end_array().key("convolution_modes").begin_array();
  for (const ops::ConvolutionModeInfo& m : ops::convolution_modes())
    w.begin_object().field("name", m.name).field("doc", m.doc).end_object();
  // How calibration nodes relate to the nodes reading them (§1.9): each toolchain version's rules, the
  // default first (Session.setRelations, the CLI's --relations, the page's and the plugin's setting).
  w.end_array().key("relation_rules").begin_array();
  for (const quant::RelationRulesInfo& r : quant::relation_rules()) {
    w.begin_object().field("name", r.name).field("doc", r.doc).key("skippable").string_array(r.skippable);
    w.end_object();
  }
  w.end_array().key("export_formats").begin_array();
  for (const auto& f : quant::export_formats()) {
    w.begin_object().field("name", f.name).field("suffix", f.suffix).field("media_type", f.media_type);
    // Whether the format can carry new thresholds at all (a fix for it tries `threshold` first).
    w.field("binary", f.binary).field("label", f.label).field("thresholds", quant::exports_thresholds_at_all(f.name));
    w.end_object();
  }
  // The ops the core knows (exec/registry.h): what the viewers show of each (category, input names).
  w.end_array().key("ops").begin_array();
  for (const exec::OpDef* op : exec::OpRegistry::global().entries()) {
    w.begin_object().field("domain", op->domain).field("op_type", op->op_type).field("since", op->since);
    w.key("until");
    if (op->until == exec::kLatestOpset) w.null();
    else w.value(op->until);
    w.field("executed", op->kernel != nullptr).field("category", op->category).key("inputs").begin_array();
    for (const exec::OpInput& in : op->inputs) {
      w.begin_object().field("name", in.name).field("optional", in.optional).field("variadic", in.variadic);
      w.end_object();
    }
    w.end_array().end_object();
  }
  // The qtypes the faces offer as what-if actions (a configuration takes any int2..int32 / uint2..uint32).
  w.end_array().key("qtypes").begin_array();
  for (const quant::ActionQType& q : quant::action_qtypes()) {
    w.begin_object().field("name", q.name).field("bits", q.bits).field("unsigned", q.is_unsigned).field("doc", q.doc);
    w.end_object();
  }
  w.end_array();
  write_hint_facts(w);
  w.end_object();
  return w.str();
}

}  // namespace ptq::api
