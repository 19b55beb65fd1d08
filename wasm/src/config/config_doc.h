#pragma once
// The quantization configuration document (docs/config-schema.md, schema "ptqscope.config" v1): per
// calibration node ON/OFF and qtype, plus the node-level intents the user chose ("Conv_2: int16",
// "Conv_9: float"). Parsed against a loaded model (its calibration nodes and the §1.9 relations) into
// the executor's QuantConfig, so a configuration is applied to a run without copying the model; the
// writer emits the intents and the full resolved calibration map, so reading a written document gives
// the same state.
#include <string>
#include <vector>

#include "io/json.h"
#include "exec/executor.h"
#include "quant/relations.h"
#include "io/json_writer.h"

namespace ptq::quant {

constexpr const char* kConfigSchemaName = "ptqscope.config";
constexpr int kConfigSchemaVersion = 1;

// "node X: int16" / "node Y: float". `action` is "float" (switch OFF) or a qtype name (ON with it).
struct ConfigIntent {
  std::string node;
  std::string action;
};

// A calibrations entry as the document gives it (a missing field keeps the value reached before).
struct CalibrationEntry {
  std::string name;
  bool has_on = false, on = true;
  bool has_qtype = false;
  std::string qtype;
};

// The document as read (field by field, validated for types and names it can check without a model).
struct ConfigDocument {
  std::string model;           // informational (file name); "" when absent
  std::string base = "stored";  // "stored" | "all_on" | "all_off"
  RoundMode round = RoundMode::HalfToEven;
  std::vector<ConfigIntent> intents;
  std::vector<CalibrationEntry> calibrations;  // document order
  io::Json provenance;                        // null when absent; kept as given
};

// A document applied to a model: the executor's configuration and what to write back.
struct ResolvedConfig {
  exec::QuantConfig config;  // indexed like Executor::calibrations(); qtype "" = the stored one
  std::vector<ConfigIntent> intents;
  std::string model;
  std::string base = "stored";
  io::Json provenance;
};

// Reads a document. `what` prefixes every error message ("config", or the file name in the CLI), which
// then names the field: "config.intents[1].action: unknown action 'int7' ...". Throws ptq::Error.
ConfigDocument parse_config_document(const io::Json& doc, const std::string& what = "config");
ConfigDocument parse_config_document_text(const std::string& text, const std::string& what = "config");

// Applies `doc` to the model: start from `base`, then every intent sets the calibration nodes that feed
// its node (§1.9 relations; a calibration node's own name selects itself) to the action, then every
// calibrations entry overrides. Unknown node / calibration names are errors naming the field.
ResolvedConfig apply_config(const exec::Executor& executor, const CalibrationRelations& relations,
                            const ConfigDocument& doc, const std::string& what = "config");

// The resolved state of a plain QuantConfig (no intents), e.g. the stored configuration.
ResolvedConfig resolved_from(const exec::Executor& executor, const exec::QuantConfig& config, const std::string& base);

// Writes the full document: schema, version, model, base, round, intents, calibrations (every
// calibration node in model order, {"on", "qtype"} with the effective qtype name), provenance when set.
void write_config_document(io::JsonWriter& w, const exec::Executor& executor, const ResolvedConfig& config);
std::string config_document_json(const exec::Executor& executor, const ResolvedConfig& config);

// "half_to_even" / "half_away_from_zero".
std::string round_mode_name(RoundMode mode);

}  // namespace ptq::quant
