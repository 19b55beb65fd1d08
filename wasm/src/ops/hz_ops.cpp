// Horizon calibrated-model ops that are not plain activations or data movement:
// HzCalibration (as stored in the node), HzPreprocess, HzFilter (§1.7, §1.10).
#include <cmath>
#include <cstring>

#include "exec/registry.h"
#include "ops/shape_util.h"
#include "quant/calibration.h"

namespace ptq::exec {
namespace {

// Standalone form, attributes as stored. The Executor handles calibration nodes itself (so a run's
// quantization config can override switch/qtype without touching the model); this kernel serves
// single-node runs and keeps the op registered.
void hz_calibration(KernelContext& ctx) {
  ir::Graph g;
  ir::Node node = ctx.node;
  // Build a two-value graph so parse_calibration can classify the input (constant => weight).
  for (int i = 0; i < 2; ++i) {
    g.values.emplace_back();
    g.values.back().name = "v" + std::to_string(i);
  }
  node.inputs = {0};
  node.outputs = {1};
  g.values[0].is_graph_input = !ctx.constant_input.empty() && !ctx.constant_input[0];
  if (!g.values[0].is_graph_input) g.values[0].initializer = ctx.required(0);
  g.nodes.push_back(node);
  ir::finalize_graph(g);
  const quant::CalibrationSpec spec = quant::parse_calibration(g, 0);
  ctx.outputs[0] = spec.switch_on ? quant::fake_quantize(spec, spec.qtype, spec.scales, ctx.required(0)) : ctx.required(0);
}

// HzPreprocess, two forms:
//  - attribute form (mean/scale per channel, data_format NCHW|NHWC): y = (x [+128 for *_128 inputs] − mean_c)·scale_c;
//  - weight form (inputs: x, weight [C_out, C_in, 1, 1], optional bias [C_out]): a 1×1 convolution
//    (colour conversion folded into the weight), NCHW.
void hz_preprocess(KernelContext& ctx) {
  const Tensor x = ctx.required(0).to_float();
  const std::string layout = ctx.node.attr_string("data_format", "NCHW");
  ctx.check(x.rank() == 4, "input must be rank 4, got " + shape_str(x.shape()));
  const bool nhwc = layout == "NHWC";
  ctx.check(nhwc || layout == "NCHW", "unsupported data_format '" + layout + "'");
  const int64_t n = x.dim(0), c = nhwc ? x.dim(3) : x.dim(1);
  const int64_t hw = nhwc ? x.dim(1) * x.dim(2) : x.dim(2) * x.dim(3);
  const float* src = x.data<float>();

  if (const Tensor* w = ctx.input(1)) {
    ctx.check(!nhwc, "the weight form supports NCHW only");
    const Tensor wf = w->to_float();
    ctx.check(wf.rank() >= 2 && wf.dim(1) == c, "weight " + shape_str(wf.shape()) + " does not match " + std::to_string(c) + " input channels");
    const int64_t m = wf.dim(0);
    const Tensor* b = ctx.input(2);
    const std::vector<float> bias = b ? b->to_float_vector() : std::vector<float>(static_cast<size_t>(m), 0.0f);
    ctx.check(static_cast<int64_t>(bias.size()) == m, "bias size does not match output channels");
    Tensor y(DType::Float, {n, m, x.dim(2), x.dim(3)});
    float* dst = y.mutable_data<float>();
    const float* wd = wf.data<float>();
    for (int64_t b0 = 0; b0 < n; ++b0)
      for (int64_t o = 0; o < m; ++o) {
        float* out = dst + (b0 * m + o) * hw;
        for (int64_t p = 0; p < hw; ++p) out[p] = bias[static_cast<size_t>(o)];
        for (int64_t i = 0; i < c; ++i) {
          const float k = wd[o * c + i];
          const float* in = src + (b0 * c + i) * hw;
          for (int64_t p = 0; p < hw; ++p) out[p] += k * in[p];
        }
      }
    ctx.outputs[0] = y;
    return;
  }
  std::vector<float> mean = ctx.node.attr_floats("mean", std::vector<float>(static_cast<size_t>(c), 0.0f));
  std::vector<float> scale = ctx.node.attr_floats("scale", std::vector<float>(static_cast<size_t>(c), 1.0f));
  if (mean.size() == 1) mean.assign(static_cast<size_t>(c), mean[0]);
  if (scale.size() == 1) scale.assign(static_cast<size_t>(c), scale[0]);
  ctx.check(static_cast<int64_t>(mean.size()) == c && static_cast<int64_t>(scale.size()) == c,
            "mean/scale must have one value per channel (" + std::to_string(c) + ")");
  const std::string rt = ctx.node.attr_string("input_type_rt", "");
  const float offset = rt.size() > 4 && rt.substr(rt.size() - 4) == "_128" ? 128.0f : 0.0f;
  Tensor y(DType::Float, x.shape());
  float* dst = y.mutable_data<float>();
  for (int64_t b0 = 0; b0 < n; ++b0)
    for (int64_t p = 0; p < hw; ++p)
      for (int64_t i = 0; i < c; ++i) {
        const int64_t at = nhwc ? (b0 * hw + p) * c + i : (b0 * c + i) * hw + p;
        dst[at] = (src[at] + offset - mean[static_cast<size_t>(i)]) * scale[static_cast<size_t>(i)];
      }
  ctx.outputs[0] = y;
}

// HzFilter's semantics are not public; the debugger compares its inputs instead of its outputs.
// Executing it passes input i through to output i so graphs that end in it still run.
void hz_filter(KernelContext& ctx) {
  ctx.check(ctx.outputs.size() <= ctx.inputs.size(), "more outputs than inputs; cannot pass through");
  for (size_t i = 0; i < ctx.outputs.size(); ++i) ctx.outputs[i] = ctx.required(i);
}

}  // namespace

namespace shape {
namespace {

void filter(const In& x, Outs& o) {
  for (size_t i = 0; i < o.size() && i < x.s.size(); ++i)
    if (x.s[i]) o[i] = *x.s[i];
}

}  // namespace
}  // namespace shape

void register_hz_ops(OpRegistry& r) {
  r.add("horizon", "HzCalibration", &hz_calibration).rule(shape::same_as_input).meta("quantization", "input");
  r.add("horizon", "HzPreprocess", &hz_preprocess).meta("normalization", "input weight? bias?");
  r.add("horizon", "HzFilter", &hz_filter).rule(shape::filter).meta("data", "inputs...");
  // Shown by the viewers (deployed and quantized models), not executed.
  r.add("horizon", "HzQuantize", nullptr).meta("quantization", "x scale zero_point?");
  r.add("horizon", "HzDequantize", nullptr).meta("quantization", "x scale zero_point?");
  r.add("horizon", "HzSQuantizedConv", nullptr).meta("layer", "");
  r.add("horizon", "HzPRelu", nullptr).meta("activation", "");
  r.add("horizon", "HzSoftmax", nullptr).meta("activation", "");
  r.add("horizon", "HzLut", nullptr).meta("activation", "X");
}

}  // namespace ptq::exec
