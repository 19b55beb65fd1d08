#include "analysis/sensitivity.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "analysis/selection.h"
#include "core/error.h"

namespace ptq::analysis {

std::vector<SensitivityItem> sensitivity_items(const exec::Executor& ex, const quant::CalibrationRelations& rel,
                                               const SensitivityOptions& o) {
  const auto& cals = ex.calibrations();
  std::vector<SensitivityItem> items;
  if (o.has_interested) {
    for (const auto& names : o.interested) {
      check_node_names(ex.graph(), names);
      items.push_back({join(names, "+"), calibration_set(ex, rel, names)});
    }
    return items;
  }
  if (o.node_type == "node") {
    for (const auto& [name, outs] : rel.normal_nodes()) items.push_back({name, calibration_set(ex, rel, {name})});
  } else if (o.node_type == "weight" || o.node_type == "activation") {
    const auto kind = o.node_type == "weight" ? quant::TensorKind::Weight : quant::TensorKind::Feature;
    for (size_t i = 0; i < cals.size(); ++i)
      if (cals[i].kind == kind) items.push_back({cals[i].node_name, {static_cast<int>(i)}});
  } else if (o.node_type == "tae") {
    for (const auto& name : rel.tae_nodes()) items.push_back({name, {ex.calibration_index(name)}});
  } else {
    fail("node_type:" + o.node_type + " is unavailable.");
  }
  return items;
}

void sort_rows(std::vector<SensitivityRow>& rows, Metric first) {
  const bool ascending = higher_is_better(first);
  std::stable_partition(rows.begin(), rows.end(), [](const SensitivityRow& r) { return !std::isnan(r.values[0]); });
  auto end = std::find_if(rows.begin(), rows.end(), [](const SensitivityRow& r) { return std::isnan(r.values[0]); });
  std::stable_sort(rows.begin(), end, [ascending](const SensitivityRow& a, const SensitivityRow& b) {
    return ascending ? a.values[0] < b.values[0] : a.values[0] > b.values[0];
  });
}

SensitivityResult get_sensitivity_of_nodes(exec::Executor& ex, const quant::CalibrationRelations& rel,
                                           const data::CalibrationData& data, const SensitivityOptions& o) {
  check(!o.metrics.empty(), "metrics contain unavailable method: (none)");
  std::vector<Metric> metrics;
  for (const auto& m : o.metrics) metrics.push_back(parse_metric(m));
  if (!o.has_interested && o.node_type != "node" && o.node_type != "weight" && o.node_type != "activation" &&
      o.node_type != "tae")
    fail("node_type:" + o.node_type + " is unavailable.");
  check_node_names(ex.graph(), o.output_nodes);

  SensitivityResult result;
  result.node_type = o.node_type;
  result.metrics = o.metrics;
  if (o.output_nodes.empty()) {
    result.compared_tensors = rel.model_outputs();
  } else {
    for (const auto& n : o.output_nodes) {
      auto outs = rel.node_outputs(n);
      check(!outs.empty(), "output_node '" + n + "' is not a node with calibrated inputs; its outputs cannot be compared");
      result.compared_tensors.insert(result.compared_tensors.end(), outs.begin(), outs.end());
    }
  }
  const std::vector<int> compared = value_ids(ex.graph(), result.compared_tensors);
  const std::vector<size_t> sample_ids = data.select(o.data_num, o.selection);
  for (size_t s : sample_ids) result.samples.push_back(data.sample_names()[s]);

  std::vector<SensitivityItem> items = sensitivity_items(ex, rel, o);
  const size_t begin = std::min(o.item_begin, items.size());
  const size_t end = std::min(o.item_end, items.size());

  // Per sample: the float reference and the cached base run that variants start from (the
  // executor's run cache serves it again to the next part of a split sweep).
  const exec::QuantConfig float_config = ex.uniform_config(false);
  const exec::QuantConfig base_config = o.leave_one_out ? ex.stored_config() : float_config;
  std::vector<exec::RunRecord> references, bases;
  for (size_t s : sample_ids) {
    exec::RunRecord base = ex.cached_keep_all_run(data.samples()[s], base_config);
    if (o.leave_one_out) references.push_back(ex.run(data.samples()[s], float_config, compared));
    bases.push_back(std::move(base));
  }
  const std::vector<exec::RunRecord>& refs = o.leave_one_out ? references : bases;

  for (size_t k = begin; k < end; ++k) {
    const SensitivityItem& item = items[k];
    exec::QuantConfig config = base_config;
    for (int c : item.calibrations) config.on[static_cast<size_t>(c)] = o.leave_one_out ? 0 : 1;
    // per metric -> per compared tensor -> per sample
    std::vector<std::vector<std::vector<float>>> values(metrics.size(),
                                                        std::vector<std::vector<float>>(compared.size()));
    for (size_t s = 0; s < bases.size(); ++s) {
      exec::RunRecord variant = ex.run_incremental(bases[s], config, compared);
      for (size_t t = 0; t < compared.size(); ++t) {
        const Tensor a = value_of(ex, refs[s], compared[t]).to_float();
        const Tensor b = value_of(ex, variant, compared[t]).to_float();
        for (size_t m = 0; m < metrics.size(); ++m)
          values[m][t].push_back(compute_metric(metrics[m], a.data<float>(), b.data<float>(), a.numel()));
      }
    }
    SensitivityRow row;
    row.item = item.key;
    for (size_t m = 0; m < metrics.size(); ++m) row.values.push_back(aggregate(values[m]));
    if (o.node_type != "node") {
      auto it = rel.cali_normal_map().find(item.key);
      if (it != rel.cali_normal_map().end()) row.node = it->second;
    }
    if (o.node_type == "activation" && item.calibrations.size() == 1) {
      const auto& spec = ex.calibrations()[static_cast<size_t>(item.calibrations[0])];
      if (!spec.thresholds.empty()) {
        row.has_threshold = true;
        const float t = *std::max_element(spec.thresholds.begin(), spec.thresholds.end());
        row.threshold = std::nearbyint(static_cast<double>(t) * 1e5) / 1e5;
      }
      row.qtype = spec.qtype.name;
    }
    if (o.on_row) o.on_row(row);
    result.rows.push_back(std::move(row));
    if (o.progress && !o.progress(k - begin + 1, end - begin)) {
      result.cancelled = true;
      break;
    }
  }
  sort_rows(result.rows, metrics[0]);
  return result;
}

std::string python_round5(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  const double r = std::nearbyint(v * 1e5) / 1e5;
  // Python repr: shortest round-trip digits; exponent form below 1e-4.
  char buf[64];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, r);
    if (std::strtod(buf, nullptr) == r) break;
  }
  std::string s = buf;
  const double a = std::fabs(r);
  if (s.find('e') != std::string::npos) {
    if (a >= 1e-4 && a < 1e16) {
      std::snprintf(buf, sizeof buf, "%.17f", r);  // rare: %g chose exponent where Python would not
      s = buf;
      s.erase(s.find_last_not_of('0') + 1);
      if (s.back() == '.') s += '0';
    } else {
      // Python writes e-05, %g writes e-05 too; strip a '+' and pad like Python (two digits).
      auto e = s.find('e');
      std::string mant = s.substr(0, e), exp = s.substr(e + 1);
      const char sign = exp[0] == '-' ? '-' : '+';
      if (exp[0] == '-' || exp[0] == '+') exp = exp.substr(1);
      while (exp.size() > 2 && exp[0] == '0') exp = exp.substr(1);
      if (exp.size() < 2) exp = "0" + exp;
      s = mant + "e" + (sign == '-' ? "-" : "+") + exp;
    }
  } else if (s.find('.') == std::string::npos) {
    s += ".0";
  }
  return s;
}

std::string format_table(const SensitivityResult& r) {
  std::vector<std::string> headers = {r.node_type};
  const bool with_node = r.node_type != "node";
  const bool with_activation = r.node_type == "activation";
  if (with_node) headers.push_back("node");
  if (with_activation) {
    headers.push_back("threshold");
    headers.push_back("qtype");
  }
  for (const auto& m : r.metrics) headers.push_back(m);
  std::vector<std::vector<std::string>> cells;
  for (const auto& row : r.rows) {
    std::string key = row.item.size() > 50 ? "..." + row.item.substr(row.item.size() - 47) : row.item;
    std::vector<std::string> line = {key};
    if (with_node) line.push_back(row.node);
    if (with_activation) {
      line.push_back(row.has_threshold ? python_round5(row.threshold) : "");
      line.push_back(row.qtype);
    }
    for (float v : row.values) line.push_back(python_round5(v));
    cells.push_back(line);
  }
  std::vector<size_t> width(headers.size());
  for (size_t c = 0; c < headers.size(); ++c) {
    width[c] = headers[c].size();
    for (const auto& line : cells) width[c] = std::max(width[c], line[c].size());
  }
  size_t longest_key = 0;
  for (const auto& row : r.rows) longest_key = std::max(longest_key, row.item.size());
  width[0] = std::min<size_t>(std::max<size_t>(10, longest_key), 50);
  size_t head_length = 0;
  for (size_t w : width) head_length += w + 2;
  const std::string title = "node sensitivity";
  const size_t diff = head_length > title.size() ? head_length - title.size() : 0;
  const size_t left = diff / 2, right = left + diff % 2;
  auto pad = [](const std::string& s, size_t w) { return s + std::string(w + 2 > s.size() ? w + 2 - s.size() : 0, ' '); };
  std::string out = "\n" + std::string(left, '=') + title + std::string(right, '=') + "\n";
  for (size_t c = 0; c < headers.size(); ++c) out += pad(headers[c], width[c]);
  out += "\n" + std::string(head_length, '-') + "\n";
  for (const auto& line : cells) {
    for (size_t c = 0; c < line.size(); ++c) out += pad(line[c], width[c]);
    out += "\n";
  }
  return out;
}

}  // namespace ptq::analysis
