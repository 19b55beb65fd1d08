// Float accuracy of the element-wise and softmax kernels against a double-precision reference,
// beside onnxruntime-node's on the same inputs: one-node models (Sigmoid, Tanh, Erf, Exp, Gelu,
// Softmax, LogSoftmax) run by our wasm build and by onnxruntime-node (one thread), each output
// compared with the function evaluated in double in this file (JavaScript's Math, and a series for
// erf), in units of the float32 spacing at the exact value (ulps; below FLT_MIN in units of the
// smallest normal's spacing). The budget: ours at most onnxruntime's worst, or within MAX_OWN ulps
// where onnxruntime is more accurate than that (a correctly rounded float32 result is 0.5 ulp off).
// The convolution, GEMM and Winograd paths are held to im2col + GEMM in tests/cpp/ops/conv_accuracy_test.cpp;
// the measured table is printed and quoted in docs/compatibility.md.
import * as ort from 'onnxruntime-node';
import { afterAll, describe, expect, it } from 'vitest';
import { encodeNpy } from '../../web/cli/lib/npy.mjs';
import { loadPtqModule } from './helpers.mjs';
import { buildModel } from './onnx_builder.mjs';

const MAX_OWN = 3;
const FLT_MIN = 2 ** -126;

// float32 spacing at |v| (|v| below FLT_MIN: the smallest normal's spacing).
function spacing(v) {
  const a = Math.max(Math.abs(v), FLT_MIN);
  return 2 ** (Math.floor(Math.log2(a)) - 23);
}
const ulps = (got, want) => Math.abs(got - want) / spacing(want);

// erf and erfc in double: the Maclaurin series of erf for |x| < 2 (the alternating terms stay below
// 10, so ~15 of the 16 digits survive), the continued fraction of erfc (Lentz; Abramowitz & Stegun
// 7.1.14) for x >= 2, where 1 - erfc would cancel nothing a float32 comparison sees.
function erfSeries(a) {
  let term = a;
  let sum = a;
  for (let n = 1; n < 200 && Math.abs(term) > 1e-17 * Math.abs(sum); n++) {
    term *= (-a * a) / n;
    sum += term / (2 * n + 1);
  }
  return (2 / Math.sqrt(Math.PI)) * sum;
}
// erfc(x) = exp(-x^2)/sqrt(pi) * 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + 2/(x + ...))))), x > 0.
function erfcFraction(x) {
  let f = x;
  for (let k = 400; k >= 1; k--) f = x + k / 2 / f;
  return Math.exp(-x * x) / Math.sqrt(Math.PI) / f;
}
function erfc(x) {
  if (x >= 2) return erfcFraction(x);
  if (x <= -2) return 2 - erfcFraction(-x);
  return 1 - erfSeries(x);
}
const erf = (x) => (Math.abs(x) < 2 ? erfSeries(x) : Math.sign(x) * (1 - erfcFraction(Math.abs(x))));

// A dense sweep of float32 inputs on [lo, hi] (40001 points, rounded to float32).
function sweep(lo, hi, count = 40001) {
  const x = new Float32Array(count);
  for (let i = 0; i < count; i++) x[i] = lo + ((hi - lo) * i) / (count - 1);
  return x;
}

// Rows of logits for the softmax family: n classes, spread `range` (uniform pseudo-random, fixed seed).
function logits(rows, n, range) {
  let s = 12345;
  const rand = () => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const x = new Float32Array(rows * n);
  for (let i = 0; i < x.length; i++) x[i] = (rand() - 0.5) * range;
  return x;
}

function softmaxRef(x, n, log) {
  const y = new Float64Array(x.length);
  for (let r = 0; r < x.length / n; r++) {
    let m = -Infinity;
    for (let i = 0; i < n; i++) m = Math.max(m, x[r * n + i]);
    let sum = 0;
    for (let i = 0; i < n; i++) sum += Math.exp(x[r * n + i] - m);
    for (let i = 0; i < n; i++) {
      const v = x[r * n + i] - m;
      y[r * n + i] = log ? v - Math.log(sum) : Math.exp(v) / sum;
    }
  }
  return y;
}

const gelu = (v) => 0.5 * v * erfc(-v / Math.SQRT2);
const CASES = [
  { op: 'Sigmoid', x: sweep(-20, 20), exact: (v) => 1 / (1 + Math.exp(-v)) },
  { op: 'Tanh', x: sweep(-10, 10), exact: Math.tanh },
  { op: 'Exp', x: sweep(-87, 88), exact: Math.exp },
  { op: 'Erf', x: sweep(-6, 6), exact: erf },
  { op: 'Gelu', x: sweep(-10, 10), exact: gelu },
  { op: 'Softmax', label: 'Softmax (80 classes)', n: 80, x: logits(500, 80, 20) },
  { op: 'Softmax', label: 'Softmax (1000 classes)', n: 1000, x: logits(40, 1000, 30) },
  { op: 'LogSoftmax', label: 'LogSoftmax (1000 classes)', n: 1000, x: logits(40, 1000, 30) },
];

function modelFor(c) {
  const dims = c.n ? [c.x.length / c.n, c.n] : [c.x.length];
  return {
    dims,
    bytes: buildModel({
      opsets: [['', 20]],
      nodes: [{ name: c.op, op: c.op, inputs: ['x'], outputs: ['y'], attrs: c.n ? [{ name: 'axis', i: -1 }] : [] }],
      inputs: [{ name: 'x', dims }],
      outputs: [{ name: 'y', dims }],
    }),
  };
}

const rows = [];
afterAll(() => {
  if (!rows.length) return;
  const table = ['| kernel | ptqscope (ulps) | onnxruntime-node (ulps) |', '|---|---|---|',
    ...rows.map((r) => `| ${r.label} | ${r.ours.toFixed(2)} | ${r.ort.toFixed(2)} |`)];
  console.log(`worst error against a double-precision reference, in float32 ulps of the exact value:\n${table.join('\n')}`);
});

describe('element-wise and softmax kernels against float64', () => {
  it.each(CASES.map((c) => [c.label ?? c.op, c]))(`%s: no worse than onnxruntime-node, or within ${MAX_OWN} ulps`, async (label, c) => {
    const { dims, bytes } = modelFor(c);
    const exact = c.n ? softmaxRef(c.x, c.n, c.op === 'LogSoftmax') : Float64Array.from(c.x, c.exact);
    const ptq = await loadPtqModule();
    const session = new ptq.Session();
    let ours;
    try {
      session.loadModel(bytes);
      session.loadCalibrationData([{ path: 'x/0.npy', bytes: encodeNpy('float32', dims, c.x) }]);
      session.run(0, 'off');
      ours = session.output(0).data.slice();
    } finally {
      session.delete();
    }
    const reference = await ort.InferenceSession.create(bytes, { intraOpNumThreads: 1, logSeverityLevel: 3 });
    const theirs = (await reference.run({ x: new ort.Tensor('float32', c.x, dims) })).y.data;
    await reference.release();
    let worstOurs = 0;
    let worstOrt = 0;
    for (let i = 0; i < exact.length; i++) {
      worstOurs = Math.max(worstOurs, ulps(ours[i], exact[i]));
      worstOrt = Math.max(worstOrt, ulps(theirs[i], exact[i]));
    }
    rows.push({ label, ours: worstOurs, ort: worstOrt });
    expect(worstOurs, `${label}: ptqscope ${worstOurs.toFixed(2)} ulps, onnxruntime-node ${worstOrt.toFixed(2)}`)
      .toBeLessThanOrEqual(Math.max(worstOrt, MAX_OWN));
  });
});
