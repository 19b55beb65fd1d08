#include "analysis/fix_search.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "analysis/evaluator.h"
#include "analysis/explain.h"
#include "analysis/node_errors.h"
#include "analysis/recalibrate.h"
#include "analysis/selection.h"
#include "analysis/sensitivity.h"
#include "core/error.h"
#include "quant/precision.h"

namespace ptq::analysis {
namespace {

// The shortest decimal spelling that reads back as the same double: positional between 1e-4 and
// 1e15 ("0.999", "30", "0.0001"), else with an exponent ("1e-05").
std::string shortest(double v) {
  char buf[64];
  const double a = std::fabs(v);
  const bool positional = a == 0.0 || (a >= 1e-4 && a < 1e15);
  for (int precision = positional ? 0 : 1; precision <= (positional ? 24 : 17); ++precision) {
    std::snprintf(buf, sizeof buf, positional ? "%.*f" : "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

using quant::action_rank;
using quant::precision_rank;

const std::string& effective_qtype(const exec::Executor& ex, const exec::QuantConfig& c, size_t i) {
  return i < c.qtype.size() && !c.qtype[i].empty() ? c.qtype[i] : ex.calibrations()[i].qtype.name;
}

using exec::same_state;

struct Candidate {
  std::string node;
  float value = std::nanf("");
};

// Normal nodes by their own error under `base` (node_errors on `samples`), largest loss first, NaN last.
std::vector<Candidate> rank_by_own_error(exec::Executor& ex, const quant::CalibrationRelations& rel,
                                         const data::CalibrationData& data, const exec::QuantConfig& base,
                                         const FixOptions& o, const std::vector<size_t>& samples) {
  NodeErrorsOptions ne;
  ne.metric = metric_name(o.target.metric);
  ne.samples = samples;
  ne.config = base;
  const NodeErrorsResult errors = node_errors(ex, rel, data, ne);
  std::vector<Candidate> out;
  for (size_t n = 0; n < errors.nodes.size(); ++n) out.push_back({errors.nodes[n], errors.own[n]});
  const Metric m = o.target.metric;
  std::stable_sort(out.begin(), out.end(), [m](const Candidate& a, const Candidate& b) {
    const double x = metric_loss(m, a.value), y = metric_loss(m, b.value);
    return std::isnan(y) ? !std::isnan(x) : x > y;
  });
  return out;
}

// Candidates in the order they are tried.
std::vector<Candidate> rank_candidates(exec::Executor& ex, const quant::CalibrationRelations& rel,
                                       const data::CalibrationData& data, const exec::QuantConfig& base,
                                       const FixOptions& o, const std::vector<size_t>& samples, bool& cancelled) {
  std::vector<Candidate> out;
  if (o.candidates == "list") {
    check(!o.candidate_nodes.empty(), "options.candidates: the list of candidate nodes is empty");
    std::set<std::string> seen;
    for (size_t k = 0; k < o.candidate_nodes.size(); ++k) {
      const std::string& n = o.candidate_nodes[k];
      const std::string field = "options.candidates[" + std::to_string(k) + "]";
      check(ex.names_node(n), field + ": node '" + n + "' does not exist in the model");
      check(seen.insert(n).second, field + ": node '" + n + "' is listed twice");
      check(!calibration_set(ex, rel, {n}).empty(), field + ": node '" + n + "' has no calibration node to raise");
      out.push_back({n});
    }
    return out;
  }
  check(o.candidates == "sensitivity" || o.candidates == "leave_one_out" || o.candidates == "own_error",
        "options.candidates must be 'sensitivity', 'leave_one_out', 'own_error' or a list of node names, got '" +
            o.candidates + "'");
  if (o.candidates == "own_error") return rank_by_own_error(ex, rel, data, base, o, samples);
  SensitivityOptions so;
  so.node_type = "node";
  so.metrics = {metric_name(o.target.metric)};
  so.samples = samples;
  so.leave_one_out = o.candidates == "leave_one_out";
  so.config = base;  // leave-one-out restores each node in this configuration; qtypes as configured
  std::string last_item;
  size_t ranked = 0;
  const size_t items = sensitivity_items(ex, rel, so).size();
  if (o.progress || o.cancel) {
    so.on_row = [&](const SensitivityRow& row) { last_item = row.item; };
    // The sweep reports each item of each sample block (rows come in the last block): one event per
    // ranked node, and the cancel question at every report.
    so.progress = [&](size_t, size_t) {
      if (o.progress && !last_item.empty()) {
        FixOptions::Event e;
        e.phase = "rank";
        e.node = last_item;
        e.value = std::nanf("");
        e.done = ++ranked;
        e.total = items;
        last_item.clear();
        if (!o.progress(e)) return false;
      }
      return !(o.cancel && o.cancel());
    };
  }
  SensitivityResult ranking = get_sensitivity_of_nodes(ex, rel, data, so);
  cancelled = ranking.cancelled;
  if (so.leave_one_out) {
    // Restoring the node that helps most first: best value in the metric's direction first, NaN last.
    const Metric m = o.target.metric;
    std::stable_sort(ranking.rows.begin(), ranking.rows.end(), [m](const SensitivityRow& a, const SensitivityRow& b) {
      const double x = a.values[0], y = b.values[0];
      return std::isnan(x) || std::isnan(y) ? ranks_before(m, x, y) : ranks_before(m, y, x);
    });
  }  // sensitivity rows come most sensitive first (§3.4)
  for (const auto& row : ranking.rows) out.push_back({row.item, row.values[0]});
  return out;
}

// The thresholds the "threshold" action gives each activation calibration node of the candidates
// (minimum quantization MSE on the tuning samples at the node's qtype in `base`), where allowed.
std::vector<std::vector<float>> fix_thresholds(exec::Executor& ex, const quant::CalibrationRelations& rel,
                                               const data::CalibrationData& data, const exec::QuantConfig& base,
                                               const FixOptions& o, const std::vector<Candidate>& candidates,
                                               const std::vector<size_t>& samples) {
  std::set<int> wanted;
  for (const auto& c : candidates)
    for (int ci : calibration_set(ex, rel, {c.node})) {
      const quant::CalibrationSpec& spec = ex.calibrations()[static_cast<size_t>(ci)];
      const bool plain = spec.kind != quant::TensorKind::Weight && !spec.dynamic && spec.block_size == 0 &&
                         spec.qtype.is_integer() && base.on[static_cast<size_t>(ci)];
      if (plain && (!o.threshold_allowed || o.threshold_allowed(static_cast<size_t>(ci)))) wanted.insert(ci);
    }
  std::vector<quant::ThresholdRequest> requests;
  for (int ci : wanted) {
    const size_t i = static_cast<size_t>(ci);
    quant::ThresholdMethod m;
    m.name = "mse";
    m.per_channel = ex.calibrations()[i].scales.size() > 1 && !ex.calibrations()[i].asymmetric;
    requests.push_back({i, m, effective_qtype(ex, base, i)});
  }
  std::vector<std::vector<float>> out(ex.calibrations().size());
  if (requests.empty()) return out;
  const std::vector<std::vector<float>> chosen = threshold_resolver(ex, data, samples)(requests);
  for (size_t k = 0; k < requests.size(); ++k) out[requests[k].calibration] = chosen[k];
  return out;
}

}  // namespace

bool FixTarget::holds(float value) const {
  if (std::isnan(value)) return false;
  const double v = value;
  if (op == ">=") return v >= bound;
  if (op == ">") return v > bound;
  if (op == "<=") return v <= bound;
  return v < bound;
}

std::string FixTarget::text() const { return metric_name(metric) + op + shortest(bound); }

FixTarget parse_fix_target(const std::string& text) {
  const std::string where = "target '" + text + "'";
  const size_t pos = text.find_first_of("<>");
  check(pos != std::string::npos && pos > 0,
        where + ": expected <metric><op><number> with op one of >=, >, <=, <, e.g. cosine-similarity>=0.999");
  auto trim = [](std::string s) {
    const auto b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
    return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
  };
  FixTarget t;
  const std::string metric = trim(text.substr(0, pos));
  try {
    t.metric = parse_metric(metric);
  } catch (const Error&) {
    fail(where + ": unknown metric '" + metric + "' (known: cosine-similarity, mse, mre, sqnr, chebyshev)");
  }
  t.op = text.substr(pos, pos + 1 < text.size() && text[pos + 1] == '=' ? 2 : 1);
  const std::string number = trim(text.substr(pos + t.op.size()));
  char* end = nullptr;
  t.bound = number.empty() ? 0.0 : std::strtod(number.c_str(), &end);
  check(!number.empty() && end && *end == '\0' && std::isfinite(t.bound), where + ": '" + number + "' is not a finite number");
  const bool up = t.op[0] == '>';
  check(up == higher_is_better(t.metric), where + ": " + metric + " is better when " +
                                              (higher_is_better(t.metric) ? "higher; use >= or >" : "lower; use <= or <"));
  return t;
}

void check_prefer(const std::vector<std::string>& prefer, const std::string& field) {
  check(!prefer.empty(), field + " is empty: give the allowed actions, e.g. int16,float");
  int previous = 0;
  for (size_t k = 0; k < prefer.size(); ++k) {
    const std::string& a = prefer[k];
    const std::string at = field + "[" + std::to_string(k) + "]";
    if (!quant::is_float_action(a) && !quant::is_threshold_action(a)) {
      try {
        quant::QType::parse(a);
      } catch (const Error&) {
        fail(at + ": unknown action '" + a + "' (threshold, float, or a qtype such as int16)");
      }
    }
    const int rank = action_rank(a);
    check(k == 0 || rank > previous, at + ": '" + a + "' is not more precise than the action before it; list the actions "
                                         "from the least to the most precise (e.g. threshold,int16,float)");
    previous = rank;
  }
}

exec::QuantConfig apply_fix_choices(const exec::Executor& ex, const quant::CalibrationRelations& rel,
                                    const exec::QuantConfig& base, const std::vector<FixChoice>& choices,
                                    const std::vector<std::vector<float>>& thresholds) {
  exec::QuantConfig c = base;
  c.qtype.resize(ex.calibrations().size());
  c.thresholds.resize(ex.calibrations().size());
  // Thresholds first: a more precise action on the same calibration node (from another choice) wins.
  for (const auto& choice : choices) {
    if (!quant::is_threshold_action(choice.action)) continue;
    for (int ci : calibration_set(ex, rel, {choice.node})) {
      const size_t i = static_cast<size_t>(ci);
      const bool untouched = base.on[i] && (i >= base.qtype.size() || base.qtype[i].empty()) && !base.thresholds_of(i);
      if (untouched && i < thresholds.size() && !thresholds[i].empty()) c.thresholds[i] = thresholds[i];
    }
  }
  for (const auto& choice : choices) {
    if (quant::is_threshold_action(choice.action)) continue;
    const bool off = quant::is_float_action(choice.action);
    const int rank = action_rank(choice.action);
    for (int ci : calibration_set(ex, rel, {choice.node})) {
      const size_t i = static_cast<size_t>(ci);
      if (precision_rank(c.on[i] != 0, effective_qtype(ex, c, i)) >= rank) continue;
      c.on[i] = off ? 0 : 1;
      c.qtype[i] = off || choice.action == ex.calibrations()[i].qtype.name ? "" : choice.action;
      c.thresholds[i] = base.thresholds_of(i) ? *base.thresholds_of(i) : std::vector<float>{};
    }
  }
  return c;
}

FixResult find_fix(exec::Executor& ex, const quant::CalibrationRelations& rel, const data::CalibrationData& data,
                   const exec::QuantConfig& base, const FixOptions& o) {
  check_prefer(o.prefer, "options.prefer");
  FixResult r;
  r.target = o.target;
  r.prefer = o.prefer;
  r.candidates = o.candidates;
  r.max_nodes = o.max_nodes;
  r.config = base;
  r.config.qtype.resize(ex.calibrations().size());

  const std::vector<int> compared = value_ids(ex.graph(), rel.model_outputs());
  const SampleSplit split = split_samples(data.select(std::min(o.data_num, data.sample_count()), o.selection));
  check(!split.tune.empty(), "There is no calibration_data.");
  for (size_t s : split.tune) r.samples.push_back(data.sample_names()[s]);
  for (size_t s : split.held_out) r.held_out.push_back(data.sample_names()[s]);

  const std::vector<Candidate> candidates = rank_candidates(ex, rel, data, base, o, split.tune, r.cancelled);
  for (const auto& c : candidates) {
    r.ranking.push_back(c.node);
    r.ranking_values.push_back(c.value);
  }
  if (r.cancelled) return r;
  const std::vector<std::vector<float>> thresholds =
      quant::is_threshold_action(o.prefer.front()) ? fix_thresholds(ex, rel, data, base, o, candidates, split.tune)
                                                   : std::vector<std::vector<float>>{};

  Evaluator eval(ex, compared, o.target.metric), held(ex, compared, o.target.metric);
  for (size_t s : split.tune) eval.add_sample(data.sample(s), r.config);
  for (size_t s : split.held_out) held.add_sample(data.sample(s), r.config);
  r.start = r.final_value = eval.current_score();
  if (!held.empty()) r.held_out_start = r.held_out_final = held.current_score();
  const std::string target = o.target.text();
  // The held-out samples judge the configuration the search ends with (§13.4).
  auto report_held_out = [&]() {
    if (held.empty() || r.cancelled) return;
    if (!same_state(r.config, base)) r.held_out_final = held.peek(r.config);
    r.held_out_met = o.target.holds(r.held_out_final);
    if (r.reached && !r.held_out_met)
      r.warnings.push_back("The held-out samples (" + std::to_string(split.held_out.size()) + ") reach " +
                           shortest(r.held_out_final) + ", missing the target " + target +
                           " that the tuning samples meet: the fix may not hold on other data; tune on more samples (-d)");
  };
  if (split.held_out.empty())
    r.warnings.push_back("No held-out sample: the fix is judged on the only sample it was tuned on (give -d 2 or more)");
  if (o.target.holds(r.start)) {
    r.reached = true;
    r.message = "The configuration already meets the target " + target + " (" + shortest(r.start) + "); nothing to raise.";
    report_held_out();
    return r;
  }

  const size_t n = candidates.size();
  std::vector<int> level(n, -1);  // index into prefer, -1 = untouched
  std::vector<size_t> order;      // chosen candidates, in the order chosen
  auto choices_of = [&](const std::vector<int>& levels) {
    std::vector<FixChoice> out;
    for (size_t k : order)
      if (levels[k] >= 0) out.push_back({candidates[k].node, o.prefer[static_cast<size_t>(levels[k])]});
    for (size_t k = 0; k < n; ++k)  // candidates being tried for the first time
      if (levels[k] >= 0 && std::find(order.begin(), order.end(), k) == order.end())
        out.push_back({candidates[k].node, o.prefer[static_cast<size_t>(levels[k])]});
    return out;
  };
  // Asked before every evaluation: a cancelled search stops there.
  auto stop = [&]() {
    if (!r.cancelled && o.cancel && o.cancel()) r.cancelled = true;
    return r.cancelled;
  };
  auto emit = [&](const std::string& phase, const std::string& node, const std::string& action, float value, bool accepted,
                  size_t done, size_t total) {
    if (!o.progress) return true;
    FixOptions::Event e{phase, node, action, value, accepted, done, total};
    if (o.progress(e)) return true;
    r.cancelled = true;
    return false;
  };
  const bool limited = o.max_nodes > 0 && o.max_nodes < n;

  // Without a node limit, one run with every candidate at the most precise action tells up front
  // whether the target can be reached at all.
  if (!limited) {
    std::vector<int> all(n, static_cast<int>(o.prefer.size()) - 1);
    const exec::QuantConfig c = apply_fix_choices(ex, rel, base, choices_of(all), thresholds);
    if (!same_state(c, r.config) && stop()) return r;
    const float v = same_state(c, r.config) ? r.start : eval.evaluate(c);
    r.evaluations = eval.evaluations();
    if (!emit("check", "", o.prefer.back(), v, false, 1, 1)) return r;
    if (!o.target.holds(v)) {
      r.final_value = v;
      r.config = c;
      for (size_t k = 0; k < n; ++k) r.nodes.push_back({candidates[k].node, o.prefer.back()});
      report_held_out();
      r.evaluations = eval.evaluations();  // the search's (the held-out report is not one)
      r.message = "The target " + target + " cannot be reached: with every candidate (" + std::to_string(n) +
                  " nodes) raised to " + o.prefer.back() + " the model outputs reach " + shortest(v) + " (start " +
                  shortest(r.start) + ").";
      return r;
    }
  }

  // Tries `levels`; on a change of configuration evaluates it, and accepts it when `keep(value)`.
  float current = r.start;
  auto attempt = [&](const std::vector<int>& levels, const std::function<bool(float)>& keep, bool& changed) {
    const exec::QuantConfig c = apply_fix_choices(ex, rel, base, choices_of(levels), thresholds);
    changed = !same_state(c, r.config);
    if (!changed || stop()) return current;
    const float v = eval.evaluate(c);
    r.evaluations = eval.evaluations();
    if (keep(v)) {
      eval.accept();
      r.config = c;
      current = v;
    }
    return v;
  };
  auto always = [](float) { return true; };

  // Add, then escalate: level 0 for candidates in rank order, then each further action in turn.
  for (size_t l = 0; l < o.prefer.size() && !r.reached; ++l) {
    const std::string phase = l == 0 ? "add" : "escalate";
    for (size_t k = 0; k < n && !r.reached; ++k) {
      if (level[k] >= static_cast<int>(l)) continue;
      const bool fresh = level[k] < 0;
      if (fresh && o.max_nodes > 0 && order.size() >= o.max_nodes) continue;
      std::vector<int> trial = level;
      trial[k] = static_cast<int>(l);
      bool changed = false;
      const float v = attempt(trial, always, changed);
      if (r.cancelled) break;
      if (!changed) continue;  // nothing left to raise on this node at this action
      level = trial;
      if (fresh) order.push_back(k);
      r.steps.push_back({phase, candidates[k].node, o.prefer[l], v});
      r.reached = o.target.holds(v);
      if (!emit(phase, candidates[k].node, o.prefer[l], v, true, k + 1, n)) break;
    }
    if (r.cancelled) break;
  }

  // Prune, least important first: drop the node, or else lower it to a more preferred action.
  if (r.reached && !r.cancelled) {
    const auto holds = [&](float v) { return o.target.holds(v); };
    const std::vector<size_t> chosen = order;
    for (size_t j = chosen.size(); j-- > 0;) {
      const size_t k = chosen[j];
      const size_t done = chosen.size() - j;
      std::vector<int> trial = level;
      trial[k] = -1;
      bool changed = false;
      float v = attempt(trial, holds, changed);
      if (r.cancelled) break;
      bool accepted = !changed || holds(v);
      if (!emit("prune", candidates[k].node, "removed", changed ? v : current, accepted, done, chosen.size())) break;
      if (accepted) {
        level = trial;
        order.erase(std::find(order.begin(), order.end(), k));
        r.pruned.push_back(candidates[k].node);
        r.steps.push_back({"prune", candidates[k].node, "removed", current});
        continue;
      }
      for (int l = 0; l < level[k]; ++l) {
        trial[k] = l;
        v = attempt(trial, holds, changed);
        if (r.cancelled) break;
        accepted = changed && holds(v);
        if (!changed) continue;
        if (!emit("prune", candidates[k].node, o.prefer[static_cast<size_t>(l)], v, accepted, done, chosen.size())) break;
        if (accepted) {
          level = trial;
          r.steps.push_back({"prune", candidates[k].node, o.prefer[static_cast<size_t>(l)], current});
          break;
        }
      }
      if (r.cancelled) break;
    }
  }

  r.final_value = current;
  for (const auto& c : choices_of(level)) r.nodes.push_back(c);
  // What each chosen node contributes: the final choice with that node alone back in its starting
  // state (evaluated from the final state; nothing is accepted).
  if (r.reached && !r.cancelled) {
    for (size_t j = 0; j < order.size() && !stop(); ++j) {
      std::vector<int> trial = level;
      trial[order[j]] = -1;
      const float v = eval.evaluate(apply_fix_choices(ex, rel, base, choices_of(trial), thresholds));
      const std::string& node = candidates[order[j]].node;
      for (auto& c : r.nodes)
        if (c.node == node) c.without = v;
      if (!emit("without", node, "removed", v, false, j + 1, order.size())) break;
    }
  }
  report_held_out();
  r.evaluations = eval.evaluations();  // the search's (the held-out report is not one)
  if (!r.reached && !r.cancelled)
    r.message = "The target " + target + " cannot be reached " +
                (limited ? "with at most " + std::to_string(o.max_nodes) + " nodes raised"
                         : "even with every candidate (" + std::to_string(n) + " nodes) raised") +
                ": the best configuration found reaches " + shortest(current) + " (start " + shortest(r.start) + ").";
  return r;
}

}  // namespace ptq::analysis
