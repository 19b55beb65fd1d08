#pragma once
// The one versioned result document shared by the CLI, the web app and the Netron plugin
// (docs/result-schema.md). Analyses produce structs; this file is their only JSON form.
#include <string>

#include "analysis/sensitivity.h"
#include "exec/executor.h"
#include "schema/json_writer.h"

namespace ptq::schema {

constexpr int kResultSchemaVersion = 1;

// {"file", "ir_version", "producer", "opsets", "inputs", "outputs", "node_count", "calibration_nodes": [...]}
void write_model_summary(JsonWriter& w, const exec::Executor& executor, const std::string& file_name);

// {"<item>": {"node"?, "threshold"?, "qtype"?, "<metric>": number|"inf"|"nan", ...}, ...} in sorted order.
void write_sensitivity_table(JsonWriter& w, const analysis::SensitivityResult& result);

// The options block of a sensitivity run (as the user gave them).
void write_sensitivity_options(JsonWriter& w, const analysis::SensitivityOptions& options);

// A complete result document holding one sensitivity table (under "sensitivity" or "leave_one_out").
std::string sensitivity_document(const exec::Executor& executor, const std::string& model_file,
                                 const analysis::SensitivityOptions& options, const analysis::SensitivityResult& result,
                                 double elapsed_ms);

}  // namespace ptq::schema
