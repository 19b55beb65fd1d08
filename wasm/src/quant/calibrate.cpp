#include "quant/calibrate.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <map>
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

void AbsHistogram::add(const float* x, int64_t n) {
  const size_t bins = counts.size();
  const double per_unit = static_cast<double>(bins) / max;
  for (int64_t i = 0; i < n; ++i) {
    const double a = std::fabs(static_cast<double>(x[i]));
    if (std::isnan(a)) continue;
    const double b = a * per_unit;
    counts[b >= static_cast<double>(bins) ? bins - 1 : static_cast<size_t>(b)] += 1.0;
  }
}

float max_abs(const Tensor& x, const std::string& what) {
  const float* p = x.data<float>();
  float m = 0.0f;
  for (int64_t i = 0; i < x.numel(); ++i) {
    const float a = std::fabs(p[i]);
    check(!std::isnan(a), "calibration: " + what + " contains NaN");
    m = std::max(m, a);
  }
  return m;
}

float percentile_threshold(const AbsHistogram& h, double percentile) {
  double total = 0.0;
  for (double c : h.counts) total += c;
  if (total == 0.0 || percentile >= 100.0) return static_cast<float>(h.max);
  const double target = percentile / 100.0 * total;
  double cumulative = 0.0;
  for (size_t b = 0; b < h.counts.size(); ++b) {
    cumulative += h.counts[b];
    if (cumulative >= target) return static_cast<float>(static_cast<double>(b + 1) * h.bin_width());
  }
  return static_cast<float>(h.max);
}

namespace {

// MXNet's _smooth_distribution: zeros become eps, the non-zeros give up the same mass. Returns
// false when that would make an entry non-positive (the candidate is then skipped).
bool smooth(std::vector<double>& d) {
  constexpr double eps = 1e-4;
  size_t zeros = 0;
  for (double v : d) zeros += v == 0.0;
  const size_t nonzeros = d.size() - zeros;
  if (nonzeros == 0) return false;
  const double eps1 = eps * static_cast<double>(zeros) / static_cast<double>(nonzeros);
  for (double& v : d) {
    v = v == 0.0 ? eps : v - eps1;
    if (v <= 0.0) return false;
  }
  return true;
}

// KL(P||Q) of two positive, unnormalised distributions of equal length.
double kl_divergence(const std::vector<double>& p, const std::vector<double>& q) {
  double sp = 0.0, sq = 0.0;
  for (size_t i = 0; i < p.size(); ++i) {
    sp += p[i];
    sq += q[i];
  }
  double kl = 0.0;
  for (size_t i = 0; i < p.size(); ++i) {
    const double pi = p[i] / sp;
    kl += pi * std::log(pi / (q[i] / sq));
  }
  return kl;
}

}  // namespace

float kl_threshold(const AbsHistogram& h, int quantized_bins) {
  const size_t bins = h.counts.size();
  const size_t nq = static_cast<size_t>(std::max(quantized_bins, 1));
  if (bins <= nq) return static_cast<float>(h.max);
  // suffix[i] = number of values in bins >= i (the outliers clipped into P's last bin).
  std::vector<double> suffix(bins + 1, 0.0);
  for (size_t b = bins; b-- > 0;) suffix[b] = suffix[b + 1] + h.counts[b];
  if (suffix[0] == 0.0) return static_cast<float>(h.max);

  double best = std::numeric_limits<double>::infinity();
  size_t best_i = bins;
  std::vector<double> p, q;
  for (size_t i = nq; i <= bins; ++i) {
    p.assign(h.counts.begin(), h.counts.begin() + static_cast<std::ptrdiff_t>(i));
    p[i - 1] += suffix[i];
    // Bin k of the first i goes to group floor(k·nq / i): groups differ in size by at most one bin.
    q.assign(i, 0.0);
    for (size_t start = 0; start < i;) {
      const size_t group = start * nq / i;
      size_t stop = start;
      double sum = 0.0;
      size_t nonzero = 0;
      for (; stop < i && stop * nq / i == group; ++stop) {
        sum += h.counts[stop];
        nonzero += p[stop] != 0.0;
      }
      for (size_t k = start; nonzero && k < stop; ++k)
        if (p[k] != 0.0) q[k] = sum / static_cast<double>(nonzero);
      start = stop;
    }
    if (!smooth(p) || !smooth(q)) continue;
    const double kl = kl_divergence(p, q);
    if (kl < best) {
      best = kl;
      best_i = i;
    }
  }
  return static_cast<float>(static_cast<double>(best_i) * h.bin_width());
}

float refine_activation_threshold(float t, const std::string& node_name) {
  check(!std::isnan(t), "find NaN threshold in " + node_name);
  if (std::isinf(t) && t > 0) return FLT_MAX;
  if (t <= 0.0f) return 1.0f;
  return t;
}

std::vector<float> weight_thresholds(const Tensor& w, int64_t axis, int64_t group, bool conv_transpose,
                                     const std::string& what) {
  check(w.dtype() == DType::Float, what + ": weight calibration needs float32 data");
  const int64_t rank = static_cast<int64_t>(w.rank());
  int64_t outer = 1, channels = 1, inner = 1;
  int64_t in_per_group = 1, out_per_group = 1, g = 1;
  if (conv_transpose) {
    // [C_in, C_out/g, ...] regrouped to [g·C_out/g]: channel of [i, j, ...] = (i / (C_in/g))·(C_out/g) + j.
    check(rank >= 2, what + ": a ConvTranspose weight needs rank >= 2, got " + shape_str(w.shape()));
    g = std::max<int64_t>(1, group);
    check(w.dim(0) % g == 0, what + ": " + std::to_string(w.dim(0)) + " input channels do not split into " +
                                 std::to_string(g) + " groups");
    outer = w.dim(0);
    in_per_group = w.dim(0) / g;
    out_per_group = w.dim(1);
    for (int64_t d = 2; d < rank; ++d) inner *= w.dim(static_cast<size_t>(d));
  } else {
    const int64_t a = axis < 0 ? axis + rank : axis;
    check(a >= 0 && a < rank, what + ": axis " + std::to_string(axis) + " out of range for " + shape_str(w.shape()));
    for (int64_t d = 0; d < a; ++d) outer *= w.dim(static_cast<size_t>(d));
    channels = w.dim(static_cast<size_t>(a));
    for (int64_t d = a + 1; d < rank; ++d) inner *= w.dim(static_cast<size_t>(d));
  }
  const int64_t per_row = conv_transpose ? out_per_group : channels;
  std::vector<float> t(static_cast<size_t>(conv_transpose ? g * out_per_group : channels), 0.0f);
  const float* x = w.data<float>();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t c = 0; c < per_row; ++c) {
      const int64_t channel = conv_transpose ? (o / in_per_group) * out_per_group + c : c;
      float& m = t[static_cast<size_t>(channel)];
      const float* run = x + (o * per_row + c) * inner;
      for (int64_t k = 0; k < inner; ++k) {
        check(!std::isnan(run[k]), what + " contains NaN");
        m = std::max(m, std::fabs(run[k]));
      }
    }
  }
  for (float& v : t) v = std::min(std::max(v, FLT_MIN), FLT_MAX);  // max_percentile 1.0 × max|w|, clipped
  return t;
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
