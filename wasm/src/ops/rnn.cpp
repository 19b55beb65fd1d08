// Recurrent layers: RNN, GRU, LSTM (ONNX gate orders: GRU z, r, h; LSTM i, o, f, c), forward,
// reverse or bidirectional, with optional biases, sequence_lens, initial states, LSTM peepholes
// and input_forget, GRU linear_before_reset, `clip`, and layout 0 ([seq, batch, ...]) or 1
// ([batch, seq, ...], opset 14). Gate pre-activations accumulate in double; states are float32.
// Activations may be Sigmoid, Tanh or Relu (the defaults are Tanh for RNN, Sigmoid/Tanh for GRU,
// Sigmoid/Tanh/Tanh for LSTM); the parameterised ones (Affine, LeakyRelu, ...) are rejected.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "exec/registry.h"
#include "ops/shape_util.h"

namespace ptq::exec {
namespace {

enum class Cell { Rnn, Gru, Lstm };
enum class Act { Sigmoid, Tanh, Relu };

float apply(Act a, float v) {
  switch (a) {
    case Act::Sigmoid: return 1.0f / (1.0f + std::exp(-v));
    case Act::Tanh: return std::tanh(v);
    case Act::Relu: return v > 0 ? v : 0.0f;
  }
  return v;
}

int gate_count(Cell c) { return c == Cell::Rnn ? 1 : c == Cell::Gru ? 3 : 4; }

std::vector<Act> activations(const KernelContext& ctx, Cell cell, int64_t dirs) {
  const size_t per_dir = cell == Cell::Rnn ? 1 : cell == Cell::Gru ? 2 : 3;
  std::vector<std::string> names = ctx.node.attr_strings("activations");
  if (names.empty()) {
    const std::vector<std::string> defaults = cell == Cell::Rnn   ? std::vector<std::string>{"Tanh"}
                                              : cell == Cell::Gru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                                  : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
    for (int64_t d = 0; d < dirs; ++d) names.insert(names.end(), defaults.begin(), defaults.end());
  }
  ctx.check(names.size() == per_dir * static_cast<size_t>(dirs),
            "attribute 'activations' needs " + std::to_string(per_dir * static_cast<size_t>(dirs)) + " names, got " +
                std::to_string(names.size()));
  std::vector<Act> acts;
  for (const std::string& n : names) {
    if (n == "Sigmoid") acts.push_back(Act::Sigmoid);
    else if (n == "Tanh") acts.push_back(Act::Tanh);
    else if (n == "Relu") acts.push_back(Act::Relu);
    else ctx.fail("unsupported activation '" + n + "' (Sigmoid, Tanh and Relu are supported)");
  }
  return acts;
}

Tensor float_input(const KernelContext& ctx, size_t i, const char* what) {
  const Tensor& t = ctx.required(i);
  ctx.check(t.dtype() == DType::Float || t.dtype() == DType::Double || t.dtype() == DType::Float16 ||
                t.dtype() == DType::BFloat16,
            std::string(what) + " has unsupported dtype " + dtype_name(t.dtype()));
  return t.to_float();
}

template <Cell C>
void recurrent(KernelContext& ctx) {
  const int G = gate_count(C);
  const Tensor x = float_input(ctx, 0, "X"), w = float_input(ctx, 1, "W"), r = float_input(ctx, 2, "R");
  const int64_t layout = ctx.opset() >= 14 ? ctx.node.attr_int("layout", 0) : 0;
  ctx.check(layout == 0 || layout == 1, "attribute 'layout' must be 0 or 1, got " + std::to_string(layout));
  ctx.check(x.rank() == 3, "X must be 3-D, got " + shape_str(x.shape()));
  const int64_t seq = x.dim(layout ? 1 : 0), batch = x.dim(layout ? 0 : 1), in = x.dim(2);
  const std::string direction = ctx.node.attr_string("direction", "forward");
  ctx.check(direction == "forward" || direction == "reverse" || direction == "bidirectional",
            "unsupported direction '" + direction + "'");
  const int64_t dirs = direction == "bidirectional" ? 2 : 1;
  ctx.check(w.rank() == 3 && w.dim(0) == dirs && w.dim(2) == in && w.dim(1) % G == 0,
            "W must be [" + std::to_string(dirs) + ", " + std::to_string(G) + " * hidden_size, " + std::to_string(in) +
                "], got " + shape_str(w.shape()));
  const int64_t hidden = w.dim(1) / G;
  ctx.check(ctx.node.attr_int("hidden_size", hidden) == hidden, "attribute 'hidden_size' differs from W's shape");
  ctx.check(r.shape() == Shape({dirs, G * hidden, hidden}), "R must be " + shape_str({dirs, G * hidden, hidden}) +
                                                                ", got " + shape_str(r.shape()));
  std::vector<float> bias(static_cast<size_t>(dirs * 2 * G * hidden), 0.0f);
  if (ctx.input(3)) {
    const Tensor b = float_input(ctx, 3, "B");
    ctx.check(b.shape() == Shape({dirs, 2 * G * hidden}), "B must be " + shape_str({dirs, 2 * G * hidden}));
    std::copy(b.data<float>(), b.data<float>() + b.numel(), bias.begin());
  }
  std::vector<int64_t> lens(static_cast<size_t>(batch), seq);
  if (const Tensor* sl = ctx.input(4)) {
    lens = sl->to_int64_vector();
    ctx.check(lens.size() == static_cast<size_t>(batch), "sequence_lens must have batch_size entries");
    for (int64_t l : lens) ctx.check(l >= 0 && l <= seq, "sequence_lens entry " + std::to_string(l) + " is outside [0, " +
                                                             std::to_string(seq) + "]");
  }
  // States are kept as [dirs, batch, hidden]; layout 1 stores them as [batch, dirs, hidden].
  const Shape state_shape = layout ? Shape{batch, dirs, hidden} : Shape{dirs, batch, hidden};
  auto state_at = [&](int64_t d, int64_t b) { return layout ? (b * dirs + d) * hidden : (d * batch + b) * hidden; };
  auto initial = [&](size_t i, const char* what) {
    std::vector<float> s(static_cast<size_t>(dirs * batch * hidden), 0.0f);
    if (ctx.input(i)) {
      const Tensor t = float_input(ctx, i, what);
      ctx.check(t.shape() == state_shape, std::string(what) + " must be " + shape_str(state_shape));
      for (int64_t d = 0; d < dirs; ++d)
        for (int64_t b = 0; b < batch; ++b)
          std::copy(t.data<float>() + state_at(d, b), t.data<float>() + state_at(d, b) + hidden,
                    s.begin() + (d * batch + b) * hidden);
    }
    return s;
  };
  std::vector<float> h = initial(5, "initial_h");
  std::vector<float> c = C == Cell::Lstm ? initial(6, "initial_c") : std::vector<float>{};
  std::vector<float> peep(static_cast<size_t>(dirs * 3 * hidden), 0.0f);
  if (C == Cell::Lstm && ctx.input(7)) {
    const Tensor p = float_input(ctx, 7, "P");
    ctx.check(p.shape() == Shape({dirs, 3 * hidden}), "P must be " + shape_str({dirs, 3 * hidden}));
    std::copy(p.data<float>(), p.data<float>() + p.numel(), peep.begin());
  }
  const std::vector<Act> acts = activations(ctx, C, dirs);
  const bool has_clip = ctx.node.has_attr("clip");
  const float clip = ctx.node.attr_float("clip", 0.0f);
  ctx.check(!has_clip || clip > 0, "attribute 'clip' must be positive");
  const bool linear_before_reset = C == Cell::Gru && ctx.node.attr_int("linear_before_reset", 0) != 0;
  const bool input_forget = C == Cell::Lstm && ctx.node.attr_int("input_forget", 0) != 0;

  const Shape y_shape = layout ? Shape{batch, seq, dirs, hidden} : Shape{seq, dirs, batch, hidden};
  Tensor y = Tensor::zeros(DType::Float, y_shape);
  float* yd = y.mutable_data<float>();
  const float* xd = x.data<float>();
  std::vector<double> xw(static_cast<size_t>(G * hidden)), hr(static_cast<size_t>(G * hidden));
  std::vector<float> next(static_cast<size_t>(hidden)), zv(next.size()), rv(next.size());
  auto clipped = [&](double v) {
    const auto f = static_cast<float>(v);
    return has_clip ? std::clamp(f, -clip, clip) : f;
  };
  for (int64_t d = 0; d < dirs; ++d) {
    const bool reverse = direction == "reverse" || d == 1;
    const float* wd = w.data<float>() + d * G * hidden * in;
    const float* rd = r.data<float>() + d * G * hidden * hidden;
    const float* wb = bias.data() + d * 2 * G * hidden;
    const float* rb = wb + G * hidden;
    const float* pd = peep.data() + d * 3 * hidden;
    const Act* act = acts.data() + d * (acts.size() / static_cast<size_t>(dirs));
    for (int64_t b = 0; b < batch; ++b) {
      float* hs = h.data() + (d * batch + b) * hidden;
      float* cs = C == Cell::Lstm ? c.data() + (d * batch + b) * hidden : nullptr;
      const int64_t len = lens[static_cast<size_t>(b)];
      for (int64_t step = 0; step < len; ++step) {
        const int64_t t = reverse ? len - 1 - step : step;
        const float* xt = xd + (layout ? b * seq + t : t * batch + b) * in;
        for (int64_t g = 0; g < G * hidden; ++g) {
          double a = 0, q = 0;
          for (int64_t k = 0; k < in; ++k) a += static_cast<double>(xt[k]) * wd[g * in + k];
          for (int64_t k = 0; k < hidden; ++k) q += static_cast<double>(hs[k]) * rd[g * hidden + k];
          xw[static_cast<size_t>(g)] = a + wb[g];
          hr[static_cast<size_t>(g)] = q + rb[g];
        }
        const auto at = [hidden](int gate, int64_t j) { return static_cast<size_t>(gate * hidden + j); };
        if constexpr (C == Cell::Rnn) {
          for (int64_t j = 0; j < hidden; ++j) next[static_cast<size_t>(j)] = apply(act[0], clipped(xw[at(0, j)] + hr[at(0, j)]));
        } else if constexpr (C == Cell::Gru) {
          for (int64_t j = 0; j < hidden; ++j) {
            zv[static_cast<size_t>(j)] = apply(act[0], clipped(xw[at(0, j)] + hr[at(0, j)]));
            rv[static_cast<size_t>(j)] = apply(act[0], clipped(xw[at(1, j)] + hr[at(1, j)]));
          }
          for (int64_t j = 0; j < hidden; ++j) {
            double pre;
            if (linear_before_reset) {
              pre = xw[at(2, j)] + rv[static_cast<size_t>(j)] * hr[at(2, j)];
            } else {  // (r ⊙ H) Rh^T + Rbh: the reset state goes through Rh
              double q = 0;
              const float* rh = rd + (2 * hidden + j) * hidden;
              for (int64_t k = 0; k < hidden; ++k) q += static_cast<double>(rv[static_cast<size_t>(k)] * hs[k]) * rh[k];
              pre = xw[at(2, j)] + q + rb[2 * hidden + j];
            }
            const float z = zv[static_cast<size_t>(j)];
            next[static_cast<size_t>(j)] = (1 - z) * apply(act[1], clipped(pre)) + z * hs[j];
          }
        } else {
          for (int64_t j = 0; j < hidden; ++j) {
            const float cprev = cs[j];
            const float i = apply(act[0], clipped(xw[at(0, j)] + hr[at(0, j)] + pd[j] * cprev));
            const float f = input_forget ? 1 - i
                                         : apply(act[0], clipped(xw[at(2, j)] + hr[at(2, j)] + pd[2 * hidden + j] * cprev));
            const float cn = f * cprev + i * apply(act[1], clipped(xw[at(3, j)] + hr[at(3, j)]));
            const float o = apply(act[0], clipped(xw[at(1, j)] + hr[at(1, j)] + pd[hidden + j] * cn));
            cs[j] = cn;
            next[static_cast<size_t>(j)] = o * apply(act[2], cn);
          }
        }
        std::copy(next.begin(), next.end(), hs);
        float* yt = yd + (layout ? ((b * seq + t) * dirs + d) : ((t * dirs + d) * batch + b)) * hidden;
        std::copy(next.begin(), next.end(), yt);
      }
    }
  }
  auto states = [&](const std::vector<float>& s) {
    Tensor out(DType::Float, state_shape);
    for (int64_t d = 0; d < dirs; ++d)
      for (int64_t b = 0; b < batch; ++b)
        std::copy(s.begin() + (d * batch + b) * hidden, s.begin() + (d * batch + b + 1) * hidden,
                  out.mutable_data<float>() + state_at(d, b));
    return out;
  };
  const DType dt = ctx.required(0).dtype();
  auto typed = [&](const Tensor& t) { return dt == DType::Float ? t : cast_tensor(t, dt); };
  if (ctx.has_output(0)) ctx.outputs[0] = typed(y);
  if (ctx.has_output(1)) ctx.outputs[1] = typed(states(h));
  if (C == Cell::Lstm && ctx.has_output(2)) ctx.outputs[2] = typed(states(c));
}

}  // namespace

void register_rnn(OpRegistry& r) {
  r.add("", "RNN", &recurrent<Cell::Rnn>).meta("layer", "X W R B? sequence_lens? initial_h?");
  r.add("", "GRU", &recurrent<Cell::Gru>).meta("layer", "X W R B? sequence_lens? initial_h?");
  r.add("", "LSTM", &recurrent<Cell::Lstm>).meta("layer", "X W R B? sequence_lens? initial_h? initial_c? P?");
}

}  // namespace ptq::exec
