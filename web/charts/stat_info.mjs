// Calibration-node statistics curves (§8.1 visualize): per tensor type one figure with the
// first Thresholds / Scales / Max_vals / Min_nz_vals value of each node over the node index, log y.
// Values <= 0 or non-finite cannot sit on a log axis and are gaps.
import { scaleLinear, scaleLog, line } from 'd3';
import { chartRoot, background } from './svg.mjs';
import { drawAxes, drawTitle, drawLegend, legendWidth, seriesColor, tickTexts, maxTextWidth, isolatedDots } from './axes.mjs';
import { toNumber, formatValue, r2 } from './format.mjs';

export const STAT_INFO_SERIES = [
  { key: 'thresholds', label: 'Thresholds' },
  { key: 'scales', label: 'Scales' },
  { key: 'max_vals', label: 'Max_vals' },
  { key: 'min_nz_vals', label: 'Min_nz_vals' },
];

/**
 * renderStatInfo(target, curves, options) -> {svg, series}
 * curves: result.stat_info_curves.weight or .feature: {nodes: [...], thresholds, scales, max_vals, min_nz_vals}.
 * options: tensorType ("weight" | "feature": the title "<type> calibration nodes"), width (800), height (520).
 */
export function renderStatInfo(target, curves, options = {}) {
  const width = options.width ?? 800;
  const height = options.height ?? 520;
  const series = STAT_INFO_SERIES.map((s, i) => ({
    name: s.label, color: seriesColor(i), values: (curves[s.key] || []).map(toNumber),
  }));
  const n = (curves.nodes || []).length;
  const positive = series.flatMap((s) => s.values).filter((v) => Number.isFinite(v) && v > 0);
  const lo = positive.length ? Math.min(...positive) : 1e-3;
  const hi = positive.length ? Math.max(...positive) : 1;
  const y = scaleLog().domain(lo === hi ? [lo / 10, hi * 10] : [lo, hi]).nice();
  const yFormat = (v) => (Math.abs(Math.log10(v) % 1) < 1e-9 ? formatValue(v) : '');
  const left = 30 + maxTextWidth(tickTexts(y, 6, yFormat));
  const legendW = legendWidth(series.map((s) => s.name));
  const svg = chartRoot(target, width, height, 'stat-info');
  background(svg, width, height);
  const top = drawTitle(svg, `${options.tensorType ?? 'weight'} calibration nodes`, width / 2) + 8;
  const margin = { top, right: legendW + 16, bottom: 48, left: left + 14 };
  const w = Math.max(40, width - margin.left - margin.right);
  const h = Math.max(40, height - margin.top - margin.bottom);
  const x = scaleLinear().domain([0, Math.max(1, n - 1)]).range([0, w]);
  y.range([h, 0]);
  const g = svg.append('g').attr('class', 'plot').attr('transform', `translate(${margin.left},${margin.top})`);
  drawAxes(g, x, y, w, h, { xLabel: 'Node', yLabel: 'Value', xTickValues: x.ticks(10).filter(Number.isInteger),
    xFormat: String, yTicks: 6, yFormat, yLabelOffset: left });
  const path = line().defined((d) => Number.isFinite(d[1]) && d[1] > 0).x((d) => r2(x(d[0]))).y((d) => r2(y(d[1])));
  const lines = g.append('g').attr('class', 'series');
  for (const s of series) {
    lines.append('path').attr('class', 'curve').attr('data-series', s.name).attr('fill', 'none')
      .attr('stroke', s.color).attr('stroke-width', 1.5).attr('d', path(s.values.map((v, i) => [i, v])) || '');
    const dots = isolatedDots(s.values.map((v) => (v > 0 ? v : NaN)), (i) => x(i), (v) => y(v));
    if (dots) lines.append('path').attr('class', 'isolated').attr('data-series', s.name).attr('fill', s.color).attr('d', dots);
  }
  drawLegend(svg, series.map((s) => ({ name: s.name, color: s.color })), width - legendW - 8, margin.top + 6);
  return { svg: svg.node(), series: series.map((s) => s.name) };
}
