#include "quant/calibration.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>

#include "core/error.h"
#include "core/half.h"
#include "quant/param_layout.h"

namespace ptq::quant {
namespace {

int integer_bits(const std::string& name, bool& is_unsigned) {
  std::string digits;
  if (name.rfind("uint", 0) == 0) {
    is_unsigned = true;
    digits = name.substr(4);
  } else if (name.rfind("int", 0) == 0) {
    is_unsigned = false;
    digits = name.substr(3);
  } else {
    return 0;
  }
  if (digits.empty() || digits.size() > 2 || !std::all_of(digits.begin(), digits.end(), ::isdigit)) return 0;
  const int bits = std::stoi(digits);
  return (bits >= 2 && bits <= 32) ? bits : 0;
}

struct FloatRange {
  const char* name;
  double limit;
};
constexpr FloatRange kFloatRanges[] = {
    {"float8e4m3fn", 448.0}, {"float8e5m2", 57344.0}, {"float8e3m4fn", 30.0},
    {"float8e2m5fn", 7.75},  {"mxint8", 1.984375},
};
constexpr const char* kFloatTypes[] = {"float16", "bfloat16", "float32"};

// Python's round(): half to even, on doubles.
double round_half_even(double v) { return std::nearbyint(v); }

// An asymmetric node's zero point (§1.4): qmax - round(fmax / s), the quotient in double as the original's
// IR computes it from its float attributes (Python floats), so a quotient near .5 rounds as it does.
int64_t asymmetric_zero_point(float fmax, float scale, const QType& qtype) {
  return static_cast<int64_t>(qtype.qmax() - round_half_even(static_cast<double>(fmax) / static_cast<double>(scale)));
}

}  // namespace

bool QType::is_integer() const {
  bool u = false;
  return integer_bits(name, u) != 0;
}
bool QType::is_unsigned() const {
  bool u = false;
  return integer_bits(name, u) != 0 && u;
}

double QType::qmin() const {
  bool u = false;
  if (const int b = integer_bits(name, u)) return u ? 0.0 : -std::ldexp(1.0, b - 1);
  for (const auto& r : kFloatRanges)
    if (name == r.name) return -r.limit;
  return -128.0;  // §1.4: every other qtype falls back to the int8 range
}

double QType::qmax() const {
  bool u = false;
  if (const int b = integer_bits(name, u)) return u ? std::ldexp(1.0, b) - 1.0 : std::ldexp(1.0, b - 1) - 1.0;
  for (const auto& r : kFloatRanges)
    if (name == r.name) return r.limit;
  return 127.0;
}

QType QType::parse(const std::string& name) {
  QType q;
  q.name = name;
  bool u = false;
  if (integer_bits(name, u)) return q;
  for (const auto* f : kFloatTypes)
    if (name == f) return q;
  for (const auto& r : kFloatRanges)
    if (name == r.name) return q;
  fail("unknown qtype '" + name + "' (expected int4/int8/int16/int32/uint8, float16, bfloat16, float32, float8*, mxint8)");
}

bool is_calibration_node(const ir::Node& node) {
  return node.op_type == "HzCalibration" && (node.domain == "horizon" || node.domain.empty());
}

namespace {

void visit_scopes(const ir::Graph& g, const std::string& prefix, int owner,
                  const std::function<void(const ir::Graph&, const std::string&, int)>& f) {
  f(g, prefix, owner);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const ir::Node& node = g.nodes[i];
    const int unit = owner >= 0 ? owner : static_cast<int>(i);
    for (const ir::Attribute& a : node.attributes) {
      const std::string inner = prefix + node.name + "/" + a.name + "/";
      if (a.g) visit_scopes(*a.g, inner, unit, f);
      for (const auto& sub : a.graphs) visit_scopes(*sub, inner, unit, f);
    }
  }
}

}  // namespace

void for_each_scope(const ir::Graph& main, const std::function<void(const ir::Graph&, const std::string&, int)>& f) {
  visit_scopes(main, "", -1, f);
}

std::vector<CalibrationSite> calibration_sites(const ir::Graph& main) {
  std::vector<CalibrationSite> sites;
  for_each_scope(main, [&](const ir::Graph& g, const std::string& prefix, int owner) {
    for (size_t i = 0; i < g.nodes.size(); ++i)
      if (is_calibration_node(g.nodes[i])) sites.push_back({&g, static_cast<int>(i), prefix + g.nodes[i].name, owner});
  });
  // Item names must be unique in the model: a subgraph's qualified name could repeat a main-graph name.
  std::set<std::string> seen;
  for (const CalibrationSite& s : sites) {
    const bool clash = !seen.insert(s.name).second || (s.owner_node >= 0 && main.find_node(s.name) >= 0);
    check(!clash, "calibration node '" + s.graph->node(s.node_id).name + "' inside node '" +
                      main.node(std::max(s.owner_node, 0)).name + "' would go by the name '" + s.name +
                      "', which another node of the model already has");
  }
  return sites;
}

CalibrationSpec parse_calibration(const CalibrationSite& site) {
  CalibrationSpec spec = parse_calibration(*site.graph, site.node_id);
  spec.node_name = site.name;
  spec.owner_node = site.owner_node;
  return spec;
}

CalibrationCounts count_calibration_nodes(const ir::Graph& graph) {
  CalibrationCounts counts;
  for (const CalibrationSite& site : calibration_sites(graph))
    (parse_calibration(site).kind == TensorKind::Weight ? counts.weights : counts.activations)++;
  return counts;
}

std::string CalibrationSpec::kind_name() const {
  switch (kind) {
    case TensorKind::Weight: return "weight";
    case TensorKind::Feature: return "feature";
    default: return "";
  }
}

std::vector<float> derive_scales(const CalibrationSpec& spec, const QType& qtype) {
  if (spec.affine && qtype.name == spec.qtype.name) return spec.scales;
  if (spec.affine && spec.asymmetric) {
    // Each channel's real range [range_min, range_max] spread over the new type's levels.
    std::vector<float> scales;
    const float levels = static_cast<float>(qtype.qmax() - qtype.qmin());
    for (size_t c = 0; c < spec.range_min.size(); ++c) scales.push_back((spec.range_max[c] - spec.range_min[c]) / levels);
    return scales;
  }
  if (spec.thresholds.empty()) return spec.scales;
  // The original's IR computes in double on its float attributes (Python floats) and rounds the scales to
  // float32 at the end; so does this. (A symmetric t / qmax comes out the same either way: a quotient of
  // two floats rounded once in double, then to float, is the float quotient.)
  std::vector<float> scales;
  if (spec.asymmetric) {
    // thresholds = [fmin, fmax]: fmax - fmin is exact in double, not always in float.
    const double range = static_cast<double>(spec.thresholds[1]) - static_cast<double>(spec.thresholds[0]);
    scales.push_back(static_cast<float>(range / (qtype.qmax() - qtype.qmin())));
    return scales;
  }
  for (float t : spec.thresholds) {
    const double s = static_cast<double>(t) / qtype.qmax();
    scales.push_back(static_cast<float>(spec.shift ? std::exp2(-round_half_even(-std::log2(s))) : s));
  }
  return scales;
}

std::vector<float> override_scales(const CalibrationSpec& spec, const QType& qtype, bool stored) {
  // The original's IR returns the stored scales of a constant = 2 node whatever its qtype: an override
  // keeps the step and only widens the clamp. A Q/DQ quantizer (affine) is not such a node (§1.11).
  if (stored && spec.constant == 2 && !spec.affine && !spec.dynamic && !spec.scales.empty()) return spec.scales;
  return derive_scales(spec, qtype);
}

std::vector<int64_t> derive_zero_points(const CalibrationSpec& spec, const QType& qtype, const std::vector<float>& scales) {
  if (!spec.affine) {
    if (!spec.asymmetric || spec.zero_points.empty()) return {0};
    // Stored scales (constant = 2) keep their stored zero point; derived ones get the zero point of the
    // type they were derived for (the original's IR recomputes it from the current qtype's qmax).
    if (qtype.name == spec.qtype.name || spec.constant == 2 || scales.empty() || spec.thresholds.size() != 2)
      return {spec.zero_points[0]};
    return {asymmetric_zero_point(spec.thresholds[1], scales[0], qtype)};
  }
  if (qtype.name == spec.qtype.name) return spec.zero_points;
  if (!spec.asymmetric) return {0};
  // zp = round(qmin - range_min / s), clamped to the type (as onnxruntime's quantizer derives it).
  std::vector<int64_t> zero_points;
  for (size_t c = 0; c < scales.size() && c < spec.range_min.size(); ++c) {
    const double zp = round_half_even(qtype.qmin() - static_cast<double>(spec.range_min[c] / scales[c]));
    zero_points.push_back(static_cast<int64_t>(std::min(std::max(zp, qtype.qmin()), qtype.qmax())));
  }
  return zero_points;
}

namespace {

// A Q/DQ quantizer's node (quant/qdq_import.h): scales (constant = 2) and zero points are given; the
// real range of each channel follows from them and is what a qtype override keeps.
void finish_affine(CalibrationSpec& spec, const std::string& where) {
  check(spec.qtype.is_integer(), where + ": a QuantizeLinear/DequantizeLinear quantizer needs an integer qtype, not '" +
                                     spec.qtype.name + "'");
  const size_t n = spec.scales.size();
  if (spec.zero_points.empty()) spec.zero_points.assign(1, 0);
  check(spec.zero_points.size() == 1 || spec.zero_points.size() == n,
        where + ": " + std::to_string(spec.zero_points.size()) + " zero points for " + std::to_string(n) + " scales");
  if (spec.zero_points.size() == 1 && n > 1) {
    const int64_t z = spec.zero_points[0];  // assign(n, v) must not be given an element of the vector itself
    spec.zero_points.assign(n, z);
  }
  const double qmin = spec.qtype.qmin(), qmax = spec.qtype.qmax();
  bool all_zero = true;
  for (int64_t z : spec.zero_points) {
    check(z >= qmin && z <= qmax, where + ": zero point " + std::to_string(z) + " is outside the range of " + spec.qtype.name);
    all_zero = all_zero && z == 0;
  }
  // Symmetric (signed type, zero point 0): the threshold s * qmax of the constant = 2 path, as a
  // Horizon node. Otherwise the range [(qmin - zp) * s, (qmax - zp) * s].
  spec.asymmetric = !(all_zero && !spec.qtype.is_unsigned());
  spec.range_min.clear();
  spec.range_max.clear();
  for (size_t c = 0; c < n; ++c) {
    const float z = static_cast<float>(spec.zero_points[c]);
    spec.range_min.push_back((static_cast<float>(qmin) - z) * spec.scales[c]);
    spec.range_max.push_back((static_cast<float>(qmax) - z) * spec.scales[c]);
  }
  if (!spec.asymmetric) return;
  spec.thresholds.clear();
  if (n == 1) {
    spec.thresholds = {spec.range_min[0], spec.range_max[0]};
    return;
  }
  for (size_t c = 0; c < n; ++c) spec.thresholds.push_back(std::max(std::fabs(spec.range_min[c]), std::fabs(spec.range_max[c])));
}

}  // namespace

CalibrationSpec parse_calibration(const ir::Graph& graph, int node_id) {
  const ir::Node& node = graph.node(node_id);
  CalibrationSpec spec;
  spec.node_name = node.name;
  spec.node_id = node_id;
  spec.graph = &graph;
  const std::string where = "calibration node '" + node.name + "'";
  check(!node.inputs.empty() && node.inputs[0] >= 0, where + " has no data input");
  check(!node.outputs.empty() && node.outputs[0] >= 0, where + " has no output");
  spec.input_value = node.inputs[0];
  spec.output_value = node.outputs[0];

  std::string qtype = node.attr_string("qtype", "");
  if (qtype.empty() && node.has_attr("bits")) qtype = "int" + std::to_string(node.attr_int("bits", 8));  // legacy
  if (qtype.empty()) qtype = "int8";
  const std::string switch_value = node.attr_string("switch", "ON");
  check(switch_value == "ON" || switch_value == "OFF",
        where + ": attribute 'switch' is '" + switch_value + "'; expected \"ON\" or \"OFF\"");
  spec.switch_on = switch_value == "ON";
  spec.constant = node.attr_int("constant", 0);
  spec.axis = node.attr_int("axis", 1);
  spec.block_size = node.attr_int("block_size", 0);
  check(spec.block_size >= 0, where + ": attribute 'block_size' is " + std::to_string(spec.block_size) + " (expected >= 0)");
  spec.group = node.attr_int("group", 1);
  spec.thresholds = node.attr_floats("thresholds");
  spec.scales = node.attr_floats("scales");
  spec.zero_points = node.attr_ints("zero_point");
  spec.qdq_nodes = node.attr_strings("qdq_nodes");
  spec.dynamic = node.attr_int("dynamic", 0) != 0;
  spec.affine = !spec.qdq_nodes.empty() && !spec.dynamic;
  if (spec.affine) check(spec.constant == 2 && !spec.scales.empty(), where + ": a Q/DQ quantizer (attribute 'qdq_nodes') needs constant = 2 and its scales");

  // Legacy info_strings tokens (§1.3).
  bool info_weight = false, info_feature = false, asymq = false;
  for (const auto& token : node.attr_strings("info_strings")) {
    if (token == "weight") info_weight = true;
    else if (token == "feature") info_feature = true;
    else if (token == "shift") spec.shift = true;
    else if (token == "asymq") asymq = true;
  }
  if (asymq) {
    // Old asymmetric nodes: shift thresholds by the zero point, intN -> uintN, then treat as symmetric
    // unsigned (the original drops the token without setting the asymmetric flag).
    check(!spec.scales.empty() && !spec.thresholds.empty() && !spec.zero_points.empty(),
          "Low version model, asymq calibration node missing scales, thresholds or zero_point: " + node.name);
    // In double, rounded to float32 once, as the original's IR updates its (Python float) thresholds.
    for (size_t i = 0; i < spec.thresholds.size(); ++i) {
      const double s = spec.scales[std::min(i, spec.scales.size() - 1)];
      const double zp = static_cast<double>(spec.zero_points[std::min(i, spec.zero_points.size() - 1)]);
      spec.thresholds[i] = static_cast<float>(static_cast<double>(spec.thresholds[i]) - zp * s);
    }
    if (qtype.rfind("int", 0) == 0) qtype = "u" + qtype;
    spec.zero_points.clear();
  }
  spec.qtype = QType::parse(qtype);
  if (spec.dynamic) {
    check(spec.qtype.is_integer(), where + ": a dynamic quantizer needs an integer qtype, not '" + spec.qtype.name + "'");
    spec.kind = TensorKind::Feature;
    spec.asymmetric = true;
    return spec;
  }

  // weight vs feature, in the fallback order of §1.3.
  if (info_weight) spec.kind = TensorKind::Weight;
  else if (info_feature) spec.kind = TensorKind::Feature;
  else if (graph.constant(spec.input_value)) spec.kind = TensorKind::Weight;
  else spec.kind = TensorKind::Feature;

  // Asymmetric (inferred; quant_attrs bits are not public): [fmin, fmax] thresholds with a zero point
  // on an unsigned type.
  spec.asymmetric = !asymq && spec.qtype.is_unsigned() && spec.thresholds.size() == 2 && !spec.zero_points.empty();

  for (int consumer : graph.value(spec.output_value).consumers)
    if (graph.node(consumer).op_type == "ConvTranspose") spec.conv_transpose_weight = spec.kind == TensorKind::Weight;

  for (float t : spec.thresholds)
    check(!std::isnan(t), "find NaN threshold in " + node.name);
  // Stored scales that the thresholds override (§1.4): ignored, but not silently when they are
  // unusable or disagree in count (asymmetric nodes have two thresholds and one scale).
  const bool scales_primary = spec.constant == 2 || spec.thresholds.empty();
  if (!scales_primary && !spec.scales.empty() && spec.qtype.is_integer()) {
    for (size_t i = 0; i < spec.scales.size(); ++i)
      if (!(std::isfinite(spec.scales[i]) && spec.scales[i] > 0.0f)) {
        spec.warnings.push_back(where + ": attribute 'scales' holds " + std::to_string(spec.scales[i]) + " at index " +
                                std::to_string(i) + ", not a positive finite number; it is ignored (the scales are derived from 'thresholds')");
        break;
      }
    if (!spec.asymmetric && !asymq && spec.scales.size() != spec.thresholds.size())
      spec.warnings.push_back(where + ": attribute 'scales' has " + std::to_string(spec.scales.size()) + " values but 'thresholds' has " +
                              std::to_string(spec.thresholds.size()) + "; the scales are derived from 'thresholds'");
  }
  if (scales_primary && !spec.scales.empty() && !spec.thresholds.empty() && !spec.asymmetric &&
      spec.scales.size() != spec.thresholds.size())
    spec.warnings.push_back(where + ": attribute 'thresholds' has " + std::to_string(spec.thresholds.size()) + " values but 'scales' has " +
                            std::to_string(spec.scales.size()) + "; with constant=2 the thresholds are derived from 'scales'");
  const bool stored_scales = spec.constant == 2 && !spec.scales.empty();
  if (stored_scales && !spec.asymmetric) {
    spec.thresholds.clear();
    for (float s : spec.scales) spec.thresholds.push_back(s * static_cast<float>(spec.qtype.qmax()));
  } else if (!stored_scales && !spec.thresholds.empty()) {
    spec.scales = derive_scales(spec, spec.qtype);
  }
  if (spec.affine) {
    finish_affine(spec, where);
  } else if (spec.asymmetric && !stored_scales) {
    // With stored scales (constant = 2) an asymmetric node keeps its stored zero point and [fmin, fmax].
    spec.zero_points = {asymmetric_zero_point(spec.thresholds[1], spec.scales.at(0), spec.qtype)};
  }
  if (spec.qtype.is_integer()) {
    check(!spec.scales.empty(), where + " has neither thresholds nor scales");
    // Name the attribute the bad scale comes from: the stored scales, or the thresholds they derive from.
    const char* source = scales_primary ? "scales" : "thresholds";
    for (size_t i = 0; i < spec.scales.size(); ++i) {
      const float s = spec.scales[i];
      check(std::isfinite(s) && s > 0.0f, where + ": scale " + std::to_string(s) + " (from attribute '" + source + "', index " +
                                              std::to_string(i) + ") is not a positive finite number");
    }
  }
  return spec;
}

CalibrationSpec with_thresholds(const CalibrationSpec& spec, const std::vector<float>& thresholds) {
  const std::string where = "calibration node '" + spec.node_name + "'";
  check(!spec.dynamic, where + " quantizes each run with its own range: it has no thresholds to set");
  check(spec.block_size == 0, where + " has blocked scales: its thresholds cannot be set per tensor or channel");
  check(spec.qtype.is_integer(), where + " is " + spec.qtype.name + ": only integer nodes have thresholds");
  check(!thresholds.empty(), where + ": no thresholds given");
  for (float t : thresholds) check(std::isfinite(t), where + ": threshold " + std::to_string(t) + " is not finite");
  CalibrationSpec s = spec;
  s.thresholds = thresholds;
  s.warnings.clear();
  const double qmin = spec.qtype.qmin(), qmax = spec.qtype.qmax();
  if (spec.asymmetric) {
    check(thresholds.size() == 2 && thresholds[0] <= 0.0f && thresholds[1] >= 0.0f && thresholds[0] < thresholds[1],
          where + " is asymmetric: its thresholds are [min, max] with min <= 0 <= max and min < max");
  } else {
    for (float t : thresholds) check(t > 0.0f, where + ": threshold " + std::to_string(t) + " is not positive");
  }
  if (!spec.affine) {
    s.constant = 1;  // the scales follow from the new thresholds
    s.scales = derive_scales(s, s.qtype);
    if (s.asymmetric) s.zero_points = {static_cast<int64_t>(qmax - round_half_even(thresholds[1] / s.scales[0]))};
    return s;
  }
  // A Q/DQ quantizer: new scales and zero points, then its real range again.
  if (spec.asymmetric) {
    const float scale = (thresholds[1] - thresholds[0]) / static_cast<float>(qmax - qmin);
    const double zp = round_half_even(qmin - static_cast<double>(thresholds[0] / scale));
    s.scales = {scale};
    s.zero_points = {static_cast<int64_t>(std::min(std::max(zp, qmin), qmax))};
  } else {
    s.scales.clear();
    for (float t : thresholds) s.scales.push_back(t / static_cast<float>(qmax));
    s.zero_points.assign(s.scales.size(), 0);
  }
  finish_affine(s, where);  // the range (and an asymmetric node's thresholds) as a reopened model reads them
  if (!s.asymmetric) {
    s.thresholds.clear();
    for (float scale : s.scales) s.thresholds.push_back(scale * static_cast<float>(qmax));
  }
  return s;
}

std::vector<std::string> model_warnings(const ir::Model& model) {
  std::vector<std::string> warnings = model.warnings;
  const std::vector<CalibrationSite> sites = calibration_sites(model.graph);
  for (const CalibrationSite& site : sites) {
    const CalibrationSpec spec = parse_calibration(site);
    warnings.insert(warnings.end(), spec.warnings.begin(), spec.warnings.end());
  }
  if (sites.empty())
    warnings.push_back("the model has no HzCalibration node: nothing in it is quantized, so every analysis is empty "
                       "(open the calibrated model, not the float one)");
  return warnings;
}

namespace {

// Parameter index of each element: per channel or per block (quant/param_layout.h), or per channel
// with ConvTranspose weights regrouped (§1.5).
struct ChannelMap {
  ParamLayout layout;
  bool regroup = false;
  int64_t in_per_group = 1, out_per_group = 1;
};

ChannelMap channel_map(const CalibrationSpec& spec, const Tensor& input, size_t scale_count) {
  ChannelMap m;
  const int64_t rank = static_cast<int64_t>(input.rank());
  int64_t axis = spec.axis < 0 ? spec.axis + rank : spec.axis;
  const std::string where = "calibration node '" + spec.node_name + "'";
  check(axis >= 0 && axis < rank, where + ": axis " + std::to_string(spec.axis) + " is out of range for shape " + shape_str(input.shape()));
  if (spec.conv_transpose_weight && rank >= 2 && spec.block_size == 0) {
    // Weight [C_in, C_out/g, ...]: scale index (i div (C_in/g))·(C_out/g) + j.
    m.regroup = true;
    const int64_t g = std::max<int64_t>(1, spec.group);
    m.in_per_group = input.dim(0) / g;
    m.out_per_group = input.dim(1);
    check(static_cast<int64_t>(scale_count) == g * m.out_per_group,
          where + ": " + std::to_string(scale_count) + " scales do not match ConvTranspose output channels " +
              std::to_string(g * m.out_per_group));
    m.layout = axis_layout(input.shape(), 1, 0);
    return m;
  }
  m.layout = axis_layout(input.shape(), axis, spec.block_size);
  if (spec.block_size > 0) {
    check(m.layout.count() == static_cast<int64_t>(scale_count),
          where + ": " + std::to_string(scale_count) + " scales but the tensor " + shape_str(input.shape()) + " needs " +
              std::to_string(m.layout.count()) + " for blocks of " + std::to_string(spec.block_size) + " along axis " +
              std::to_string(spec.axis) + " (scale shape " +
              shape_str(blocked_param_shape(input.shape(), axis, spec.block_size)) + ")");
    return m;
  }
  check(m.layout.channels == static_cast<int64_t>(scale_count),
        where + ": " + std::to_string(scale_count) + " scales but the tensor " + shape_str(input.shape()) +
            " has " + std::to_string(m.layout.channels) + " channels along axis " + std::to_string(spec.axis));
  return m;
}

// y = dequantize(quantize(x)) (quant/fake_quant.h) over a contiguous run sharing one scale.
template <RoundMode R>
void quantize_run(const float* x, float* y, int64_t n, float s, float zp, float qmin, float qmax) {
  for (int64_t i = 0; i < n; ++i) y[i] = dequantize_value(quantize_value<R>(x[i], s, zp, qmin, qmax), zp, s);
}

template <RoundMode R>
void quantize_tensor(const CalibrationSpec& spec, const QType& qtype, const std::vector<float>& scales,
                     const Tensor& input, Tensor& out) {
  const float* x = input.data<float>();
  float* y = out.mutable_data<float>();
  const float qmin = static_cast<float>(qtype.qmin()), qmax = static_cast<float>(qtype.qmax());
  const std::vector<int64_t> zero_points = derive_zero_points(spec, qtype, scales);
  check(zero_points.size() == 1 || zero_points.size() == scales.size(),
        "calibration node '" + spec.node_name + "': " + std::to_string(zero_points.size()) + " zero points for " +
            std::to_string(scales.size()) + " scales");
  auto zp_at = [&](size_t i) { return static_cast<float>(zero_points[zero_points.size() == 1 ? 0 : i]); };
  if (scales.size() == 1 && spec.block_size == 0) {
    quantize_run<R>(x, y, input.numel(), scales[0], zp_at(0), qmin, qmax);
    return;
  }
  const ChannelMap m = channel_map(spec, input, scales.size());
  for_each_param_run(m.layout, [&](int64_t offset, int64_t k, int64_t step) {
    if (m.regroup) {
      const int64_t o = offset / (m.layout.channels * m.layout.inner), c = k;
      k = (o / m.in_per_group) * m.out_per_group + c;
    }
    if (step == 0) {
      quantize_run<R>(x + offset, y + offset, m.layout.inner, scales[static_cast<size_t>(k)], zp_at(static_cast<size_t>(k)),
                      qmin, qmax);
      return;
    }
    for (int64_t i = 0; i < m.layout.inner; ++i, k += step)
      quantize_run<R>(x + offset + i, y + offset + i, 1, scales[static_cast<size_t>(k)], zp_at(static_cast<size_t>(k)), qmin,
                      qmax);
  });
}

// A dynamic quantizer (CalibrationSpec::dynamic): the parameters from this input's own range, as
// DynamicQuantizeLinear computes them (quant::dynamic_params).
void dynamic_quantize(const CalibrationSpec& spec, const QType& qtype, const Tensor& input, Tensor& out, RoundMode round) {
  const float* x = input.data<float>();
  float* y = out.mutable_data<float>();
  const int64_t n = input.numel();
  float lo = 0.0f, hi = 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    check(std::isfinite(x[i]), "calibration node '" + spec.node_name + "' (dynamic): its input holds a non-finite value at element " +
                                   std::to_string(i));
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
  }
  const float qmin = static_cast<float>(qtype.qmin()), qmax = static_cast<float>(qtype.qmax());
  const auto [s, zp] = dynamic_params(lo, hi, qmin, qmax);
  if (round == RoundMode::HalfToEven) quantize_run<RoundMode::HalfToEven>(x, y, n, s, zp, qmin, qmax);
  else quantize_run<RoundMode::HalfAwayFromZero>(x, y, n, s, zp, qmin, qmax);
}

}  // namespace

Tensor fake_quantize(const CalibrationSpec& spec, const QType& qtype, const std::vector<float>& scales,
                     const Tensor& input, RoundMode round) {
  check(input.dtype() == DType::Float, "calibration node '" + spec.node_name + "': input must be float32, got " +
                                           dtype_name(input.dtype()));
  if (qtype.name == "float32") return input;
  Tensor out(DType::Float, input.shape());
  const float* x = input.data<float>();
  float* y = out.mutable_data<float>();
  const int64_t n = input.numel();
  if (qtype.name == "float16") {
    for (int64_t i = 0; i < n; ++i) y[i] = half_to_float(float_to_half(x[i]));
    return out;
  }
  if (qtype.name == "bfloat16") {
    for (int64_t i = 0; i < n; ++i) y[i] = bfloat16_to_float(float_to_bfloat16(x[i]));
    return out;
  }
  check(qtype.is_integer(), "calibration node '" + spec.node_name + "': fake quantization to qtype '" + qtype.name +
                                "' is not supported (integer, float16, bfloat16 and float32 are)");
  if (spec.dynamic) {
    dynamic_quantize(spec, qtype, input, out, round);
    return out;
  }
  if (round == RoundMode::HalfToEven) quantize_tensor<RoundMode::HalfToEven>(spec, qtype, scales, input, out);
  else quantize_tensor<RoundMode::HalfAwayFromZero>(spec, qtype, scales, input, out);
  return out;
}

}  // namespace ptq::quant
