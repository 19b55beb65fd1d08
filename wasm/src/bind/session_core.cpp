#include "bind/session_core.h"

#include <chrono>
#include <cstring>
#include <utility>

#include "api/fix.h"
#include "calibrate/calibrate.h"
#include "config/config_export.h"
#include "core/error.h"
#include "quant/calibration.h"
#include "quant/hz_to_qdq.h"
#include "reader/external_data.h"
#include "reader/onnx.h"
#include "reader/onnx_writer.h"
#include "schema/graph_json.h"

namespace ptq::bind {

OwnedBytes OwnedBytes::allocate(size_t size) {
  OwnedBytes b;
  b.size = size;
  b.data.reset(new uint8_t[size > 0 ? size : 1]);
  return b;
}

namespace {

// Read options that find a model's external-data locations among `external` (paths as picked, or base
// names: reader/external_data.h), which must outlive the read. Messages say "the model": the page and
// the CLI prefix the file's name.
reader::ReadOptions external_read_options(const std::vector<NamedBytes>& external) {
  reader::ReadOptions options;
  options.file_name = "";
  options.open_external = [&external](const std::string& location) -> std::optional<pb::Bytes> {
    std::vector<std::string> paths;
    for (const NamedBytes& e : external) paths.push_back(e.path);
    const std::optional<size_t> i = reader::find_external_file(paths, location);
    if (!i) return std::nullopt;
    return pb::Bytes{external[*i].bytes.data.get(), external[*i].bytes.size};
  };
  return options;
}

}  // namespace

void SessionCore::load_model(ModelReservation reservation, OwnedBytes model, std::vector<NamedBytes> external) {
  ir::Model read = reader::read_onnx(model.data.get(), model.size, external_read_options(external));
  // QOperator and Q/DQ quantizers become calibration nodes (§1.12, §1.11); the file's QOperator nodes are
  // kept for graph_json.
  quant::FileProvenance file = quant::import_quantizers(read);
  // A model with unsupported ops loads in a limited state; running it fails naming them.
  auto executor = std::make_unique<exec::Executor>(std::move(read), /*allow_unsupported=*/true);
  auto relations = std::make_unique<quant::CalibrationRelations>(executor->graph(), rules_);
  // Commit only when everything succeeded; the executor keeps views into the bytes.
  model_bytes_ = std::move(model);
  external_bytes_ = std::move(external);
  reservation_ = std::move(reservation);
  executor_ = std::move(executor);
  relations_ = std::move(relations);
  file_ = std::move(file);
}

void SessionCore::set_relations(const std::string& name) {
  rules_ = quant::parse_relation_rules(name);
  if (executor_) relations_ = std::make_unique<quant::CalibrationRelations>(executor_->graph(), rules_);
}

const data::CalibrationData& SessionCore::load_calibration_data(std::vector<std::string> paths, data::FileReader read) {
  executor();  // a model first
  data_.reset();
  outputs_.clear();
  executor_->clear_run_cache();  // its records hold the previous samples alive
  // The data set reads each file again whenever its sample is used (data/calibration_data.h).
  auto loaded = std::make_unique<data::CalibrationData>(
      data::CalibrationData::from_files(executor_->graph(), paths, std::move(read)));
  data_ = std::move(loaded);
  return *data_;
}

const exec::Executor& SessionCore::executor() const {
  check(executor_ != nullptr, "no model loaded (call loadModel first)");
  return *executor_;
}

std::vector<Tensor> SessionCore::sample_inputs(int sample, const std::string& what) const {
  executor();
  check(data_ != nullptr, what + ": no calibration data loaded (call loadCalibrationData first)");
  check(sample >= 0 && static_cast<size_t>(sample) < data_->sample_count(),
        what + ": sample index " + std::to_string(sample) + " out of range (the data has " +
            std::to_string(data_->sample_count()) + " samples)");
  return data_->sample(static_cast<size_t>(sample));
}

exec::RunStats SessionCore::run(const std::vector<Tensor>& inputs, const exec::QuantConfig& config) {
  outputs_.clear();  // release the previous run's tensors before computing the next
  exec::RunStats stats;
  exec::RunRecord record = executor_->run(inputs, config, {}, false, &stats);
  std::vector<Tensor> outs = executor_->tensor_outputs(record);
  for (Tensor& t : outs) {
    // A typed array needs element alignment; an output aliasing odd model bytes is copied.
    const size_t size = dtype_size(t.dtype());
    if (size > 1 && reinterpret_cast<uintptr_t>(t.raw()) % size != 0) t = t.clone();
  }
  outputs_ = std::move(outs);
  return stats;
}

std::vector<double> SessionCore::profile(const std::vector<Tensor>& inputs, const exec::QuantConfig& config) {
  std::vector<double> ms(executor_->graph().nodes.size(), -1.0);
  exec::Executor::ScopedNodeTimer timer(*executor_, [&](int node, double t) { ms[static_cast<size_t>(node)] = t; });
  executor_->run(inputs, config);
  return ms;
}

exec::QuantConfig SessionCore::run_config(const RunConfigArgs& args, const std::string& what) {
  const exec::Executor& ex = executor();
  if (args.mode) {
    if (*args.mode == "stored") return ex.stored_config();
    if (*args.mode == "on") return ex.uniform_config(true);
    if (*args.mode == "off") return ex.uniform_config(false);
    fail(what + ": unknown quant mode '" + *args.mode + "' (expected 'stored', 'on' or 'off')");
  }
  if (args.document_json) return api::quant_config_of(context(), *args.document_json);
  const size_t n = ex.calibrations().size();
  exec::QuantConfig qc = ex.stored_config();
  qc.on.resize(n);
  qc.qtype.resize(n);  // "" = the stored qtype
  check(args.on.size() == n, what + ": config.on has " + std::to_string(args.on.size()) + " entries, the model has " +
                                 std::to_string(n) + " calibration nodes");
  for (size_t i = 0; i < n; ++i) qc.on[i] = args.on[i] != 0;
  if (args.qtype) {
    check(args.qtype->size() == n,
          what + ": config.qtype must be an array of " + std::to_string(n) + " strings ('' = as stored)");
    qc.qtype = *args.qtype;
  }
  if (args.round) {
    const std::optional<quant::RoundMode> mode = parse_round(*args.round);
    check(mode.has_value(),
          what + ": config.round '" + *args.round + "' is not 'half_to_even' or 'half_away_from_zero'");
    qc.round = *mode;
  }
  return qc;
}

api::Context SessionCore::context() {
  executor();
  return {*executor_, *relations_, data_.get()};
}

std::string SessionCore::analyze(const std::string& request, const api::EventFn& events, const api::CancelFn& cancel) {
  return api::analyze(context(), request, events, cancel);
}

std::string SessionCore::list_items(const std::string& request) { return api::list_items(context(), request); }

std::string SessionCore::resolve_config(const std::string& config) { return api::resolve_config(context(), config); }

std::string SessionCore::graph_json() {
  executor();
  return schema::graph_json(executor_->model(), *relations_, file_);
}

std::vector<uint8_t> SessionCore::export_config(const std::string& config_json, const std::string& format) {
  const api::Context c = context();
  return api::export_config(c, config_json, format, model_bytes_.data.get(), model_bytes_.size);
}

const Tensor& SessionCore::output(int index) const {
  check(index >= 0 && static_cast<size_t>(index) < outputs_.size(), "output: index " + std::to_string(index) +
                                                                        " out of range (the last run has " +
                                                                        std::to_string(outputs_.size()) + " outputs)");
  return outputs_[static_cast<size_t>(index)];
}

const std::string& SessionCore::output_name(int index) const {
  output(index);
  const ir::Graph& g = executor_->graph();
  return g.value(g.outputs[static_cast<size_t>(index)]).name;
}

void SessionCore::release() {
  outputs_.clear();
  data_.reset();
  relations_.reset();  // views the executor's graph
  file_ = {};
  executor_.reset();  // before the bytes it views
  model_bytes_ = OwnedBytes{};
  external_bytes_.clear();
  reservation_ = ModelReservation{};
}

std::vector<ExternalFileMatch> external_data_matches(const OwnedBytes& model,
                                                     const std::vector<std::string>& candidates) {
  const std::vector<reader::ExternalFile> files = reader::external_data_files(model.data.get(), model.size);
  check_model_fits({model.size, reader::external_data_bytes(files)});
  std::vector<ExternalFileMatch> out;
  for (const reader::ExternalFile& file : files) {
    const std::optional<size_t> i = reader::find_external_file(candidates, file.location);
    out.push_back({file.location, i ? std::optional<std::string>(candidates[*i]) : std::nullopt});
  }
  return out;
}

CalibrateOutput calibrate_model(const OwnedBytes& model, const std::vector<data::FileEntry>& files,
                                const CalibrateArgs& args) {
  const ir::Model float_model = reader::read_onnx(model.data.get(), model.size, external_read_options(args.external));
  const data::CalibrationData data = data::CalibrationData::from_files(float_model.graph, files);
  quant::CalibrateOptions co;
  if (args.method) co.method = quant::parse_activation_method(*args.method);
  if (args.percentile) co.percentile = *args.percentile;
  co.int16 = args.int16;
  const ir::Model calibrated = quant::calibrate(float_model, data.all_samples(), co);
  const quant::CalibrationCounts counts = quant::count_calibration_nodes(calibrated.graph);
  CalibrateOutput out;
  out.model = reader::write_onnx(calibrated);
  if (args.qdq) out.qdq = reader::write_onnx(quant::hz_to_qdq(calibrated));
  out.activations = counts.activations;
  out.weights = counts.weights;
  out.samples = data.sample_count();
  return out;
}

JsErrorOf js_error_of_current_exception(const char* out_of_memory) {
  try {
    throw;
  } catch (const FormatError& e) {
    return {"FormatError", e.what()};
  } catch (const Error& e) {
    return {"PtqError", e.what()};
  } catch (const std::bad_alloc&) {
    return {"RangeError", out_of_memory};
  } catch (const std::exception& e) {
    return {"InternalError", e.what()};
  } catch (...) {
    return {"InternalError", "unknown C++ exception"};
  }
}

std::optional<quant::RoundMode> parse_round(const std::string& s) {
  if (s == "half_to_even") return quant::RoundMode::HalfToEven;
  if (s == "half_away_from_zero") return quant::RoundMode::HalfAwayFromZero;
  return std::nullopt;
}

}  // namespace ptq::bind
