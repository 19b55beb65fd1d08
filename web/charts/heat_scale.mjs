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

/**
 * heatScale(metric, values, {scale: 'linear'|'log', better}) -> {color(v), worseness(v), label(v), legend}
 * values: the numbers the colours are spread over (numbers or "inf"/"-inf"/"nan"); the domain is the
 * extent of the finite ones. worseness(v) is in [0, 1] (1 = worst), NaN for NaN.
 * 'log' spreads positive values logarithmically (mse/chebyshev over many decades); it falls back to
 * linear when a finite value is <= 0. With a single distinct value every finite value is mid-scale.
 * better: the declared direction of a metric the core does not know (see worseDirection).
 * legend: {title, metric, direction: "lower is worse"|"higher is worse", domain: [min, max],
 *   best, worst, scale, stops: [{offset, color}] (best -> worst), nanColor}.
 */
export function heatScale(metric, values, { scale = 'linear', better } = {}) {
  const direction = worseDirection(metric, better);
  const finite = [...(values || [])].map(toNumber).filter(Number.isFinite);
  // A loop, not Math.min(...values): spreading very long arrays overflows the call stack.
  let lo = finite.length ? Infinity : NaN;
  let hi = finite.length ? -Infinity : NaN;
  for (const v of finite) { if (v < lo) lo = v; if (v > hi) hi = v; }
  const useLog = scale === 'log' && finite.length > 0 && lo > 0;
  const f = useLog ? Math.log10 : (v) => v;
  const flo = f(lo);
  const fhi = f(hi);

  const worseness = (raw) => {
    const v = toNumber(raw);
    if (Number.isNaN(v)) return NaN;
    let t; // position from low (0) to high (1)
    if (v === Infinity) t = 1;
    else if (v === -Infinity) t = 0;
    else if (!finite.length) t = 0.5;
    else if (fhi === flo) t = 0.5;
    else t = Math.min(1, Math.max(0, (f(useLog ? Math.max(v, lo) : v) - flo) / (fhi - flo)));
    return direction === 'higher' ? t : 1 - t;
  };
  const color = (v) => {
    const t = worseness(v);
    return Number.isNaN(t) ? NAN_COLOR : interpolateHeat(t);
  };
  const label = (v) => `${metric} ${formatValue(v)}`;
  const stops = [0, 0.25, 0.5, 0.75, 1].map((offset) => ({ offset, color: interpolateHeat(offset) }));
  const legend = {
    title: metric,
    metric,
    direction: `${direction} is worse`,
    domain: [lo, hi],
    best: direction === 'higher' ? lo : hi,
    worst: direction === 'higher' ? hi : lo,
    scale: useLog ? 'log' : 'linear',
    stops,
    nanColor: NAN_COLOR,
  };
  return { color, worseness, label, legend };
}
