#include "analysis/calibration_methods.h"

#include <algorithm>
#include <cmath>

#include "analysis/evaluator.h"
#include "analysis/metrics.h"
#include "analysis/recalibrate.h"
#include "analysis/selection.h"
#include "core/error.h"

namespace ptq::analysis {

const std::vector<std::string>& calibration_toolchains() {
  static const std::vector<std::string> names = {"horizon", "onnxruntime", "rknn"};
  return names;
}

bool toolchain_expresses(const std::string& toolchain, const quant::ThresholdMethod& m) {
  if (toolchain == "any") return true;
  if (toolchain == "horizon") return m.name != "mse";
  if (toolchain == "onnxruntime") return !m.per_channel && m.name != "mse";
  if (toolchain == "rknn") return !m.per_channel && m.name != "percentile";
  return false;
}

namespace {

// Whether a is better than b in the metric's direction (NaN never is).
bool better(Metric m, float a, float b) {
  if (std::isnan(a)) return false;
  if (std::isnan(b)) return true;
  return higher_is_better(m) ? a > b : a < b;
}

std::vector<quant::ThresholdMethod> settings_of(const CalibrationMethodsOptions& o) {
  std::vector<quant::ThresholdMethod> out;
  for (bool per_channel : {false, true}) {
    if (per_channel && !o.per_channel) continue;
    auto add = [&](const std::string& name, double percentile) {
      quant::ThresholdMethod m;
      m.name = name;
      m.percentile = percentile;
      m.per_channel = per_channel;
      out.push_back(m);
    };
    add("max", 100.0);
    for (double p : o.percentiles) add("percentile", p);
    add("kl", 100.0);
    add("mse", 100.0);
  }
  return out;
}

}  // namespace

CalibrationMethodsResult compare_calibration_methods(exec::Executor& ex, const quant::CalibrationRelations& rel,
                                                     const data::CalibrationData& data,
                                                     const CalibrationMethodsOptions& o) {
  const Metric metric = parse_metric(o.metric);
  check(o.toolchain == "any" || std::find(calibration_toolchains().begin(), calibration_toolchains().end(),
                                          o.toolchain) != calibration_toolchains().end(),
        "options.toolchain must be 'any', 'horizon', 'onnxruntime' or 'rknn', got '" + o.toolchain + "'");
  for (double p : o.percentiles)
    check(p > 0.0 && p <= 100.0, "options.percentiles: " + std::to_string(p) + " is not a percentile in (0, 100]");
  CalibrationMethodsResult r;
  r.metric = o.metric;
  r.toolchain = o.toolchain;
  const SampleSplit split = split_samples(data.select(std::min(o.data_num, data.sample_count()), o.selection));
  check(!split.tune.empty(), "There is no calibration_data.");
  for (size_t s : split.tune) r.tune_samples.push_back(data.sample_names()[s]);
  for (size_t s : split.held_out) r.held_out_samples.push_back(data.sample_names()[s]);
  const exec::QuantConfig base = quantized_config(ex, o.config);
  const size_t count = ex.calibrations().size();

  // The activation nodes a model-wide method re-calibrates (those whose thresholds the configuration
  // does not set itself), observed once on the tuning samples.
  std::vector<int> nodes;
  for (size_t i = 0; i < count; ++i) {
    const quant::CalibrationSpec& spec = ex.calibrations()[i];
    if (spec.kind != quant::TensorKind::Weight && !base.thresholds_of(i) && quant::model_wide_target(spec, {}))
      nodes.push_back(static_cast<int>(i));
  }
  const std::vector<quant::ValueObserver> observed = observe_values(ex, data, split.tune, nodes);

  const std::vector<int> compared = value_ids(ex.graph(), rel.model_outputs());
  Evaluator tune(ex, compared, metric), held(ex, compared, metric);
  for (size_t s : split.tune) tune.add_sample(data.sample(s), base);
  for (size_t s : split.held_out) held.add_sample(data.sample(s), base);
  const size_t m_index =
      static_cast<size_t>(std::find(all_metrics().begin(), all_metrics().end(), metric) - all_metrics().begin());

  const std::vector<quant::ThresholdMethod> methods = settings_of(o);
  std::vector<std::vector<std::vector<float>>> thresholds;  // per setting (after the stored one), per node
  std::vector<std::vector<uint8_t>> targets;
  CalibrationSetting stored;
  stored.label = "as calibrated";
  stored.stored = true;
  r.settings.push_back(stored);
  thresholds.emplace_back(count);
  targets.emplace_back(count, 0);
  for (const auto& m : methods) {
    std::vector<std::vector<float>> t(count);
    std::vector<uint8_t> hit(count, 0);
    std::string why;
    for (size_t k = 0; k < nodes.size() && why.empty(); ++k) {
      const size_t i = static_cast<size_t>(nodes[k]);
      const quant::CalibrationSpec& spec = ex.calibrations()[i];
      if (!quant::model_wide_target(spec, m) || observed[k].count() == 0) continue;
      const std::string& q = i < base.qtype.size() && !base.qtype[i].empty() ? base.qtype[i] : spec.qtype.name;
      try {
        t[i] = quant::method_thresholds(spec, quant::QType::parse(q), observed[k], quant::model_wide_method(spec, m));
        quant::with_thresholds(spec, t[i]);
        hit[i] = 1;
      } catch (const Error& e) {
        why = e.what();
      }
    }
    if (!why.empty()) {
      r.skipped.push_back(m.text() + ": " + why);
      continue;
    }
    CalibrationSetting s;
    s.label = m.text();
    s.method = m;
    r.settings.push_back(s);
    thresholds.push_back(std::move(t));
    targets.push_back(std::move(hit));
  }

  for (size_t k = 0; k < r.settings.size(); ++k) {
    CalibrationSetting& s = r.settings[k];
    exec::QuantConfig c = base;
    c.thresholds.resize(count);
    for (size_t i = 0; i < count; ++i)
      if (targets[k][i]) c.thresholds[i] = thresholds[k][i];
    s.tune = tune.peek_all(c);
    if (!held.empty()) s.held_out = held.peek_all(c);
    for (const auto& t : calibration_toolchains())
      if (s.stored || toolchain_expresses(t, s.method)) s.toolchains.push_back(t);
    if (o.progress && !o.progress(k + 1, r.settings.size())) {
      r.cancelled = true;
      break;
    }
  }
  // The best overall and per toolchain, by the metric on the tuning samples; the stored thresholds
  // count for every toolchain (the model as it is).
  auto best_of = [&](const std::string& toolchain) {
    int best = -1;
    for (size_t k = 0; k < r.settings.size(); ++k) {
      const CalibrationSetting& s = r.settings[k];
      if (s.tune.empty() || !(s.stored || toolchain_expresses(toolchain, s.method))) continue;
      if (best < 0 || better(metric, s.tune[m_index], r.settings[static_cast<size_t>(best)].tune[m_index]))
        best = static_cast<int>(k);
    }
    return best;
  };
  r.best = best_of(o.toolchain);
  for (const auto& t : calibration_toolchains()) r.best_by_toolchain.emplace_back(t, best_of(t));
  if (r.best >= 0) {
    r.best_thresholds = thresholds[static_cast<size_t>(r.best)];
    r.best_targets = targets[static_cast<size_t>(r.best)];
    const CalibrationSetting& b = r.settings[static_cast<size_t>(r.best)];
    const CalibrationSetting& as_calibrated = r.settings[0];
    if (!b.stored && !b.held_out.empty() && better(metric, as_calibrated.held_out[m_index], b.held_out[m_index]))
      r.warnings.push_back("The best setting on the tuning samples, " + b.label +
                           ", measures worse than the model as "
                           "calibrated on the held-out samples (" +
                           o.metric + " " + std::to_string(b.held_out[m_index]) + " against " +
                           std::to_string(as_calibrated.held_out[m_index]) +
                           "): it may not hold on other data; compare on more samples (-d)");
  }
  r.evaluations = tune.evaluations() + held.evaluations();
  return r;
}

}  // namespace ptq::analysis
