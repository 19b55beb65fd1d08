// Axes, titles and the series legend shared by the charts. Layout uses textWidth() estimates only,
// so the same input gives the same SVG in a browser, in linkedom and in the CLI's PNGs.
import { axisBottom, axisLeft } from 'd3';
import { textWidth, ellipsize } from './format.mjs';

export const TITLE_SIZE = 13;
export const LABEL_SIZE = 12;
export const TICK_SIZE = 10;

// Tick texts of a scale as the axis will print them (for margin estimates).
export function tickTexts(scale, count, format) {
  const fmt = format || (scale.tickFormat ? scale.tickFormat(count) : String);
  const values = scale.ticks ? scale.ticks(count) : scale.domain();
  return values.map((v) => fmt(v));
}

export const maxTextWidth = (texts, size = TICK_SIZE) => texts.reduce((m, t) => Math.max(m, textWidth(t, size)), 0);

// Title lines (the original's titles contain "\n"), centred over `centerX`; returns the height used.
export function drawTitle(svg, title, centerX, top = 6) {
  if (!title) return 0;
  const lines = String(title).split('\n');
  const text = svg.append('text').attr('class', 'title').attr('text-anchor', 'middle')
    .attr('font-size', TITLE_SIZE).attr('x', centerX).attr('y', top + TITLE_SIZE);
  lines.forEach((line, i) => text.append('tspan').attr('x', centerX).attr('dy', i === 0 ? 0 : '1.2em').text(line));
  return top + lines.length * TITLE_SIZE * 1.2 + 4;
}

// Bottom and left axes of a plot area `g` (inner size w×h) with their labels.
// options: xLabel, yLabel, xTicks, yTicks (counts), xFormat, yFormat, xTickValues, rotateX (90° labels),
// xLabelOffset (distance of the x label below the axis), yLabelOffset (left of the axis).
export function drawAxes(g, x, y, w, h, options = {}) {
  const xAxis = axisBottom(x).tickSizeOuter(0).offset(0.5); // fixed: browser (HiDPI) and Node SVGs match
  if (options.xTickValues) xAxis.tickValues(options.xTickValues);
  else if (options.xTicks !== undefined) xAxis.ticks(options.xTicks);
  if (options.xFormat) xAxis.tickFormat(options.xFormat);
  const gx = g.append('g').attr('class', 'axis axis-x').attr('transform', `translate(0,${h})`).call(xAxis);
  gx.attr('font-family', null).attr('font-size', TICK_SIZE);
  if (options.rotateX) {
    gx.selectAll('.tick text').attr('transform', 'rotate(-90)').attr('text-anchor', 'end')
      .attr('x', -9).attr('y', 0).attr('dy', '0.32em');
  }
  const yAxis = axisLeft(y).tickSizeOuter(0).offset(0.5);
  if (options.yTicks !== undefined) yAxis.ticks(options.yTicks);
  if (options.yFormat) yAxis.tickFormat(options.yFormat);
  const gy = g.append('g').attr('class', 'axis axis-y').call(yAxis);
  gy.attr('font-family', null).attr('font-size', TICK_SIZE);
  if (options.grid) {
    gy.selectAll('.tick line').clone().attr('class', 'grid').attr('x2', w).attr('stroke-opacity', 0.15);
    gx.selectAll('.tick line').clone().attr('class', 'grid').attr('y2', -h).attr('stroke-opacity', 0.15);
  }
  if (options.xLabel) {
    g.append('text').attr('class', 'axis-label axis-label-x').attr('text-anchor', 'middle')
      .attr('font-size', LABEL_SIZE).attr('x', w / 2).attr('y', h + (options.xLabelOffset ?? 34)).text(options.xLabel);
  }
  if (options.yLabel) {
    g.append('text').attr('class', 'axis-label axis-label-y').attr('text-anchor', 'middle')
      .attr('font-size', LABEL_SIZE).attr('transform', `translate(${-(options.yLabelOffset ?? 44)},${h / 2}) rotate(-90)`)
      .text(options.yLabel);
  }
  return { gx, gy };
}

// Width needed by a legend of these labels (swatch + gap + text).
export const legendWidth = (labels, maxChars = 40) =>
  28 + maxTextWidth(labels.map((l) => ellipsize(l, maxChars)), 11);

// A vertical legend at (x, y). items: [{name, label?, color, mark: 'line'|'dashed'|'rect'|'x'|'triangle'|'circle'}].
// Each entry carries data-series=name; with onToggle(name) the entries are clickable (the report's
// inline script uses the same attribute).
export function drawLegend(svg, items, x, y, { onToggle, maxChars = 40 } = {}) {
  const g = svg.append('g').attr('class', 'legend').attr('transform', `translate(${x},${y})`);
  items.forEach((item, i) => {
    const e = g.append('g').attr('class', 'legend-item').attr('data-series', item.name)
      .attr('transform', `translate(0,${i * 16})`);
    drawSwatch(e, item.mark || 'line', item.color);
    e.append('text').attr('x', 24).attr('y', 4).attr('font-size', 11).text(ellipsize(item.label ?? item.name, maxChars));
    if (onToggle) e.attr('cursor', 'pointer').on('click', () => onToggle(item.name));
  });
  return g;
}

function drawSwatch(e, mark, color) {
  switch (mark) {
    case 'rect':
      e.append('rect').attr('x', 2).attr('y', -5).attr('width', 16).attr('height', 9).attr('fill', color);
      break;
    case 'x':
      e.append('path').attr('d', 'M6,-4L14,4M6,4L14,-4').attr('stroke', color).attr('stroke-width', 1.5);
      break;
    case 'triangle':
      e.append('path').attr('d', 'M10,-5L15,4L5,4Z').attr('fill', color);
      break;
    case 'circle':
      e.append('circle').attr('cx', 10).attr('cy', 0).attr('r', 3).attr('fill', color);
      break;
    default:
      e.append('line').attr('x1', 0).attr('x2', 20).attr('stroke', color).attr('stroke-width', 1.5)
        .attr('stroke-dasharray', mark === 'dashed' ? '5,3' : null);
  }
}

// Deterministic series colours (the original draws random ones; a fixed palette keeps SVGs stable).
export const PALETTE = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2',
  '#7f7f7f', '#bcbd22', '#17becf'];
export const seriesColor = (i) => PALETTE[i % PALETTE.length];

// Finite points with no finite neighbour draw no line segment; they get a dot instead (a path of
// small circles), so a value between two gaps stays visible. px(i), py(v) map to pixels.
export function isolatedDots(values, px, py, r = 2) {
  const ok = (i) => i >= 0 && i < values.length && Number.isFinite(values[i]);
  let d = '';
  for (let i = 0; i < values.length; i++) {
    if (!ok(i) || ok(i - 1) || ok(i + 1)) continue;
    const [cx, cy] = [Math.round(px(i) * 100) / 100, Math.round(py(values[i]) * 100) / 100];
    d += `M${cx - r},${cy}a${r},${r} 0 1,0 ${2 * r},0a${r},${r} 0 1,0 ${-2 * r},0`;
  }
  return d;
}
