#include "analysis/accumulated_error.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "analysis/metrics.h"
#include "analysis/selection.h"
#include "core/error.h"

namespace ptq::analysis {

NodeArgument NodeArgument::list(const std::vector<std::string>& names) {
  NodeArgument a;
  a.is_none = false;
  a.is_list = true;
  for (const auto& n : names) a.elements.push_back({{n}, false});
  return a;
}

NodeArgument NodeArgument::nested(const std::vector<std::vector<std::string>>& lists) {
  NodeArgument a;
  a.is_none = false;
  a.is_list = true;
  for (const auto& l : lists) a.elements.push_back({l, true});
  return a;
}

std::vector<std::string> NodeArgument::flatten() const {
  std::vector<std::string> out;
  for (const auto& e : elements) out.insert(out.end(), e.names.begin(), e.names.end());
  return out;
}

bool NodeArgument::is_nested() const {
  return std::any_of(elements.begin(), elements.end(), [](const Element& e) { return e.is_list; });
}

std::string AccErrorFigure::file_name() const {
  return (average_mode ? "average_" : "") + prefix + "_" + metric + ".png";
}

namespace {

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// §5.2 flatten length: None flattens to [None], one element.
size_t flat_length(const NodeArgument& a) { return a.is_none ? 1 : a.flatten().size(); }

// After §5.2's normalisation: None -> [], a name -> [name], a flat list de-duplicated. The original
// goes through a Python set (hash order); we keep first-occurrence order (docs/compatibility.md).
std::vector<NodeArgument::Element> normalised(const NodeArgument& a) {
  if (a.is_none) return {};
  if (a.is_nested()) return a.elements;
  std::vector<NodeArgument::Element> out;
  for (const auto& e : a.elements)
    if (std::none_of(out.begin(), out.end(), [&](const NodeArgument::Element& o) { return o.names == e.names; }))
      out.push_back(e);
  return out;
}

struct Variant {
  std::string name;
  exec::QuantConfig config;
};

struct FigurePlan {
  std::string prefix;
  std::vector<Variant> variants;
};

std::string config_key(const exec::QuantConfig& c) {
  std::string key(c.on.begin(), c.on.end());
  for (const auto& q : c.qtype) key += "|" + q;
  return key;
}

// Names selecting no calibration node give a curve equal to the base model; the original says
// nothing about them, we note it.
void note_unknown(const exec::Executor& ex, const quant::CalibrationRelations& rel,
                  const std::vector<std::string>& names, std::vector<std::string>& messages) {
  for (const auto& n : names)
    if (calibration_set(ex, rel, {n}).empty())
      messages.push_back("'" + n + "' selects no calibration node (unknown name or a node without calibrated "
                         "inputs); its model equals the base model.");
}

std::vector<FigurePlan> plan_figures(const exec::Executor& ex, const quant::CalibrationRelations& rel,
                                     const AccErrorOptions& o, std::vector<std::string>& messages) {
  const std::vector<std::string> flat_q = o.quantize_node.flatten();
  const auto quantize = normalised(o.quantize_node);
  const auto non_quantize = normalised(o.non_quantize_node);
  const bool has_weight = contains(flat_q, "weight"), has_activation = contains(flat_q, "activation");
  const exec::QuantConfig calibrated = quantized_config(ex, o.config);
  const Variant both{"weight_activation_calibrated", calibrated};
  const Variant only_weight{"only_weight_calibrated", whitelist_config(ex, calibrated, {}, {quant::TensorKind::Weight})};
  const Variant only_activation{"only_activation_calibrated",
                                whitelist_config(ex, calibrated, {}, {quant::TensorKind::Feature})};

  std::vector<FigurePlan> plans;
  if (has_weight && !has_activation) {
    messages.push_back("Only quantizing weights without quantizing activation !");
    plans.push_back({"weight_quantized", {both, only_weight}});
  } else if (has_activation && !has_weight) {
    messages.push_back("Only quantizing activation without quantizing weight !");
    plans.push_back({"activation_quantized", {both, only_activation}});
  } else if (has_weight && has_activation) {
    messages.push_back("Quantify weight and activation separately!");
    plans.push_back({"weight_activation_quantized_separately", {both, only_activation, only_weight}});
  }

  // Node lists: `white` = quantize only these (float model + set ON), else quantize all but these.
  auto node_figure = [&](const std::vector<NodeArgument::Element>& elements, bool nested, bool white,
                         const std::string& prefix) {
    FigurePlan plan{prefix + (nested ? "_accumulate_err_of_partial_qmodel" : "_accumulate_err_of_node"), {}};
    if (nested) plan.variants.push_back({"default calibrated model", calibrated});
    for (size_t i = 0; i < elements.size(); ++i) {
      const auto& names = elements[i].names;
      note_unknown(ex, rel, names, messages);
      const std::vector<int> set = calibration_set(ex, rel, names);
      plan.variants.push_back({nested ? "partial_qmodel_" + std::to_string(i) : names.at(0),
                               white ? whitelist_config(ex, calibrated, set) : blacklist_config(calibrated, set)});
    }
    plans.push_back(std::move(plan));
  };
  if (!quantize.empty() && !has_weight && !has_activation) {
    messages.push_back("Only the nodes you set are quantized, and the remaining nodes are not quantized.");
    node_figure(quantize, o.quantize_node.is_nested(), true, "quantize_node");
  }
  if (!non_quantize.empty()) {
    messages.push_back("Do not quantify the nodes you set, and quantify the rest of the nodes.");
    node_figure(non_quantize, o.non_quantize_node.is_nested(), false, "non_quantize_node");
  }
  return plans;
}

}  // namespace

void check_acc_error_arguments(const AccErrorOptions& o) {
  parse_metric(o.metric);
  const bool both_none = o.quantize_node.is_none && o.non_quantize_node.is_none;
  if (both_none || (flat_length(o.quantize_node) == 0 && flat_length(o.non_quantize_node) == 0))
    fail("'quantize_node' and 'non_quantize_node' are both NONE.");
  const auto flat_nq = o.non_quantize_node.flatten();
  if (contains(flat_nq, "weight") || contains(flat_nq, "activation"))
    fail("Cannot set 'non_quantize_node' to 'weight' or 'activation'.");
}

std::vector<float> running_mean(const std::vector<float>& values) {
  std::vector<float> out;
  double sum = 0.0;
  size_t count = 0;
  for (float v : values) {
    if (!(std::isinf(v) && v > 0)) {
      sum += static_cast<double>(v);
      ++count;
    }
    out.push_back(count ? static_cast<float>(sum / static_cast<double>(count)) : std::numeric_limits<float>::infinity());
  }
  return out;
}

namespace {

// The plan with the opening message and the planning messages, as every result starts.
std::vector<FigurePlan> start_result(const exec::Executor& ex, const quant::CalibrationRelations& rel,
                                     const AccErrorOptions& o, AccErrorResult& result) {
  check_acc_error_arguments(o);
  result.messages.push_back("Start ploting accumulate error...");
  return plan_figures(ex, rel, o, result.messages);
}

}  // namespace

AccErrorResult acc_error_outline(const exec::Executor& ex, const quant::CalibrationRelations& rel,
                                 const AccErrorOptions& o) {
  AccErrorResult result;
  size_t position = 0;
  for (const auto& plan : start_result(ex, rel, o, result)) {
    AccErrorFigure figure{plan.prefix, o.metric, o.average_mode, {}};
    for (const auto& variant : plan.variants) figure.curves.push_back({variant.name, {}, {}, position++});
    result.figures.push_back(std::move(figure));
  }
  return result;
}

AccErrorResult plot_acc_error(exec::Executor& ex, const quant::CalibrationRelations& rel,
                              const data::CalibrationData& data, const AccErrorOptions& o) {
  AccErrorResult result;
  const std::vector<FigurePlan> plans = start_result(ex, rel, o, result);
  const Metric metric = parse_metric(o.metric);

  std::vector<std::string> x;
  for (const auto& [node, outs] : rel.normal_nodes()) x.insert(x.end(), outs.begin(), outs.end());
  const std::vector<int> ids = value_ids(ex.graph(), x);
  const size_t sample = single_sample(data, o.selection);
  result.sample = data.sample_names()[sample];

  // Positions of the curves to compute (all when o.curves is unset).
  size_t plan_curves = 0;
  for (const auto& p : plans) plan_curves += p.variants.size();
  std::vector<char> selected(plan_curves, o.curves ? 0 : 1);
  if (o.curves)
    for (size_t i : *o.curves) {
      check(i < plan_curves, "acc_error: curve position " + std::to_string(i) + " is out of range (" +
                                 std::to_string(plan_curves) + " curves)");
      selected[i] = 1;
    }
  const size_t total = static_cast<size_t>(std::count(selected.begin(), selected.end(), 1));
  if (total == 0) return result;

  const exec::RunRecord base = ex.run(data.sample(sample), ex.uniform_config(false), {}, true);
  std::map<std::string, std::vector<float>> memo;  // the calibrated model appears in several figures
  bool shape_note = false;
  auto curve_values = [&](const exec::QuantConfig& config) -> const std::vector<float>& {
    const std::string key = config_key(config);
    auto it = memo.find(key);
    if (it != memo.end()) return it->second;
    const exec::RunRecord run = ex.run_incremental(base, config, ids);
    std::vector<float> y;
    for (int id : ids) {
      const Tensor a = value_of(ex, base, id).to_float();  // bool -> 0/1, as the original's astype("f")
      const Tensor b = value_of(ex, run, id).to_float();
      if (a.numel() != b.numel()) {
        if (!shape_note) result.messages.push_back("'" + ex.graph().value(id).name + "' changes its size under quantization; its metric is NaN.");
        shape_note = true;
        y.push_back(std::numeric_limits<float>::quiet_NaN());
        continue;
      }
      y.push_back(compute_metric(metric, a.data<float>(), b.data<float>(), a.numel()));
    }
    return memo.emplace(key, std::move(y)).first->second;
  };

  size_t position = 0, done = 0;
  for (const auto& plan : plans) {
    AccErrorFigure figure{plan.prefix, o.metric, o.average_mode, {}};
    for (const auto& variant : plan.variants) {
      if (!selected[position++]) continue;
      const std::vector<float>& y = curve_values(variant.config);
      figure.curves.push_back({variant.name, x, o.average_mode ? running_mean(y) : y, position - 1});
      if (o.on_curve && !o.on_curve(figure.curves.back(), ++done, total)) {
        result.cancelled = true;
        result.figures.push_back(std::move(figure));
        return result;
      }
    }
    if (!figure.curves.empty()) result.figures.push_back(std::move(figure));
  }
  return result;
}

}  // namespace ptq::analysis
