#pragma once
// The core's description of itself (docs/wasm-api.md `describe()`): one table of the facts every face
// needs — the metrics and which direction is better, the node types of a sensitivity sweep, and per
// analysis its options (type, default, choices), whether it can be split across workers, whether its
// per-item events carry rows, and how its rows are ranked. The request parser (api/request.cpp) takes
// its option names and defaults from this table; the CLI, the page, the heat scale and the sweep
// splitter read the same table as JSON (describe_json, bound as ptq.describe()).
//
// Adding an analysis: an enumerator of `Analysis`, one entry in analyses() (catalog.cpp) whose
// defaults are read from the analysis' option struct, and its option parser in request.cpp.
#include <string>
#include <vector>

#include "io/json.h"

namespace ptq::api {

inline constexpr const char* kToolName = "ptqscope";
inline constexpr const char* kToolVersion = "0.1.0";  // package.json's version (a test compares them)

enum class Analysis {
  Sensitivity, LeaveOneOut, AccError, Distribution, Channelwise, StatInfo, SensitivityAnalysis, WhatIf, NodeErrors, Fix,
  Explain, CalibrationMethods
};

// The JSON types of option values (the "type" of an option in describe()).
namespace option_type {
inline constexpr const char* kString = "string";      // a string
inline constexpr const char* kStrings = "strings";    // a string or a list of strings
inline constexpr const char* kNodes = "nodes";        // null, a name, or a list of names / lists of names
inline constexpr const char* kBoolean = "boolean";
inline constexpr const char* kNumber = "number";
inline constexpr const char* kInteger = "integer";
inline constexpr const char* kIntegers = "integers";  // an integer or a list of integers
inline constexpr const char* kNumbers = "numbers";    // a number or a list of numbers
}  // namespace option_type

struct OptionSpec {
  std::string name;                  // the Python API's argument name
  std::string type;                  // option_type::k*
  io::Json default_value;                // what an absent (or null) option means; null = no value
  std::vector<std::string> choices;  // the accepted strings (of each element for "strings"); empty = any
  std::string doc;                   // one line for help texts and forms
  bool required = false;             // the request fails without it
  bool null_is_all = false;          // data_num: null (or 0) = every sample
  // What the page and the plugin start with where it differs from `default_value`, which is the
  // original's and the CLI's: data_num starts at every sample there (a person looking at a sweep or a
  // fix should not be judging one sample unawares). null = `default_value`.
  io::Json interactive_default{};
  io::Json min{}, max{};                 // bounds of an integer option (of each element); null = none
};

struct AnalysisSpec {
  Analysis id;
  std::string name;        // the request's "analysis"
  std::string section;     // the result document's section holding its rows (same string)
  bool splittable;         // items can run in parts (request "items") and be merged (mergeResults)
  bool streams_items;      // each per-item event carries the item's row as the result holds it
  std::string keyed_by;    // "node_type": the section is keyed by node type, then item; "" = by item
  std::string sort;        // how the section's rows are ranked, in words ("" = the order of the request)
  std::vector<OptionSpec> options;
  // What the analysis runs the model for (what still works when the model has unsupported ops):
  // "always"; "activations": only for activation calibration nodes and node outputs, while weight
  // calibration nodes are computed from the stored weights alone.
  std::string needs_execution = "always";

  const OptionSpec* option(const std::string& name) const;  // nullptr when not an option of this analysis
};

struct MetricSpec {
  std::string name;
  bool higher_is_better;
};

const std::vector<AnalysisSpec>& analyses();
const AnalysisSpec& analysis_spec(Analysis a);
const AnalysisSpec* find_analysis(const std::string& name);  // nullptr when unknown
std::vector<MetricSpec> metric_specs();

// {"schema": "ptqscope.describe", "version": 1, "tool", "metrics", "node_types", "analyses",
// "convolution_modes", "export_formats", "ops", "causes", "hint_rules", "threshold_methods",
// "sample_split"}.
std::string describe_json();

}  // namespace ptq::api
