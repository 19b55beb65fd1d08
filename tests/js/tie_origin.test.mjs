// tie_origin.mjs's judgement on hand-made tensors: a quantizer with scale 0.5 (levels ..., 1.0, 1.5,
// ...; the boundary between 1.0 and 1.5 is 1.25), its input `x` and output `q`.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { encodeNpy } from '../../web/cli/lib/npy.mjs';
import { decodeNpy, FIXTURES, loadManifest } from './helpers.mjs';
import { divergences, dynamicQuantizeLinear, firstDivergence, firstDynamicDivergence, onnxruntimeSpread, traceChunks, withInitializerEdited } from './tie_origin.mjs';

const quantizers = [{ name: 'a_cal', input: 'x', output: 'q', scales: [0.5] }, { name: 'b_cal', input: 'y', output: 'r', scales: [1] }];
const f = (...v) => Float32Array.from(v);
const run = (x, q, y = f(0), r = f(0)) => ({ x: f(...x), q: f(...q), y, r });

describe('firstDivergence', () => {
  // onnxruntime's float spread at every quantizer's input, as a fixed number (onnxruntimeSpread measures it).
  const spread = (v) => () => v;
  const below = Math.fround(1.25 - 2 ** -22);
  it('is null when every quantizer output is identical', () => {
    expect(firstDivergence(quantizers, run([1.2, 3], [1, 3]), run([1.2, 3], [1, 3]), spread(0))).toBe(null);
  });
  it('finds a tie: inputs a float ulp apart on either side of 1.25, outputs one level apart, within the spread', () => {
    const d = firstDivergence(quantizers, run([below, 3], [1, 3]), run([1.25, 3], [1.5, 3]), spread(2 ** -22));
    expect(d).toEqual({ quantizer: 'a_cal', differing: 1, size: 2, gap: 2 ** -22, spread: 2 ** -22, tie: true, why: [] });
  });
  it('is no tie when the inputs differ by more than onnxruntime\'s float spread, even by one ulp', () => {
    const d = firstDivergence(quantizers, run([below, 3], [1, 3]), run([1.25, 3], [1.5, 3]), spread(2 ** -23));
    expect(d.tie).toBe(false);
    expect(d.why[0]).toContain('differ by more than onnxruntime\'s float spread');
  });
  it('is no tie where the spread is not measured (every other evaluation parted earlier)', () => {
    const d = firstDivergence(quantizers, run([below, 3], [1, 3]), run([1.25, 3], [1.5, 3]), spread(null));
    expect(d.tie).toBe(false);
    expect(d.why[0]).toContain('no float spread measured');
  });
  it('is no tie when the same input is quantized to two levels (a rounding rule apart)', () => {
    const d = firstDivergence(quantizers, run([1.25, 3], [1, 3]), run([1.25, 3], [1.5, 3]), spread(1));
    expect(d.tie).toBe(false);
    expect(d.why[0]).toContain('the same input 1.25');
  });
  it('is no tie when the outputs are two levels apart', () => {
    const d = firstDivergence(quantizers, run([1.25, 3], [1, 3]), run([1.2500001, 3], [2, 3]), spread(1));
    expect(d.tie).toBe(false);
    expect(d.why[0]).toContain('not one level apart');
  });
  it('is no tie when the inputs lie on one side, further from the boundary than the spread', () => {
    const d = firstDivergence(quantizers, run([1, 3], [1, 3]), run([1.1, 3], [1.5, 3]), spread(0.11));
    expect(d.tie).toBe(false);
    expect(d.why[0]).toContain('not within onnxruntime\'s float spread of the rounding boundary');
  });
  it('counts levels of an int16 step far from zero by their integer level, not by a tolerance on the step', () => {
    // Levels 30000 and 30001 at step 0.001: their float32 dequantized values are 0.99945 steps apart
    // (each rounded to an ulp of 30), so a tolerance relative to the step would miss them.
    const s = Math.fround(0.001);
    const qs = [{ name: 'w', input: 'x', output: 'q', scales: [s] }];
    const [lo, hi] = [f(30000 * s)[0], f(30001 * s)[0]];
    expect(Math.abs(hi - lo - s) / s).toBeGreaterThan(1e-4);
    const boundary = f((lo + hi) / 2)[0];
    const above = f(boundary + 2 ** -18)[0];
    const d = firstDivergence(qs, { x: f(boundary), q: f(lo) }, { x: f(above), q: f(hi) }, spread(2 ** -18));
    expect(d.tie).toBe(true);
  });
  it('judges the first quantizer that differs, in the order given', () => {
    const d = firstDivergence(quantizers, run([1, 3], [1, 3], f(7), f(7)), run([1, 3], [1, 3], f(7), f(6)), spread(1));
    expect(d.quantizer).toBe('b_cal');
    expect(d.tie).toBe(false);
  });
});

describe('onnxruntimeSpread', () => {
  // The reference's values, and another evaluation's: at a_cal's input 1e-6 apart, identical outputs;
  // at b_cal's input 0.5 apart and its output one level off (it parted there).
  const theirs = run([1.2, 3], [1, 3], f(7), f(7));
  const other = run([1.200001, 3], [1, 3], f(7.5), f(8));
  it('is the largest |other - reference| at each input, over the evaluations not yet parted', () => {
    const state = [{ parted: false, values: other }];
    const at = onnxruntimeSpread(theirs, state);
    expect(at(quantizers[0])).toBe(Math.abs(f(1.200001)[0] - f(1.2)[0]));
    expect(state[0].parted).toBe(false);
    expect(at(quantizers[1])).toBe(0.5);
    expect(state[0].parted).toBe('b_cal');
    expect(at({ name: 'c_cal', input: 'y', output: 'r' })).toBe(null); // measured no more after parting
  });
  it('keeps the largest over several evaluations', () => {
    const at = onnxruntimeSpread(theirs, [{ parted: false, values: other }, { parted: false, values: run([1.25, 3], [1, 3]) }]);
    expect(at(quantizers[0])).toBe(Math.abs(f(1.25)[0] - f(1.2)[0]));
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
    expect(d).toMatchObject({ quantizer: 't', differing: 1, size: 3, spread: 2e-5, tie: true, why: [] }); // 1e-5 of the largest |x|, 2
    expect(firstDynamicDivergence(['t'], { t: f(-1, 2, below) }, theirs([-1, 2, below], [0, 255, 95]))).toBe(null);
  });
  it('is no tie when the scale or the zero point differs', () => {
    const d = firstDynamicDivergence(['t'], { t: f(-1, 2, below) }, theirs([-1, 2.1, below], [0, 255, 95], Math.fround(3.1 / 255)));
    expect(d.tie).toBe(false);
    expect(d.why[0]).toContain('scale / zero point ours');
  });
});

// The whole tracer on a calibrated fixture (resnet18: run as stored, its first difference on sample 0 is
// a tie, 2 elements at /layer1/layer1.0/conv2, inputs 3.0e-7 apart where onnxruntime's spread is 2.4e-6),
// with an error injected into our run that a fixed bound of 1e-5 of the tensor's magnitude would have
// taken for float noise:
//  - conv1's bias moved by 2^-15 (3.1e-5; the quantizer after it, on MaxPool's output, has a threshold
//    of 7.02): the first quantizer that differs is that one, in elements whose inputs are 3.1e-5 apart
//    where onnxruntime's evaluations are at most 2.4e-6 apart;
//  - our input moved by 2^-20 of each element (9.5e-7 relative): the input quantizer differs, where
//    every evaluation has the same values (a spread of 0).
describe('divergences on a calibrated fixture', () => {
  const entry = loadManifest().find((m) => m.name === 'resnet18_calibrated');
  const files = () => [fs.readFileSync(entry.model), fs.readFileSync(path.join(FIXTURES, entry.qdq_model))];
  const expectNoTie = (d, quantizer) => {
    expect(d, 'a quantizer output differs').not.toBe(null);
    expect(d.quantizer).toBe(quantizer);
    expect(d.tie, d.why.join('; ')).toBe(false);
    expect(d.why.join('; ')).toContain("than onnxruntime's float spread");
    expect(d.gap).toBeGreaterThan(d.spread);
  };
  it('finds the stored model\'s first difference a tie within onnxruntime\'s spread', async () => {
    expect(entry?.qdq_model, 'resnet18_calibrated with its Q/DQ twin').toBeTruthy();
    const [d] = await divergences(...files(), entry.data, { count: 1 });
    // (null, were the runs ever to agree there exactly, is no difference to judge.)
    if (d !== null) {
      expect(d.tie, JSON.stringify(d)).toBe(true);
      expect(d.gap).toBeLessThanOrEqual(d.spread);
    }
  }, 600_000);
  it('finds no tie where conv1\'s bias was moved by 2^-15', async () => {
    const [model, qdq] = files();
    const moved = withInitializerEdited(model, 'conv1.bias', (v) => v.forEach((x, i) => { v[i] = x + 2 ** -15; }));
    const [d] = await divergences(moved, qdq, entry.data, { count: 1 });
    expectNoTie(d, '/maxpool/MaxPool_output_0_HzCalibration');
  }, 600_000);
  it('finds no tie where our input was moved by 2^-20 of its magnitude', async () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ptq-tie-'));
    try {
      for (const input of fs.readdirSync(entry.data).filter((d) => !d.startsWith('.'))) {
        fs.mkdirSync(path.join(tmp, input));
        for (const file of fs.readdirSync(path.join(entry.data, input)).filter((f) => f.endsWith('.npy'))) {
          const a = decodeNpy(fs.readFileSync(path.join(entry.data, input, file)));
          const moved = Float32Array.from(a.data, (v) => v * (1 + 2 ** -20));
          fs.writeFileSync(path.join(tmp, input, file), encodeNpy('float32', Array.from(a.dims), moved));
        }
      }
      const [d] = await divergences(...files(), entry.data, { count: 1, oursData: tmp });
      expectNoTie(d, 'input_HzCalibration');
      expect(d.spread).toBe(0);
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  }, 600_000);
});
