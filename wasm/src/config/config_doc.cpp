#include "config/config_doc.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "core/error.h"

namespace ptq::quant {
namespace {

using io::Json;

const char* const kTopFields[] = {"schema",      "version", "model",        "base",      "round",
                                  "calibration", "intents", "calibrations", "provenance"};

std::string quoted(const std::string& s) { return "'" + s + "'"; }

// Checks that `action` is "float" or a qtype name; returns it.
std::string checked_action(const Json& v, const std::string& field) {
  check(v.is_string(), field + " must be a string (\"float\", \"int8\", \"int16\", \"threshold\", ...), got " + io::kind_name(v));
  const std::string& a = v.as_string();
  if (a == "float" || a == "threshold") return a;
  try {
    QType::parse(a);
  } catch (const Error&) {
    fail(field + ": unknown action " + quoted(a) + " (expected \"float\", \"threshold\" or a qtype such as \"int8\", \"int16\")");
  }
  return a;
}

// A number or a non-empty list of numbers.
std::vector<float> checked_thresholds(const Json& v, const std::string& field) {
  std::vector<float> out;
  if (v.is_number()) return {static_cast<float>(v.as_number())};
  check(v.is_array() && !v.items().empty(), field + " must be a number or a non-empty list of numbers, got " + io::kind_name(v));
  for (size_t i = 0; i < v.items().size(); ++i) {
    const Json& e = v.items()[i];
    check(e.is_number(), field + "[" + std::to_string(i) + "] must be a number, got " + io::kind_name(e));
    out.push_back(static_cast<float>(e.as_number()));
  }
  return out;
}

// The fields of a threshold intent: method (+ percentile) and per_channel, or value.
void parse_threshold_intent(const Json& e, const std::string& field, ConfigIntent& intent) {
  const Json* value = e.find("value");
  const Json* method = e.find("method");
  check((value != nullptr) != (method != nullptr),
        field + ": a threshold intent gives either \"method\" (max, percentile, mse, kl) or \"value\" (the thresholds)");
  if (value) {
    for (const char* key : {"percentile", "per_channel"})
      check(e.find(key) == nullptr, field + "." + key + ": only with \"method\", not with \"value\"");
    intent.value = checked_thresholds(*value, field + ".value");
    return;
  }
  intent.method = parse_threshold_method_json(e, field);
  if (const Json* pc = e.find("per_channel"); pc && !pc->is_null()) {
    check(pc->is_bool(), field + ".per_channel must be true or false, got " + io::kind_name(*pc));
    intent.per_channel = pc->as_bool();
  }
}

std::string checked_qtype(const Json& v, const std::string& field) {
  check(v.is_string(), field + " must be a qtype name such as \"int8\" or \"int16\", got " + io::kind_name(v));
  try {
    QType::parse(v.as_string());
  } catch (const Error&) {
    fail(field + ": unknown qtype " + quoted(v.as_string()) + " (e.g. \"int8\", \"int16\", \"uint8\", \"float16\")");
  }
  return v.as_string();
}

// The override to store for `qtype` at calibration node `i`: "" when it is the stored qtype, so a
// configuration read back equals the one written (and the run cache sees the same key).
std::string override_for(const exec::Executor& ex, size_t i, const std::string& qtype) {
  return qtype == ex.calibrations()[i].qtype.name ? std::string() : qtype;
}

}  // namespace

std::string round_mode_name(RoundMode mode) {
  return mode == RoundMode::HalfToEven ? "half_to_even" : "half_away_from_zero";
}

ThresholdMethod parse_threshold_method_json(const Json& e, const std::string& field) {
  const Json* method = e.find("method");
  check(method && method->is_string(), field + ".method must be a method name (max, percentile, mse, kl)");
  ThresholdMethod m;
  m.name = method->as_string();
  if (const Json* p = e.find("percentile"); p && !p->is_null()) {
    check(m.name == "percentile", field + ".percentile: only with \"method\": \"percentile\"");
    check(p->is_number(), field + ".percentile must be a number in (0, 100], got " + io::kind_name(*p));
    m.percentile = p->as_number();
  }
  check_threshold_method(m, field + ".method");
  return m;
}

void write_threshold_fields(io::JsonWriter& w, const ConfigIntent& intent) {
  if (!intent.method) {
    w.key("value").float32_array(intent.value);
    return;
  }
  w.field("method", intent.method->name);
  if (intent.method->name == "percentile") w.key("percentile").value(intent.method->percentile);
  if (intent.per_channel) w.field("per_channel", *intent.per_channel);
}

ConfigDocument parse_config_document(const Json& doc, const std::string& what) {
  check(doc.is_object(), what + " must be a JSON object {\"schema\": \"" + kConfigSchemaName + "\", ...}, got " +
                             io::kind_name(doc));
  for (const auto& [key, value] : doc.members())
    check(std::find(std::begin(kTopFields), std::end(kTopFields), key) != std::end(kTopFields),
          what + "." + key + ": unknown field (expected schema, version, model, base, round, intents, calibrations, provenance)");
  const Json* schema = doc.find("schema");
  check(schema && schema->is_string() && schema->as_string() == kConfigSchemaName,
        what + ".schema must be \"" + std::string(kConfigSchemaName) + "\"" +
            (schema ? std::string(", got ") + (schema->is_string() ? quoted(schema->as_string()) : io::kind_name(*schema)) : " (missing)"));
  const Json* version = doc.find("version");
  check(version && version->is_number() && version->as_number() == kConfigSchemaVersion,
        what + ".version must be " + std::to_string(kConfigSchemaVersion) +
            (version ? std::string(", got ") + (version->is_number() ? version->as_string() : io::kind_name(*version)) : " (missing)"));

  ConfigDocument d;
  if (const Json* model = doc.find("model"); model && !model->is_null()) {
    check(model->is_string(), what + ".model must be a string (the model's file name), got " + io::kind_name(*model));
    d.model = model->as_string();
  }
  if (const Json* base = doc.find("base"); base && !base->is_null()) {
    check(base->is_string(), what + ".base must be \"stored\", \"all_on\" or \"all_off\", got " + io::kind_name(*base));
    d.base = base->as_string();
    check(d.base == "stored" || d.base == "all_on" || d.base == "all_off",
          what + ".base must be \"stored\", \"all_on\" or \"all_off\", got " + quoted(d.base));
  }
  if (const Json* round = doc.find("round"); round && !round->is_null()) {
    const std::string r = round->is_string() ? round->as_string() : "";
    check(r == "half_to_even" || r == "half_away_from_zero",
          what + ".round must be \"half_to_even\" or \"half_away_from_zero\", got " +
              (round->is_string() ? quoted(r) : io::kind_name(*round)));
    d.round = r == "half_to_even" ? RoundMode::HalfToEven : RoundMode::HalfAwayFromZero;
  }
  if (const Json* calibration = doc.find("calibration"); calibration && !calibration->is_null()) {
    const std::string field = what + ".calibration";
    check(calibration->is_object(), field + " must be an object {\"method\", \"percentile\"?, \"per_channel\"?}, got " +
                                        io::kind_name(*calibration));
    for (const auto& [key, value] : calibration->members())
      check(key == "method" || key == "percentile" || key == "per_channel",
            field + "." + key + ": unknown field (expected method, percentile, per_channel)");
    ThresholdMethod m = parse_threshold_method_json(*calibration, field);
    if (const Json* pc = calibration->find("per_channel"); pc && !pc->is_null()) {
      check(pc->is_bool(), field + ".per_channel must be true or false, got " + io::kind_name(*pc));
      m.per_channel = pc->as_bool();
    }
    d.calibration = m;
  }
  if (const Json* intents = doc.find("intents"); intents && !intents->is_null()) {
    check(intents->is_array(), what + ".intents must be a list of {\"node\", \"action\"}, got " + io::kind_name(*intents));
    for (size_t i = 0; i < intents->items().size(); ++i) {
      const Json& e = intents->items()[i];
      const std::string field = what + ".intents[" + std::to_string(i) + "]";
      check(e.is_object(), field + " must be an object {\"node\", \"action\"}, got " + io::kind_name(e));
      const Json* node = e.find("node");
      check(node && node->is_string() && !node->as_string().empty(), field + ".node must be a node name (string)");
      const Json* action = e.find("action");
      check(action != nullptr, field + ".action is missing (\"float\", \"int8\", \"int16\", \"threshold\", ...)");
      ConfigIntent intent{node->as_string(), checked_action(*action, field + ".action"), {}, {}, {}};
      const bool threshold = intent.action == "threshold";
      for (const auto& [key, value] : e.members())
        check(key == "node" || key == "action" ||
                  (threshold && (key == "method" || key == "percentile" || key == "per_channel" || key == "value")),
              field + "." + key + ": unknown field (expected node and action" +
                  (threshold ? std::string(", and method, percentile, per_channel or value") : std::string()) + ")");
      if (threshold) parse_threshold_intent(e, field, intent);
      d.intents.push_back(std::move(intent));
    }
  }
  if (const Json* cals = doc.find("calibrations"); cals && !cals->is_null()) {
    check(cals->is_object(), what + ".calibrations must be an object {\"<calibration node>\": {\"on\", \"qtype\"}}, got " +
                                 io::kind_name(*cals));
    for (const auto& [name, value] : cals->members()) {
      const std::string field = what + ".calibrations." + name;
      check(value.is_object(), field + " must be an object {\"on\"?, \"qtype\"?}, got " + io::kind_name(value));
      CalibrationEntry entry;
      entry.name = name;
      for (const auto& [key, v] : value.members()) {
        if (key == "on") {
          check(v.is_bool(), field + ".on must be true or false, got " + io::kind_name(v));
          entry.has_on = true;
          entry.on = v.as_bool();
        } else if (key == "qtype") {
          entry.has_qtype = true;
          entry.qtype = checked_qtype(v, field + ".qtype");
        } else if (key == "thresholds") {
          entry.has_thresholds = true;
          if (!v.is_null()) entry.thresholds = checked_thresholds(v, field + ".thresholds");
        } else if (key == "thresholds_from") {
          check(v.is_string() && v.as_string() == "calibration",
                field + ".thresholds_from must be \"calibration\" (the thresholds are the document's calibration method's)");
          entry.from_calibration = true;
        } else {
          fail(field + "." + key + ": unknown field (expected on, qtype, thresholds and thresholds_from)");
        }
      }
      d.calibrations.push_back(std::move(entry));
    }
  }
  if (const Json* provenance = doc.find("provenance"); provenance && !provenance->is_null()) {
    check(provenance->is_object(), what + ".provenance must be an object, got " + io::kind_name(*provenance));
    d.provenance = *provenance;
  }
  return d;
}

ConfigDocument parse_config_document_text(const std::string& text, const std::string& what) {
  return parse_config_document(Json::parse(text, what), what);
}

namespace {

// Where a calibration node's thresholds come from after the document's steps, resolved at the end.
struct ThresholdSource {
  enum class Kind { Stored, Method, Value } kind = Kind::Stored;
  ThresholdMethod method;
  std::vector<float> value;
  std::string field;        // the document field that set it (for errors)
  bool model_wide = false;  // set by the document's calibration
};

// The activation calibration nodes a threshold intent on a normal node re-calibrates; a calibration
// node's own name selects itself.
std::vector<size_t> threshold_targets(const exec::Executor& ex, const CalibrationRelations& rel, const std::string& node) {
  std::vector<size_t> out;
  if (const int self = ex.calibration_index(node); self >= 0) return {static_cast<size_t>(self)};
  for (const auto& c : rel.calibration_by_node(node)) {
    const int idx = ex.calibration_index(c);
    if (idx >= 0 && ex.calibrations()[static_cast<size_t>(idx)].kind != TensorKind::Weight) out.push_back(static_cast<size_t>(idx));
  }
  return out;
}

// The method a node gets: the intent's, per channel when asked, else at the node's own granularity.
ThresholdMethod method_for(const CalibrationSpec& spec, const ThresholdMethod& method, const std::optional<bool>& per_channel) {
  ThresholdMethod m = method;
  m.per_channel = per_channel.value_or(!spec.asymmetric && spec.scales.size() > 1);
  return m;
}

// Resolves every method source at the node's final qtype in one call of `resolver`, then checks
// every override by applying it (errors name the field that set it).
void resolve_thresholds(const exec::Executor& ex, std::vector<ThresholdSource>& sources, exec::QuantConfig& config,
                        const ThresholdResolver& resolver) {
  std::vector<ThresholdRequest> requests;
  std::vector<size_t> owners;
  for (size_t i = 0; i < sources.size(); ++i) {
    if (sources[i].kind != ThresholdSource::Kind::Method) continue;
    check(static_cast<bool>(resolver), sources[i].field + ": choosing thresholds by '" + sources[i].method.name +
                                           "' needs the calibration data (the values the node reads); give the "
                                           "thresholds in calibrations." + ex.calibrations()[i].node_name + ".thresholds");
    const std::string& q = config.qtype[i].empty() ? ex.calibrations()[i].qtype.name : config.qtype[i];
    requests.push_back({i, sources[i].method, q, sources[i].model_wide});
    owners.push_back(i);
  }
  if (!requests.empty()) {
    const std::vector<std::vector<float>> chosen = resolver(requests);
    check(chosen.size() == requests.size(), "threshold resolver returned " + std::to_string(chosen.size()) + " results for " +
                                                std::to_string(requests.size()) + " requests");
    for (size_t k = 0; k < owners.size(); ++k) {
      sources[owners[k]].value = chosen[k];
      if (chosen[k].empty()) sources[owners[k]].kind = ThresholdSource::Kind::Stored;  // never ran: kept
    }
  }
  config.thresholds.assign(sources.size(), {});
  for (size_t i = 0; i < sources.size(); ++i) {
    if (sources[i].kind == ThresholdSource::Kind::Stored) continue;
    try {
      with_thresholds(ex.calibrations()[i], sources[i].value);
    } catch (const Error& e) {
      fail(sources[i].field + ": " + e.what());
    }
    config.thresholds[i] = sources[i].value;
  }
}

}  // namespace

ResolvedConfig apply_config(const exec::Executor& ex, const CalibrationRelations& rel, const ConfigDocument& d,
                            const std::string& what, const ThresholdResolver& resolver) {
  ResolvedConfig r;
  r.model = d.model;
  r.base = d.base;
  r.calibration = d.calibration;
  r.intents = d.intents;
  r.provenance = d.provenance;
  r.config = d.base == "stored" ? ex.stored_config() : ex.uniform_config(d.base == "all_on");
  r.config.qtype.assign(ex.calibrations().size(), "");
  r.config.round = d.round;
  std::vector<ThresholdSource> sources(ex.calibrations().size());

  if (d.calibration) {
    for (size_t i = 0; i < sources.size(); ++i) {
      const CalibrationSpec& spec = ex.calibrations()[i];
      if (!model_wide_target(spec, *d.calibration)) continue;
      sources[i] = {ThresholdSource::Kind::Method, model_wide_method(spec, *d.calibration), {}, what + ".calibration", true};
    }
  }
  for (size_t i = 0; i < d.intents.size(); ++i) {
    const ConfigIntent& intent = d.intents[i];
    const std::string at = what + ".intents[" + std::to_string(i) + "]";
    const std::string field = at + ".node";
    check(ex.names_node(intent.node), field + ": " + quoted(intent.node) + " is not a node of the model");
    if (intent.action == "threshold") {
      const std::vector<size_t> targets = threshold_targets(ex, rel, intent.node);
      check(!targets.empty(), field + ": node " + quoted(intent.node) +
                                  " reads no activation through a calibration node (name a weight's calibration node to "
                                  "set its thresholds)");
      check(intent.method || targets.size() == 1,
            at + ".value: node " + quoted(intent.node) + " has " + std::to_string(targets.size()) +
                " activation calibration nodes; give the thresholds of each on its calibration node's name");
      for (size_t t : targets) {
        if (intent.method)
          sources[t] = {ThresholdSource::Kind::Method, method_for(ex.calibrations()[t], *intent.method, intent.per_channel), {}, at};
        else
          sources[t] = {ThresholdSource::Kind::Value, {}, intent.value, at + ".value"};
      }
      continue;
    }
    std::vector<size_t> targets;
    for (const auto& c : rel.calibration_by_node(intent.node)) {
      const int idx = ex.calibration_index(c);
      if (idx >= 0) targets.push_back(static_cast<size_t>(idx));
    }
    check(!targets.empty(), field + ": node " + quoted(intent.node) +
                                " has no calibrated inputs and is not a calibration node (nothing to switch)");
    for (size_t t : targets) {
      if (intent.action == "float") {
        r.config.on[t] = 0;
      } else {
        r.config.on[t] = 1;
        r.config.qtype[t] = override_for(ex, t, intent.action);
      }
    }
  }
  for (const CalibrationEntry& e : d.calibrations) {
    const int idx = ex.calibration_index(e.name);
    check(idx >= 0, what + ".calibrations." + e.name + ": " + quoted(e.name) + " is not a calibration node of the model");
    const size_t t = static_cast<size_t>(idx);
    if (e.has_on) r.config.on[t] = e.on ? 1 : 0;
    if (e.has_qtype) r.config.qtype[t] = override_for(ex, t, e.qtype);
    const std::string field = what + ".calibrations." + e.name;
    check(!e.from_calibration || (d.calibration && e.has_thresholds && !e.thresholds.empty()),
          field + ".thresholds_from: 'calibration' needs the document's calibration and the thresholds it gave this node");
    if (e.has_thresholds) {
      sources[t] = e.thresholds.empty() ? ThresholdSource{}
                                        : ThresholdSource{ThresholdSource::Kind::Value, {}, e.thresholds, field + ".thresholds",
                                                          e.from_calibration};
    }
  }
  r.model_wide.assign(sources.size(), 0);
  for (size_t i = 0; i < sources.size(); ++i) r.model_wide[i] = sources[i].model_wide;
  resolve_thresholds(ex, sources, r.config, resolver);
  return r;
}

ResolvedConfig resolved_from(const exec::Executor& ex, const exec::QuantConfig& config, const std::string& base) {
  ResolvedConfig r;
  r.base = base;
  r.config = config;
  if (r.config.qtype.empty()) r.config.qtype.assign(ex.calibrations().size(), "");
  for (size_t i = 0; i < r.config.qtype.size(); ++i)
    if (!r.config.qtype[i].empty()) r.config.qtype[i] = override_for(ex, i, r.config.qtype[i]);
  return r;
}

void write_config_document(io::JsonWriter& w, const exec::Executor& ex, const ResolvedConfig& c) {
  const auto& cals = ex.calibrations();
  check(c.config.on.size() == cals.size(), "configuration has " + std::to_string(c.config.on.size()) +
                                               " entries but the model has " + std::to_string(cals.size()) +
                                               " calibration nodes");
  w.begin_object().field("schema", kConfigSchemaName).field("version", kConfigSchemaVersion);
  w.field("model", c.model).field("base", c.base).field("round", round_mode_name(c.config.round));
  if (c.calibration) {
    w.key("calibration").begin_object().field("method", c.calibration->name);
    if (c.calibration->name == "percentile") w.key("percentile").value(c.calibration->percentile);
    w.field("per_channel", c.calibration->per_channel).end_object();
  }
  w.key("intents").begin_array();
  for (const auto& intent : c.intents) {
    w.begin_object().field("node", intent.node).field("action", intent.action);
    if (intent.action == "threshold") write_threshold_fields(w, intent);
    w.end_object();
  }
  w.end_array().key("calibrations").begin_object();
  for (size_t i = 0; i < cals.size(); ++i) {
    const bool overridden = i < c.config.qtype.size() && !c.config.qtype[i].empty();
    w.key(cals[i].node_name).begin_object().field("on", c.config.on[i] != 0);
    w.field("qtype", overridden ? c.config.qtype[i] : cals[i].qtype.name);
    if (const std::vector<float>* t = c.config.thresholds_of(i)) {
      w.key("thresholds").float32_array(*t);
      if (c.calibration && i < c.model_wide.size() && c.model_wide[i]) w.field("thresholds_from", "calibration");
    }
    w.end_object();
  }
  w.end_object();
  if (!c.provenance.is_null()) {
    w.key("provenance");
    c.provenance.write(w);
  }
  w.end_object();
}

std::string config_document_json(const exec::Executor& ex, const ResolvedConfig& c) {
  io::JsonWriter w;
  write_config_document(w, ex, c);
  return w.str();
}

}  // namespace ptq::quant
