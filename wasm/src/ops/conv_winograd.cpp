#include "ops/conv_winograd.h"

#include <algorithm>
#include <vector>

#include "core/error.h"
#include "core/size.h"
#include "ops/gemm_kernel.h"
#include "ops/simd.h"

namespace ptq::ops {
namespace {

using simd::load;
using simd::splat;
using simd::store;
using simd::V4;

constexpr int64_t kTile = 4;  // F(4x4, 3x3): output tile edge
constexpr int64_t kPos = 36;  // positions of a transformed 6x6 tile = GEMMs per block
constexpr int64_t kTile2 = 2;  // F(2x2, 3x3): output tile edge
constexpr int64_t kPos2 = 16;  // positions of a transformed 4x4 tile
// Scratch floats for the transformed inputs and GEMM results of one block of tiles (~2 MB, L2/L3).
constexpr int64_t kBlockFloats = int64_t{1} << 19;

thread_local WinogradMode current_mode = WinogradMode::Accurate;  // per worker, as each wasm instance has its own

int64_t round_up(int64_t a, int64_t b) { return (a + b - 1) / b * b; }

// Rows <-> lanes of four vectors.
inline void transpose4(V4& a, V4& b, V4& c, V4& d) {
  const V4 t0 = __builtin_shufflevector(a, b, 0, 4, 1, 5);
  const V4 t1 = __builtin_shufflevector(a, b, 2, 6, 3, 7);
  const V4 t2 = __builtin_shufflevector(c, d, 0, 4, 1, 5);
  const V4 t3 = __builtin_shufflevector(c, d, 2, 6, 3, 7);
  a = __builtin_shufflevector(t0, t2, 0, 1, 4, 5);
  b = __builtin_shufflevector(t0, t2, 2, 3, 6, 7);
  c = __builtin_shufflevector(t1, t3, 0, 1, 4, 5);
  d = __builtin_shufflevector(t1, t3, 2, 3, 6, 7);
}

// v = B^T d for one 6-vector per lane. B^T rows: [4 0 -5 0 1 0], [0 -4 -4 1 1 0], [0 4 -4 -1 1 0],
// [0 -2 -1 2 1 0], [0 2 -1 -2 1 0], [0 4 0 -5 0 1].
inline void input_transform(const V4 d[6], V4 v[6]) {
  const V4 two = splat(2.0f), four = splat(4.0f), five = splat(5.0f);
  v[0] = four * d[0] - five * d[2] + d[4];
  v[1] = (d[4] + d[3]) - four * (d[1] + d[2]);
  v[2] = (d[4] - d[3]) + four * (d[1] - d[2]);
  v[3] = (d[4] - d[2]) + two * (d[3] - d[1]);
  v[4] = (d[4] - d[2]) - two * (d[3] - d[1]);
  v[5] = four * d[1] - five * d[3] + d[5];
}

// o = A^T m. A^T rows: [1 1 1 1 1 0], [0 1 -1 2 -2 0], [0 1 1 4 4 0], [0 1 -1 8 -8 1].
inline void output_transform(const V4 m[6], V4 o[4]) {
  const V4 sum12 = m[1] + m[2], dif12 = m[1] - m[2], sum34 = m[3] + m[4], dif34 = m[3] - m[4];
  o[0] = m[0] + sum12 + sum34;
  o[1] = dif12 + splat(2.0f) * dif34;
  o[2] = sum12 + splat(4.0f) * sum34;
  o[3] = dif12 + splat(8.0f) * dif34 + m[5];
}

// Stores the first n (1..4) lanes of v to p (lane by lane: a memcpy of a variable size is a call in
// wasm, and a third of the 4-tile groups of a 40-wide plane are partial).
inline void store_lanes(float* p, V4 v, int64_t n) {
  if (n == 4) {
    store(p, v);
    return;
  }
  p[0] = v[0];
  if (n > 1) p[1] = v[1];
  if (n > 2) p[2] = v[2];
}

struct Tiling {
  int64_t tiles_h, tiles_w;
  int64_t rows_per_block;  // tile rows per block
  int64_t block;           // tile capacity of a block (the row stride of the V and M matrices)
  int64_t row_width;       // padded input row: whole 4-tile groups plus the 6-wide window's overhang
};

Tiling tiling(const Winograd3x3Shape& s, int64_t tile, int64_t positions) {
  Tiling t{};
  t.tiles_h = (s.out_h + tile - 1) / tile;
  t.tiles_w = (s.out_w + tile - 1) / tile;
  const int64_t budget = std::max<int64_t>(32, kBlockFloats / (positions * (s.C + s.M)));
  t.rows_per_block = std::clamp<int64_t>(budget / t.tiles_w, 1, t.tiles_h);
  t.block = t.rows_per_block * t.tiles_w;
  t.row_width = tile * round_up(t.tiles_w, 4) + 8;
  return t;
}

// Input row iy of plane x, shifted by the left padding, zero outside the plane, over row_width.
void padded_row(const Winograd3x3Shape& s, const float* x, int64_t iy, int64_t row_width, float* dst) {
  if (iy < 0 || iy >= s.H) {
    simd::fill(dst, 0.0f, row_width);
    return;
  }
  const int64_t begin = std::min(s.pad_left, row_width);
  const int64_t end = std::min(s.pad_left + s.W, row_width);
  simd::fill(dst, 0.0f, begin);
  simd::copy(dst + begin, x + iy * s.W, end - begin);
  simd::fill(dst + end, 0.0f, row_width - end);
}

// Transformed 6x6 input tiles of one tile row `th` of one channel plane: V[pos * pos_stride + tile].
void transform_input_row(const Winograd3x3Shape& s, const Tiling& t, const float* x, int64_t th, float* rows,
                         float* v, int64_t pos_stride) {
  const int64_t w = t.row_width;
  float* in = rows;
  float* vt = rows + 6 * w;
  for (int64_t i = 0; i < 6; ++i) padded_row(s, x, th * kTile - s.pad_top + i, w, in + i * w);
  // Vertical pass over whole rows (contiguous), then the horizontal pass per group of 4 tiles.
  for (int64_t q = 0; q < w; q += 4) {
    V4 d[6], r[6];
    for (int64_t i = 0; i < 6; ++i) d[i] = load(in + i * w + q);
    input_transform(d, r);
    for (int64_t i = 0; i < 6; ++i) store(vt + i * w + q, r[i]);
  }
  for (int64_t tw = 0; tw < t.tiles_w; tw += 4) {
    const int64_t n = std::min<int64_t>(4, t.tiles_w - tw);
    for (int64_t r = 0; r < 6; ++r) {
      const float* p = vt + r * w + kTile * tw;
      // d[j] lane l = element j of tile tw + l (tiles start 4 floats apart).
      V4 d[6], e2, e3;
      d[0] = load(p), d[1] = load(p + 4), d[2] = load(p + 8), d[3] = load(p + 12);
      d[4] = load(p + 4), d[5] = load(p + 8), e2 = load(p + 12), e3 = load(p + 16);
      transpose4(d[0], d[1], d[2], d[3]);
      transpose4(d[4], d[5], e2, e3);
      V4 out[6];
      input_transform(d, out);
      for (int64_t k = 0; k < 6; ++k) store_lanes(v + (r * 6 + k) * pos_stride + tw, out[k], n);
    }
  }
}

// Output tiles of one tile row `th` of one output channel from its GEMM results M[pos * pos_stride + tile].
void transform_output_row(const Winograd3x3Shape& s, const Tiling& t, const float* m, int64_t pos_stride, int64_t th,
                          float bias, float* y) {
  const V4 b = splat(bias);
  for (int64_t tw = 0; tw < t.tiles_w; tw += 4) {
    const int64_t n = std::min<int64_t>(4, t.tiles_w - tw);
    V4 cols[4][6];  // A^T applied down each column k
    for (int64_t k = 0; k < 6; ++k) {
      V4 col[6], o[4];
      for (int64_t r = 0; r < 6; ++r) col[r] = load(m + (r * 6 + k) * pos_stride + tw);
      output_transform(col, o);
      for (int64_t i = 0; i < 4; ++i) cols[i][k] = o[i];
    }
    for (int64_t i = 0; i < 4; ++i) {
      const int64_t oy = th * kTile + i;
      if (oy >= s.out_h) break;
      V4 o[4];
      output_transform(cols[i], o);
      for (V4& v : o) v += b;
      transpose4(o[0], o[1], o[2], o[3]);  // o[l] = row i of tile tw + l
      for (int64_t l = 0; l < n; ++l) {
        const int64_t ox = (tw + l) * kTile;
        store_lanes(y + oy * s.out_w + ox, o[l], std::min<int64_t>(kTile, s.out_w - ox));
      }
    }
  }
}

// ---- F(2x2, 3x3): for small planes, where 4x4 tiles leave the GEMMs too few columns --------------
// B^T rows: [1 0 -1 0], [0 1 1 0], [0 -1 1 0], [0 1 0 -1]; A^T rows: [1 1 1 0], [0 1 -1 -1];
// G rows: [1 0 0], [1/2 1/2 1/2], [1/2 -1/2 1/2], [0 0 1]. Scalar transforms: this variant is chosen
// only for planes of a few tiles, where the GEMMs (C x M per position) dominate.
template <class T>
inline void input_transform2(const T d[4], T v[4]) {
  v[0] = d[0] - d[2];
  v[1] = d[1] + d[2];
  v[2] = d[2] - d[1];
  v[3] = d[1] - d[3];
}

// Transformed 4x4 input tiles of tile row `th` of one channel plane: V[pos * pos_stride + tile].
void transform_input_row2(const Winograd3x3Shape& s, const Tiling& t, const float* x, int64_t th, float* rows,
                          float* v, int64_t pos_stride) {
  const int64_t w = t.row_width;
  for (int64_t i = 0; i < 4; ++i) padded_row(s, x, th * kTile2 - s.pad_top + i, w, rows + i * w);
  for (int64_t tw = 0; tw < t.tiles_w; ++tw) {
    float d[4][4], e[4][4];
    for (int64_t j = 0; j < 4; ++j) {  // columns: B^T down each column of the window
      const float col[4] = {rows[tw * kTile2 + j], rows[w + tw * kTile2 + j], rows[2 * w + tw * kTile2 + j],
                            rows[3 * w + tw * kTile2 + j]};
      float out[4];
      input_transform2(col, out);
      for (int64_t i = 0; i < 4; ++i) d[i][j] = out[i];
    }
    for (int64_t i = 0; i < 4; ++i) input_transform2(d[i], e[i]);  // rows: (B^T d) B
    for (int64_t i = 0; i < 4; ++i)
      for (int64_t j = 0; j < 4; ++j) v[(i * 4 + j) * pos_stride + tw] = e[i][j];
  }
}

// Output tiles of tile row `th` of one output channel from its GEMM results M[pos * pos_stride + tile].
void transform_output_row2(const Winograd3x3Shape& s, const Tiling& t, const float* m, int64_t pos_stride, int64_t th,
                           float bias, float* y) {
  for (int64_t tw = 0; tw < t.tiles_w; ++tw) {
    float a[2][4];  // A^T applied down each column
    for (int64_t j = 0; j < 4; ++j) {
      const float* c = m + j * pos_stride + tw;
      const float m0 = c[0], m1 = c[4 * pos_stride], m2 = c[8 * pos_stride], m3 = c[12 * pos_stride];
      a[0][j] = m0 + m1 + m2;
      a[1][j] = m1 - m2 - m3;
    }
    for (int64_t i = 0; i < 2; ++i) {
      const int64_t oy = th * kTile2 + i, ox = tw * kTile2;
      if (oy >= s.out_h) break;
      y[oy * s.out_w + ox] = a[i][0] + a[i][1] + a[i][2] + bias;
      if (ox + 1 < s.out_w) y[oy * s.out_w + ox + 1] = a[i][1] - a[i][2] - a[i][3] + bias;
    }
  }
}

}  // namespace

void set_winograd_mode(WinogradMode mode) { current_mode = mode; }
WinogradMode winograd_mode() { return current_mode; }

const std::vector<ConvolutionModeInfo>& convolution_modes() {
  static const std::vector<ConvolutionModeInfo> modes = {
      {"accurate", WinogradMode::Accurate,
       "im2col + GEMM, pointwise and depthwise kernels: float error no worse than onnxruntime's"},
      {"fast", WinogradMode::Fast,
       "Winograd F(2x2,3x3) for 3x3 stride-1 convolutions: faster, up to 2.3x im2col's rounding error "
       "per convolution"},
      {"fastest", WinogradMode::Fastest,
       "Winograd F(4x4,3x3) as well: fastest, up to 35x im2col's rounding error per convolution, about "
       "2x onnxruntime's end to end"},
  };
  return modes;
}

WinogradMode parse_winograd_mode(const std::string& name) {
  std::string names;
  for (const ConvolutionModeInfo& m : convolution_modes()) {
    if (name == m.name) return m.mode;
    names += std::string(names.empty() ? "'" : "', '") + m.name;
  }
  throw Error("convolution mode '" + name + "' is not one of " + names + "'");
}

WinogradKind winograd_kind(const Spatial& sp, int64_t Cg, int64_t Mg) {
  if (current_mode == WinogradMode::Accurate || sp.rank() != 2 || Cg < 4 || Mg < 4) return WinogradKind::None;
  for (size_t i = 0; i < 2; ++i)
    if (sp.kernel[i] != 3 || sp.stride[i] != 1 || sp.dilation[i] != 1) return WinogradKind::None;
  const auto tiles = [&](int64_t edge) { return ((sp.out[0] + edge - 1) / edge) * ((sp.out[1] + edge - 1) / edge); };
  // GEMM columns come in panels of kGemmNR tiles: below 16 tiles of 4x4 (planes up to ~12x12) the
  // padded panels waste most of F(4x4)'s saving and its 36 weight matrices (4x the weights) are read
  // for few columns, so F(2x2) (16 positions, more tiles) does less work; e.g. 7x7: 36 x 8 against
  // 16 x 16 multiply columns per channel pair, 9 x 56 for im2col.
  if (current_mode == WinogradMode::Fastest && tiles(kTile) >= 16) return WinogradKind::F4x4;
  return tiles(kTile2) >= 4 ? WinogradKind::F2x2 : WinogradKind::None;
}

size_t winograd_packed_size(WinogradKind kind, int64_t M, int64_t C) {
  return (kind == WinogradKind::F2x2 ? kPos2 : kPos) * gemm_packed_a_size(M, C);
}

namespace {

// G v for one 3-vector v, G (6x3) for the points 0, 1, -1, 2, -2, inf:
// rows [1/4 0 0], [-1/6 -1/6 -1/6], [-1/6 1/6 -1/6], [1/24 1/12 1/6], [1/24 -1/12 1/6], [0 0 1].
template <class T>
inline void weight_transform(T v0, T v1, T v2, T* out, int64_t stride) {
  const T a = (v0 + v2) * T(-1.0 / 6), b = v1 * T(1.0 / 6);
  const T c = v0 * T(1.0 / 24) + v2 * T(1.0 / 6), d = v1 * T(1.0 / 12);
  out[0] = v0 * T(0.25);
  out[stride] = a - b;
  out[2 * stride] = a + b;
  out[3 * stride] = c + d;
  out[4 * stride] = c - d;
  out[5 * stride] = v2;
}

// G v for one 3-vector v, G (4x3) of F(2x2, 3x3).
template <class T>
inline void weight_transform2(T v0, T v1, T v2, T* out, int64_t stride) {
  out[0] = v0;
  out[stride] = (v0 + v1 + v2) * T(0.5);
  out[2 * stride] = (v0 - v1 + v2) * T(0.5);
  out[3 * stride] = v2;
}

// U = G g G^T per (output, input) channel pair, in double (rounded once), for kGemmMR output
// channels at a time, each block packed straight into its panel of the N*N GEMM A operands.
template <int64_t N, void (*Transform)(double, double, double, double*, int64_t)>
void pack_weights(const float* w, int64_t M, int64_t C, float* dst) {
  constexpr int64_t R = kGemmMR, P = N * N;
  const size_t each = gemm_packed_a_size(M, C);
  // [row][c][position]: the P values of a pair are written together (a [position]-major layout
  // puts them R*C floats apart, the same cache set when that is a multiple of 4 KB).
  std::vector<float> u(static_cast<size_t>(P * R * C));
  for (int64_t m0 = 0; m0 < M; m0 += R) {
    const int64_t rows = std::min(R, M - m0);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < C; ++c) {
        const float* g = w + ((m0 + r) * C + c) * 9;
        double gt[N][3];  // G g: column b of g transformed into gt[.][b]
        for (int b = 0; b < 3; ++b) Transform(g[b], g[3 + b], g[6 + b], &gt[0][b], 3);
        double ut[N];
        for (int64_t i = 0; i < N; ++i) {
          Transform(gt[i][0], gt[i][1], gt[i][2], ut, 1);
          for (int64_t k = 0; k < N; ++k) u[static_cast<size_t>((r * C + c) * P + i * N + k)] = static_cast<float>(ut[k]);
        }
      }
    for (int64_t p = 0; p < P; ++p)
      gemm_pack_a(u.data() + p, C * P, P, rows, C, dst + static_cast<size_t>(p) * each + static_cast<size_t>(m0 * C));
  }
}

using InputRowFn = void (*)(const Winograd3x3Shape&, const Tiling&, const float*, int64_t, float*, float*, int64_t);
using OutputRowFn = void (*)(const Winograd3x3Shape&, const Tiling&, const float*, int64_t, int64_t, float, float*);

// Per block of tile rows: transform the inputs, one GEMM per position, transform the outputs.
void run_blocks(const Winograd3x3Shape& s, const Tiling& t, int64_t positions, InputRowFn input_row,
                OutputRowFn output_row, const float* x, const float* packed, const float* bias, float* y) {
  const int64_t v_stride = s.C * t.block, m_stride = s.M * t.block;  // floats per position
  // +4: the 4-tile loads of the last group may run past the last tile of the last row.
  const char* what = "the Winograd transform buffer";
  float* v = gemm_scratch(4, allocation_count(size_add(size_mul(positions, v_stride, what), 4, what), sizeof(float), what));
  float* m = gemm_scratch(5, allocation_count(size_add(size_mul(positions, m_stride, what), 4, what), sizeof(float), what));
  float* rows = gemm_scratch(6, static_cast<size_t>(12 * t.row_width));
  const size_t each = gemm_packed_a_size(s.M, s.C);
  const int64_t in_plane = s.H * s.W, out_plane = s.out_h * s.out_w;
  for (int64_t th0 = 0; th0 < t.tiles_h; th0 += t.rows_per_block) {
    const int64_t th1 = std::min(t.tiles_h, th0 + t.rows_per_block);
    const int64_t tiles = (th1 - th0) * t.tiles_w;
    for (int64_t c = 0; c < s.C; ++c)
      for (int64_t th = th0; th < th1; ++th)
        input_row(s, t, x + c * in_plane, th, rows, v + c * t.block + (th - th0) * t.tiles_w, v_stride);
    for (int64_t p = 0; p < positions; ++p)
      gemm(s.M, tiles, s.C, GemmOperand::packed(packed + static_cast<size_t>(p) * each),
           GemmOperand::strided(v + p * v_stride, t.block, 1), m + p * m_stride, t.block);
    for (int64_t o = 0; o < s.M; ++o)
      for (int64_t th = th0; th < th1; ++th)
        output_row(s, t, m + o * t.block + (th - th0) * t.tiles_w, m_stride, th, bias ? bias[o] : 0.0f,
                   y + o * out_plane);
  }
}

}  // namespace

void winograd_pack_weights(WinogradKind kind, const float* w, int64_t M, int64_t C, float* dst) {
  if (kind == WinogradKind::F2x2) {
    pack_weights<4, &weight_transform2<double>>(w, M, C, dst);
  } else {
    pack_weights<6, &weight_transform<double>>(w, M, C, dst);
  }
}

void winograd_conv3x3(WinogradKind kind, const Winograd3x3Shape& s, const float* x, const float* packed,
                      const float* bias, float* y) {
  if (kind == WinogradKind::F2x2) {
    run_blocks(s, tiling(s, kTile2, kPos2), kPos2, &transform_input_row2, &transform_output_row2, x, packed, bias, y);
  } else {
    run_blocks(s, tiling(s, kTile, kPos), kPos, &transform_input_row, &transform_output_row, x, packed, bias, y);
  }
}

}  // namespace ptq::ops
