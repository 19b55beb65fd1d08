// A quantizer's evidence drawn for the "Why" view (docs/explain.md): the histogram of the values it
// reads (the core's 128 bins over [min, max] of the tuning samples), the range it represents shaded,
// its threshold(s) as red dashed lines, the values beyond the range (clipped) in red, and a strip of
// its integer levels above the plot, dark where some value rounds to the level. The shares clipped,
// levels used and rounded to zero are the core's numbers (hints_evidence), printed under the chart;
// the chart only places them. Works in a browser and in Node (linkedom), like the other charts.
import { scaleLinear, scaleLog } from 'd3';
import { chartRoot, background } from './svg.mjs';
import { drawAxes, drawTitle, drawLegend, legendWidth, tickTexts, maxTextWidth } from './axes.mjs';
import { toNumber, formatValue, r2 } from './format.mjs';
import { THRESHOLD_COLOR } from './histogram.mjs';

export const DATA_COLOR = '#4f81bd';
export const CLIPPED_COLOR = '#d62728';
export const RANGE_COLOR = '#e8f1fb';
export const LEVEL_USED_COLOR = '#2f4f6f';
export const LEVEL_FREE_COLOR = '#d9dee4';
const STRIP_HEIGHT = 8;

// "48.8%", "0.0012%", "0%": a share as a percentage with 3 significant digits.
export const percent = (share) => {
  const v = toNumber(share);
  return Number.isFinite(v) ? `${formatValue(v * 100, 3)}%` : 'nan';
};

// The quantizer's integer levels: {step, count, lo}: the real values lo + k·step, k = 0 … count−1,
// of the range it represents ([(qmin − zp)·s, (qmax − zp)·s]; per channel the widest channel's, whose
// scale is the largest).
export function quantizerLevels(evidence) {
  const [lo, hi] = (evidence.range ?? []).map(toNumber);
  const step = Math.max(...(evidence.scales ?? []).map(toNumber).filter((s) => s > 0));
  if (!Number.isFinite(lo) || !Number.isFinite(hi) || !(hi > lo) || !Number.isFinite(step)) return null;
  return { step, lo, count: Math.round((hi - lo) / step) + 1 };
}

// Which levels some value rounds to, from the bins (each bin taken as evenly filled, as the core
// reads its shares): a level is used when a non-empty bin overlaps its rounding interval; values
// beyond the range round to the end levels.
export function usedLevels(levels, bins) {
  const used = new Uint8Array(levels.count);
  const last = levels.count - 1;
  const at = (v) => Math.min(last, Math.max(0, Math.round((v - levels.lo) / levels.step)));
  for (const b of bins) {
    if (!(b.count > 0)) continue;
    for (let k = at(b.x0); k <= at(b.x1); k++) used[k] = 1;
  }
  return used;
}

// The x range drawn: the data's and the quantizer's range together (a threshold far above the data
// shows the data squeezed into the few levels it uses: the point of coarse-resolution).
function xDomain(bins, range) {
  const xs = [...bins.flatMap((b) => [b.x0, b.x1]), ...range].filter(Number.isFinite);
  if (!xs.length) return [0, 1];
  const lo = Math.min(...xs);
  const hi = Math.max(...xs);
  return lo === hi ? [lo - 0.5, hi + 0.5] : [lo, hi];
}

// One closed outline per run of adjacent drawn bins ([{x0, x1, count}] already cut to one side).
function barsPath(parts, x, y, base) {
  let d = '';
  for (const p of parts) {
    const left = r2(x(p.x0));
    const right = Math.max(r2(x(p.x1)), left + 1); // a sliver stays visible
    d += `M${left},${base}V${r2(y(p.count))}H${right}V${base}Z`;
  }
  return d;
}

// The bins split at the range's ends: {inside, outside} parts with the bin's count (its height).
function splitBins(bins, lo, hi) {
  const inside = [];
  const outside = [];
  for (const b of bins) {
    if (!(b.count > 0)) continue;
    const cut = (a, z, into) => { if (z > a) into.push({ x0: a, x1: z, count: b.count }); };
    cut(b.x0, Math.min(b.x1, lo), outside);
    cut(Math.max(b.x0, lo), Math.min(b.x1, hi), inside);
    cut(Math.max(b.x0, hi), b.x1, outside);
  }
  return { inside, outside };
}

/**
 * renderHintHistogram(target, evidence, options) -> {svg, levels, used}
 * evidence: web/pipeline/result.mjs hintEvidence() of one calibration node ({bins: [{x0, x1, count}],
 *   range, thresholds, scales, qtype, per_channel, asymmetric, clipped, levels_used, zero_rounded,
 *   p99_99, name?}).
 * options: width (640), height (380), title (default: the node's name), logY (true: post-ReLU data
 *   piles up at 0, which a linear axis would make the only bar seen).
 */
export function renderHintHistogram(target, evidence, options = {}) {
  const width = options.width ?? 640;
  const height = options.height ?? 380;
  const logY = options.logY ?? true;
  const bins = (evidence.bins ?? []).map((b) => ({ x0: toNumber(b.x0), x1: toNumber(b.x1), count: Number(b.count) }));
  const range = (evidence.range ?? []).map(toNumber);
  const [lo, hi] = range;
  const thresholds = (evidence.thresholds ?? []).map(toNumber);
  const levels = quantizerLevels(evidence);
  const used = levels ? usedLevels(levels, bins) : null;
  const usedCount = used ? used.reduce((a, v) => a + v, 0) : 0;

  const thresholdText = evidence.asymmetric ? `${formatValue(lo, 4)} … ${formatValue(hi, 4)}` : formatValue(Math.max(...thresholds.map(Math.abs)), 4);
  const thresholdLabel = `threshold${evidence.per_channel ? ` (widest of ${thresholds.length} channels)` : ''} ${thresholdText}`;
  const legendItems = [
    { name: 'data', label: 'values read (tuning samples)', color: DATA_COLOR, mark: 'rect' },
    { name: 'clipped', label: `clipped ${percent(evidence.clipped)}`, color: CLIPPED_COLOR, mark: 'rect' },
    { name: 'range', label: `quantizer range (${evidence.qtype ?? ''})`, color: '#b9d3ee', mark: 'rect' },
    { name: 'threshold', label: thresholdLabel, color: THRESHOLD_COLOR, mark: 'dashed' },
    { name: 'levels', label: levels ? `levels used ${percent(evidence.levels_used)} of ${levels.count}` : 'levels', color: LEVEL_USED_COLOR, mark: 'rect' },
  ];
  const legendW = legendWidth(legendItems.map((i) => i.label));
  const summary = [
    `clipped ${percent(evidence.clipped)} · levels used ${percent(evidence.levels_used)} · rounded to zero ${percent(evidence.zero_rounded)}`,
    `range ${formatValue(lo, 4)} … ${formatValue(hi, 4)} · data ${formatValue(evidence.min, 4)} … ${formatValue(evidence.max, 4)} · 99.99th percentile of |x| ${formatValue(evidence.p99_99, 4)}`,
  ];

  const svg = chartRoot(target, width, height, 'hint-histogram');
  background(svg, width, height);
  const top = drawTitle(svg, options.title ?? evidence.name, width / 2) + 8 + STRIP_HEIGHT + 16;
  const highest = bins.reduce((m, b) => Math.max(m, b.count), 0);
  const y = logY ? scaleLog().domain([0.5, Math.max(1, highest)]).nice() : scaleLinear().domain([0, Math.max(1, highest)]).nice();
  const yFormat = logY ? (v) => (Math.log10(v) % 1 === 0 ? formatValue(v) : '') : undefined;
  const left = 30 + maxTextWidth(tickTexts(y, 5, yFormat));
  const margin = { top, right: legendW + 16, bottom: 50 + summary.length * 13, left: left + 14 };
  const w = Math.max(40, width - margin.left - margin.right);
  const h = Math.max(40, height - margin.top - margin.bottom);
  const x = scaleLinear().domain(xDomain(bins, range)).range([0, w]);
  y.range([h, 0]);
  const g = svg.append('g').attr('class', 'plot').attr('transform', `translate(${margin.left},${margin.top})`);

  // The range first (under everything), then the bars, then the thresholds over them.
  if (Number.isFinite(lo) && Number.isFinite(hi)) {
    g.append('rect').attr('class', 'range').attr('data-series', 'range').attr('x', r2(x(lo))).attr('y', 0)
      .attr('width', r2(Math.max(1, x(hi) - x(lo)))).attr('height', r2(h)).attr('fill', RANGE_COLOR);
  }
  // About one x tick per 60 px, so the labels do not run together in a narrow dock.
  const xTicks = Math.max(2, Math.min(6, Math.floor(w / 60)));
  drawAxes(g, x, y, w, h, { xLabel: 'value read by the quantizer', yLabel: logY ? 'values per bin (log)' : 'values per bin', xTicks, yTicks: 5,
    yFormat, yLabelOffset: left });
  const { inside, outside } = Number.isFinite(lo) ? splitBins(bins, lo, hi) : { inside: bins.filter((b) => b.count > 0), outside: [] };
  const base = r2(h);
  g.append('path').attr('class', 'bars').attr('data-series', 'data').attr('fill', DATA_COLOR).attr('d', barsPath(inside, x, y, base));
  g.append('path').attr('class', 'bars-clipped').attr('data-series', 'clipped').attr('fill', CLIPPED_COLOR).attr('d', barsPath(outside, x, y, base));
  const ends = evidence.asymmetric || lo < 0 ? [lo, hi] : [hi];
  for (const t of ends.filter(Number.isFinite)) {
    const tx = r2(x(t));
    g.append('line').attr('class', 'threshold').attr('data-series', 'threshold').attr('data-value', String(t))
      .attr('x1', tx).attr('x2', tx).attr('y1', -STRIP_HEIGHT - 6).attr('y2', h)
      .attr('stroke', THRESHOLD_COLOR).attr('stroke-width', 1.5).attr('stroke-dasharray', '6,4');
  }

  // The levels strip above the plot: one mark per level where they are 2 px apart or more, else the
  // runs of used levels as segments over the range.
  const strip = g.append('g').attr('class', 'levels').attr('data-series', 'levels').attr('transform', `translate(0,${-STRIP_HEIGHT - 4})`)
    .attr('data-levels', levels ? levels.count : 0).attr('data-used', usedCount);
  if (levels) {
    const px = (k) => x(levels.lo + k * levels.step);
    const spacing = Math.abs(px(1) - px(0));
    strip.append('rect').attr('class', 'levels-free').attr('x', r2(px(0))).attr('width', r2(Math.max(1, px(levels.count - 1) - px(0))))
      .attr('height', STRIP_HEIGHT).attr('fill', LEVEL_FREE_COLOR);
    let d = '';
    if (spacing >= 2) {
      for (let k = 0; k < levels.count; k++) if (used[k]) d += `M${r2(px(k) - 0.5)},0h1v${STRIP_HEIGHT}h-1Z`;
    } else {
      for (let k = 0; k < levels.count; k++) {
        if (!used[k] || used[k - 1]) continue;
        let end = k;
        while (end + 1 < levels.count && used[end + 1]) end++;
        d += `M${r2(px(k))},0H${r2(Math.max(px(end), px(k) + 1))}V${STRIP_HEIGHT}H${r2(px(k))}Z`;
      }
    }
    strip.append('path').attr('class', 'levels-used').attr('fill', LEVEL_USED_COLOR).attr('d', d);
    strip.append('text').attr('class', 'levels-label').attr('x', 0).attr('y', -3).attr('font-size', 10).attr('fill', '#333')
      .text(`${levels.count} levels, step ${formatValue(levels.step, 3)} (dark: a value rounds to it)`);
  }
  summary.forEach((t, i) => g.append('text').attr('class', 'summary').attr('font-size', 11).attr('fill', '#333')
    .attr('x', 0).attr('y', h + 52 + i * 13).text(t));
  drawLegend(svg, legendItems, width - legendW - 8, margin.top + 6);
  return { svg: svg.node(), levels, used: usedCount };
}
