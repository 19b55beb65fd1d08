#pragma once
// The quantization configuration document (docs/config-schema.md, schema "ptqscope.config" v1): per
// calibration node ON/OFF and qtype, plus the node-level intents the user chose ("Conv_2: int16",
// "Conv_9: float"). Parsed against a loaded model (its calibration nodes and the §1.9 relations) into
// the executor's QuantConfig, so a configuration is applied to a run without copying the model; the
// writer emits the intents and the full resolved calibration map, so reading a written document gives
// the same state.
#include <optional>
#include <string>
#include <vector>

#include "calibrate/threshold_methods.h"
#include "io/json.h"
#include "exec/executor.h"
#include "quant/relations.h"
#include "io/json_writer.h"

namespace ptq::quant {

constexpr const char* kConfigSchemaName = "ptqscope.config";
constexpr int kConfigSchemaVersion = 1;

// "node X: int16" / "node Y: float" / "node Z: threshold by mse". `action` is "float" (switch OFF), a
// qtype name (ON with it) or "threshold" (new thresholds: chosen by `method`, or `value`).
struct ConfigIntent {
  std::string node;
  std::string action;
  // action "threshold": a method (its percentile when "percentile"), or the thresholds themselves.
  std::optional<ThresholdMethod> method;
  std::optional<bool> per_channel;  // absent: each calibration node keeps its own granularity
  std::vector<float> value;
};

// A calibrations entry as the document gives it (a missing field keeps the value reached before).
struct CalibrationEntry {
  std::string name;
  bool has_on = false, on = true;
  bool has_qtype = false;
  std::string qtype;
  bool has_thresholds = false;  // "thresholds": a list sets them, null restores the stored ones
  std::vector<float> thresholds;
  // "thresholds_from": "calibration": they are the document's calibration method's, resolved (a
  // written document marks them so; the exports write the method, not per-node thresholds).
  bool from_calibration = false;
};

// The document as read (field by field, validated for types and names it can check without a model).
struct ConfigDocument {
  std::string model;           // informational (file name); "" when absent
  std::string base = "stored";  // "stored" | "all_on" | "all_off"
  RoundMode round = RoundMode::HalfToEven;
  // "calibration": every activation calibration node's thresholds chosen again by one method (the
  // model-wide setting of a calibration-method comparison), applied before the intents.
  std::optional<ThresholdMethod> calibration;
  std::vector<ConfigIntent> intents;
  std::vector<CalibrationEntry> calibrations;  // document order
  io::Json provenance;                        // null when absent; kept as given
};

// A document applied to a model: the executor's configuration and what to write back.
struct ResolvedConfig {
  exec::QuantConfig config;  // indexed like Executor::calibrations(); qtype "" = the stored one
  std::optional<ThresholdMethod> calibration;
  // Per calibration node: 1 where its thresholds are the model-wide calibration's (not an intent's or
  // a calibrations entry's): the exports write those as the toolchain's calibration setting.
  std::vector<uint8_t> model_wide;
  std::vector<ConfigIntent> intents;
  std::string model;
  std::string base = "stored";
  io::Json provenance;
};


// Reads a document. `what` prefixes every error message ("config", or the file name in the CLI), which
// then names the field: "config.intents[1].action: unknown action 'int7' ...". Throws ptq::Error.
ConfigDocument parse_config_document(const io::Json& doc, const std::string& what = "config");
ConfigDocument parse_config_document_text(const std::string& text, const std::string& what = "config");

// Applies `doc` to the model: start from `base`, then the model-wide `calibration`, then every intent
// sets the calibration nodes that feed its node (§1.9 relations; a calibration node's own name selects
// itself; a threshold intent on a normal node re-calibrates its activation calibration nodes) to the
// action, then every calibrations entry overrides. Thresholds chosen by a method are resolved last,
// at each node's final qtype, by `resolver`; without one (no calibration data) a method is an error
// naming the field unless a calibrations entry gives that node's thresholds. Unknown node /
// calibration names and unusable thresholds are errors naming the field.
ResolvedConfig apply_config(const exec::Executor& executor, const CalibrationRelations& relations,
                            const ConfigDocument& doc, const std::string& what = "config",
                            const ThresholdResolver& resolver = {});

// The resolved state of a plain QuantConfig (no intents), e.g. the stored configuration.
ResolvedConfig resolved_from(const exec::Executor& executor, const exec::QuantConfig& config, const std::string& base);

// Writes the full document: schema, version, model, base, round, calibration when set, intents,
// calibrations (every calibration node in model order, {"on", "qtype"} with the effective qtype name,
// and "thresholds" where the configuration overrides them, marked "thresholds_from": "calibration"
// where they are the model-wide calibration's), provenance when set.
void write_config_document(io::JsonWriter& w, const exec::Executor& executor, const ResolvedConfig& config);
std::string config_document_json(const exec::Executor& executor, const ResolvedConfig& config);

// "half_to_even" / "half_away_from_zero".
std::string round_mode_name(RoundMode mode);

// A threshold intent or the model-wide calibration as JSON members ("method", "percentile",
// "per_channel" / "value"), and back (`field` names the object in errors).
void write_threshold_fields(io::JsonWriter& w, const ConfigIntent& intent);
ThresholdMethod parse_threshold_method_json(const io::Json& object, const std::string& field);

}  // namespace ptq::quant
