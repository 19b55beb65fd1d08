#pragma once
// Helpers shared by the analyses: resolving names to value ids / calibration sets (§1.9), the
// variant configurations of §1.8 (white-list / black-list models) and single-sample selection.
#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/error.h"
#include "data/calibration_data.h"
#include "exec/executor.h"
#include "quant/relations.h"

namespace ptq::analysis {

inline std::vector<int> value_ids(const ir::Graph& g, const std::vector<std::string>& names) {
  std::vector<int> ids;
  for (const auto& n : names) {
    const int id = g.find_value(n);
    check(id >= 0, "compared tensor '" + n + "' does not exist in the model");
    ids.push_back(id);
  }
  return ids;
}

// Names of main-graph nodes or of calibration nodes at any depth (§1.13).
inline void check_node_names(const exec::Executor& ex, const std::vector<std::string>& names) {
  for (const auto& n : names) check(ex.names_node(n), n + " does not exist in the model.");
}

// Union of the calibration sets of `names` as indices into Executor::calibrations(), ascending.
inline std::vector<int> calibration_set(const exec::Executor& ex, const quant::CalibrationRelations& rel,
                                        const std::vector<std::string>& names) {
  std::set<int> set;
  for (const auto& name : names)
    for (const auto& c : rel.calibration_by_node(name)) {
      const int idx = ex.calibration_index(c);
      if (idx >= 0) set.insert(idx);  // names that are not calibration nodes select nothing (§1.9)
    }
  return {set.begin(), set.end()};
}

inline std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
  return out;
}

// A tensor of a run, for the analyses: they compare tensors only, so a sequence or an optional (a
// value the executor runs, core/tensor.h) is an error naming the tensor and the node that made it.
inline const Tensor& value_of(const exec::Executor& ex, const exec::RunRecord& r, int id) {
  if (const Tensor* c = ex.graph().constant(id)) return *c;
  const Tensor& t = r.values[static_cast<size_t>(id)];
  if (!t.is_dense()) {
    const ir::Value& v = ex.graph().value(id);
    fail("tensor '" + v.name + "'" +
         (v.producer >= 0 ? " (output of node '" + ex.graph().node(v.producer).name + "')" : "") + " is a " +
         value_kind_name(t.kind()) + ", not a tensor: the analyses compare tensors only");
  }
  return t;
}

// The inputs of calibration nodes `calibrations` (indices into Executor::calibrations()) in one run of
// `inputs` under `config`, as float tensors: a main-graph node's one input; a subgraph's node's
// executions (every iteration, every branch taken) concatenated along axis 0 in execution order, a
// scalar counting as [1] (§1.13). Undefined for a node the run never executed.
inline std::vector<Tensor> observe_calibration_inputs(exec::Executor& ex, const std::vector<Tensor>& inputs,
                                                      const exec::QuantConfig& config,
                                                      const std::vector<int>& calibrations) {
  std::vector<int> slot(ex.calibrations().size(), -1);
  for (size_t k = 0; k < calibrations.size(); ++k) slot[static_cast<size_t>(calibrations[k])] = static_cast<int>(k);
  std::vector<std::vector<Tensor>> seen(calibrations.size());
  {
    exec::Executor::ScopedCalibrationProbe probe(ex, [&](int ci, const Tensor& x) {
      if (slot[static_cast<size_t>(ci)] >= 0)
        seen[static_cast<size_t>(slot[static_cast<size_t>(ci)])].push_back(x.to_float());
    });
    ex.run(inputs, config);
  }
  std::vector<Tensor> out;
  for (size_t k = 0; k < calibrations.size(); ++k) {
    const std::vector<Tensor>& parts = seen[k];
    if (parts.size() <= 1) {
      out.push_back(parts.empty() ? Tensor() : parts[0]);
      continue;
    }
    const std::string& name = ex.calibrations()[static_cast<size_t>(calibrations[k])].node_name;
    Shape shape = parts[0].rank() ? parts[0].shape() : Shape{1};
    shape[0] = 0;
    for (const Tensor& p : parts) {
      const Shape s = p.rank() ? p.shape() : Shape{1};
      check(std::equal(s.begin() + 1, s.end(), shape.begin() + 1, shape.end()),
            "calibration node '" + name + "' reads tensors of shapes " + shape_str(parts[0].shape()) + " and " +
                shape_str(p.shape()) + " in one run: its executions cannot be put together along axis 0");
      shape[0] += s[0];
    }
    Tensor all(DType::Float, shape);
    float* dst = all.mutable_data<float>();
    for (const Tensor& p : parts) dst = std::copy(p.data<float>(), p.data<float>() + p.numel(), dst);
    out.push_back(std::move(all));
  }
  return out;
}

// "The quantized model" of an analysis: the request's configuration (docs/config-schema.md) when one
// was given, else the model as stored (every calibration node's switch attribute and qtype).
inline exec::QuantConfig quantized_config(const exec::Executor& ex, const std::optional<exec::QuantConfig>& config) {
  return config ? *config : ex.stored_config();
}

// §1.8 white-list model: the float model with `calibrations` and every node of `kinds` switched ON
// (even nodes stored OFF, as the original does), each with the qtype, thresholds and rounding of
// `quantized`.
inline exec::QuantConfig whitelist_config(const exec::Executor& ex, const exec::QuantConfig& quantized,
                                          const std::vector<int>& calibrations,
                                          const std::vector<quant::TensorKind>& kinds = {}) {
  exec::QuantConfig c = ex.uniform_config(false);
  c.qtype = quantized.qtype;
  c.thresholds = quantized.thresholds;
  c.round = quantized.round;
  for (int i : calibrations) c.on[static_cast<size_t>(i)] = 1;
  for (size_t i = 0; i < ex.calibrations().size(); ++i)
    for (auto k : kinds)
      if (ex.calibrations()[i].kind == k) c.on[i] = 1;
  return c;
}

// §1.8 black-list model: `quantized` with `calibrations` switched OFF, or, when `qtype` is neither
// empty nor "float32", kept as they are but re-quantized to `qtype` (e.g. "int16"), with
// `stored_scales` keeping a constant = 2 node's stored scales (exec::QuantConfig::stored_scales).
inline exec::QuantConfig blacklist_config(const exec::QuantConfig& quantized, const std::vector<int>& calibrations,
                                          const std::string& qtype = "", bool stored_scales = false) {
  exec::QuantConfig c = quantized;
  const bool switch_off = qtype.empty() || qtype == "float32";
  if (c.qtype.size() < c.on.size()) c.qtype.resize(c.on.size());
  if (!switch_off && stored_scales) c.stored_scales.resize(c.on.size());
  for (int i : calibrations) {
    if (switch_off) c.on[static_cast<size_t>(i)] = 0;
    else c.qtype[static_cast<size_t>(i)] = qtype;
    if (!switch_off && stored_scales) c.stored_scales[static_cast<size_t>(i)] = 1;
  }
  return c;
}

// The one sample of the single-sample analyses (§2.3: the lexicographically last file by default).
inline size_t single_sample(const data::CalibrationData& d, data::SampleSelection selection) {
  check(d.sample_count() > 0, "There is no calibration_data.");
  return selection == data::SampleSelection::First ? 0 : d.sample_count() - 1;
}

}  // namespace ptq::analysis
