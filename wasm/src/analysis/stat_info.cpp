#include "analysis/stat_info.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "analysis/selection.h"
#include "core/error.h"

namespace ptq::analysis {
namespace {

// Running per-channel max |x| and smallest non-zero |x| with numpy's NaN propagation.
struct ChannelExtremes {
  std::vector<float> max_abs, min_nz;
  std::vector<uint8_t> seen_nan;

  void add(const Tensor& t, int64_t outer, int64_t channels, int64_t inner, const std::string& where) {
    if (max_abs.empty()) {
      max_abs.assign(static_cast<size_t>(channels), 0.0f);
      min_nz.assign(static_cast<size_t>(channels), std::numeric_limits<float>::infinity());
      seen_nan.assign(static_cast<size_t>(channels), 0);
    }
    check(static_cast<int64_t>(max_abs.size()) == channels,
          where + ": the channel count differs between samples");
    const float* x = t.data<float>();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t c = 0; c < channels; ++c) {
        const size_t ci = static_cast<size_t>(c);
        for (int64_t i = 0; i < inner; ++i) {
          const float a = std::fabs(x[(o * channels + c) * inner + i]);
          if (std::isnan(a)) seen_nan[ci] = 1;
          max_abs[ci] = std::max(max_abs[ci], a);
          if (a != 0.0f) min_nz[ci] = std::min(min_nz[ci], a);
        }
      }
  }

  void store(NodeStatInfo& info) const {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    for (size_t c = 0; c < max_abs.size(); ++c) {
      info.max_vals.push_back(seen_nan[c] ? nan : max_abs[c]);
      info.min_nz_vals.push_back(seen_nan[c] ? nan : (std::isinf(min_nz[c]) ? 0.0f : min_nz[c]));
    }
  }
};

NodeStatInfo header(const quant::CalibrationSpec& spec) {
  NodeStatInfo info;
  info.node = spec.node_name;
  info.tensor_type = spec.kind_name();
  // One scale per channel (Horizon symmetric per-channel nodes, per-axis Q/DQ quantizers).
  info.granularity = spec.scales.size() > 1 ? "per-channel" : "per-tensor";
  info.thresholds = spec.thresholds;
  info.scales = spec.scales;
  return info;
}

std::string format(const char* fmt, double v) {
  if (std::isnan(v)) return "nan";  // C prints "-nan" for some NaNs, Python never does
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

// Per-tensor summary values (§8.1 visualize): max of Max_vals, smallest positive Min_nz_vals.
double overall_max(const std::vector<float>& v) {
  double m = -std::numeric_limits<double>::infinity();
  for (float x : v) m = std::isnan(x) || std::isnan(m) ? std::nan("") : std::max(m, static_cast<double>(x));
  return v.empty() ? std::nan("") : m;
}

double smallest_positive(const std::vector<float>& v) {
  double m = std::numeric_limits<double>::infinity();
  for (float x : v)
    if (x > 0) m = std::min(m, static_cast<double>(x));
  return std::isinf(m) ? 0.0 : m;  // the original raises on an empty selection
}

double first_or_nan(const std::vector<float>& v) { return v.empty() ? std::nan("") : v[0]; }

}  // namespace

StatInfoResult get_calibration_nodes_stat_info(exec::Executor& ex, const quant::CalibrationRelations&,
                                               const data::CalibrationData& data, const StatInfoOptions& o) {
  if (o.has_nodes) check_node_names(ex, o.nodes);
  auto selected = [&](const quant::CalibrationSpec& spec) {
    return !o.has_nodes || std::find(o.nodes.begin(), o.nodes.end(), spec.node_name) != o.nodes.end();
  };
  StatInfoResult result;
  std::vector<const quant::CalibrationSpec*> features;
  for (const auto& spec : ex.calibrations()) {
    if (!selected(spec)) continue;
    if (spec.kind == quant::TensorKind::Feature) features.push_back(&spec);
    if (spec.kind != quant::TensorKind::Weight) continue;
    NodeStatInfo info = header(spec);
    const Tensor* w = spec.graph->constant(spec.input_value);
    check(w != nullptr, "weight calibration node '" + spec.node_name + "' does not read an initializer");
    const Tensor wf = w->to_float();
    check(wf.rank() >= 1, "weight of '" + spec.node_name + "' is a scalar; rows are taken along dim 0");
    ChannelExtremes rows;  // weight reshaped to [shape[0], -1], whatever the node's axis
    rows.add(wf, 1, wf.dim(0), wf.dim(0) ? wf.numel() / wf.dim(0) : 0, spec.node_name);
    rows.store(info);
    result.nodes.push_back(std::move(info));
  }
  if (features.empty()) return result;
  // Feature statistics need a run. On a model that cannot run, every calibration node by default
  // (nodes_list not given) still gives the weight nodes, naming what is left out; a feature node asked
  // for by name fails below, naming the unsupported ops.
  if (!o.has_nodes && !ex.runnable()) {
    result.messages.push_back(std::to_string(features.size()) +
                              " feature calibration node(s) left out: their statistics need a run of the model, and " +
                              ex.unsupported_message());
    return result;
  }

  // Features: the float model (every calibration node OFF) over all samples; the node's output
  // equals its input there (inside a subgraph: every execution, §1.13). Channels along axis 1 (the
  // original assumes 4-D NCHW).
  std::vector<int> observed_ids;
  for (const auto* spec : features) observed_ids.push_back(ex.calibration_index(spec->node_name));
  std::vector<ChannelExtremes> extremes(features.size());
  const std::vector<size_t> samples = data.select(0);
  const exec::QuantConfig float_config = ex.uniform_config(false);
  for (size_t k = 0; k < samples.size(); ++k) {
    result.samples.push_back(data.sample_names()[samples[k]]);
    const std::vector<Tensor> observed =
        observe_calibration_inputs(ex, data.sample(samples[k]), float_config, observed_ids);
    for (size_t f = 0; f < features.size(); ++f) {
      const Tensor& t = observed[f];
      if (!t.defined()) continue;  // inside a branch this sample does not take
      int64_t channels = 1, inner = 1, outer = 1;
      if (t.rank() >= 2) {
        outer = t.dim(0);
        channels = t.dim(1);
        for (size_t d = 2; d < t.rank(); ++d) inner *= t.dim(d);
      } else {
        inner = t.numel();
      }
      extremes[f].add(t, outer, channels, inner, features[f]->node_name);
    }
    if (o.progress && !o.progress(k + 1, samples.size())) {
      result.cancelled = true;
      break;
    }
  }
  for (size_t f = 0; f < features.size(); ++f) {
    NodeStatInfo info = header(*features[f]);
    extremes[f].store(info);
    result.nodes.push_back(std::move(info));
  }
  return result;
}

std::vector<std::string> stat_info_cells(const NodeStatInfo& info) {
  std::vector<std::string> cells = {info.tensor_type, info.granularity};
  if (info.granularity == "per-channel") {
    cells.push_back(format("%.6f,...", first_or_nan(info.thresholds)));
    cells.push_back(format("%.6f,...", first_or_nan(info.scales)));
    cells.push_back(format("%.6f,...", first_or_nan(info.max_vals)));
    cells.push_back(format("%.6e,...", first_or_nan(info.min_nz_vals)));
  } else {
    cells.push_back(format("%.6f", first_or_nan(info.thresholds)));
    cells.push_back(format("%.6f", first_or_nan(info.scales)));
    cells.push_back(format("%.6f", overall_max(info.max_vals)));
    cells.push_back(format("%.6e", smallest_positive(info.min_nz_vals)));
  }
  return cells;
}

std::string format_stat_info_table(const StatInfoResult& r) {
  const std::vector<std::string> headers = {"Node", "Tensor_type", "Granularity", "Thresholds", "Scales", "Max_vals", "Min_nz_vals"};
  std::vector<std::vector<std::string>> rows;
  std::vector<size_t> width(headers.size(), 0);
  width[0] = 10;
  for (size_t c = 1; c < headers.size(); ++c) width[c] = headers[c].size();
  for (const auto& info : r.nodes) {
    std::vector<std::string> row = {info.node};
    const auto cells = stat_info_cells(info);
    row.insert(row.end(), cells.begin(), cells.end());
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
    rows.push_back(std::move(row));
  }
  width[0] = std::min<size_t>(width[0], 50);
  size_t head_length = 0;
  for (size_t w : width) head_length += w + 2;
  auto pad = [](const std::string& s, size_t w) { return s + std::string(w + 2 > s.size() ? w + 2 - s.size() : 0, ' '); };
  // print_info_dict: description "", then the (empty) title centred in '='.
  std::string out = "\n" + std::string(head_length / 2, '=') + std::string(head_length - head_length / 2, '=') + "\n";
  for (size_t c = 0; c < headers.size(); ++c) out += pad(headers[c], width[c]);
  out += "\n" + std::string(head_length, '-');
  for (auto& row : rows) {
    if (row[0].size() > 50) row[0] = "..." + row[0].substr(row[0].size() - 47);
    out += "\n";
    for (size_t c = 0; c < row.size(); ++c) out += pad(row[c], width[c]);
  }
  return out;
}

StatInfoCurves stat_info_curves(const StatInfoResult& r, const std::string& tensor_type) {
  StatInfoCurves curves;
  for (const auto& info : r.nodes) {
    if (info.tensor_type != tensor_type) continue;
    const bool per_channel = info.granularity == "per-channel";
    curves.nodes.push_back(info.node);
    curves.thresholds.push_back(first_or_nan(info.thresholds));
    curves.scales.push_back(first_or_nan(info.scales));
    curves.max_vals.push_back(per_channel ? first_or_nan(info.max_vals) : overall_max(info.max_vals));
    curves.min_nz_vals.push_back(per_channel ? first_or_nan(info.min_nz_vals) : smallest_positive(info.min_nz_vals));
  }
  return curves;
}

}  // namespace ptq::analysis
