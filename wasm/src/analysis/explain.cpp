#include "analysis/explain.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>

#include "analysis/evaluator.h"
#include "analysis/node_errors.h"
#include "analysis/recalibrate.h"
#include "analysis/selection.h"
#include "calibrate/threshold_methods.h"
#include "core/error.h"

namespace ptq::analysis {

const std::vector<CauseInfo>& causes() {
  static const std::vector<CauseInfo> list = {
      {"clipping", "the threshold is below values the node reads: they are clipped to it",
       "the share of values beyond the quantizer's range is at least the clipped cut-off",
       "a threshold chosen again (max or mse, whichever measures better)"},
      {"coarse-resolution", "the threshold lies far above where the data is: the data uses few of the levels",
       "the 99.99th percentile of |x| is at most the occupied cut-off of the threshold",
       "a threshold chosen again (max or mse, whichever measures better)"},
      {"channel-spread",
       "one threshold for channels whose ranges differ by a large factor: the small channels get few levels",
       "a per-tensor node whose largest channel range (max |x| along its axis) is at least channel_spread times the "
       "median one",
       "per-channel thresholds (max per channel)"},
      {"range-mismatch", "branches of very different range are concatenated in front of one quantizer",
       "a Concat feeding the quantizer whose largest branch range is at least branch_ratio times the smallest",
       "per-channel thresholds when the branches are concatenated along the quantizer's channel axis, else int16"},
      {"one-sided",
       "the data is never negative but the quantizer is signed and symmetric: half of its levels are unused",
       "an activation node on a signed symmetric grid whose share of negative values is at most the negative cut-off",
       "the unsigned type of the same width (uint8 for int8)"},
      {"inherited", "the node adds little error itself: what it shows comes from upstream",
       "among the nodes with the largest accumulated loss, own loss below the inherited share of the accumulated loss",
       "look upstream: the suggestion puts the ancestor with the largest own error in float, to measure its share"},
  };
  return list;
}

const ExplainRules& explain_rules() {
  static const ExplainRules rules;
  return rules;
}

double metric_loss(Metric metric, double v) {
  switch (metric) {
    case Metric::Cosine: return 1.0 - v;
    case Metric::Sqnr: return std::pow(10.0, -v / 10.0);
    default: return v;
  }
}

namespace {

using quant::CalibrationSpec;
using quant::QType;
using quant::ValueObserver;

// A calibration node as a configuration runs it: spec, qtype, scales and zero points.
struct Quantizer {
  CalibrationSpec spec;
  QType qtype;
  std::vector<float> scales;
  std::vector<int64_t> zero_points;
};

Quantizer quantizer_of(const exec::Executor& ex, size_t i, const exec::QuantConfig& c) {
  Quantizer q{ex.configured_spec(i, c), {}, {}, {}};
  const bool overridden = i < c.qtype.size() && !c.qtype[i].empty() && c.qtype[i] != q.spec.qtype.name;
  q.qtype = overridden ? QType::parse(c.qtype[i]) : q.spec.qtype;
  q.scales = overridden ? quant::derive_scales(q.spec, q.qtype) : q.spec.scales;
  q.zero_points = quant::derive_zero_points(q.spec, q.qtype, q.scales);
  return q;
}

// The share of counts of bin [a, b) beyond the range [lo, hi].
double outside(double a, double b, double count, double lo, double hi) {
  if (count == 0.0 || b <= a) return 0.0;
  const double above = std::max(0.0, b - std::max(a, hi)), below = std::max(0.0, std::min(b, lo) - a);
  return count * (above + below) / (b - a);
}

// How the values of a signed histogram sit on a grid of step s, zero point zp, levels [qmin, qmax].
struct Fit {
  double clipped = 0.0, zero_rounded = 0.0, levels_used = std::numeric_limits<double>::quiet_NaN();
};

Fit fit(const quant::SignedHistogram& h, double s, double zp, double qmin, double qmax) {
  Fit f;
  const double lo = (qmin - zp) * s, hi = (qmax - zp) * s, w = h.bin_width();
  const double levels = qmax - qmin + 1.0;
  std::vector<uint8_t> used(levels <= 131072.0 ? static_cast<size_t>(levels) : 0, 0);
  for (size_t b = 0; b < h.counts.size(); ++b) {
    const double a = h.lo + static_cast<double>(b) * w, e = a + w, n = h.counts[b];
    if (n == 0.0) continue;
    f.clipped += outside(a, e, n, lo, hi);
    f.zero_rounded += n - outside(a, e, n, -s / 2, s / 2);
    if (used.empty()) continue;
    const double qa = std::min(std::max(std::nearbyint(a / s) + zp, qmin), qmax);
    const double qe = std::min(std::max(std::nearbyint(e / s) + zp, qmin), qmax);
    for (double q = qa; q <= qe; q += 1.0) used[static_cast<size_t>(q - qmin)] = 1;
  }
  if (!used.empty()) {
    size_t n = 0;
    for (uint8_t u : used) n += u;
    f.levels_used = static_cast<double>(n) / levels;
  }
  return f;
}

// The same for |x| of one channel on a symmetric grid of step s (levels 0..qmax on the |x| side).
Fit abs_fit(const quant::AbsHistogram& h, double s, double qmax) {
  quant::SignedHistogram as_signed(0.0, h.max, static_cast<int>(h.counts.size()));
  as_signed.counts = h.counts;
  Fit f = fit(as_signed, s, 0.0, 0.0, qmax);
  return f;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

HistogramData display_histogram(const quant::SignedHistogram& h, size_t bins) {
  HistogramData d{h.lo, h.hi, std::vector<double>(bins, 0.0)};
  const size_t group = std::max<size_t>(1, h.counts.size() / bins);
  for (size_t b = 0; b < h.counts.size(); ++b) d.counts[std::min(bins - 1, b / group)] += h.counts[b];
  return d;
}

// The tensors of the branches meeting in front of calibration node `spec` (looking through skippable
// single-input ops), and the op where they meet; empty when there is none.
std::pair<const ir::Node*, std::vector<int>> branches_of(const ir::Graph& g, const CalibrationSpec& spec) {
  int v = spec.input_value;
  for (int step = 0; step < 8; ++step) {
    const int p = g.value(v).producer;
    if (p < 0) return {nullptr, {}};
    const ir::Node& node = g.node(p);
    if (node.op_type == "Concat" || node.op_type == "Add" || node.op_type == "Mul" || node.op_type == "Sum") {
      std::vector<int> inputs;
      for (int in : node.inputs)
        if (in >= 0 && !g.constant(in)) inputs.push_back(in);
      return inputs.size() >= 2 ? std::make_pair(&node, inputs) : std::make_pair(nullptr, std::vector<int>{});
    }
    if (!quant::CalibrationRelations::is_skippable(node.op_type) && node.op_type != "Identity") return {nullptr, {}};
    if (node.inputs.empty() || node.inputs[0] < 0) return {nullptr, {}};
    v = node.inputs[0];
  }
  return {nullptr, {}};
}

double max_abs_of(const Tensor& t) {
  const Tensor f = t.to_float();
  double m = 0.0;
  for (int64_t i = 0; i < f.numel(); ++i) m = std::max(m, std::fabs(static_cast<double>(f.data<float>()[i])));
  return m;
}

// The evidence of calibration node i from what `o` saw.
NodeEvidence evidence_of(const Quantizer& q, const ValueObserver& o) {
  NodeEvidence e;
  const CalibrationSpec& spec = q.spec;
  e.calibration_node = spec.node_name;
  e.kind = spec.kind_name();
  e.qtype = q.qtype.name;
  e.asymmetric = spec.asymmetric;
  e.per_channel = q.scales.size() > 1;
  e.thresholds = spec.thresholds;
  e.scales = q.scales;
  e.values = o.count();
  e.data_min = o.min();
  e.data_max = o.max();
  e.p9999 = o.max_abs() > 0.0 ? quant::percentile_threshold(o.abs_histogram(), 99.99) : 0.0;
  e.negative = o.count() ? static_cast<double>(o.negatives()) / static_cast<double>(o.count()) : 0.0;
  e.channels = o.channels();
  if (o.channels() > 1)
    for (size_t c = 0; c < static_cast<size_t>(o.channels()); ++c) e.channel_max_abs.push_back(o.channel_max_abs(c));
  const double qmin = q.qtype.qmin(), qmax = q.qtype.qmax();
  const double nonzero = static_cast<double>(o.count() - o.zeros());
  if (!e.per_channel || static_cast<int64_t>(q.scales.size()) != o.channels()) {
    const double s = *std::max_element(q.scales.begin(), q.scales.end());
    const double zp = static_cast<double>(q.zero_points.empty() ? 0 : q.zero_points[0]);
    e.range_lo = (qmin - zp) * s;
    e.range_hi = (qmax - zp) * s;
    const Fit f = fit(o.signed_histogram(), s, zp, qmin, qmax);
    e.clipped = o.count() ? f.clipped / static_cast<double>(o.count()) : 0.0;
    e.levels_used = f.levels_used;
    e.zero_rounded = nonzero > 0 ? std::max(0.0, f.zero_rounded - static_cast<double>(o.zeros())) / nonzero : 0.0;
    e.occupied = e.range_hi > 0 ? e.p9999 / std::max(-e.range_lo, e.range_hi) : 0.0;
  } else {
    double clipped = 0.0, zero_rounded = 0.0, levels = 0.0;
    std::vector<double> occupied;
    for (size_t c = 0; c < q.scales.size(); ++c) {
      const quant::AbsHistogram& h = o.channel_histograms()[c];
      const double s = q.scales[c];
      const Fit f = abs_fit(h, s, qmax);
      clipped += f.clipped;
      zero_rounded += f.zero_rounded;
      levels += f.levels_used;
      const double p = o.channel_max_abs(c) > 0.0 ? quant::percentile_threshold(h, 99.99) : 0.0;
      occupied.push_back(p / (qmax * s));
      if (qmax * s > e.range_hi) {
        e.range_hi = qmax * s;
        e.range_lo = qmin * s;
      }
    }
    e.clipped = o.count() ? clipped / static_cast<double>(o.count()) : 0.0;
    e.zero_rounded = nonzero > 0 ? std::max(0.0, zero_rounded - static_cast<double>(o.zeros())) / nonzero : 0.0;
    e.levels_used = levels / static_cast<double>(q.scales.size());
    e.occupied = median(occupied);
  }
  if (!e.per_channel && e.channel_max_abs.size() > 1) {
    std::vector<double> live;
    for (double m : e.channel_max_abs)
      if (m > 0.0) live.push_back(m);
    const double mid = median(live);
    e.channel_spread = mid > 0.0 ? *std::max_element(live.begin(), live.end()) / mid : 0.0;
  }
  e.histogram = display_histogram(o.signed_histogram(), 128);
  return e;
}

// The rules that fire on `e` (causes() order, inherited aside).
std::vector<std::string> fired_causes(const NodeEvidence& e, const CalibrationSpec& spec, const QType& qtype) {
  const ExplainRules& r = explain_rules();
  std::vector<std::string> out;
  if (e.values == 0) return out;
  if (e.clipped >= r.clipped) out.push_back("clipping");
  if (e.p9999 > 0.0 && e.occupied <= r.occupied) out.push_back("coarse-resolution");
  if (e.channel_spread >= r.channel_spread) out.push_back("channel-spread");
  // Only concatenated branches keep their own values behind one quantizer (a sum or a product is one
  // value whose range the quantizer fits).
  if (e.branch_op == "Concat" && e.branch_ratio >= r.branch_ratio) out.push_back("range-mismatch");
  if (spec.kind != quant::TensorKind::Weight && !spec.asymmetric && !qtype.is_unsigned() && e.negative <= r.negative &&
      e.data_max > 0.0)
    out.push_back("one-sided");
  return out;
}

std::string shortest(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

// The main-graph normal nodes upstream of `node` (through every path), by name.
std::set<std::string> ancestors(const ir::Graph& g, const std::string& node, const std::set<std::string>& normal) {
  std::set<std::string> out;
  std::vector<int> stack{g.find_node(node)};
  std::vector<uint8_t> seen(g.nodes.size(), 0);
  while (!stack.empty()) {
    const int n = stack.back();
    stack.pop_back();
    if (n < 0 || seen[static_cast<size_t>(n)]) continue;
    seen[static_cast<size_t>(n)] = 1;
    for (int in : g.node(n).inputs) {
      if (in < 0) continue;
      const int p = g.value(in).producer;
      if (p < 0) continue;
      if (normal.count(g.node(p).name)) out.insert(g.node(p).name);
      stack.push_back(p);
    }
  }
  out.erase(node);
  return out;
}

}  // namespace

ExplainResult explain(exec::Executor& ex, const quant::CalibrationRelations& rel, const data::CalibrationData& data,
                      const ExplainOptions& o) {
  const Metric metric = parse_metric(o.metric);
  ExplainResult result;
  result.metric = o.metric;
  const SampleSplit split = split_samples(data.select(std::min(o.data_num, data.sample_count()), o.selection));
  check(!split.tune.empty(), "There is no calibration_data.");
  for (size_t s : split.tune) result.tune_samples.push_back(data.sample_names()[s]);
  for (size_t s : split.held_out) result.held_out_samples.push_back(data.sample_names()[s]);
  result.has_held_out = !split.held_out.empty();
  const exec::QuantConfig base = quantized_config(ex, o.config);
  const size_t count = ex.calibrations().size();

  // The quantizers to examine: ON, integer, with thresholds (not dynamic, not blocked).
  std::vector<int> examined;
  for (size_t i = 0; i < count; ++i) {
    const CalibrationSpec& spec = ex.calibrations()[i];
    const Quantizer q = quantizer_of(ex, i, base);
    if (base.on[i] && q.qtype.is_integer() && !spec.dynamic && spec.block_size == 0 && !q.scales.empty())
      examined.push_back(static_cast<int>(i));
  }
  const std::vector<ValueObserver> observed = observe_values(ex, data, split.tune, examined);

  NodeErrorsOptions ne;
  ne.metric = o.metric;
  ne.samples = split.tune;
  ne.config = base;
  const NodeErrorsResult errors = node_errors(ex, rel, data, ne);
  std::map<std::string, size_t> node_index;
  for (size_t n = 0; n < errors.nodes.size(); ++n) node_index[errors.nodes[n]] = n;
  auto first_node = [&](const std::string& cali) -> std::string {
    auto it = rel.calibration_to_node().find(cali);
    if (it == rel.calibration_to_node().end()) return "";
    std::string best;
    size_t best_index = std::numeric_limits<size_t>::max();
    for (const auto& n : it->second) {
      auto k = node_index.find(n);
      if (k != node_index.end() && k->second < best_index) best = n, best_index = k->second;
    }
    return best;
  };

  // Float runs of the tuning samples: the ranges of the branches in front of a quantizer.
  std::vector<exec::RunRecord> floats;
  for (size_t s : split.tune) floats.push_back(ex.cached_keep_all_run(data.sample(s), ex.uniform_config(false)));

  for (size_t k = 0; k < examined.size(); ++k) {
    const size_t i = static_cast<size_t>(examined[k]);
    const Quantizer q = quantizer_of(ex, i, base);
    NodeEvidence e = evidence_of(q, observed[k]);
    e.node = first_node(q.spec.node_name);
    if (auto n = node_index.find(e.node); n != node_index.end()) {
      e.own = errors.own[n->second];
      e.accumulated = errors.accumulated[n->second];
    } else {
      e.own = e.accumulated = std::numeric_limits<float>::quiet_NaN();
    }
    if (q.spec.graph == &ex.graph() && q.spec.kind != quant::TensorKind::Weight) {
      const auto [op, inputs] = branches_of(ex.graph(), q.spec);
      if (op) {
        e.branch_op = op->op_type;
        double lo = std::numeric_limits<double>::infinity(), hi = 0.0;
        for (int v : inputs) {
          double m = 0.0;
          for (const auto& f : floats) m = std::max(m, max_abs_of(value_of(ex, f, v)));
          e.branches.push_back({ex.graph().value(v).name, m});
          if (m > 0.0) lo = std::min(lo, m);
          hi = std::max(hi, m);
        }
        e.branch_ratio = std::isfinite(lo) && lo > 0.0 ? hi / lo : 0.0;
        if (op->op_type == "Concat" && !floats.empty()) {
          const int64_t rank = static_cast<int64_t>(value_of(ex, floats[0], q.spec.input_value).rank());
          int64_t axis = op->attr_int("axis", 0), own = q.spec.axis;
          if (axis < 0) axis += rank;
          if (own < 0) own += rank;
          e.branch_along_axis = axis == own;
        }
      }
    }
    e.causes = fired_causes(e, q.spec, q.qtype);
    result.evidence.push_back(std::move(e));
  }

  // Measuring the cures: each alone on the base configuration, on the tuning and held-out samples.
  const std::vector<int> compared = value_ids(ex.graph(), rel.model_outputs());
  Evaluator tune(ex, compared, metric), held(ex, compared, metric);
  for (size_t s : split.tune) tune.add_sample(data.sample(s), base);
  for (size_t s : split.held_out) held.add_sample(data.sample(s), base);
  result.start = tune.current_score();
  if (result.has_held_out) result.start_held_out = held.current_score();
  const double start_loss = metric_loss(metric, result.start);
  auto measure = [&](const exec::QuantConfig& c) {
    HintEffect effect;
    effect.before = result.start;
    effect.after = tune.peek(c);
    const double after_loss = metric_loss(metric, effect.after);
    effect.recovered = start_loss > 0.0 && std::isfinite(after_loss)
                           ? static_cast<float>((start_loss - after_loss) / start_loss)
                           : 0.0f;
    if (result.has_held_out) {
      effect.has_held_out = true;
      effect.held_out_before = result.start_held_out;
      effect.held_out_after = held.peek(c);
    }
    return effect;
  };
  size_t planned = 0;
  for (const auto& e : result.evidence) planned += e.causes.size();
  size_t done = 0;
  auto step = [&]() {
    ++done;
    if (o.progress && !o.progress(done, planned + o.inherited_top)) result.cancelled = true;
    return !result.cancelled;
  };

  std::vector<Hint> candidates;
  for (size_t k = 0; k < examined.size() && !result.cancelled; ++k) {
    const size_t i = static_cast<size_t>(examined[k]);
    const NodeEvidence& e = result.evidence[k];
    const Quantizer q = quantizer_of(ex, i, base);
    for (const std::string& cause : e.causes) {
      Hint h{e.calibration_node, e.node, cause, {}, {}};
      h.suggestion.node = e.calibration_node;
      // A threshold cure: each method tried at the node's granularity (or per channel), the best kept.
      auto threshold_cure = [&](const std::vector<std::string>& methods, bool per_channel) {
        bool any = false;
        for (const std::string& name : methods) {
          quant::ThresholdMethod m;
          m.name = name;
          m.per_channel = per_channel;
          std::vector<float> t;
          try {
            t = quant::method_thresholds(q.spec, q.qtype, observed[k], m);
            quant::with_thresholds(ex.calibrations()[i], t);
          } catch (const Error&) {
            continue;  // this node cannot take the method (asymmetric, grouped ConvTranspose, ...)
          }
          exec::QuantConfig c = base;
          c.thresholds.resize(count);
          c.thresholds[i] = t;
          const HintEffect effect = measure(c);
          if (!any || effect.recovered > h.effect.recovered) {
            h.effect = effect;
            h.suggestion.action = "threshold";
            h.suggestion.value = t;
            h.suggestion.method = name;
            h.suggestion.per_channel = per_channel;
            h.suggestion.text =
                per_channel
                    ? "per-channel thresholds (" + name + " per channel)"
                    : "threshold " + shortest(t.size() == 2 && q.spec.asymmetric ? t[1] : t[0]) + " (" + name + ")";
          }
          any = true;
        }
        return any;
      };
      auto qtype_cure = [&](const std::string& qtype) {
        exec::QuantConfig c = base;
        c.qtype.resize(count);
        c.qtype[i] = qtype == ex.calibrations()[i].qtype.name ? "" : qtype;
        h.suggestion.action = qtype;
        h.suggestion.text = qtype;
        h.effect = measure(c);
        return true;
      };
      const bool per_tensor = q.scales.size() == 1;
      bool cured = false;
      if (cause == "clipping" || cause == "coarse-resolution") cured = threshold_cure({"max", "mse"}, !per_tensor);
      else if (cause == "channel-spread") cured = threshold_cure({"max"}, true);
      else if (cause == "range-mismatch")
        cured = e.branch_along_axis && !q.spec.asymmetric ? threshold_cure({"max"}, true) : qtype_cure("int16");
      else if (cause == "one-sided") cured = qtype_cure("u" + q.qtype.name);
      if (cured) candidates.push_back(std::move(h));
      if (!step()) break;
    }
  }

  // Inherited: the nodes with the largest accumulated loss whose own loss is a small part of it.
  if (!result.cancelled && o.inherited_top > 0) {
    std::set<std::string> hinted, normal(errors.nodes.begin(), errors.nodes.end());
    for (const auto& e : result.evidence)
      if (!e.causes.empty()) hinted.insert(e.node);
    std::vector<size_t> by_loss;
    for (size_t n = 0; n < errors.nodes.size(); ++n)
      if (!std::isnan(metric_loss(metric, errors.accumulated[n]))) by_loss.push_back(n);
    std::stable_sort(by_loss.begin(), by_loss.end(), [&](size_t a, size_t b) {
      return metric_loss(metric, errors.accumulated[a]) > metric_loss(metric, errors.accumulated[b]);
    });
    const double cut = explain_rules().inherited;
    for (size_t r = 0; r < by_loss.size() && r < o.inherited_top && !result.cancelled; ++r) {
      const size_t n = by_loss[r];
      const std::string& node = errors.nodes[n];
      const double own = metric_loss(metric, errors.own[n]), acc = metric_loss(metric, errors.accumulated[n]);
      if (hinted.count(node) || !(acc > 0.0) || !(own < cut * acc) || ex.graph().find_node(node) < 0) {
        step();
        continue;
      }
      std::string upstream;
      double worst = own;
      for (const std::string& a : ancestors(ex.graph(), node, normal)) {
        const double l = metric_loss(metric, errors.own[node_index[a]]);
        if (l > worst) worst = l, upstream = a;
      }
      if (upstream.empty()) {
        step();
        continue;
      }
      const std::vector<int> set = calibration_set(ex, rel, {node});
      Hint h{set.empty() ? "" : ex.calibrations()[static_cast<size_t>(set[0])].node_name, node, "inherited", {}, {}};
      h.suggestion.node = upstream;
      h.suggestion.action = "float";
      h.suggestion.text = "look upstream: " + upstream + " (in float)";
      exec::QuantConfig c = base;
      for (int ci : calibration_set(ex, rel, {upstream})) c.on[static_cast<size_t>(ci)] = 0;
      h.effect = measure(c);
      candidates.push_back(std::move(h));
      step();
    }
  }

  // Kept when the cure recovers enough of the loss; ranked by that, ties in the order found. Inherited
  // hints come after the others: their suggestion measures where the error comes from (an upstream
  // node in float), it is not a cure of the node itself.
  for (auto& h : candidates)
    if (h.effect.recovered >= o.min_recovery) result.hints.push_back(std::move(h));
  std::stable_sort(result.hints.begin(), result.hints.end(), [](const Hint& a, const Hint& b) {
    const bool ia = a.cause == "inherited", ib = b.cause == "inherited";
    return ia != ib ? ib : a.effect.recovered > b.effect.recovered;
  });
  result.evaluations = tune.evaluations() + held.evaluations();
  return result;
}

}  // namespace ptq::analysis
