#pragma once
// How precise a calibration node's state is, for the fix search ("raise only") and the exports ("the
// nodes a configuration raised"): OFF (float) above every quantized type, integer types by their bit
// width, float16/bfloat16 as 16 bits, the 8-bit float formats as 8.
#include <cmath>
#include <string>
#include <vector>

#include "quant/calibration.h"

namespace ptq::quant {

// An action on a node: "float" (its calibration nodes switched OFF), a qtype name (ON with it) or
// "threshold".
inline bool is_float_action(const std::string& action) { return action == "float" || action == "float32"; }

// Throws ptq::Error for an unknown qtype name.
inline int precision_rank(bool on, const std::string& qtype) {
  if (!on || qtype == "float32") return 1000;
  const QType q = QType::parse(qtype);
  if (q.is_integer()) return static_cast<int>(std::lround(std::log2(q.qmax() - q.qmin() + 1.0)));
  if (qtype == "float16" || qtype == "bfloat16") return 16;
  return 8;
}

// "threshold" (re-calibrated thresholds at the stored qtype, §13.2) ranks below every qtype: it costs
// nothing at run time, so a search tries it first.
inline bool is_threshold_action(const std::string& action) { return action == "threshold"; }
inline int action_rank(const std::string& action) {
  if (is_threshold_action(action)) return 0;
  return is_float_action(action) ? 1000 : precision_rank(true, action);
}

// The integer qtypes the faces offer as actions on a node (the what-if's buttons; describe().qtypes):
// the signed types and their unsigned twins of the same width, which a one-sided input (a ReLU's
// output on a signed grid, §13.1) uses whole.
struct ActionQType {
  const char* name;
  int bits;
  bool is_unsigned;
  const char* doc;
};
inline const std::vector<ActionQType>& action_qtypes() {
  static const std::vector<ActionQType> list = {
      {"int8", 8, false, "8-bit signed: the usual integer type"},
      {"uint8", 8, true, "8-bit unsigned: every level for data that is never negative (one-sided)"},
      {"int16", 16, false, "16-bit signed: 256 times finer steps, at a run-time cost on most NPUs"},
      {"uint16", 16, true, "16-bit unsigned, for data that is never negative"},
  };
  return list;
}

}  // namespace ptq::quant
