#include "api/request.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

#include "config/config_export.h"
#include "core/error.h"
#include "schema/result_json.h"

namespace ptq::api {

using io::Json;
using io::kind_name;
namespace {

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + v[i];
  return out;
}

// "'a', 'b' or 'c'" for messages.
std::string choice_list(const std::vector<std::string>& choices) {
  std::string out;
  for (size_t i = 0; i < choices.size(); ++i)
    out += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + ("'" + choices[i] + "'");
  return out;
}

// Typed access to request.options, with the catalog's defaults for absent options; every error
// names the option ("options.metrics ...").
class Options {
 public:
  explicit Options(const Request& r) : options_(r.options), spec_(analysis_spec(r.analysis)) {
    std::vector<std::string> known;
    for (const auto& o : spec_.options) known.push_back(o.name);
    for (const auto& [key, value] : options_.members())
      check(spec_.option(key) != nullptr,
            "options." + key + ": unknown option of analysis '" + spec_.name + "' (known: " + joined(known) + ")");
  }

  // The request's value, else the catalog's default; nullptr when neither gives one (and for an
  // explicit null of a null_is_all option such as data_num: every sample).
  const Json* get(const std::string& name) const {
    const OptionSpec& spec = option(name);
    const Json* v = options_.find(name);
    if (v && !v->is_null()) return v;
    if (v && spec.null_is_all) return nullptr;
    return spec.default_value.is_null() ? nullptr : &spec.default_value;
  }

  // Whether the request itself gives a (non-null) value.
  bool given(const std::string& name) const {
    option(name);
    const Json* v = options_.find(name);
    return v && !v->is_null();
  }

  std::string string(const std::string& name) const {
    const Json* v = get(name);
    if (!v) return "";
    check(v->is_string(), "options." + name + " must be a string, got " + kind_name(*v));
    return v->as_string();
  }

  // A string or a list of strings (no value: empty).
  std::vector<std::string> names(const std::string& name) const {
    const Json* v = get(name);
    if (!v) return {};
    if (v->is_string()) return {v->as_string()};
    check(v->is_array(), "options." + name + " must be a string or a list of strings, got " + kind_name(*v));
    return strings(*v, "options." + name);
  }

  bool flag(const std::string& name) const {
    const Json* v = get(name);
    if (!v) return false;
    check(v->is_bool(), "options." + name + " must be true or false, got " + kind_name(*v));
    return v->as_bool();
  }

  double number(const std::string& name) const {
    const Json* v = get(name);
    check(v != nullptr, "options." + name + " is missing");
    check(v->is_number(), "options." + name + " must be a number, got " + kind_name(*v));
    return v->as_number();
  }

  // A number or a list of numbers (no value: empty).
  std::vector<double> numbers(const std::string& name) const {
    const Json* v = get(name);
    if (!v) return {};
    const std::string field = "options." + name;
    if (v->is_number()) return {v->as_number()};
    check(v->is_array(), field + " must be a number or a list of numbers, got " + kind_name(*v));
    std::vector<double> out;
    for (size_t i = 0; i < v->items().size(); ++i) {
      const Json& e = v->items()[i];
      check(e.is_number(), field + "[" + std::to_string(i) + "] must be a number, got " + kind_name(e));
      out.push_back(e.as_number());
    }
    return out;
  }

  // Within the option's bounds of the catalog; nullopt when there is no value.
  std::optional<int64_t> integer(const std::string& name) const {
    const Json* v = get(name);
    if (!v) return std::nullopt;
    return integer_value(*v, name, "options." + name);
  }

  // An integer or a list of integers (no value: empty).
  std::vector<int64_t> integers(const std::string& name) const {
    const Json* v = get(name);
    if (!v) return {};
    const std::string field = "options." + name;
    if (!v->is_array()) return {integer_value(*v, name, field)};
    std::vector<int64_t> out;
    for (size_t i = 0; i < v->items().size(); ++i)
      out.push_back(integer_value(v->items()[i], name, field + "[" + std::to_string(i) + "]"));
    return out;
  }

  // A string among the option's choices (describe()).
  std::string choice(const std::string& name) const {
    const std::string s = string(name);
    const std::vector<std::string>& choices = option(name).choices;
    check(std::find(choices.begin(), choices.end(), s) != choices.end(),
          "options." + name + " must be " + choice_list(choices) + ", got '" + s + "'");
    return s;
  }

  // sample_selection, one of the option's choices.
  data::SampleSelection selection() const {
    const std::string s = string("sample_selection");
    const OptionSpec& spec = option("sample_selection");
    if (std::find(spec.choices.begin(), spec.choices.end(), s) != spec.choices.end())
      for (auto mode : {data::SampleSelection::Last, data::SampleSelection::First, data::SampleSelection::All})
        if (schema::selection_name(mode) == s) return mode;
    fail("options.sample_selection must be " + choice_list(spec.choices) + ", got '" + s + "'");
  }

  // None | name | [name | [names]] as the Python API takes quantize_node / interested_nodes.
  analysis::NodeArgument node_argument(const std::string& name) const {
    const Json* v = get(name);
    if (!v) return analysis::NodeArgument::none();
    if (v->is_string()) return analysis::NodeArgument::name(v->as_string());
    check(v->is_array(), "options." + name + " must be null, a name or a list of names / lists of names, got " + kind_name(*v));
    analysis::NodeArgument a;
    a.is_none = false;
    a.is_list = true;
    for (size_t i = 0; i < v->items().size(); ++i) {
      const Json& e = v->items()[i];
      const std::string field = "options." + name + "[" + std::to_string(i) + "]";
      if (e.is_string()) a.elements.push_back({{e.as_string()}, false});
      else if (e.is_array()) a.elements.push_back({strings(e, field), true});
      else fail(field + " must be a name or a list of names, got " + kind_name(e));
    }
    return a;
  }

 private:
  const OptionSpec& option(const std::string& name) const {
    const OptionSpec* o = spec_.option(name);
    check(o != nullptr, "internal: option '" + name + "' of analysis '" + spec_.name + "' is not in the catalog");
    return *o;
  }

  int64_t integer_value(const Json& v, const std::string& name, const std::string& field) const {
    const OptionSpec& spec = option(name);
    const int64_t min = spec.min.is_null() ? -static_cast<int64_t>(9.0e15) : static_cast<int64_t>(spec.min.as_number());
    const double d = v.is_number() ? v.as_number() : std::nan("");
    check(v.is_number() && std::floor(d) == d && d >= static_cast<double>(min) && d < 9.0e15,
          field + " must be an integer >= " + std::to_string(min) + ", got " + (v.is_number() ? v.as_string() : kind_name(v)));
    const int64_t n = static_cast<int64_t>(d);
    if (!spec.max.is_null()) {
      const int64_t max = static_cast<int64_t>(spec.max.as_number());
      check(n <= max, field + " must be at most " + std::to_string(max) + ", got " + std::to_string(n));
    }
    return n;
  }

  static std::vector<std::string> strings(const Json& array, const std::string& field) {
    std::vector<std::string> out;
    for (size_t i = 0; i < array.items().size(); ++i) {
      const Json& e = array.items()[i];
      check(e.is_string(), field + "[" + std::to_string(i) + "] must be a string, got " + kind_name(e));
      out.push_back(e.as_string());
    }
    return out;
  }

  const Json& options_;
  const AnalysisSpec& spec_;
};

ItemsSpec parse_items(const Json& v) {
  ItemsSpec spec;
  if (v.is_null()) return spec;
  if (v.is_array()) {
    spec.kind = ItemsSpec::Kind::Names;
    for (size_t i = 0; i < v.items().size(); ++i) {
      const Json& e = v.items()[i];
      check(e.is_string(), "items[" + std::to_string(i) + "] must be an item name (string), got " + kind_name(e));
      spec.names.push_back(e.as_string());
    }
    return spec;
  }
  check(v.is_object(), "items must be {\"begin\": b, \"end\": e} or a list of item names, got " + kind_name(v));
  spec.kind = ItemsSpec::Kind::Range;
  for (const auto& [key, value] : v.members())
    check(key == "begin" || key == "end", "items." + key + ": unknown field (expected begin and end)");
  auto bound = [&](const char* key) -> size_t {
    const Json* b = v.find(key);
    check(b != nullptr, std::string("items.") + key + " is missing");
    const double d = b->is_number() ? b->as_number() : -1.0;
    check(b->is_number() && d >= 0 && std::floor(d) == d && d < 9.0e15,
          std::string("items.") + key + " must be a non-negative integer");
    return static_cast<size_t>(d);
  };
  spec.begin = bound("begin");
  spec.end = bound("end");
  check(spec.begin <= spec.end, "items.begin (" + std::to_string(spec.begin) + ") is greater than items.end (" +
                                    std::to_string(spec.end) + ")");
  return spec;
}

}  // namespace

std::string analysis_name(Analysis a) { return analysis_spec(a).name; }

bool is_splittable(Analysis a) { return analysis_spec(a).splittable; }

Request parse_request(const std::string& text) {
  const Json doc = Json::parse(text, "request");
  check(doc.is_object(), "request must be a JSON object {\"analysis\", \"options\", \"items\"?}, got " + kind_name(doc));
  for (const auto& [key, value] : doc.members())
    check(key == "analysis" || key == "options" || key == "items" || key == "model_file" || key == "config",
          "request." + key + ": unknown field (expected analysis, options, items, model_file, config)");
  Request r;
  const Json* analysis = doc.find("analysis");
  check(analysis && analysis->is_string(), "request.analysis is missing (a string such as \"sensitivity\")");
  std::vector<std::string> names;
  for (const auto& e : analyses()) names.push_back(e.name);
  const AnalysisSpec* spec = find_analysis(analysis->as_string());
  check(spec != nullptr, "request.analysis: unknown analysis '" + analysis->as_string() + "' (known: " + joined(names) + ")");
  r.analysis = spec->id;
  if (const Json* options = doc.find("options"); options && !options->is_null()) {
    check(options->is_object(), "request.options must be an object, got " + kind_name(*options));
    r.options = *options;
  }
  if (const Json* items = doc.find("items")) {
    r.items = parse_items(*items);
    check(r.items.kind == ItemsSpec::Kind::All || is_splittable(r.analysis),
          "items: analysis '" + analysis_name(r.analysis) + "' is not split into items (run it whole)");
  }
  if (const Json* file = doc.find("model_file"); file && !file->is_null()) {
    check(file->is_string(), "request.model_file must be a string");
    r.model_file = file->as_string();
  }
  if (const Json* config = doc.find("config"); config && !config->is_null())
    r.config = quant::parse_config_document(*config, "config");
  Options o(r);  // rejects unknown options before anything runs
  return r;
}

analysis::SensitivityOptions sensitivity_options(const Request& r) {
  const Options o(r);
  analysis::SensitivityOptions s;
  s.node_type = o.string("node_type");
  s.metrics = o.names("metrics");
  s.output_nodes = o.names("output_node");
  s.data_num = static_cast<size_t>(o.integer("data_num").value_or(0));  // null or 0: all samples
  s.selection = o.selection();
  const analysis::NodeArgument interested = o.node_argument("interested_nodes");
  s.has_interested = !interested.is_none;
  for (const auto& e : interested.elements) s.interested.push_back(e.names);
  s.leave_one_out = r.analysis == Analysis::LeaveOneOut;
  return s;
}

analysis::AccErrorOptions acc_error_options(const Request& r) {
  const Options o(r);
  analysis::AccErrorOptions a;
  a.quantize_node = o.node_argument("quantize_node");
  a.non_quantize_node = o.node_argument("non_quantize_node");
  a.metric = o.string("metric");
  a.average_mode = o.flag("average_mode");
  a.selection = o.selection();
  return a;
}

analysis::DistributionOptions distribution_options(const Request& r) {
  const Options o(r);
  analysis::DistributionOptions d;
  d.nodes = o.names("nodes_list");
  check(!d.nodes.empty(), "options.nodes_list is missing: give the node names to plot");
  d.bins = static_cast<int>(*o.integer("bins"));
  d.selection = o.selection();
  return d;
}

analysis::ChannelwiseOptions channelwise_options(const Request& r) {
  const Options o(r);
  analysis::ChannelwiseOptions c;
  c.nodes = o.names("nodes_list");
  check(!c.nodes.empty(), "options.nodes_list is missing: give the calibration node names");
  const std::optional<int64_t> axis = o.integer("axis");
  c.has_axis = axis.has_value();
  if (axis) c.axis = *axis;
  c.outlier_cap = static_cast<size_t>(*o.integer("outlier_cap"));
  c.channels = o.integers("channels");
  c.bins = static_cast<int>(*o.integer("bins"));
  c.selection = o.selection();
  return c;
}

analysis::StatInfoOptions stat_info_options(const Request& r) {
  const Options o(r);
  analysis::StatInfoOptions s;
  s.has_nodes = o.given("nodes_list");
  s.nodes = o.names("nodes_list");
  return s;
}

analysis::SensitivityAnalysisOptions sensitivity_analysis_options(const Request& r) {
  const Options o(r);
  analysis::SensitivityAnalysisOptions s;
  s.pick_threshold = o.number("pick_threshold");
  s.data_num = static_cast<size_t>(o.integer("data_num").value_or(0));  // null or 0: all samples
  s.selection = o.selection();
  s.sensitive_nodes = o.names("sensitive_nodes");
  s.qtype = o.string("qtype");
  s.stored_scales = o.choice("override_scales") == "stored";
  return s;
}

namespace {

// data_num (null or 0 = all), sample_selection, metric (one of the metrics).
template <class T>
T sampled_metric_options(const Request& r) {
  const Options o(r);
  T t;
  t.data_num = static_cast<size_t>(o.integer("data_num").value_or(0));
  t.selection = o.selection();
  t.metric = o.string("metric");
  std::vector<std::string> known;
  for (const auto& m : metric_specs()) known.push_back(m.name);
  check(std::find(known.begin(), known.end(), t.metric) != known.end(),
        "options.metric: unknown metric '" + t.metric + "' (known: " + joined(known) + ")");
  return t;
}

}  // namespace

analysis::WhatIfOptions what_if_options(const Request& r) {
  auto w = sampled_metric_options<analysis::WhatIfOptions>(r);
  w.held_out = Options(r).flag("held_out");
  return w;
}

analysis::NodeErrorsOptions node_errors_options(const Request& r) {
  analysis::NodeErrorsOptions n = sampled_metric_options<analysis::NodeErrorsOptions>(r);
  n.converter = Options(r).choice("measure") == "converter";
  return n;
}

analysis::FixOptions fix_options(const Request& r) {
  const Options o(r);
  analysis::FixOptions f;
  try {
    f.target = analysis::parse_fix_target(o.string("target"));
  } catch (const Error& e) {
    fail(std::string("options.") + e.what());
  }
  f.prefer = o.names("prefer");
  analysis::check_prefer(f.prefer, "options.prefer");
  f.max_nodes = static_cast<size_t>(o.integer("max_nodes").value_or(0));
  const Json* candidates = o.get("candidates");
  if (candidates && candidates->is_array()) {
    f.candidates = "list";
    f.candidate_nodes = o.names("candidates");
  } else {
    f.candidates = o.string("candidates");
    check(f.candidates == "sensitivity" || f.candidates == "leave_one_out" || f.candidates == "own_error",
          "options.candidates must be 'sensitivity', 'leave_one_out', 'own_error' or a list of node names, got '" +
              f.candidates + "'");
  }
  f.data_num = static_cast<size_t>(o.integer("data_num").value_or(0));  // null or 0: all samples
  f.selection = o.selection();
  return f;
}

std::string fix_export_format(const Request& r) {
  const Options o(r);
  const std::string format = o.string("export");
  if (format.empty()) return format;
  const OptionSpec& spec = *analysis_spec(r.analysis).option("export");
  check(std::find(spec.choices.begin(), spec.choices.end(), format) != spec.choices.end(),
        "options.export: unknown format '" + format + "' (known: " + joined(spec.choices) + ")");
  const std::vector<std::string> prefer = o.names("prefer");
  check(std::find(prefer.begin(), prefer.end(), "threshold") == prefer.end() || quant::exports_thresholds_at_all(format),
        "options.prefer: 'threshold' cannot be exported as " + format +
            " (it has no per-node thresholds); export calibrated-onnx, qdq-onnx, ort-json, ort-python or rknn-cfg, or "
            "leave threshold out");
  return format;
}

analysis::ExplainOptions explain_options(const Request& r) {
  auto e = sampled_metric_options<analysis::ExplainOptions>(r);
  const Options o(r);
  e.min_recovery = o.number("min_recovery");
  check(std::isfinite(e.min_recovery) && e.min_recovery >= 0.0 && e.min_recovery <= 1.0,
        "options.min_recovery must be a share between 0 and 1, got " + std::to_string(e.min_recovery));
  e.inherited_top = static_cast<size_t>(*o.integer("inherited_top"));
  return e;
}

analysis::CalibrationMethodsOptions calibration_methods_options(const Request& r) {
  auto m = sampled_metric_options<analysis::CalibrationMethodsOptions>(r);
  const Options o(r);
  m.percentiles = o.numbers("percentiles");
  for (size_t i = 0; i < m.percentiles.size(); ++i)
    check(m.percentiles[i] > 0.0 && m.percentiles[i] <= 100.0,
          "options.percentiles[" + std::to_string(i) + "] must be a percentile in (0, 100], got " + std::to_string(m.percentiles[i]));
  m.per_channel = o.flag("per_channel");
  m.toolchain = o.string("toolchain");
  const OptionSpec& spec = *analysis_spec(r.analysis).option("toolchain");
  check(std::find(spec.choices.begin(), spec.choices.end(), m.toolchain) != spec.choices.end(),
        "options.toolchain must be " + choice_list(spec.choices) + ", got '" + m.toolchain + "'");
  return m;
}

std::vector<size_t> chosen_samples(const Request& r, const data::CalibrationData& data) {
  const AnalysisSpec& spec = analysis_spec(r.analysis);
  if (!spec.option("data_num")) return data.select(0, data::SampleSelection::All);
  const Options o(r);
  size_t n = static_cast<size_t>(o.integer("data_num").value_or(0));
  if (clamps_data_num(r.analysis)) n = std::min(n, data.sample_count());
  return data.select(n, o.selection());
}

bool clamps_data_num(Analysis a) { return a == Analysis::Fix || a == Analysis::Explain || a == Analysis::CalibrationMethods; }

std::vector<size_t> select_items(const ItemsSpec& items, const std::vector<std::string>& all) {
  std::vector<size_t> out;
  switch (items.kind) {
    case ItemsSpec::Kind::All:
      for (size_t i = 0; i < all.size(); ++i) out.push_back(i);
      return out;
    case ItemsSpec::Kind::Range:
      check(items.end <= all.size(), "items.end (" + std::to_string(items.end) + ") is beyond the sweep's " +
                                         std::to_string(all.size()) + " items");
      for (size_t i = items.begin; i < items.end; ++i) out.push_back(i);
      return out;
    case ItemsSpec::Kind::Names: {
      std::set<size_t> chosen;
      for (size_t k = 0; k < items.names.size(); ++k) {
        auto it = std::find(all.begin(), all.end(), items.names[k]);
        check(it != all.end(), "items[" + std::to_string(k) + "]: '" + items.names[k] + "' is not an item of this sweep");
        chosen.insert(static_cast<size_t>(it - all.begin()));
      }
      return {chosen.begin(), chosen.end()};
    }
  }
  return out;
}

}  // namespace ptq::api
