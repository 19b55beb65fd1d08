#include "analysis/distribution.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "analysis/metrics.h"
#include "analysis/selection.h"
#include "core/error.h"

namespace ptq::analysis {

Histogram make_histogram(const float* data, int64_t n, bool exclude_zeros, int bins) {
  check(bins > 0, "histogram: the number of bins must be positive");
  Histogram h;
  std::vector<float> kept;
  kept.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const float v = data[i];
    if (exclude_zeros && v == 0.0f) ++h.zeros_excluded;
    else if (!std::isfinite(v)) ++h.non_finite;
    else kept.push_back(v);
  }
  double first = 0.0, last = 1.0;
  if (!kept.empty()) {
    const auto [lo, hi] = std::minmax_element(kept.begin(), kept.end());
    first = *lo;
    last = *hi;
    if (first == last) {
      first -= 0.5;
      last += 0.5;
    }
  }
  // np.linspace in float64, then cast to the data's float32; the last edge is exactly `last`.
  const double step = (last - first) / bins;
  h.edges.resize(static_cast<size_t>(bins) + 1);
  for (int i = 0; i <= bins; ++i) h.edges[static_cast<size_t>(i)] = static_cast<float>(i * step + first);
  h.edges.back() = static_cast<float>(last);
  h.counts.assign(static_cast<size_t>(bins), 0);
  const double norm = bins / (last - first);
  for (float v : kept) {
    // numpy estimates the bin from the scaled offset, then corrects it against the float32 edges.
    int64_t i = std::min<int64_t>(static_cast<int64_t>((v - first) * norm), bins - 1);
    while (i > 0 && v < h.edges[static_cast<size_t>(i)]) --i;
    while (i < bins - 1 && v >= h.edges[static_cast<size_t>(i) + 1]) ++i;
    ++h.counts[static_cast<size_t>(i)];
  }
  return h;
}

std::string numpy_float32_str(float v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (v == 0.0f) return std::signbit(v) ? "-0.0" : "0.0";
  // Shortest significant digits that round-trip through float32 (numpy's Dragon4 "unique" mode).
  char buf[64];
  for (int precision = 1; precision <= 9; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*e", precision - 1, static_cast<double>(std::fabs(v)));
    if (std::strtof(buf, nullptr) == std::fabs(v)) break;
  }
  const std::string s = buf;
  const size_t e = s.find('e');
  std::string digits = s.substr(0, 1) + (e > 2 ? s.substr(2, e - 2) : "");
  const int exponent = std::atoi(s.c_str() + e + 1);
  const std::string sign = v < 0 ? "-" : "";
  const double a = std::fabs(static_cast<double>(v));
  if (a >= 1e-4 && a < 1e16) {
    // Positional, digits padded with zeros: "0.00123", "123.0", "9900000000000000.0".
    if (exponent < 0) return sign + "0." + std::string(static_cast<size_t>(-exponent - 1), '0') + digits;
    const size_t int_len = static_cast<size_t>(exponent) + 1;
    if (digits.size() <= int_len) return sign + digits + std::string(int_len - digits.size(), '0') + ".0";
    return sign + digits.substr(0, int_len) + "." + digits.substr(int_len);
  }
  // Scientific: "1e-05", "1.5e-05", "1e+16" (at least two exponent digits).
  std::string exp_digits = std::to_string(std::abs(exponent));
  if (exp_digits.size() < 2) exp_digits = "0" + exp_digits;
  const std::string mantissa = digits.size() > 1 ? digits.substr(0, 1) + "." + digits.substr(1) : digits;
  return sign + mantissa + "e" + (exponent < 0 ? "-" : "+") + exp_digits;
}

namespace {

std::string file_safe(std::string s) {
  std::replace(s.begin(), s.end(), '/', '_');
  return s;
}

// max(max(x), abs(min(x))) over the data (NaN skipped), the original's marker position.
float max_abs(const Tensor& t) {
  float m = 0.0f;
  const float* d = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i)
    if (!std::isnan(d[i])) m = std::max(m, std::fabs(d[i]));
  return m;
}

Histogram histogram_of(const Tensor& t, const char* label, const char* color, bool exclude_zeros, int bins) {
  Histogram h = make_histogram(t.data<float>(), t.numel(), exclude_zeros, bins);
  h.label = label;
  h.color = color;
  return h;
}

// Before/after histograms and their cosine similarity (§6.2 branches 2 and 3).
void compare(DistributionPlot& p, const Tensor& before, const Tensor& after, int bins) {
  p.histograms.push_back(histogram_of(before, "Before calibration", "#99ffbb", true, bins));
  p.histograms.push_back(histogram_of(after, "After calibration", "#FA8072", true, bins));
  p.max_abs = max_abs(before);
  p.has_cosine = true;
  p.cosine = compute_metric(Metric::Cosine, before.data<float>(), after.data<float>(), before.numel());
  p.title += "\ncosine-similarity:" + numpy_float32_str(p.cosine);
}

Tensor difference(const Tensor& a, const Tensor& b) {
  Tensor out(DType::Float, a.shape());
  for (int64_t i = 0; i < a.numel(); ++i) out.mutable_data<float>()[i] = a.data<float>()[i] - b.data<float>()[i];
  return out;
}

DistributionPlot new_plot(const std::string& name, const std::string& kind, const std::string& tensor,
                          const std::string& title, const std::string& file_name) {
  DistributionPlot p;
  p.name = name;
  p.kind = kind;
  p.tensor = tensor;
  p.title = title;
  p.file_name = file_name;
  return p;
}

enum class Branch { Activation, Weight, NodeOutput };

Branch branch_of(const exec::Executor& ex, const std::string& name) {
  const int ci = ex.calibration_index(name);
  if (ci < 0) {
    check(ex.graph().find_node(name) >= 0, "node '" + name + "' is inside a subgraph: its outputs are not tensors of "
                                           "the model's run; plot a calibration node inside it instead");
    return Branch::NodeOutput;
  }
  const auto& spec = ex.calibrations()[static_cast<size_t>(ci)];
  if (spec.kind == quant::TensorKind::Feature) return Branch::Activation;
  // The original also requires the name "<initializer>_HzCalibration"; any weight node reading a
  // constant qualifies here (docs/compatibility.md).
  if (spec.kind == quant::TensorKind::Weight && spec.graph->constant(spec.input_value)) return Branch::Weight;
  return Branch::NodeOutput;
}

}  // namespace

DistributionResult plot_distribution(exec::Executor& ex, const quant::CalibrationRelations&,
                                     const data::CalibrationData& data, const DistributionOptions& o) {
  const ir::Graph& g = ex.graph();
  check_node_names(ex, o.nodes);
  DistributionResult result;
  const size_t sample = single_sample(data, o.selection);
  result.sample = data.sample_names()[sample];

  // One calibrated run serves every node output, one observed run every activation (inside a
  // subgraph: every execution, §1.13). Weight calibration nodes alone need no run (their plots come
  // from the stored weights), so they work on a model that cannot run (docs/compatibility.md).
  std::vector<int> keep, activations;
  for (const auto& name : o.nodes) {
    const Branch b = branch_of(ex, name);
    if (b == Branch::Activation) activations.push_back(ex.calibration_index(name));
    if (b == Branch::NodeOutput)
      for (int v : g.node(g.find_node(name)).outputs)
        if (v >= 0) keep.push_back(v);
  }
  const exec::QuantConfig quantized = quantized_config(ex, o.config);
  exec::RunRecord base, calibrated;
  if (!keep.empty()) {
    base = ex.run(data.sample(sample), ex.uniform_config(false), {}, true);
    calibrated = ex.run_incremental(base, quantized, keep);
  }
  std::vector<Tensor> observed;
  if (!activations.empty()) observed = observe_calibration_inputs(ex, data.sample(sample), quantized, activations);
  size_t next_activation = 0;

  for (size_t k = 0; k < o.nodes.size(); ++k) {
    const std::string& name = o.nodes[k];
    switch (branch_of(ex, name)) {
      case Branch::Activation: {
        const auto& spec = ex.calibrations()[static_cast<size_t>(ex.calibration_index(name))];
        DistributionPlot p = new_plot(name, "activation", spec.graph->value(spec.input_value).name,
                                      name + " activation distribution", "activation_" + file_safe(name) + ".png");
        const Tensor& x = observed[next_activation++];
        if (!x.defined()) {
          result.not_run.push_back(name);
          break;
        }
        p.histograms.push_back(histogram_of(x, "Input data distribution", "#99ffbb", true, o.bins));
        if (!spec.thresholds.empty()) {
          p.has_threshold = true;
          p.threshold = *std::max_element(spec.thresholds.begin(), spec.thresholds.end());
        }
        p.max_abs = max_abs(x);
        result.plots.push_back(std::move(p));
        break;
      }
      case Branch::Weight: {
        const auto& spec = ex.calibrations()[static_cast<size_t>(ex.calibration_index(name))];
        DistributionPlot p = new_plot(name, "weight", spec.graph->value(spec.input_value).name,
                                      name + " weight distribution", "weight_" + file_safe(name) + ".png");
        const Tensor w = spec.graph->constant(spec.input_value)->to_float();
        // The weight under the quantized model's qtype for it (the stored one unless a configuration
        // overrides it) and its rounding.
        const size_t ci = static_cast<size_t>(ex.calibration_index(name));
        const std::string& override_qtype = quantized.qtype[ci];
        const quant::QType qtype = override_qtype.empty() ? spec.qtype : quant::QType::parse(override_qtype);
        const std::vector<float> scales =
            override_qtype.empty() ? spec.scales : quant::override_scales(spec, qtype, quantized.keeps_stored_scales(ci));
        compare(p, w, quant::fake_quantize(spec, qtype, scales, w, quantized.round), o.bins);
        result.plots.push_back(std::move(p));
        break;
      }
      case Branch::NodeOutput:
        for (int v : g.node(g.find_node(name)).outputs) {
          if (v < 0) continue;
          const std::string& t = g.value(v).name;
          DistributionPlot p = new_plot(name, "node_output", t, name + " output:" + t + " distribution",
                                        "node_output_" + file_safe(":" + t + "_of_" + name) + ".png");
          const Tensor f = value_of(ex, base, v).to_float(), c = value_of(ex, calibrated, v).to_float();
          check(f.numel() == c.numel(), "'" + t + "' has " + std::to_string(f.numel()) + " elements in the float model but " +
                                            std::to_string(c.numel()) + " in the calibrated model");
          compare(p, f, c, o.bins);
          p.histograms.push_back(histogram_of(difference(f, c), "Quantization error distribution", "#33A1C9", false, o.bins));
          result.plots.push_back(std::move(p));
        }
        break;
    }
    if (o.progress && !o.progress(k + 1, o.nodes.size())) {
      result.cancelled = true;
      break;
    }
  }
  return result;
}

}  // namespace ptq::analysis
