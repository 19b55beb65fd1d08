#pragma once
// What-if: the model under one quantization configuration (docs/config-schema.md) against the float
// model: the five metrics of every model output (and their mean over outputs), and one metric at the
// first output of every normal node (the accumulated error along the graph, as a heat layer). Meant
// to be called again after every change of the configuration: each sample's record of the quantized
// model is derived from the executor's run cache (the record of the nearest configuration run
// before, usually the previous toggle), so one toggle re-runs only the nodes the change reaches.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "analysis/metrics.h"
#include "data/calibration_data.h"
#include "exec/executor.h"
#include "quant/relations.h"

namespace ptq::analysis {

struct WhatIfOptions {
  size_t data_num = 1;  // 0 = all samples
  data::SampleSelection selection = data::SampleSelection::Last;
  std::string metric = "cosine-similarity";  // the metric of `nodes`
  // Split the chosen samples into tuning and held-out ones (§13.4): every number on the tuning
  // samples, and the held-out samples' output metrics beside them (the page's "apply" of a hint).
  bool held_out = false;
  // The configuration to evaluate; unset = the model as stored.
  std::optional<exec::QuantConfig> config;
  // Called after each sample with (done, total); return false to cancel.
  std::function<bool(size_t, size_t)> progress;
};

// Per sample: the quantized model's metric at the first output of every normal node (graph order,
// rel.normal_nodes()) against the float model; NaN where the sizes differ.
std::vector<float> node_output_metrics(const exec::Executor& executor, const quant::CalibrationRelations& relations,
                                       const exec::RunRecord& float_run, const exec::RunRecord& quantized_run,
                                       Metric metric);

struct WhatIfResult {
  std::string metric;
  std::vector<std::string> samples;
  std::vector<std::string> outputs;               // the compared tensors (§1.10 model outputs)
  std::vector<std::vector<float>> output_metrics;  // [output][all_metrics()], averaged over samples (§3.3)
  std::vector<float> mean;                         // [all_metrics()]: mean over outputs (§3.3 aggregation)
  std::vector<std::string> nodes;                  // normal nodes, graph order
  std::vector<float> node_values;                  // `metric` at each node's first output, averaged over samples
  bool split = false;                              // held_out asked: the fields below are set
  std::vector<std::string> held_out_samples;       // (none with a single chosen sample)
  std::vector<float> held_out_mean;                // [all_metrics()] on them, as `mean`
  int64_t nodes_executed = 0;                      // nodes this call ran (0 when every record was cached)
  int64_t node_count = 0;                          // nodes of the graph (per sample)
  bool cancelled = false;
};

WhatIfResult what_if(exec::Executor& executor, const quant::CalibrationRelations& relations,
                     const data::CalibrationData& data, const WhatIfOptions& options);

}  // namespace ptq::analysis
