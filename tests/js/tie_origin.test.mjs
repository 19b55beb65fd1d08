// tie_origin.mjs's judgement on hand-made tensors: a quantizer with scale 0.5 (levels ..., 1.0, 1.5,
// ...; the boundary between 1.0 and 1.5 is 1.25), its input `x` and output `q`.
import { describe, expect, it } from 'vitest';
import { firstDivergence } from './tie_origin.mjs';

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
