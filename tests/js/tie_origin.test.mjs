// tie_origin.mjs's judgement on hand-made tensors: a quantizer with scale 0.5 (levels ..., 1.0, 1.5,
// ...; the boundary between 1.0 and 1.5 is 1.25), its input `x` and output `q`.
import { describe, expect, it } from 'vitest';
import { dynamicQuantizeLinear, firstDivergence, firstDynamicDivergence, traceChunks } from './tie_origin.mjs';

const quantizers = [{ name: 'a_cal', input: 'x', output: 'q', scales: [0.5] }, { name: 'b_cal', input: 'y', output: 'r', scales: [1] }];
const f = (...v) => Float32Array.from(v);
const run = (x, q, y = f(0), r = f(0)) => ({ x: f(...x), q: f(...q), y, r });

describe('firstDivergence', () => {
  it('is null when every quantizer output is identical', () => {
    expect(firstDivergence(quantizers, run([1.2, 3], [1, 3]), run([1.2, 3], [1, 3]))).toBe(null);
  });
  it('finds a tie: inputs a float ulp apart on either side of 1.25, outputs one level apart', () => {
    const below = Math.fround(1.25 - 2 ** -22);
    const d = firstDivergence(quantizers, run([below, 3], [1, 3]), run([1.25, 3], [1.5, 3]));
    expect(d).toEqual({ quantizer: 'a_cal', differing: 1, size: 2, tie: true, why: [] });
  });
  it('is no tie when the same input is quantized to two levels (a rounding rule apart)', () => {
    const d = firstDivergence(quantizers, run([1.25, 3], [1, 3]), run([1.25, 3], [1.5, 3]));
    expect(d.tie).toBe(false);
    expect(d.why[0]).toContain('the same input 1.25');
  });
  it('is no tie when the outputs are two levels apart', () => {
    const d = firstDivergence(quantizers, run([1.25, 3], [1, 3]), run([1.2500001, 3], [2, 3]));
    expect(d.tie).toBe(false);
    expect(d.why[0]).toContain('not one level apart');
  });
  it('is no tie when the inputs differ by more than float noise', () => {
    const d = firstDivergence(quantizers, run([1.1, 3], [1, 3]), run([1.4, 3], [1.5, 3]));
    expect(d.tie).toBe(false);
    expect(d.why[0]).toContain('differ by more than float noise');
  });
  it('judges the first quantizer that differs, in the order given', () => {
    const d = firstDivergence(quantizers, run([1, 3], [1, 3], f(7), f(7)), run([1, 3], [1, 3], f(7), f(6)));
    expect(d.quantizer).toBe('b_cal');
    expect(d.tie).toBe(false);
  });
});

describe('traceChunks', () => {
  // Four quantizers in graph order, input and output float32 tensors of 800, 80, 80 and 24 bytes (the last
  // with an unknown dimension, counted as 1).
  const values = { x: { dims: [1, 100] }, q: { dims: [1, 100] }, y: { dims: [10] }, r: { dims: [10] },
    z: { dims: [2, 5] }, s: { dims: [2, 5] }, d: { dims: [-1, 3] }, e: { dims: ['n', 3] } };
  const qs = [['a', 'x', 'q'], ['b', 'y', 'r'], ['c', 'z', 's'], ['dyn', 'd', 'e']].map(([name, input, output]) => ({ name, input, output }));
  const names = (bytes) => traceChunks(qs, values, bytes).map((c) => c.map((q) => q.name));
  it('cuts the quantizers, in order, into runs whose tensors fit the bytes, at least one quantizer each', () => {
    expect(names(Infinity)).toEqual([['a', 'b', 'c', 'dyn']]);
    expect(names(984)).toEqual([['a', 'b', 'c', 'dyn']]);
    expect(names(983)).toEqual([['a', 'b', 'c'], ['dyn']]);
    expect(names(880)).toEqual([['a', 'b'], ['c', 'dyn']]);
    expect(names(104)).toEqual([['a'], ['b'], ['c', 'dyn']]);
    expect(names(103)).toEqual([['a'], ['b'], ['c'], ['dyn']]);
  });
});

describe('dynamic quantizers', () => {
  it('dynamicQuantizeLinear: the ONNX specification\'s example', () => {
    // scale (2 - -3) / 255, zero point round(3 / scale) = 153
    expect(dynamicQuantizeLinear(f(0, 2, -3, -2.5, 1.34, 0.5))).toEqual({ scale: Math.fround(5 / 255), zeroPoint: 153, q: Uint8Array.from([153, 255, 0, 26, 221, 179]) });
  });
  // Range [-1, 2]: scale 3 / 255, zero point 85; x / scale of the third element lands a float ulp
  // below 10.5 (level 95) in ours and one above (level 96) in onnxruntime's.
  const scale = Math.fround(3 / 255);
  const ulps = (v, k) => {
    const a = f(v);
    new Int32Array(a.buffer)[0] += k;
    return a[0];
  };
  const [below, above] = [ulps(10.5 * scale, -1), ulps(10.5 * scale, 2)];
  const theirs = (x, q, s = scale, zeroPoint = 85) => ({ t: { x: f(...x), q: Uint8Array.from(q), scale: s, zeroPoint } });
  it('finds a tie: the same scale and zero point, inputs a float ulp apart on either side of a rounding boundary', () => {
    expect(dynamicQuantizeLinear(f(-1, 2, below)).q[2]).toBe(95);
    const d = firstDynamicDivergence(['t'], { t: f(-1, 2, below) }, theirs([-1, 2, above], [0, 255, 96]));
    expect(d).toEqual({ quantizer: 't', differing: 1, size: 3, tie: true, why: [] });
    expect(firstDynamicDivergence(['t'], { t: f(-1, 2, below) }, theirs([-1, 2, below], [0, 255, 95]))).toBe(null);
  });
  it('is no tie when the scale or the zero point differs', () => {
    const d = firstDynamicDivergence(['t'], { t: f(-1, 2, below) }, theirs([-1, 2.1, below], [0, 255, 95], Math.fround(3.1 / 255)));
    expect(d.tie).toBe(false);
    expect(d.why[0]).toContain('scale / zero point ours');
  });
});
