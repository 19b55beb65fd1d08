// Heatmap colour scale per metric: "worse" is hot. Which side is worse is the opposite of the
// metric's better direction in the core's describe() document (web/pipeline/catalog.mjs, §4's
// optimum). Non-finite values: NaN gets a neutral grey; ±inf take the end of the scale they lie
// on (sqnr +inf = identical tensors = best; mse +inf = worst).
import { interpolateYlOrRd } from 'd3';
import { toNumber, formatValue } from './format.mjs';
import { betterDirection } from '../pipeline/catalog.mjs';

export const NAN_COLOR = '#bdbdbd';
export const interpolateHeat = (t) => interpolateYlOrRd(0.08 + 0.87 * t);

// "lower" | "higher": which side is worse for `metric`. Throws for an unknown metric name.
// `better` ('higher' | 'lower'): the direction a metric that is not the core's declares itself
// (a toolchain report's metric, web/pipeline/reports/).
export function worseDirection(metric, better) {
  if (better === 'higher' || better === 'lower') return better === 'higher' ? 'lower' : 'higher';
  try {
    return betterDirection(metric) === 'higher' ? 'lower' : 'higher';
  } catch (err) {
    throw new Error(`heat scale: ${err.message}`);
  }
}

// Fixed references: for a metric whose values mean the same on any model (cosine similarity, the
// relative error, the signal-to-quantization-noise ratio in dB), the 'fixed' scale colours the
// distance from the ideal between two fixed ends, so a 1e-5 loss of cosine stays pale whatever the
// other nodes show. `at(v)` -> position 0 (best end) … 1 (worst end), unclamped; `value(t)` its
// inverse; `ticks`: the values marked on the legend. Ends: cosine 1 − 1e-6 (float32 rounding of a
// deep network reaches 1e-7 … 1e-6) to 0.9 (a broken model), each decade of 1 − cosine a tenth
// above; sqnr 60 dB (the same scale: 1 − cos ≈ 1 / (2 SNR)) to 10 dB; mre 1e-4 to 1 (the output as
// wrong as it is large). Metrics in the tensors' own units (mse, chebyshev) have no fixed reference.
const log10 = Math.log10;
export const FIXED_SCALES = {
  'cosine-similarity': {
    what: '1 − cosine on a log axis',
    at: (v) => (1 - v <= 0 ? -Infinity : (log10(1 - v) + 6) / 5),
    value: (t) => 1 - 10 ** (5 * t - 6),
    ticks: [0.99999, 0.9999, 0.999, 0.99],
  },
  sqnr: {
    what: 'dB, linear',
    at: (v) => (60 - v) / 50,
    value: (t) => 60 - 50 * t,
    ticks: [50, 40, 30, 20],
  },
  mre: {
    what: 'log axis',
    at: (v) => (v <= 0 ? -Infinity : (log10(v) + 4) / 4),
    value: (t) => 10 ** (4 * t - 4),
    ticks: [0.001, 0.01, 0.1],
  },
};
export const SCALES = ['fixed', 'range', 'log'];
export const SCALE_NOTES = {
  fixed: (metric) => `fixed scale (${FIXED_SCALES[metric].what}): the same colour means the same ${metric} on every model`,
  range: () => 'stretched over the values shown: the best is pale and the worst red however close they are',
  log: () => 'stretched over the values shown on a log axis',
};

// The scale `scale` asks for on `metric`: 'auto' (or absent) is 'fixed' where the metric has a fixed
// reference and 'range' otherwise; 'linear' is the older name of 'range'; 'fixed' without a
// reference is 'range'.
export function resolveScale(metric, scale = 'auto') {
  const s = scale === 'linear' ? 'range' : scale;
  if (s === 'auto' || s === 'fixed') return FIXED_SCALES[metric] ? 'fixed' : 'range';
  if (!SCALES.includes(s)) throw new Error(`heat scale: unknown scale '${scale}' (known: auto, ${SCALES.join(', ')})`);
  return s;
}

// The fewest significant digits (at least `min`) that print `a` and `b` differently: the legend's
// ends of 0.999987 … 0.9999945 read "0.999987" and "0.9999945", never "1" and "1".
export function distinctDigits(a, b, min = 4) {
  for (let d = min; d < 17; d++) if (formatValue(a, d) !== formatValue(b, d)) return d;
  return min;
}

/**
 * heatScale(metric, values, {scale: 'auto'|'fixed'|'range'|'log', better}) -> {color(v), worseness(v), label(v), legend}
 * values: the numbers the colours are for (numbers or "inf"/"-inf"/"nan"). worseness(v) is in [0, 1]
 * (1 = worst), NaN for NaN.
 * 'fixed' (the default where the metric has one, FIXED_SCALES): fixed ends, values beyond them clamp.
 * 'range': the extent of the finite values, linear (with a single distinct value every finite value
 * is mid-scale). 'log': that extent on a log axis (mse/chebyshev over many decades); it falls back to
 * 'range' when a finite value is <= 0.
 * better: the declared direction of a metric the core does not know (see worseDirection).
 * legend: {title, metric, direction: "lower is worse"|"higher is worse", domain: [min, max] of the
 *   values, best, worst (the values at the ramp's ends), scale, note (what the colours mean), ticks:
 *   [{at, value}] (fixed: marks along the ramp), shown: [at, at] | null (where the values lie along
 *   the ramp, best side first), stops: [{offset, color}] (best -> worst), nanColor}.
 */
export function heatScale(metric, values, { scale = 'auto', better } = {}) {
  const direction = worseDirection(metric, better);
  const finite = [...(values || [])].map(toNumber).filter(Number.isFinite);
  // A loop, not Math.min(...values): spreading very long arrays overflows the call stack.
  let lo = finite.length ? Infinity : NaN;
  let hi = finite.length ? -Infinity : NaN;
  for (const v of finite) { if (v < lo) lo = v; if (v > hi) hi = v; }
  let kind = resolveScale(metric, scale);
  if (kind === 'log' && !(finite.length > 0 && lo > 0)) kind = 'range';
  const fixed = kind === 'fixed' ? FIXED_SCALES[metric] : null;
  const f = kind === 'log' ? Math.log10 : (v) => v;
  const flo = f(lo);
  const fhi = f(hi);
  const clamp = (t) => Math.min(1, Math.max(0, t));

  const worseness = (raw) => {
    const v = toNumber(raw);
    if (Number.isNaN(v)) return NaN;
    if (v === Infinity || v === -Infinity) return (v === Infinity) === (direction === 'higher') ? 1 : 0;
    if (fixed) return clamp(fixed.at(v));
    let t; // position from low (0) to high (1)
    if (!finite.length || fhi === flo) t = 0.5;
    else t = clamp((f(kind === 'log' ? Math.max(v, lo) : v) - flo) / (fhi - flo));
    return direction === 'higher' ? t : 1 - t;
  };
  const color = (v) => {
    const t = worseness(v);
    return Number.isNaN(t) ? NAN_COLOR : interpolateHeat(t);
  };
  const label = (v) => `${metric} ${formatValue(v)}`;
  const stops = [0, 0.25, 0.5, 0.75, 1].map((offset) => ({ offset, color: interpolateHeat(offset) }));
  const [rangeBest, rangeWorst] = direction === 'higher' ? [lo, hi] : [hi, lo];
  const shown = finite.length ? [worseness(rangeBest), worseness(rangeWorst)] : null;
  const legend = {
    title: metric,
    metric,
    direction: `${direction} is worse`,
    domain: [lo, hi],
    best: fixed ? fixed.value(0) : rangeBest,
    worst: fixed ? fixed.value(1) : rangeWorst,
    scale: kind,
    note: SCALE_NOTES[kind](metric),
    ticks: fixed ? fixed.ticks.map((value) => ({ at: fixed.at(value), value })) : [],
    shown,
    stops,
    nanColor: NAN_COLOR,
  };
  return { color, worseness, label, legend };
}
