#pragma once
// What one run of the executor takes and gives: the quantization configuration, the record of the
// tensors it kept, and counters of the work done.
#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "quant/calibration.h"

namespace ptq::exec {

// Which calibration nodes fake-quantize in a run. Indexed like Executor::calibrations().
struct QuantConfig {
  std::vector<uint8_t> on;         // 1 = fake-quantize, 0 = identity
  std::vector<std::string> qtype;  // "" = as stored; otherwise an override such as "int16"
  // Thresholds replacing the stored ones (quant::with_thresholds: the node as if calibrated with
  // them); empty (the list, or a node's entry) = as stored.
  std::vector<std::vector<float>> thresholds;
  quant::RoundMode round = quant::RoundMode::HalfToEven;
  // 1 = under its qtype override, a Horizon node with constant = 2 keeps its stored scales (the original's
  // IR, which sensitivity_analysis emulates) instead of scales derived for the new type
  // (quant::override_scales). Empty = none.
  std::vector<uint8_t> stored_scales;

  bool keeps_stored_scales(size_t i) const { return i < stored_scales.size() && stored_scales[i] != 0; }

  // Node i's threshold override, or nullptr when it has none.
  const std::vector<float>* thresholds_of(size_t i) const {
    return i < thresholds.size() && !thresholds[i].empty() ? &thresholds[i] : nullptr;
  }
};

// Whether two configurations quantize every calibration node alike (switch, qtype, thresholds, rounding,
// scales rule).
inline bool same_state(const QuantConfig& a, const QuantConfig& b) {
  if (a.on != b.on || a.qtype != b.qtype || a.round != b.round || a.stored_scales != b.stored_scales) return false;
  for (size_t i = 0; i < a.on.size(); ++i) {
    const std::vector<float>*x = a.thresholds_of(i), *y = b.thresholds_of(i);
    if ((x == nullptr) != (y == nullptr) || (x && *x != *y)) return false;
  }
  return true;
}

// All tensors of one run of one sample, indexed by value id (undefined where not kept).
struct RunRecord {
  std::vector<Tensor> values;
  QuantConfig config;
  size_t kept_bytes = 0;  // keep_all tensors counted against the executor's keep_all budget
  int64_t evicted = 0;    // keep_all tensors dropped because the budget was exhausted
};

struct RunStats {
  int64_t nodes_executed = 0;
  int64_t nodes_skipped = 0;     // reused from the cached run
  int64_t nodes_recomputed = 0;  // re-run to rebuild base tensors evicted under the keep_all budget
};

}  // namespace ptq::exec
