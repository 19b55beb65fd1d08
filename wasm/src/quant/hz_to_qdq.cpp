#include "quant/hz_to_qdq.h"

#include <algorithm>

#include "core/error.h"
#include "quant/calibration.h"
#include "quant/graph_edit.h"
#include "quant/opset_upgrade.h"

namespace ptq::quant {
namespace {

constexpr int64_t kPerAxisOpset = 13;   // QuantizeLinear/DequantizeLinear `axis`
constexpr int64_t kSixteenBitOpset = 21;  // int16/uint16 QuantizeLinear

// The ONNX integer type QuantizeLinear produces for a qtype (its zero point's type).
DType zero_point_type(const CalibrationSpec& s) {
  const std::string& q = s.qtype.name;
  if (q == "int8") return DType::Int8;
  if (q == "uint8") return DType::UInt8;
  if (q == "int16") return DType::Int16;
  if (q == "uint16") return DType::UInt16;
  fail("calibration node '" + s.node_name + "': qtype '" + q +
       "' has no ONNX QuantizeLinear equivalent (int8, uint8, int16 and uint16 do)");
}

// The zero-point tensor: `values` has one value (repeated) or one per element.
Tensor filled(DType dtype, Shape shape, const std::vector<int64_t>& values) {
  Tensor t(dtype, shape);
  for (int64_t i = 0; i < t.numel(); ++i) {
    const int64_t value = values[values.size() == 1 ? 0 : static_cast<size_t>(i)];
    switch (dtype) {
      case DType::Int8: t.mutable_data<int8_t>()[i] = static_cast<int8_t>(value); break;
      case DType::UInt8: t.mutable_data<uint8_t>()[i] = static_cast<uint8_t>(value); break;
      case DType::Int16: t.mutable_data<int16_t>()[i] = static_cast<int16_t>(value); break;
      default: t.mutable_data<uint16_t>()[i] = static_cast<uint16_t>(value); break;
    }
  }
  return t;
}

class Rewriter {
 public:
  explicit Rewriter(ir::Graph& g) : g_(g), names_(g) {}
  bool sixteen_bit = false;

  // The nodes replacing calibration node `id`.
  std::vector<ir::Node> rewrite(int id) {
    const CalibrationSpec s = parse_calibration(g_, id);
    const int x = s.input_value, y = s.output_value;
    const std::string& name = s.node_name;
    const std::string& q = s.qtype.name;
    if (!s.switch_on || q == "float32") return {edit::make_node(name, "Identity", "", {x}, {y})};
    if (q == "float16" || q == "bfloat16") {
      const int narrow = value(name + "_" + q);
      const int64_t to = static_cast<int64_t>(q == "float16" ? DType::Float16 : DType::BFloat16);
      return {edit::make_node(names_.fresh(name + "_Cast"), "Cast", "", {x}, {narrow}, {edit::attr_int("to", to)}),
              edit::make_node(names_.fresh(name + "_CastBack"), "Cast", "", {narrow}, {y},
                              {edit::attr_int("to", static_cast<int64_t>(DType::Float))})};
    }
    const DType zp_type = zero_point_type(s);
    sixteen_bit = sixteen_bit || zp_type == DType::Int16 || zp_type == DType::UInt16;
    // Per-channel zero points only come from Q/DQ quantizers (calibration.h, `affine`).
    const std::vector<int64_t> zp = derive_zero_points(s, s.qtype, s.scales);
    const size_t n = s.scales.size();
    if (n == 1) return quantize_dequantize(s, x, y, Shape{}, zp_type, zp, 0);
    if (s.conv_transpose_weight && s.group > 1) return regrouped(s, zp_type, zp);
    return quantize_dequantize(s, x, y, Shape{static_cast<int64_t>(n)}, zp_type, zp, s.conv_transpose_weight ? 1 : s.axis);
  }

 private:
  int value(const std::string& base) { return edit::add_value(g_, names_.fresh(base)); }

  std::vector<ir::Node> quantize_dequantize(const CalibrationSpec& s, int x, int y, const Shape& param_shape,
                                            DType zp_type, const std::vector<int64_t>& zp, int64_t axis) {
    const std::string& name = s.node_name;
    const int scale = edit::add_initializer(g_, names_.fresh(name + "_scale"), Tensor::from_floats(param_shape, s.scales));
    const int zero = edit::add_initializer(g_, names_.fresh(name + "_zero_point"), filled(zp_type, param_shape, zp));
    const int quantized = value(name + "_quantized");
    std::vector<ir::Attribute> attrs;
    if (!param_shape.empty()) attrs.push_back(edit::attr_int("axis", axis));
    return {edit::make_node(names_.fresh(name + "_QuantizeLinear"), "QuantizeLinear", "", {x, scale, zero}, {quantized}, attrs),
            edit::make_node(names_.fresh(name + "_DequantizeLinear"), "DequantizeLinear", "", {quantized, scale, zero}, {y},
                            attrs)};
  }

  // ConvTranspose weight [C_in, C_out/g, k...] with per-(group, output channel) scales: viewed as
  // [g, C_in/g, C_out/g, K], transposed to [g, C_out/g, C_in/g, K] and flattened to
  // [C_out, C_in/g, K], where the scale index is the axis-0 index; quantized there and put back.
  std::vector<ir::Node> regrouped(const CalibrationSpec& s, DType zp_type, const std::vector<int64_t>& zp) {
    const Tensor* constant = g_.constant(s.input_value);
    check(constant && constant->rank() >= 2,
          "calibration node '" + s.node_name + "': a regrouped ConvTranspose weight must be a constant of rank >= 2");
    const Tensor w = *constant;  // shares the data; the pointer dies when values grow below
    const int64_t g = s.group, cin = w.dim(0), cout_g = w.dim(1);
    check(cin % g == 0, "calibration node '" + s.node_name + "': weight channels do not split into groups");
    int64_t k = 1;
    for (size_t d = 2; d < w.rank(); ++d) k *= w.dim(d);
    const std::string& name = s.node_name;
    auto shape_const = [&](const char* tag, std::vector<int64_t> dims) {
      return edit::add_initializer(g_, names_.fresh(name + tag),
                                   Tensor::from_int64s({static_cast<int64_t>(dims.size())}, dims));
    };
    const int grouped_shape = shape_const("_grouped_shape", {g, cin / g, cout_g, k});
    const int channel_shape = shape_const("_channel_shape", {g * cout_g, cin / g, k});
    const int swapped_shape = shape_const("_swapped_shape", {g, cout_g, cin / g, k});
    const int original_shape = shape_const("_weight_shape", w.shape());
    const ir::Attribute perm = edit::attr_ints("perm", {0, 2, 1, 3});
    const int grouped = value(name + "_grouped"), swapped = value(name + "_swapped"), channels = value(name + "_channels");
    const int dequantized = value(name + "_dequantized"), back = value(name + "_unflattened"), unswapped = value(name + "_unswapped");
    std::vector<ir::Node> out;
    auto node = [&](const char* op, std::vector<int> in, int o, std::vector<ir::Attribute> attrs = {}) {
      out.push_back(edit::make_node(names_.fresh(name + "_" + op), op, "", std::move(in), {o}, std::move(attrs)));
    };
    node("Reshape", {s.input_value, grouped_shape}, grouped);
    node("Transpose", {grouped}, swapped, {perm});
    node("Reshape", {swapped, channel_shape}, channels);
    for (auto& n : quantize_dequantize(s, channels, dequantized, Shape{static_cast<int64_t>(s.scales.size())}, zp_type, zp, 0))
      out.push_back(std::move(n));
    node("Reshape", {dequantized, swapped_shape}, back);
    node("Transpose", {back}, unswapped, {perm});
    node("Reshape", {unswapped, original_shape}, s.output_value);
    return out;
  }

  ir::Graph& g_;
  edit::NameSet names_;
};

bool is_horizon_op(const ir::Node& n) {
  return n.domain == "horizon" || (n.domain.empty() && n.op_type.rfind("Hz", 0) == 0);
}

}  // namespace

ir::Model hz_to_qdq(const ir::Model& calibrated) {
  ir::Model out = calibrated;
  ir::Graph& g = out.graph;
  Rewriter rewriter(g);
  std::vector<ir::Node> nodes;
  const size_t count = g.nodes.size();
  std::vector<std::vector<ir::Node>> replacements(count);
  for (size_t i = 0; i < count; ++i)
    if (is_calibration_node(g.nodes[i])) replacements[i] = rewriter.rewrite(static_cast<int>(i));
  for (size_t i = 0; i < count; ++i) {
    if (!is_calibration_node(g.nodes[i])) {
      nodes.push_back(std::move(g.nodes[i]));
      continue;
    }
    for (auto& n : replacements[i]) nodes.push_back(std::move(n));
  }
  g.nodes = std::move(nodes);
  ir::finalize_graph(g);

  const int64_t current = out.opset("");
  const int64_t target = std::max(current, rewriter.sixteen_bit ? kSixteenBitOpset : kPerAxisOpset);
  if (current > 0) upgrade_default_opset(out, target);
  edit::set_opset(out, "", target);
  out.ir_version = std::max(out.ir_version, min_ir_version_for_opset(target));
  for (auto& n : g.nodes)
    if (n.domain.empty() && !is_horizon_op(n)) n.opset = static_cast<int>(target);
  if (std::none_of(g.nodes.begin(), g.nodes.end(), is_horizon_op)) edit::remove_opset(out, "horizon");
  return out;
}

}  // namespace ptq::quant
