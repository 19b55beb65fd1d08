#pragma once
// The Horizon calibrated-model dialect: HzCalibration attributes canonicalised as the original tool's
// IR does (§1.3–1.4), and the fake-quant math of §1.5.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "ir/graph.h"
#include "quant/fake_quant.h"

namespace ptq::quant {

enum class TensorKind { Unknown, Feature, Weight };  // tensor_type "", "feature", "weight"

// A target data type with its integer range (§1.4 table).
struct QType {
  std::string name = "int8";  // int4/int8/int16/int32/uint8/float16/bfloat16/float32/...
  bool is_integer() const;    // intB / uintB
  bool is_unsigned() const;   // uintB
  double qmin() const;
  double qmax() const;
  static QType parse(const std::string& name);  // throws on an unknown name
};

struct CalibrationSpec {
  std::string node_name;
  int node_id = -1;
  int input_value = -1;   // value id of the data input
  int output_value = -1;
  TensorKind kind = TensorKind::Unknown;
  QType qtype;
  bool switch_on = true;
  int64_t constant = 0;
  int64_t axis = 1;
  // > 0: blocked scales (a Q/DQ quantizer's opset-21 `block_size`, quant/param_layout.h): `scales`
  // and `zero_points` hold the parameter tensor (the input's shape, ceil(D / block_size) along
  // `axis`) in row-major order; each entry is one block's quantizer (its own range under an override).
  int64_t block_size = 0;
  int64_t group = 1;
  bool asymmetric = false;
  bool shift = false;     // power-of-two scales (quantize_type "shift")
  std::vector<float> thresholds;
  std::vector<float> scales;       // derived per §1.4 (or given when constant == 2)
  std::vector<int64_t> zero_points;
  bool conv_transpose_weight = false;  // weight consumed by ConvTranspose: regrouped channel index
  // A quantizer read from a Q/DQ model (quant/qdq_import.h; attribute `qdq_nodes` names its original
  // QuantizeLinear/DequantizeLinear nodes): `scales` and `zero_points` are the quantizer's own, per
  // tensor or per channel; each channel's real range is [(qmin - zp) * s, (qmax - zp) * s]
  // (range_min/range_max), which a qtype override keeps (derive_scales, derive_zero_points).
  bool affine = false;
  std::vector<std::string> qdq_nodes;
  // A dynamic quantizer (attribute `dynamic` = 1; a DynamicQuantizeLinear of a QOperator model, §1.12):
  // no stored scale; each run quantizes with the range of its own input, [min(0, min x), max(0, max x)],
  // spread over the qtype's levels (scale (hi − lo) / (qmax − qmin), zero point round(qmin − lo / s)
  // clamped), which for uint8 is what DynamicQuantizeLinear computes. A qtype override spreads the
  // same per-run range over the new type's levels.
  bool dynamic = false;
  std::vector<float> range_min, range_max;
  // Attributes the node carries but that are ignored in a way the user should know (e.g. unusable
  // stored scales the thresholds override).
  std::vector<std::string> warnings;

  // Where the node is (§1.13): the graph holding it (node_id, input_value and output_value index that
  // graph) and, inside a subgraph, the main-graph node id of the outermost If, Loop or Scan holding it.
  const ir::Graph* graph = nullptr;
  int owner_node = -1;  // -1: in the main graph

  std::string kind_name() const;  // "weight" / "feature" / ""
  bool in_subgraph() const { return owner_node >= 0; }
};

// Calls f(graph, prefix, owner_node) for the main graph ("", -1) and then every subgraph attribute (If
// branch, Loop or Scan body) at any depth, parents before their subgraphs: `prefix` is what names of
// its nodes take in front (§1.13: "<node>/<attribute>/" per enclosing control-flow node, outermost
// first), `owner_node` the main-graph node id of the outermost control-flow node holding it.
void for_each_scope(const ir::Graph& main, const std::function<void(const ir::Graph&, const std::string&, int)>& f);

// A calibration node anywhere in a model: in the main graph or in a subgraph attribute (If branch,
// Loop or Scan body) at any depth.
struct CalibrationSite {
  const ir::Graph* graph = nullptr;  // the graph holding it
  int node_id = -1;
  // The name it goes by in every list, configuration and analysis (§1.13): its node name in the main
  // graph; inside a subgraph, "<node>/<attribute>/" for each enclosing control-flow node, outermost
  // first, then its node name (e.g. "loop/body/x_HzCalibration").
  std::string name;
  int owner_node = -1;  // main-graph node id of the outermost control-flow node holding it; -1 in the main graph
};

// Every calibration node of the model whose main graph is `main`: the main graph's in node order,
// then those of each subgraph in for_each_scope order.
// Throws naming both when two of them would go by the same name.
std::vector<CalibrationSite> calibration_sites(const ir::Graph& main);

// parse_calibration of a site, with its name and place.
CalibrationSpec parse_calibration(const CalibrationSite& site);

// Parses and canonicalises one HzCalibration node (legacy `bits`, `info_strings`, `asymq`).
CalibrationSpec parse_calibration(const ir::Graph& graph, int node_id);

// Everything about a model a user should see when it loads: the reader's warnings
// (ir::Model::warnings), each calibration node's, and a model without any calibration node.
std::vector<std::string> model_warnings(const ir::Model& model);

// True for HzCalibration in domain "horizon" or "".
bool is_calibration_node(const ir::Node& node);

// How many calibration nodes quantize activations (feature / unknown kind) and weights.
struct CalibrationCounts {
  size_t activations = 0, weights = 0;
};
CalibrationCounts count_calibration_nodes(const ir::Graph& graph);

// Scales for `qtype` from the spec's thresholds (§1.4), in double rounded to float32 as the original's IR.
std::vector<float> derive_scales(const CalibrationSpec& spec, const QType& qtype);

// Scales of a calibration node whose qtype a run overrides with `qtype` (§1.4): derived again from its
// range (derive_scales: the step follows the type, as the toolchain re-calibrates a node), or, with
// `stored`, a Horizon node with constant = 2 keeps its stored scales: the original's IR returns them
// whatever the qtype, so an int16 override keeps the int8 step and only widens the clamp.
std::vector<float> override_scales(const CalibrationSpec& spec, const QType& qtype, bool stored);

// Zero points for `qtype` with `scales` (one, or one per channel): the stored ones under the stored
// qtype; under an override, an affine quantizer's zero points keep its real range, an asymmetric
// Horizon node's is qmax - round(fmax / s) for the new type (its stored one with constant = 2);
// symmetric nodes have 0.
std::vector<int64_t> derive_zero_points(const CalibrationSpec& spec, const QType& qtype, const std::vector<float>& scales);

// The node as if it had been calibrated with `thresholds`, read as its `thresholds` attribute is
// (§1.3): a symmetric node takes one per tensor or one per channel along its axis (one for a node
// stored per channel makes it per tensor, and the reverse); an asymmetric node takes [min, max]. The
// scales and zero points follow from them by the node's own rule (§1.4; a Q/DQ quantizer's by its
// real range, §1.11), at the stored qtype. Throws naming the node for a dynamic or blocked quantizer,
// a non-integer qtype, and thresholds that are not finite, not positive, or not [min < max] with
// min <= 0 <= max.
CalibrationSpec with_thresholds(const CalibrationSpec& spec, const std::vector<float>& thresholds);

// y = fake_quant(x) under `qtype` (switch ON): quant/fake_quant.h per value. Per-channel along spec.axis
// when more than one scale, per block when spec.block_size > 0.
Tensor fake_quantize(const CalibrationSpec& spec, const QType& qtype, const std::vector<float>& scales,
                     const Tensor& input, RoundMode round = RoundMode::HalfToEven);

}  // namespace ptq::quant
