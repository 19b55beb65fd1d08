#pragma once
// What a JavaScript `Session` does, independent of the engine that exposes it: the wasm module's embind
// glue (bind/api.cpp) and the native Node-API addon (bind/node_addon.cpp) both wrap a SessionCore and
// only convert values between JavaScript and C++. docs/wasm-api.md documents the API both expose.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/analyze.h"
#include "core/model_memory.h"
#include "core/tensor.h"
#include "data/calibration_data.h"
#include "exec/executor.h"
#include "quant/qoperator_rewrite.h"
#include "quant/relations.h"

namespace ptq::bind {

// Bytes copied from JavaScript into memory the core owns (the executor views a model's bytes).
struct OwnedBytes {
  std::unique_ptr<uint8_t[]> data;
  size_t size = 0;
  // Default-initialised storage for `size` bytes (no zeroing pass before the caller's copy).
  static OwnedBytes allocate(size_t size);
};

// A file given by JavaScript as {path, bytes}.
struct NamedBytes {
  std::string path;
  OwnedBytes bytes;
};

// A run's configuration as JavaScript gives it: "stored" | "on" | "off" (mode), a configuration
// document (document_json: an object with `schema`, docs/config-schema.md), or {on, qtype?, round?}.
struct RunConfigArgs {
  std::optional<std::string> mode;
  std::optional<std::string> document_json;
  std::vector<uint8_t> on;  // one per calibration node
  std::optional<std::vector<std::string>> qtype;
  std::optional<std::string> round;
};

class SessionCore {
 public:
  ~SessionCore() { release(); }

  // Drops the previous model, then loads `model` with its external-data files (their bytes already
  // counted by `reservation`); Q/DQ and QOperator quantizers become calibration nodes. Nothing changes
  // when it fails.
  void load_model(ModelReservation reservation, OwnedBytes model, std::vector<NamedBytes> external);
  // The calibration folder's files, read through `read` whenever a sample is used; {count, names}.
  const data::CalibrationData& load_calibration_data(std::vector<std::string> paths, data::FileReader read);

  // The inputs of calibration sample `sample`, checked (`what` names the calling method).
  std::vector<Tensor> sample_inputs(int sample, const std::string& what) const;
  // One forward pass (its outputs kept for output()).
  exec::RunStats run(const std::vector<Tensor>& inputs, const exec::QuantConfig& config);
  // One forward pass with each node's wall time in ms (-1 for nodes not run), by node id.
  std::vector<double> profile(const std::vector<Tensor>& inputs, const exec::QuantConfig& config);
  // The configuration `args` describes for this model (`what` names the calling method in messages).
  exec::QuantConfig run_config(const RunConfigArgs& args, const std::string& what);

  std::string analyze(const std::string& request, const api::EventFn& events, const api::CancelFn& cancel);
  std::string list_items(const std::string& request);
  std::string resolve_config(const std::string& config);
  std::string graph_json();
  std::vector<uint8_t> export_config(const std::string& config_json, const std::string& format);
  // The relation rules (§1.9, describe().relation_rules, by name) of the loaded model and of every later
  // load; the node items, calibration sets, graphJson and results follow them.
  void set_relations(const std::string& name);

  const std::vector<Tensor>& outputs() const { return outputs_; }
  // The last run's output `index` (a ptq::Error naming the range otherwise) and its graph name.
  const Tensor& output(int index) const;
  const std::string& output_name(int index) const;

  const exec::Executor& executor() const;
  // Releases the model, the data and the outputs; the session can load another model afterwards.
  void release();

 private:
  api::Context context();

  // Declaration order matters: members are destroyed bottom-up, and the executor views the bytes.
  OwnedBytes model_bytes_;
  std::vector<NamedBytes> external_bytes_;  // the external-data files, viewed like model_bytes_
  ModelReservation reservation_;            // their bytes, counted against the memory budget
  std::unique_ptr<exec::Executor> executor_;
  std::unique_ptr<quant::CalibrationRelations> relations_;  // views executor_->graph()
  quant::RelationRules rules_ = quant::relation_rules().front().rules;
  quant::FileProvenance file_;  // the file's QOperator nodes the load rewrote (§1.12)
  std::unique_ptr<data::CalibrationData> data_;
  std::vector<Tensor> outputs_;
};

// The external-data files `model` names ([{location, path}]: `path` the one of `candidates` that
// location means, reader/external_data.h), once the model and their declared sizes fit the budget.
struct ExternalFileMatch {
  std::string location;
  std::optional<std::string> path;
};
std::vector<ExternalFileMatch> external_data_matches(const OwnedBytes& model,
                                                     const std::vector<std::string>& candidates);

// ptq.calibrate's work (calibrate/calibrate.h): the calibrated model, its Q/DQ twin when asked, counts.
struct CalibrateArgs {
  std::optional<std::string> method;
  std::optional<double> percentile;
  std::vector<std::string> int16;
  bool qdq = false;
  std::vector<NamedBytes> external;  // the float model's external-data files; the models written hold every tensor
};
struct CalibrateOutput {
  std::vector<uint8_t> model;
  std::optional<std::vector<uint8_t>> qdq;
  size_t activations = 0, weights = 0, samples = 0;
};
CalibrateOutput calibrate_model(const OwnedBytes& model, const std::vector<data::FileEntry>& files,
                                const CalibrateArgs& args);

// The JavaScript error a C++ exception becomes (call inside a catch block): name FormatError,
// PtqError, RangeError (`out_of_memory` the message of std::bad_alloc) or InternalError, and message.
struct JsErrorOf {
  const char* name;
  std::string message;
};
JsErrorOf js_error_of_current_exception(const char* out_of_memory);

// "half_to_even" | "half_away_from_zero" -> the rounding mode; nullopt for another name.
std::optional<quant::RoundMode> parse_round(const std::string& s);

}  // namespace ptq::bind
