#pragma once
// The documents of the `fix` analysis (analysis/fix_search.h) and of Session.exportConfig
// (config/config_export.h): options, the result's `fix` section and `fix_samples`, the rows of its
// per-step events, the found configuration as a configuration document with provenance, and a
// configuration document written in a toolchain format.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/fix_search.h"
#include "api/analyze.h"
#include "config/config_doc.h"
#include "io/json_writer.h"

namespace ptq::api {

// options.fix (the request's options with defaults filled in; `export_format`: the export the
// threshold action was limited to, "" for none).
void write_fix_options(io::JsonWriter& w, const analysis::FixOptions& options, const std::string& export_format);
// The "fix" section object and "fix_samples".
void write_fix_section(io::JsonWriter& w, const analysis::FixResult& result);
// One event row: {"phase", "node", "action", "value", "accepted"}.
void write_fix_event_row(io::JsonWriter& w, const analysis::FixOptions::Event& event);

// The found configuration: the start's base and intents, then the chosen nodes as intents, the
// resolved state, and provenance {tool, analysis: "fix", target, reached, met, samples (the files the
// search judged), calibration_samples (how many the data held)}. A threshold choice becomes one
// threshold intent with its values per re-calibrated calibration node.
quant::ResolvedConfig fix_config(const exec::Executor& executor, const quant::CalibrationRelations& relations,
                                 const std::optional<quant::ResolvedConfig>& start, const analysis::FixResult& result,
                                 const std::string& model_file, size_t calibration_samples);

// A configuration document (docs/config-schema.md) written in `format` (docs/config-export.md). Text
// formats come back as their UTF-8 bytes; calibrated-onnx as the model (`model` = the bytes the
// context's executor was loaded from).
std::vector<uint8_t> export_config(const Context& context, const std::string& config_json, const std::string& format,
                                   const uint8_t* model, size_t model_size);

}  // namespace ptq::api
