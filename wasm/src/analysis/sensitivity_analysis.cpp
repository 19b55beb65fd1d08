#include "analysis/sensitivity_analysis.h"

#include <cstdio>
#include <cstdlib>
#include <set>

#include "analysis/metrics.h"
#include "analysis/selection.h"
#include "core/error.h"

namespace ptq::analysis {
namespace {

// Python's str() of a float (shortest round-trip digits), for the log line.
std::string python_float_str(double v) {
  char buf[64];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  std::string s = buf;
  if (s.find_first_of(".eni") == std::string::npos) s += ".0";
  return s;
}

// Per sample: the float model and the calibrated model, each kept whole for incremental variants.
struct SampleBases {
  exec::RunRecord float_run, calibrated_run;
};

// §3.3 aggregation of the cosine similarity of `config` (run from `pick(base)`) against the float model.
template <class Pick>
float cosine_of(exec::Executor& ex, const std::vector<SampleBases>& bases, const std::vector<int>& compared,
                const exec::QuantConfig& config, Pick pick) {
  std::vector<std::vector<float>> per_output(compared.size());
  for (const auto& b : bases) {
    const exec::RunRecord run = ex.run_incremental(pick(b), config, compared);
    for (size_t t = 0; t < compared.size(); ++t) {
      const Tensor ref = value_of(ex, b.float_run, compared[t]).to_float();
      const Tensor got = value_of(ex, run, compared[t]).to_float();
      check(ref.numel() == got.numel(), "model output '" + ex.graph().value(compared[t]).name +
                                            "' changes its size under quantization");
      per_output[t].push_back(compute_metric(Metric::Cosine, ref.data<float>(), got.data<float>(), ref.numel()));
    }
  }
  return aggregate(per_output);
}

}  // namespace

SensitivityAnalysisResult sensitivity_analysis(exec::Executor& ex, const quant::CalibrationRelations& rel,
                                               const data::CalibrationData& data, const SensitivityAnalysisOptions& o) {
  check_node_names(ex, o.sensitive_nodes);
  if (o.qtype != "float32") quant::QType::parse(o.qtype);  // rejects unknown names up front
  SensitivityAnalysisResult result;
  result.qtype = o.qtype;
  result.messages.push_back("Start analyzing node sensitivity...");
  std::vector<std::string> nodes = o.sensitive_nodes;
  if (nodes.empty()) {
    result.messages.push_back("Unspecified sensitive node, start calculating node sensitivity...");
    SensitivityOptions ranking_options;
    ranking_options.data_num = o.data_num;
    ranking_options.selection = o.selection;
    ranking_options.progress = o.progress;
    ranking_options.config = o.config;
    SensitivityResult ranking = get_sensitivity_of_nodes(ex, rel, data, ranking_options);
    result.ranked = true;
    result.ranking = ranking.rows;
    if (ranking.cancelled) {
      result.cancelled = true;
      return result;
    }
    for (const auto& row : ranking.rows)
      if (row.values[0] <= o.pick_threshold) nodes.push_back(row.item);  // NaN is never picked
    result.messages.push_back("Analyzing nodes that sensitivity less than " + python_float_str(o.pick_threshold) + ".");
  }

  const std::vector<int> compared = value_ids(ex.graph(), rel.model_outputs());
  const exec::QuantConfig quantized = quantized_config(ex, o.config);
  std::vector<SampleBases> bases;
  for (size_t s : data.select(o.data_num, o.selection)) {
    result.samples.push_back(data.sample_names()[s]);
    SampleBases b;
    b.float_run = ex.run(data.sample(s), ex.uniform_config(false), {}, true);
    b.calibrated_run = ex.run(data.sample(s), quantized, {}, true);
    bases.push_back(std::move(b));
  }
  auto from_float = [](const SampleBases& b) -> const exec::RunRecord& { return b.float_run; };
  auto from_calibrated = [](const SampleBases& b) -> const exec::RunRecord& { return b.calibrated_run; };

  result.x.push_back("none");
  result.cumulative.push_back(cosine_of(ex, bases, compared, quantized, from_calibrated));
  std::set<int> taken_out;
  for (size_t k = 0; k < nodes.size(); ++k) {
    const std::vector<int> set = calibration_set(ex, rel, {nodes[k]});
    taken_out.insert(set.begin(), set.end());
    result.x.push_back(nodes[k]);
    result.per_node.push_back(cosine_of(ex, bases, compared, whitelist_config(ex, quantized, set), from_float));
    const exec::QuantConfig cumulative =
        blacklist_config(quantized, {taken_out.begin(), taken_out.end()}, o.qtype, o.stored_scales);
    result.cumulative.push_back(cosine_of(ex, bases, compared, cumulative, from_calibrated));
    if (o.progress && !o.progress(k + 1, nodes.size())) {
      result.cancelled = true;
      break;
    }
  }
  return result;
}

}  // namespace ptq::analysis
