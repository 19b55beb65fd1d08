#pragma once
// The result sections of threshold re-calibration (docs/result-schema.md): the cause hints
// (`explain`: "hints" ranked, "hints_evidence" and "hints_evidence_order" for every examined
// calibration node, "hints_samples", "hints_start", "hints_evaluations") and the comparison of
// calibration methods ("calibration_methods", "calibration_methods_samples").
#include "analysis/calibration_methods.h"
#include "analysis/explain.h"
#include "io/json_writer.h"

namespace ptq::schema {

void write_explain_options(io::JsonWriter& w, const analysis::ExplainOptions& options);
void write_explain_section(io::JsonWriter& w, const analysis::ExplainResult& result);
// One hint: {"calibration_node", "node", "cause", "evidence", "suggestion", "effect"}.
void write_hint(io::JsonWriter& w, const analysis::Hint& hint, const analysis::NodeEvidence& evidence,
                const std::string& metric);

void write_calibration_methods_options(io::JsonWriter& w, const analysis::CalibrationMethodsOptions& options);
void write_calibration_methods_section(io::JsonWriter& w, const analysis::CalibrationMethodsResult& result);

}  // namespace ptq::schema
