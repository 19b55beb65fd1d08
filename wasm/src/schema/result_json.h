#pragma once
// The one versioned result document shared by the CLI, the web app and the Netron plugin
// (docs/result-schema.md). Analyses produce structs; this file is their only JSON form.
#include <string>

#include "analysis/accumulated_error.h"
#include "analysis/channelwise.h"
#include "analysis/distribution.h"
#include "analysis/node_errors.h"
#include "analysis/sensitivity.h"
#include "analysis/sensitivity_analysis.h"
#include "analysis/stat_info.h"
#include "analysis/what_if.h"
#include "exec/executor.h"
#include "io/json_writer.h"

namespace ptq::schema {

constexpr int kResultSchemaVersion = 1;

// {"file", "ir_version", "producer", "opsets", "inputs", "outputs", "node_count", "calibration_nodes": [...]}
void write_model_summary(io::JsonWriter& w, const exec::Executor& executor, const std::string& file_name);

// {"<item>": {"node"?, "threshold"?, "qtype"?, "<metric>": number|"inf"|"nan", ...}, ...} in sorted order.
void write_sensitivity_table(io::JsonWriter& w, const analysis::SensitivityResult& result);

// One row of that table: {"node"?, "threshold"?, "qtype"?, "<metric>": ...}.
void write_sensitivity_row(io::JsonWriter& w, const std::string& node_type, const std::vector<std::string>& metrics,
                           const analysis::SensitivityRow& row);

// The options block of a sensitivity run (as the user gave them).
void write_sensitivity_options(io::JsonWriter& w, const analysis::SensitivityOptions& options);

// A complete result document holding one sensitivity table (under "sensitivity" or "leave_one_out").
std::string sensitivity_document(const exec::Executor& executor, const std::string& model_file,
                                 const analysis::SensitivityOptions& options, const analysis::SensitivityResult& result,
                                 double elapsed_ms);

// The document header: "schema", "version", "model" (the caller has opened the top-level object).
void write_header(io::JsonWriter& w, const exec::Executor& executor, const std::string& model_file);

// Section keys, written into the open top-level object (docs/result-schema.md, one table per section).
// "samples", "compared_tensors", "<section>": {"<node_type>": table}, "<section>_order".
void write_sensitivity_section(io::JsonWriter& w, const std::string& section,
                               const analysis::SensitivityResult& result);
// "acc_error", "acc_error_figures", "acc_error_sample", "acc_error_messages".
void write_acc_error_section(io::JsonWriter& w, const analysis::AccErrorResult& result);
// "distribution", "distribution_order", "distribution_sample", and "distribution_not_run" when a
// node did not run on the sample.
void write_distribution_section(io::JsonWriter& w, const analysis::DistributionResult& result);
// "channelwise", "channelwise_order", "channelwise_sample", and "channelwise_not_run" when a node
// did not run on the sample.
void write_channelwise_section(io::JsonWriter& w, const analysis::ChannelwiseResult& result);
// "stat_info", "stat_info_order", "stat_info_curves", "stat_info_samples", and "stat_info_messages" when
// something was left out.
void write_stat_info_section(io::JsonWriter& w, const analysis::StatInfoResult& result);
// "sensitivity_analysis", "sensitivity_analysis_samples", "sensitivity_analysis_messages".
void write_sensitivity_analysis_section(io::JsonWriter& w, const analysis::SensitivityAnalysisResult& result);

// The model outputs' metrics as what_if writes them, into the object being written: "outputs" {name:
// {metric: value}} (all_metrics() order), "output_order", "mean" (per_output[t][m], mean[m]).
void write_output_metrics(io::JsonWriter& w, const std::vector<std::string>& outputs,
                          const std::vector<std::vector<float>>& per_output, const std::vector<float>& mean);
// "what_if": {"outputs", "output_order", "mean", "metric", "nodes", "order", "samples", "executed_nodes",
// "graph_nodes"}.
void write_what_if_section(io::JsonWriter& w, const analysis::WhatIfResult& result);
// "node_errors": {"metric", "measure", "nodes": {"<node>": {"own", "accumulated"}}, "order", "samples"}.
void write_node_errors_section(io::JsonWriter& w, const analysis::NodeErrorsResult& result);

// Keys of the distribution plots: the requested name, or "<name>:<tensor>" for a node with several
// plotted outputs (in plot order).
std::vector<std::string> distribution_keys(const analysis::DistributionResult& result);
// Keys of the acc_error curves of all figures (label, or "<prefix>/<label>" when taken), figure order.
std::vector<std::vector<std::string>> acc_error_keys(const analysis::AccErrorResult& result);

// Options blocks, as used (after defaults).
void write_acc_error_options(io::JsonWriter& w, const analysis::AccErrorOptions& options);
void write_distribution_options(io::JsonWriter& w, const analysis::DistributionOptions& options);
void write_channelwise_options(io::JsonWriter& w, const analysis::ChannelwiseOptions& options);
void write_stat_info_options(io::JsonWriter& w, const analysis::StatInfoOptions& options);
void write_sensitivity_analysis_options(io::JsonWriter& w, const analysis::SensitivityAnalysisOptions& options);
void write_what_if_options(io::JsonWriter& w, const analysis::WhatIfOptions& options);
void write_node_errors_options(io::JsonWriter& w, const analysis::NodeErrorsOptions& options);

std::string selection_name(data::SampleSelection selection);  // "last" | "first" | "all"

}  // namespace ptq::schema
