// Partial quantization analysis (§8.2): categorical x = ["none", sensitive nodes...];
// baseline y = 1.0 (blue dashed), the cumulative curve (red line, from "none"), the per-node
// sensitivities (green x markers at the sensitive nodes). Non-finite points are gaps / left out.
import { scalePoint, scaleLinear, line } from 'd3';
import { chartRoot, background } from './svg.mjs';
import { drawAxes, drawTitle, drawLegend, legendWidth, tickTexts, maxTextWidth, isolatedDots } from './axes.mjs';
import { toNumber, r2, ellipsize } from './format.mjs';

export const BASELINE_COLOR = '#0000ff';
export const CUMULATIVE_COLOR = '#ff0000';
export const PER_NODE_COLOR = '#008000';
const LABEL_CHARS = 32;

/**
 * renderSensitivityAnalysis(target, data, options) -> {svg, points}
 * data: the `sensitivity_analysis` section {x: ["none", node...], cumulative: [per x], per_node: [per x[1..]],
 *   qtype}.
 * options: width (800; widens to 16 px per node), height (520), interactive (true: click a node ->
 *   onFocus(nodeName)), onFocus.
 */
export function renderSensitivityAnalysis(target, data, options = {}) {
  const interactive = options.interactive ?? true;
  const names = (data.x || []).map(String);
  const cumulative = (data.cumulative || []).map(toNumber);
  const perNode = (data.per_node || []).map(toNumber);
  const finite = [1, ...cumulative, ...perNode].filter(Number.isFinite);
  const y = scaleLinear().domain([Math.min(...finite), Math.max(...finite)]).nice();
  if (y.domain()[0] === y.domain()[1]) y.domain([y.domain()[0] - 0.01, y.domain()[1] + 0.01]);
  const left = 30 + maxTextWidth(tickTexts(y, 8));
  const items = [
    { name: 'baseline', color: BASELINE_COLOR, mark: 'dashed' },
    { name: 'cumulative', label: 'partial quantization cumulative error', color: CUMULATIVE_COLOR, mark: 'line' },
    { name: 'per_node', label: 'per-node quantization sensitivity', color: PER_NODE_COLOR, mark: 'x' },
  ];
  const legendW = legendWidth(items.map((i) => i.label ?? i.name));
  const labelRoom = Math.min(LABEL_CHARS, names.reduce((m, n) => Math.max(m, n.length), 4)) * 10 * 0.6 + 12;
  const width = Math.ceil(Math.max(options.width ?? 800, left + 14 + names.length * 16 + legendW + 24));
  const height = options.height ?? 520;

  const svg = chartRoot(target, width, height, 'sensitivity-analysis');
  background(svg, width, height);
  const title = data.qtype && data.qtype !== 'float32'
    ? `Partial Quantization Analysis\n(sensitive nodes as ${data.qtype})` : 'Partial Quantization Analysis';
  const top = drawTitle(svg, title, width / 2) + 8;
  const margin = { top, right: legendW + 16, bottom: 40 + labelRoom, left: left + 14 };
  const w = Math.max(40, width - margin.left - margin.right);
  const h = Math.max(40, height - margin.top - margin.bottom);
  const x = scalePoint().domain(names.map((_, i) => i)).range([0, w]).padding(0.5);
  y.range([h, 0]);
  const g = svg.append('g').attr('class', 'plot').attr('transform', `translate(${margin.left},${margin.top})`);
  drawAxes(g, x, y, w, h, { xLabel: 'node', yLabel: 'Cosine Similarity', xFormat: (i) => ellipsize(names[i], LABEL_CHARS),
    rotateX: true, yTicks: 8, grid: true, xLabelOffset: labelRoom + 28, yLabelOffset: left });

  const marks = g.append('g').attr('class', 'marks');
  marks.append('line').attr('class', 'baseline').attr('x1', 0).attr('x2', w).attr('y1', r2(y(1))).attr('y2', r2(y(1)))
    .attr('stroke', BASELINE_COLOR).attr('stroke-dasharray', '6,4').attr('stroke-width', 1.5);
  const path = line().defined((d) => Number.isFinite(d[1])).x((d) => r2(x(d[0]))).y((d) => r2(y(d[1])));
  marks.append('path').attr('class', 'cumulative').attr('fill', 'none').attr('stroke', CUMULATIVE_COLOR).attr('stroke-width', 1.5)
    .attr('d', path(cumulative.map((v, i) => [i, v])) || '');
  const dots = isolatedDots(cumulative, (i) => x(i), (v) => y(v));
  if (dots) marks.append('path').attr('class', 'cumulative-isolated').attr('fill', CUMULATIVE_COLOR).attr('d', dots);
  let xs = '';
  perNode.forEach((v, k) => {
    if (!Number.isFinite(v) || k + 1 >= names.length) return;
    const px = r2(x(k + 1));
    const py = r2(y(v));
    xs += `M${r2(px - 4)},${r2(py - 4)}L${r2(px + 4)},${r2(py + 4)}M${r2(px - 4)},${r2(py + 4)}L${r2(px + 4)},${r2(py - 4)}`;
  });
  marks.append('path').attr('class', 'per-node').attr('stroke', PER_NODE_COLOR).attr('stroke-width', 1.5).attr('d', xs);
  drawLegend(svg, items, width - legendW - 8, margin.top + 6, { maxChars: 48 });

  if (interactive && options.onFocus) {
    g.selectAll('.axis-x .tick').attr('cursor', 'pointer').on('click', (event, i) => {
      if (i > 0) options.onFocus(names[i]);
    });
  }
  const points = names.map((name, i) => ({ name, x: r2(x(i)), cumulative: cumulative[i], perNode: i > 0 ? perNode[i - 1] : undefined }));
  return { svg: svg.node(), points };
}
