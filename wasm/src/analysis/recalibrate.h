#pragma once
// What the float model feeds calibration nodes, and thresholds chosen again from it (§13.2): the
// observation behind threshold intents, cause hints (explain) and the comparison of calibration
// methods. Activations are observed in float runs of the samples (two per sample: ranges, then
// histograms over them), weights from their stored values.
#include <cstddef>
#include <vector>

#include "calibrate/threshold_methods.h"
#include "data/calibration_data.h"
#include "exec/executor.h"

namespace ptq::analysis {

// The samples of a search split in two (§13.4): in the order chosen, the 1st, 3rd, 5th, ... are tuned
// on and the 2nd, 4th, ... held out to report on; one sample is tuned on and nothing is held out.
struct SampleSplit {
  std::vector<size_t> tune, held_out;
};
SampleSplit split_samples(const std::vector<size_t>& chosen);

// One ValueObserver per calibration node of `calibrations` (indices into Executor::calibrations()),
// along the node's axis, over `samples`. Every calibration node at any depth is observed where it runs
// (§1.13: a subgraph's node every time it runs).
std::vector<quant::ValueObserver> observe_values(exec::Executor& executor, const data::CalibrationData& data,
                                                 const std::vector<size_t>& samples,
                                                 const std::vector<int>& calibrations);

// A resolver of threshold methods (config/config_doc.h) observing `samples` of `data`: all the
// nodes one call asks for are observed together.
quant::ThresholdResolver threshold_resolver(exec::Executor& executor, const data::CalibrationData& data,
                                            std::vector<size_t> samples);

}  // namespace ptq::analysis
