#pragma once
// Analysis requests of Session.analyze / listItems (docs/wasm-api.md): the JSON request
// {"analysis", "options", "items"?, "model_file"?} turned into the analyses' option structs. The
// analyses, their option names and defaults are those of the catalog (api/catalog.h). Unknown
// fields, options and analysis names are rejected with a message naming them.
#include <optional>
#include <string>
#include <vector>

#include "analysis/accumulated_error.h"
#include "analysis/calibration_methods.h"
#include "analysis/channelwise.h"
#include "analysis/distribution.h"
#include "analysis/explain.h"
#include "analysis/fix_search.h"
#include "analysis/node_errors.h"
#include "analysis/sensitivity.h"
#include "analysis/sensitivity_analysis.h"
#include "analysis/stat_info.h"
#include "analysis/what_if.h"
#include "api/catalog.h"
#include "config/config_doc.h"
#include "io/json.h"

namespace ptq::api {

// The request's analysis name ("sensitivity", ...) and its result section name (the same string).
std::string analysis_name(Analysis a);
// Sweeps whose items can be run in parts (`items`) and merged (mergeResults).
bool is_splittable(Analysis a);

// `items`: absent = the whole sweep; {"begin", "end"} = positions [begin, end) of listItems;
// ["item", ...] = those items.
struct ItemsSpec {
  enum class Kind { All, Range, Names };
  Kind kind = Kind::All;
  size_t begin = 0, end = 0;
  std::vector<std::string> names;
};

struct Request {
  Analysis analysis = Analysis::Sensitivity;
  io::Json options = io::Json::object();
  ItemsSpec items;
  std::string model_file = "model.onnx";
  // "config": the quantization configuration the analysis runs under (docs/config-schema.md), read
  // and checked for types here; applied to the model (names resolved) by analyze.
  std::optional<quant::ConfigDocument> config;
};

Request parse_request(const std::string& text);

// Option structs of each analysis; an absent option takes the catalog's default (the Python API's).
// Throw ptq::Error naming the option.
analysis::SensitivityOptions sensitivity_options(const Request& request);  // sensitivity and leave_one_out
analysis::AccErrorOptions acc_error_options(const Request& request);
analysis::DistributionOptions distribution_options(const Request& request);
analysis::ChannelwiseOptions channelwise_options(const Request& request);
analysis::StatInfoOptions stat_info_options(const Request& request);
analysis::SensitivityAnalysisOptions sensitivity_analysis_options(const Request& request);
analysis::WhatIfOptions what_if_options(const Request& request);
analysis::NodeErrorsOptions node_errors_options(const Request& request);
analysis::FixOptions fix_options(const Request& request);
analysis::ExplainOptions explain_options(const Request& request);
analysis::CalibrationMethodsOptions calibration_methods_options(const Request& request);
// fix's `export` option ("" = none), checked against `prefer` (threshold needs a format that carries it).
std::string fix_export_format(const Request& request);

// The samples a request chooses (its data_num and sample_selection; every sample for an analysis
// without them), of `sample_count`.
std::vector<size_t> chosen_samples(const Request& request, const data::CalibrationData& data);
// The searches (fix, explain) take data_num as "at most": more than the samples there are means all.
bool clamps_data_num(Analysis analysis);

// Positions (ascending, unique) of the requested items among `all` (the full sweep, run order).
std::vector<size_t> select_items(const ItemsSpec& items, const std::vector<std::string>& all);

}  // namespace ptq::api
