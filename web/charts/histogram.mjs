// Distribution histograms (§6.2): the core's 1024-bin counts per series (float / quantized /
// error, in the original's colours and drawing order), the threshold as a red dashed vertical line and
// max |x| as a blue upward triangle at (max_abs, 0). x "data range", y "Total number of data".
import { scaleLinear, scaleLog } from 'd3';
import { chartRoot, background } from './svg.mjs';
import { drawAxes, drawTitle, drawLegend, legendWidth, tickTexts, maxTextWidth } from './axes.mjs';
import { toNumber, formatValue, r2 } from './format.mjs';

export const THRESHOLD_COLOR = '#ff0000';
export const MAX_ABS_COLOR = '#0000FF';

function xDomain(series, threshold, maxAbs) {
  let lo = Infinity;
  let hi = -Infinity;
  const take = (v) => { if (Number.isFinite(v)) { lo = Math.min(lo, v); hi = Math.max(hi, v); } };
  for (const s of series) { take(s.edges[0]); take(s.edges[s.edges.length - 1]); }
  take(threshold);
  take(maxAbs);
  if (lo === Infinity) return [0, 1];
  return lo === hi ? [lo - 0.5, hi + 0.5] : [lo, hi];
}

// The bars of one series as a single path: one closed step outline per run of adjacent non-empty
// bins (1024 bins are often narrower than a pixel; separate rectangles would show anti-aliasing seams).
// A run narrower than one pixel is widened to one pixel so a tall, narrow spike (e.g. the error
// histogram next to wide data) stays visible.
function barsPath(s, x, y, base) {
  let d = '';
  let start = null;
  const close = (i) => {
    const last = r2(x(s.edges[i]));
    if (last - start < 1) d = d.replace(/H([-\d.]+)$/, `H${r2(start + 1)}`);
    d += `V${base}Z`;
    start = null;
  };
  for (let i = 0; i < s.counts.length; i++) {
    const c = s.counts[i];
    if (!(c > 0)) {
      if (start !== null) close(i);
      continue;
    }
    if (start === null) { start = r2(x(s.edges[i])); d += `M${start},${base}`; }
    d += `V${r2(y(c))}H${r2(x(s.edges[i + 1]))}`;
  }
  if (start !== null) close(s.counts.length);
  return d;
}

// The narrowest bar drawn, px: the core's 1024 bins are often narrower than a pixel, so sparse data
// (a few hundred weights) would show as 1-px hairlines. Adjacent bins are summed into bars of at least
// this width (1, 2, 4, … bins per bar); the chart notes how many, and the y axis counts per bar.
export const MIN_BAR_PX = 3;

// How many adjacent bins make one drawn bar: the smallest power of two whose bar is MIN_BAR_PX wide
// at the scale `x` (1 for bins already that wide).
export function binsPerBar(edges, x) {
  const n = edges.length - 1;
  if (n < 2) return 1;
  const binPx = Math.abs(x(edges[n]) - x(edges[0])) / n;
  let f = 1;
  while (f < n && binPx * f < MIN_BAR_PX) f *= 2;
  return f;
}

// The bins summed `f` at a time: {edges, counts} (the last bar may hold fewer bins).
export function mergeBins(edges, counts, f) {
  if (f <= 1) return { edges, counts };
  const out = { edges: [], counts: [] };
  for (let i = 0; i < counts.length; i += f) {
    out.edges.push(edges[i]);
    let c = 0;
    for (let k = i; k < Math.min(i + f, counts.length); k++) c += counts[k];
    out.counts.push(c);
  }
  out.edges.push(edges[counts.length]);
  return out;
}

// Runs of adjacent non-empty bins (the sub-paths barsPath draws).
export function binRuns(counts) {
  let runs = 0;
  for (let i = 0; i < counts.length; i++) if (counts[i] > 0 && !(counts[i - 1] > 0)) runs++;
  return runs;
}

/**
 * renderHistogram(target, plot, options) -> {svg, series, setVisible(label, visible), binAt(label, value)}
 * plot: a `distribution` entry {title, threshold|null, max_abs, histograms: [{label, color, edges, counts,
 *   zeros_excluded, non_finite}]} (numbers may be "inf"/"nan" strings).
 * options: width (640), height (480), logY (false), interactive (true: legend toggles, bin read-out),
 *   hidden: iterable of series labels drawn hidden, series: labels to draw alone (the x range then
 *   follows them, e.g. ['Quantization error distribution'] to see the error histogram on its own).
 */
export function renderHistogram(target, plot, options = {}) {
  const width = options.width ?? 640;
  const height = options.height ?? 480;
  const interactive = options.interactive ?? true;
  const only = options.series ? new Set(options.series) : null;
  const series = (plot.histograms || []).filter((hst) => !only || only.has(hst.label)).map((hst) => ({
    name: hst.label, color: hst.color, edges: (hst.edges || []).map(toNumber), counts: (hst.counts || []).map(Number),
    zeros: Number(hst.zeros_excluded || 0), nonFinite: Number(hst.non_finite || 0),
  }));
  const logY = !!options.logY;
  // With a series subset, markers outside those series' range are left out (they would squash it).
  const inRange = (v) => !only || series.some((e) => v >= e.edges[0] && v <= e.edges[e.edges.length - 1]);
  const threshold = inRange(toNumber(plot.threshold)) ? toNumber(plot.threshold) : NaN;
  const maxAbs = inRange(toNumber(plot.max_abs)) ? toNumber(plot.max_abs) : NaN;
  const legendItems = series.map((s) => ({ name: s.name, color: s.color, mark: 'rect' }));
  if (Number.isFinite(threshold)) legendItems.push({ name: 'threshold', label: `threshold ${formatValue(threshold)}`, color: THRESHOLD_COLOR, mark: 'dashed' });
  if (Number.isFinite(maxAbs)) legendItems.push({ name: 'max_abs', label: `max |x| ${formatValue(maxAbs)}`, color: MAX_ABS_COLOR, mark: 'triangle' });
  const legendW = legendWidth(legendItems.map((i) => i.label ?? i.name));
  const notes = series.filter((s) => s.zeros > 0 || s.nonFinite > 0)
    .map((s) => `${s.name}: ${s.zeros} zeros${s.nonFinite ? `, ${s.nonFinite} non-finite` : ''} not counted`);

  const svg = chartRoot(target, width, height, 'histogram');
  background(svg, width, height);
  const top = drawTitle(svg, plot.title, width / 2) + 8;
  const yFormat = logY ? (v) => (Math.log10(v) % 1 === 0 ? formatValue(v) : '') : undefined;
  const yOf = (max) => (logY ? scaleLog().domain([0.5, Math.max(1, max)]).nice() : scaleLinear().domain([0, Math.max(1, max)]).nice());
  const highest = (list) => list.reduce((m, c) => Math.max(m, c), 0);
  // The y labels' width sets the plot's, which sets the bins per bar, which set the counts the labels
  // show: laid out from the bins' counts, then again until the labels keep their width (twice at most).
  let left = 30 + maxTextWidth(tickTexts(yOf(series.reduce((m, s) => Math.max(m, highest(s.counts)), 0)), 6, yFormat));
  let w;
  let x;
  let y;
  for (let pass = 0; pass < 3; pass++) {
    w = Math.max(40, width - (left + 14) - (legendW + 16));
    x = scaleLinear().domain(xDomain(series, threshold, maxAbs)).range([0, w]);
    for (const s of series) {
      s.binsPerBar = binsPerBar(s.edges, x);
      s.bars = mergeBins(s.edges, s.counts, s.binsPerBar);
    }
    y = yOf(series.reduce((m, s) => Math.max(m, highest(s.bars.counts)), 0));
    const needed = 30 + maxTextWidth(tickTexts(y, 6, yFormat));
    if (needed === left) break;
    left = needed;
  }
  const merged = series.filter((s) => s.binsPerBar > 1);
  if (merged.length) notes.push(`bars of ${[...new Set(merged.map((s) => s.binsPerBar))].join(' / ')} adjacent bins (of ${merged[0].counts.length}), counts summed`);
  const margin = { top, right: legendW + 16, bottom: 48 + notes.length * 13, left: left + 14 };
  const h = Math.max(40, height - margin.top - margin.bottom);
  y.range([h, 0]);
  const g = svg.append('g').attr('class', 'plot').attr('transform', `translate(${margin.left},${margin.top})`);
  drawAxes(g, x, y, w, h, { xLabel: 'data range', yLabel: 'Total number of data', xTicks: 6, yTicks: 6,
    yFormat, yLabelOffset: left });

  // Drawing order of the original: threshold line, the series in order, then the marker.
  const marks = g.append('g').attr('class', 'marks');
  if (Number.isFinite(threshold)) {
    const tx = r2(x(threshold));
    marks.append('line').attr('class', 'threshold').attr('data-series', 'threshold').attr('x1', tx).attr('x2', tx)
      .attr('y1', 0).attr('y2', h).attr('stroke', THRESHOLD_COLOR).attr('stroke-width', 1.5).attr('stroke-dasharray', '6,4');
  }
  const hidden = new Set(options.hidden || []);
  for (const s of series) {
    marks.append('path').attr('class', 'bars').attr('data-series', s.name).attr('data-bins-per-bar', s.binsPerBar).attr('fill', s.color)
      .attr('display', hidden.has(s.name) ? 'none' : null).attr('d', barsPath(s.bars, x, y, r2(h)));
  }
  if (Number.isFinite(maxAbs)) {
    const mx = r2(x(maxAbs));
    marks.append('path').attr('class', 'max-abs').attr('data-series', 'max_abs').attr('fill', MAX_ABS_COLOR)
      .attr('d', `M${mx},${r2(h - 9)}L${r2(mx + 5)},${r2(h)}L${r2(mx - 5)},${r2(h)}Z`);
  }
  notes.forEach((t, i) => g.append('text').attr('class', 'note').attr('font-size', 10).attr('fill', '#555')
    .attr('x', 0).attr('y', h + 50 + i * 13).text(t));

  const setVisible = (name, visible) => {
    if (visible) hidden.delete(name); else hidden.add(name);
    marks.selectAll('[data-series]').filter(function () { return this.getAttribute('data-series') === name; })
      .attr('display', visible ? null : 'none');
    svg.selectAll('.legend-item').filter(function () { return this.getAttribute('data-series') === name; })
      .attr('opacity', visible ? null : 0.4);
  };
  drawLegend(svg, legendItems, width - legendW - 8, margin.top + 6, {
    onToggle: interactive ? (name) => setVisible(name, hidden.has(name)) : undefined,
  });

  // The bin of `bins` ({edges, counts}) containing `value` (half-open bins, the last one closed, as numpy).
  const locate = (bins, value) => {
    if (!bins || bins.counts.length === 0) return null;
    const last = bins.counts.length - 1;
    if (!(value >= bins.edges[0] && value <= bins.edges[last + 1])) return null;
    let lo = 0;
    let hi = last;
    while (lo < hi) { const mid = (lo + hi + 1) >> 1; if (bins.edges[mid] <= value) lo = mid; else hi = mid - 1; }
    return { index: lo, from: bins.edges[lo], to: bins.edges[lo + 1], count: bins.counts[lo] };
  };
  // ... of the core's bins of a series; the read-out below gives the drawn bar's.
  const binAt = (name, value) => locate(series.find((e) => e.name === name), value);
  if (interactive) {
    const readout = g.append('text').attr('class', 'readout').attr('x', w).attr('y', -4).attr('text-anchor', 'end').attr('font-size', 10);
    g.append('rect').attr('class', 'overlay').attr('width', w).attr('height', h).attr('fill', 'none').attr('pointer-events', 'all')
      .on('mousemove', function (event) {
        const rect = this.getBoundingClientRect();
        const v = x.invert((event.clientX - rect.left) * (w / (rect.width || w)));
        const parts = series.filter((s) => !hidden.has(s.name)).map((s) => {
          const b = locate(s.bars, v);
          return b ? `${s.name}: ${b.count}` : null;
        }).filter(Boolean);
        readout.text(`x ${formatValue(v, 4)}  ${parts.join('  ')}`);
      })
      .on('mouseleave', () => readout.text(''));
  }
  return { svg: svg.node(), series: series.map((s) => s.name), setVisible, binAt };
}
