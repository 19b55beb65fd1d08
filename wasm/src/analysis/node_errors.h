#pragma once
// Node errors: where along the graph the error starts. For every normal node (a node with calibrated
// inputs, graph order), at its first output against the float model:
//  - own: only that node's calibration nodes quantize, as the configuration has them (ON with its
//    qtype, or OFF), everything else float: the error the node adds by itself;
//  - accumulated: the whole configuration (default: as stored): the error reaching that point.
// rknn-toolkit2's "single vs entire" and onnxruntime's qdq_err vs xmodel_err, per node of the graph.
// With `converter`, both are measured as the Horizon converter log measures its per-node cosine (§12.3):
// at the output of the calibration node reading the node's output directly, when there is one (the
// fake-quantized output; own then also has that calibration node as configured), and over the chosen
// samples' tensors flattened together into one vector instead of per sample and averaged.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "data/calibration_data.h"
#include "exec/executor.h"
#include "quant/relations.h"

namespace ptq::analysis {

struct NodeErrorsOptions {
  size_t data_num = 1;  // 0 = all samples
  data::SampleSelection selection = data::SampleSelection::Last;
  std::string metric = "cosine-similarity";
  // Measured as the Horizon converter log does (option measure = "converter"); false: "output".
  bool converter = false;
  // When not empty: these samples (a search's tuning samples) instead of data_num / selection.
  std::vector<size_t> samples;
  // The configuration; unset = the model as stored.
  std::optional<exec::QuantConfig> config;
  // Called after each node's own error with (done, total); return false to cancel.
  std::function<bool(size_t, size_t)> progress;
};

struct NodeErrorsResult {
  std::string metric;
  bool converter = false;
  std::vector<std::string> samples;
  std::vector<std::string> nodes;   // normal nodes, graph order
  std::vector<float> own;           // per node, averaged over samples; NaN for nodes not reached (cancelled)
  std::vector<float> accumulated;   // per node, averaged over samples
  bool cancelled = false;
};

NodeErrorsResult node_errors(exec::Executor& executor, const quant::CalibrationRelations& relations,
                             const data::CalibrationData& data, const NodeErrorsOptions& options);

}  // namespace ptq::analysis
