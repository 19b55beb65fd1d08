#include "config/config_doc.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "core/error.h"

namespace ptq::quant {
namespace {

using io::Json;

const char* const kTopFields[] = {"schema", "version", "model", "base", "round", "intents", "calibrations", "provenance"};

std::string quoted(const std::string& s) { return "'" + s + "'"; }

// Checks that `action` is "float" or a qtype name; returns it.
std::string checked_action(const Json& v, const std::string& field) {
  check(v.is_string(), field + " must be a string (\"float\", \"int8\", \"int16\", ...), got " + io::kind_name(v));
  const std::string& a = v.as_string();
  if (a == "float") return a;
  try {
    QType::parse(a);
  } catch (const Error&) {
    fail(field + ": unknown action " + quoted(a) + " (expected \"float\" or a qtype such as \"int8\", \"int16\")");
  }
  return a;
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
  if (const Json* intents = doc.find("intents"); intents && !intents->is_null()) {
    check(intents->is_array(), what + ".intents must be a list of {\"node\", \"action\"}, got " + io::kind_name(*intents));
    for (size_t i = 0; i < intents->items().size(); ++i) {
      const Json& e = intents->items()[i];
      const std::string field = what + ".intents[" + std::to_string(i) + "]";
      check(e.is_object(), field + " must be an object {\"node\", \"action\"}, got " + io::kind_name(e));
      for (const auto& [key, value] : e.members())
        check(key == "node" || key == "action", field + "." + key + ": unknown field (expected node and action)");
      const Json* node = e.find("node");
      check(node && node->is_string() && !node->as_string().empty(), field + ".node must be a node name (string)");
      const Json* action = e.find("action");
      check(action != nullptr, field + ".action is missing (\"float\", \"int8\", \"int16\", ...)");
      d.intents.push_back({node->as_string(), checked_action(*action, field + ".action")});
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
        } else {
          fail(field + "." + key + ": unknown field (expected on and qtype)");
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

ResolvedConfig apply_config(const exec::Executor& ex, const CalibrationRelations& rel, const ConfigDocument& d,
                            const std::string& what) {
  ResolvedConfig r;
  r.model = d.model;
  r.base = d.base;
  r.intents = d.intents;
  r.provenance = d.provenance;
  r.config = d.base == "stored" ? ex.stored_config() : ex.uniform_config(d.base == "all_on");
  r.config.qtype.assign(ex.calibrations().size(), "");
  r.config.round = d.round;

  for (size_t i = 0; i < d.intents.size(); ++i) {
    const ConfigIntent& intent = d.intents[i];
    const std::string field = what + ".intents[" + std::to_string(i) + "].node";
    check(ex.names_node(intent.node), field + ": " + quoted(intent.node) + " is not a node of the model");
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
  }
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
  w.key("intents").begin_array();
  for (const auto& intent : c.intents) w.begin_object().field("node", intent.node).field("action", intent.action).end_object();
  w.end_array().key("calibrations").begin_object();
  for (size_t i = 0; i < cals.size(); ++i) {
    const bool overridden = i < c.config.qtype.size() && !c.config.qtype[i].empty();
    w.key(cals[i].node_name).begin_object().field("on", c.config.on[i] != 0);
    w.field("qtype", overridden ? c.config.qtype[i] : cals[i].qtype.name).end_object();
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
