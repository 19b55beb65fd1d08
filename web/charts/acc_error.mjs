// Accumulated error curves (§5.5): one line per model variant over the compared tensors
// (x = node index), y = the figure's metric (or its running mean in average mode, as computed by the
// core). Non-finite points (+inf kept in place by the core, NaN) are gaps in the line.
import { scaleLinear, line } from 'd3';
import { chartRoot, background } from './svg.mjs';
import { drawAxes, drawTitle, drawLegend, legendWidth, seriesColor, tickTexts, maxTextWidth, isolatedDots } from './axes.mjs';
import { toNumber, formatValue, r2 } from './format.mjs';
import { accErrorFigures } from '../pipeline/result.mjs';

// The figures of a result document, curves resolved (the result module's).
export { accErrorFigures };

// The running mean of §5.4 average_mode, as the core computes it (analysis::running_mean): double
// sum of the float32 values, +inf left out of the mean (+inf until a finite value is seen), each mean
// rounded to float32.
// Lets the app switch a raw figure to average mode without re-running the analysis.
export function runningMean(values) {
  let sum = 0;
  let count = 0;
  return values.map((raw) => {
    // The document holds float32 values as their shortest decimal digits: back to the exact float32.
    const v = Math.fround(toNumber(raw));
    if (v !== Infinity) { sum += v; count++; }
    return count ? Math.fround(sum / count) : Infinity;
  });
}

// A raw figure switched to average mode (figures already averaged are returned as they are).
export function averagedFigure(figure) {
  if (figure.average_mode) return figure;
  return {
    ...figure,
    average_mode: true,
    file_name: figure.file_name ? `average_${figure.file_name}` : figure.file_name,
    curves: figure.curves.map((c) => ({ ...c, y: runningMean(c.y) })),
  };
}

// Y label: the metric, marked when the values are running means (§5.4 average_mode).
export const accErrorYLabel = (figure) => (figure.average_mode ? `${figure.metric} (running mean)` : figure.metric);

function yDomain(curves) {
  let lo = Infinity;
  let hi = -Infinity;
  for (const c of curves) for (const v of c.values) if (Number.isFinite(v)) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
  if (lo === Infinity) return [0, 1];
  if (lo === hi) { const pad = Math.abs(lo) * 0.01 || 1; return [lo - pad, hi + pad]; }
  const pad = (hi - lo) * 0.05; // matplotlib's default margin keeps extreme points off the frame
  return [lo - pad, hi + pad];
}

/**
 * renderAccError(target, figure, options) -> {svg, series, setVisible(name, visible), showCrosshair(index|null)}
 * figure: {prefix|title, metric, average_mode, curves: [{name, x: [tensor], y: [number|"inf"|"nan"]}]}
 * options: width (800), height (600), interactive (true: legend toggles, crosshair, click),
 *   onFocus(nodeName, {tensor, index, curve}) on click, nodeOf(tensor) -> node name (default: tensor),
 *   hidden: iterable of curve names drawn hidden.
 */
export function renderAccError(target, figure, options = {}) {
  const width = options.width ?? 800;
  // Tall enough for the legend (one curve per node name can make dozens of entries).
  const height = Math.max(options.height ?? 600, 60 + (figure.curves || []).length * 16);
  const interactive = options.interactive ?? true;
  const nodeOf = options.nodeOf || ((t) => t);
  const curves = (figure.curves || []).map((c, i) => ({
    name: c.name, x: c.x || [], values: (c.y || []).map(toNumber), color: seriesColor(i),
  }));
  const n = curves.reduce((m, c) => Math.max(m, c.values.length), 0);
  const tensors = curves.find((c) => c.x.length === n)?.x || [];

  const y = scaleLinear().domain(yDomain(curves)).nice();
  const legendW = legendWidth(curves.map((c) => c.name));
  const left = 30 + maxTextWidth(tickTexts(y, 8));
  const svg = chartRoot(target, width, height, 'acc-error');
  background(svg, width, height);
  const top = drawTitle(svg, figure.title ?? figure.prefix, width / 2) + 8;
  const margin = { top, right: legendW + 16, bottom: 48, left: left + 14 };
  const w = Math.max(40, width - margin.left - margin.right);
  const h = Math.max(40, height - margin.top - margin.bottom);
  const x = scaleLinear().domain([0, Math.max(1, n - 1)]).range([0, w]);
  y.range([h, 0]);

  const g = svg.append('g').attr('class', 'plot').attr('transform', `translate(${margin.left},${margin.top})`);
  const xTicks = x.ticks(10).filter(Number.isInteger);
  drawAxes(g, x, y, w, h, {
    xLabel: 'node index', yLabel: accErrorYLabel(figure), xTickValues: xTicks, xFormat: (v) => String(v),
    yTicks: 8, yLabelOffset: left, grid: true,
  });

  const path = line().defined((d) => Number.isFinite(d[1])).x((d) => r2(x(d[0]))).y((d) => r2(y(d[1])));
  const hidden = new Set(options.hidden || []);
  const lines = g.append('g').attr('class', 'series');
  for (const c of curves) {
    lines.append('path').attr('class', 'curve').attr('data-series', c.name).attr('fill', 'none')
      .attr('stroke', c.color).attr('stroke-width', 1.5)
      .attr('display', hidden.has(c.name) ? 'none' : null)
      .attr('d', path(c.values.map((v, i) => [i, v])) || '');
    const dots = isolatedDots(c.values, (i) => x(i), (v) => y(v));
    if (dots) {
      lines.append('path').attr('class', 'isolated').attr('data-series', c.name).attr('fill', c.color)
        .attr('display', hidden.has(c.name) ? 'none' : null).attr('d', dots);
    }
  }

  const setVisible = (name, visible) => {
    if (visible) hidden.delete(name); else hidden.add(name);
    lines.selectAll('path[data-series]').filter(function () { return this.getAttribute('data-series') === name; })
      .attr('display', visible ? null : 'none');
    svg.selectAll('.legend-item').filter(function () { return this.getAttribute('data-series') === name; })
      .attr('opacity', visible ? null : 0.4);
  };
  drawLegend(svg, curves.map((c) => ({ name: c.name, color: c.color })), width - legendW - 8, margin.top + 6, {
    onToggle: interactive ? (name) => setVisible(name, hidden.has(name)) : undefined,
  });
  for (const name of hidden) setVisible(name, false);

  // Crosshair: vertical rule at the nearest index, with the tensor, its node and every visible value.
  let showCrosshair = () => {};
  if (interactive && n > 0) {
    const cross = g.append('g').attr('class', 'crosshair').attr('display', 'none').attr('pointer-events', 'none');
    const rule = cross.append('line').attr('y1', 0).attr('y2', h).attr('stroke', '#555').attr('stroke-dasharray', '3,3');
    const label = cross.append('text').attr('class', 'crosshair-label').attr('y', 12).attr('font-size', 11);
    showCrosshair = (index) => {
      if (index === null || index === undefined || index < 0 || index >= n) { cross.attr('display', 'none'); return; }
      const px = r2(x(index));
      cross.attr('display', null);
      rule.attr('x1', px).attr('x2', px);
      const tensor = tensors[index] ?? String(index);
      const node = nodeOf(tensor);
      const rows = [`#${index} ${tensor}${node && node !== tensor ? ` (${node})` : ''}`];
      for (const c of curves) if (!hidden.has(c.name)) rows.push(`${c.name}: ${formatValue(c.values[index])}`);
      const anchorEnd = px > w / 2;
      label.attr('text-anchor', anchorEnd ? 'end' : 'start').selectAll('tspan').remove();
      rows.forEach((r, i) => label.append('tspan').attr('x', anchorEnd ? px - 6 : px + 6).attr('dy', i === 0 ? 0 : '1.2em').text(r));
    };
    const indexAt = (event) => {
      const rect = overlay.node().getBoundingClientRect();
      const px = (event.clientX - rect.left) * (w / (rect.width || w));
      return Math.max(0, Math.min(n - 1, Math.round(x.invert(px))));
    };
    const overlay = g.append('rect').attr('class', 'overlay').attr('width', w).attr('height', h)
      .attr('fill', 'none').attr('pointer-events', 'all')
      .on('mousemove', (event) => showCrosshair(indexAt(event)))
      .on('mouseleave', () => showCrosshair(null))
      .on('click', (event) => {
        const index = indexAt(event);
        const tensor = tensors[index];
        if (options.onFocus && tensor !== undefined) options.onFocus(nodeOf(tensor), { tensor, index });
      });
  }
  return { svg: svg.node(), series: curves.map((c) => c.name), setVisible, showCrosshair };
}
