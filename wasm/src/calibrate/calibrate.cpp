#include "calibrate/calibrate.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <set>
#include <tuple>

#include "core/error.h"
#include "exec/executor.h"
#include "quant/calibration.h"
#include "quant/graph_edit.h"

namespace ptq::quant {
namespace {

constexpr const char* kHorizonDomain = "horizon";
constexpr int64_t kHorizonOpset = 1;

bool is_compute_op(const std::string& op) {
  return op == "Conv" || op == "ConvTranspose" || op == "Gemm" || op == "MatMul";
}

// Input slots of `op` that carry activations (shape/scale inputs such as Resize's are excluded).
std::vector<size_t> data_slots(const ir::Node& n) {
  if (is_compute_op(n.op_type)) return {0, 1};
  if (n.op_type == "Resize" || n.op_type == "AveragePool" || n.op_type == "GlobalAveragePool" ||
      n.op_type == "MaxPool" || n.op_type == "GlobalMaxPool")
    return {0};
  std::vector<size_t> all(n.inputs.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  return all;
}

// One HzCalibration node to create.
struct Site {
  int value = -1;  // the tensor it observes
  bool weight = false;
  int64_t axis = 0;
  int64_t group = 1;
  bool conv_transpose = false;
  bool per_channel = true;                  // weights: false for a 1-D MatMul B
  std::vector<std::pair<int, size_t>> uses;  // (node id, input slot) rewired to the calibrated tensor
  std::string node_name, output_name;
  std::string qtype;
  std::vector<float> thresholds;
  bool skip = false;  // observed non-float: left unquantized
  // Statistics (activations).
  float max = 0.0f;
  std::unique_ptr<AbsHistogram> histogram;
};

struct WeightLayout {
  int64_t axis = 0, group = 1;
  bool conv_transpose = false, per_channel = true;
};

WeightLayout weight_layout(const ir::Node& n, const Tensor& w) {
  WeightLayout l;
  if (n.op_type == "Conv") {
    l.group = n.attr_int("group", 1);
  } else if (n.op_type == "ConvTranspose") {
    l.axis = 1;
    l.group = n.attr_int("group", 1);
    l.conv_transpose = true;
  } else if (n.op_type == "Gemm") {
    l.axis = n.attr_int("transB", 0) ? 0 : 1;
  } else {  // MatMul: B is [..., K, N]; N (the last dim) is the output channel
    l.per_channel = w.rank() >= 2;
    l.axis = w.rank() >= 2 ? static_cast<int64_t>(w.rank()) - 1 : 0;
  }
  return l;
}

class Planner {
 public:
  Planner(const ir::Graph& g, const CalibrateOptions& o) : g_(g) {
    activation_ops_.insert(o.activation_ops.begin(), o.activation_ops.end());
  }

  std::vector<Site> plan() {
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      const ir::Node& n = g_.nodes[i];
      if (!n.domain.empty()) continue;
      const int node_id = static_cast<int>(i);
      const bool compute = is_compute_op(n.op_type);
      const bool activations = activation_ops_.count(n.op_type) > 0;
      if (!compute && !activations) continue;
      for (size_t slot : data_slots(n)) {  // in slot order: the data input's node comes first
        if (slot >= n.inputs.size() || n.inputs[slot] < 0) continue;
        const int v = n.inputs[slot];
        if (g_.constant(v)) {
          if (compute && slot == 1) add_weight(node_id, n);
        } else if (activations) {
          add_activation(node_id, slot, v);
        }
      }
    }
    return std::move(sites_);
  }

 private:
  void add_activation(int node_id, size_t slot, int v) {
    auto [it, inserted] = activations_.emplace(v, sites_.size());
    if (inserted) {
      sites_.emplace_back();
      sites_.back().value = v;
    }
    sites_[it->second].uses.emplace_back(node_id, slot);
  }

  void add_weight(int node_id, const ir::Node& n) {
    const int v = n.inputs[1];
    const Tensor* w = g_.constant(v);
    if (!w || w->dtype() != DType::Float) return;
    const WeightLayout l = weight_layout(n, *w);
    auto [it, inserted] = weights_.emplace(std::make_tuple(v, l.axis, l.group, l.conv_transpose), sites_.size());
    if (inserted) {
      Site s;
      s.value = v;
      s.weight = true;
      s.axis = l.axis;
      s.group = l.group;
      s.conv_transpose = l.conv_transpose;
      s.per_channel = l.per_channel;
      sites_.push_back(std::move(s));
    }
    sites_[it->second].uses.emplace_back(node_id, 1);
  }

  const ir::Graph& g_;
  std::set<std::string> activation_ops_;
  std::vector<Site> sites_;
  std::map<int, size_t> activations_;
  std::map<std::tuple<int, int64_t, int64_t, bool>, size_t> weights_;
};

// Qtypes: the default, or int16 where a name matches (unknown names are reported, not ignored).
void assign_qtypes(const ir::Graph& g, std::vector<Site>& sites, const CalibrateOptions& o) {
  std::set<std::string> wanted(o.int16.begin(), o.int16.end());
  std::set<std::string> matched;
  for (Site& s : sites) {
    std::vector<std::string> names = {s.node_name, g.value(s.value).name};
    for (const auto& [node, slot] : s.uses) names.push_back(g.node(node).name);
    s.qtype = o.qtype;
    for (const auto& name : names)
      if (wanted.count(name)) {
        s.qtype = "int16";
        matched.insert(name);
      }
  }
  std::string unknown;
  for (const auto& name : wanted)
    if (!matched.count(name)) unknown += (unknown.empty() ? "" : ", ") + name;
  check(unknown.empty(), "int16 override: no calibration node, calibrated tensor or consuming node is named " + unknown);
}

void observe_max(Site& s, const Tensor& t, const std::string& tensor_name) {
  if (t.dtype() != DType::Float) {
    s.skip = true;
    return;
  }
  s.max = std::max(s.max, max_abs(t, "tensor '" + tensor_name + "'"));
}

// Runs the float model over all samples, once for the max and, for the histogram methods, again to
// fill histograms over [0, max] (bins need the range up front; two runs avoid holding every sample).
void collect_activation_thresholds(const ir::Model& model, const std::vector<std::vector<Tensor>>& samples,
                                   std::vector<Site>& sites, const CalibrateOptions& o) {
  std::vector<Site*> active;
  for (Site& s : sites)
    if (!s.weight) active.push_back(&s);
  if (active.empty()) return;
  check(!samples.empty(), "calibration needs at least one sample to calibrate " + std::to_string(active.size()) +
                              " activation tensor(s)");
  exec::Executor executor(model);
  const exec::QuantConfig config = executor.uniform_config(false);
  std::vector<int> keep;
  for (const Site* s : active) keep.push_back(s->value);
  const ir::Graph& g = executor.graph();

  auto for_each_sample = [&](auto&& fn) {
    for (const auto& sample : samples) {
      const exec::RunRecord record = executor.run(sample, config, keep);
      for (Site* s : active) {
        if (s->skip) continue;
        const Tensor& t = record.values[static_cast<size_t>(s->value)];
        check(t.defined(), "calibration: tensor '" + g.value(s->value).name + "' was not computed");
        fn(*s, t);
      }
    }
  };
  for_each_sample([&](Site& s, const Tensor& t) { observe_max(s, t, g.value(s.value).name); });

  const bool histogram = o.method != ActivationMethod::Max;
  if (histogram) {
    for (Site* s : active)
      if (!s->skip && s->max > 0.0f && std::isfinite(s->max))
        s->histogram = std::make_unique<AbsHistogram>(s->max, o.histogram_bins);
    for_each_sample([&](Site& s, const Tensor& t) {
      if (s.histogram) s.histogram->add(t.data<float>(), t.numel());
    });
  }
  for (Site* s : active) {
    if (s->skip) continue;
    float t = s->max;  // also the answer when the histogram is degenerate (max 0 or inf)
    if (s->histogram && o.method == ActivationMethod::Percentile) t = percentile_threshold(*s->histogram, o.percentile);
    if (s->histogram && o.method == ActivationMethod::KL) t = kl_threshold(*s->histogram, o.kl_quantized_bins);
    s->thresholds = {refine_activation_threshold(t, s->node_name)};
  }
}

void compute_weight_thresholds(const ir::Graph& g, std::vector<Site>& sites) {
  for (Site& s : sites) {
    if (!s.weight) continue;
    const Tensor& w = *g.constant(s.value);
    const std::string what = "weight '" + g.value(s.value).name + "'";
    if (s.per_channel) {
      s.thresholds = weight_thresholds(w, s.axis, s.group, s.conv_transpose, what);
    } else {
      s.thresholds = weight_thresholds(w.reshaped({1, w.numel()}), 0, 1, false, what);
    }
  }
}

ir::Node calibration_node(const Site& s, int input, int output, int64_t opset) {
  const QType q = QType::parse(s.qtype);
  std::vector<float> scales;
  for (float t : s.thresholds) scales.push_back(t / static_cast<float>(q.qmax()));  // float32, as §1.4
  std::vector<ir::Attribute> attrs = {
      edit::attr_floats("thresholds", s.thresholds), edit::attr_floats("scales", scales),
      edit::attr_string("qtype", s.qtype),           edit::attr_string("switch", "ON"),
      edit::attr_int("constant", 1),
  };
  if (s.weight) {
    attrs.push_back(edit::attr_int("axis", s.axis));
    attrs.push_back(edit::attr_int("group", s.group));
  }
  return edit::make_node(s.node_name, "HzCalibration", kHorizonDomain, {input}, {output}, std::move(attrs),
                         static_cast<int>(opset));
}

}  // namespace

ActivationMethod parse_activation_method(const std::string& name) {
  if (name == "max") return ActivationMethod::Max;
  if (name == "percentile") return ActivationMethod::Percentile;
  if (name == "kl") return ActivationMethod::KL;
  fail("unknown calibration method '" + name + "' (expected max, percentile or kl)");
}

ir::Model calibrate(const ir::Model& float_model, const std::vector<std::vector<Tensor>>& samples,
                    const CalibrateOptions& options) {
  QType::parse(options.qtype);  // validates the name
  check(options.percentile > 0.0 && options.percentile <= 100.0,
        "percentile must be in (0, 100], got " + std::to_string(options.percentile));
  check(options.histogram_bins >= 1 && options.kl_quantized_bins >= 1 &&
            options.histogram_bins >= options.kl_quantized_bins,
        "histogram_bins must be >= kl_quantized_bins >= 1");
  const ir::Graph& g = float_model.graph;
  for (const auto& n : g.nodes)
    check(!is_calibration_node(n), "the model is already calibrated: it contains HzCalibration node '" + n.name + "'");

  std::vector<Site> sites = Planner(g, options).plan();
  edit::NameSet names(g);
  for (Site& s : sites) {
    s.node_name = names.fresh(g.value(s.value).name + "_HzCalibration");
    s.output_name = names.fresh(g.value(s.value).name + "_calibrated");
  }
  assign_qtypes(g, sites, options);
  collect_activation_thresholds(float_model, samples, sites, options);
  compute_weight_thresholds(g, sites);

  ir::Model out = float_model;
  int64_t horizon = out.opset(kHorizonDomain);
  if (horizon == 0) {
    horizon = kHorizonOpset;
    edit::set_opset(out, kHorizonDomain, horizon);
  }
  ir::Graph& og = out.graph;
  std::vector<std::vector<ir::Node>> before(og.nodes.size());
  for (const Site& s : sites) {
    if (s.skip) continue;
    const ir::ValueInfo info = og.value(s.value).info;
    const int calibrated = edit::add_value(og, s.output_name, &info);
    size_t first_use = og.nodes.size();
    for (const auto& [node, slot] : s.uses) {
      og.nodes[static_cast<size_t>(node)].inputs[slot] = calibrated;
      first_use = std::min(first_use, static_cast<size_t>(node));
    }
    before[first_use].push_back(calibration_node(s, s.value, calibrated, horizon));
  }
  edit::insert_nodes(og, std::move(before));
  return out;
}

}  // namespace ptq::quant
