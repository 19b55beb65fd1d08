#include "analysis/recalibrate.h"

#include <algorithm>

#include "core/error.h"

namespace ptq::analysis {

SampleSplit split_samples(const std::vector<size_t>& chosen) {
  SampleSplit split;
  for (size_t k = 0; k < chosen.size(); ++k) (k % 2 == 0 ? split.tune : split.held_out).push_back(chosen[k]);
  return split;
}

std::vector<quant::ValueObserver> observe_values(exec::Executor& ex, const data::CalibrationData& data,
                                                 const std::vector<size_t>& samples,
                                                 const std::vector<int>& calibrations) {
  std::vector<quant::ValueObserver> observers;
  std::vector<int> slot(ex.calibrations().size(), -1);
  bool activations = false;
  for (size_t k = 0; k < calibrations.size(); ++k) {
    const quant::CalibrationSpec& spec = ex.calibrations().at(static_cast<size_t>(calibrations[k]));
    observers.emplace_back(spec.axis);
    const Tensor* weight = spec.graph->constant(spec.input_value);
    if (weight) continue;  // read below, once
    slot[static_cast<size_t>(calibrations[k])] = static_cast<int>(k);
    activations = true;
  }
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t k = 0; k < calibrations.size(); ++k) {
      const quant::CalibrationSpec& spec = ex.calibrations()[static_cast<size_t>(calibrations[k])];
      if (const Tensor* weight = spec.graph->constant(spec.input_value))
        pass == 0 ? observers[k].add_range(*weight) : observers[k].add_histogram(*weight);
    }
    if (!activations) continue;
    check(!samples.empty(), "There is no calibration_data.");
    for (size_t s : samples) {
      exec::Executor::ScopedCalibrationProbe probe(ex, [&](int ci, const Tensor& x) {
        const int k = slot[static_cast<size_t>(ci)];
        if (k < 0) return;
        pass == 0 ? observers[static_cast<size_t>(k)].add_range(x) : observers[static_cast<size_t>(k)].add_histogram(x);
      });
      ex.run(data.sample(s), ex.uniform_config(false));
    }
  }
  return observers;
}

quant::ThresholdResolver threshold_resolver(exec::Executor& ex, const data::CalibrationData& data,
                                            std::vector<size_t> samples) {
  return [&ex, &data, samples = std::move(samples)](const std::vector<quant::ThresholdRequest>& requests) {
    std::vector<int> nodes;
    for (const auto& r : requests) nodes.push_back(static_cast<int>(r.calibration));
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
    const std::vector<quant::ValueObserver> observed = observe_values(ex, data, samples, nodes);
    std::vector<std::vector<float>> out;
    for (const auto& r : requests) {
      const size_t k = static_cast<size_t>(
          std::lower_bound(nodes.begin(), nodes.end(), static_cast<int>(r.calibration)) - nodes.begin());
      const quant::CalibrationSpec& spec = ex.calibrations()[r.calibration];
      if (observed[k].count() == 0 && r.keep_unobserved) {
        out.emplace_back();
        continue;
      }
      check(observed[k].count() > 0, "calibration node '" + spec.node_name +
                                         "' did not run on the calibration samples (inside a branch they do not take): "
                                         "there are no values to choose its thresholds from");
      out.push_back(quant::method_thresholds(spec, quant::QType::parse(r.qtype), observed[k], r.method));
    }
    return out;
  };
}

}  // namespace ptq::analysis
