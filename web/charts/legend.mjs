// The heatmap legend: metric name with its direction ("lower is worse"), a colour ramp from the best
// value (left, cool) to the worst (right, hot) and the NaN swatch. A range scale labels its ends with
// the best and worst values shown (with enough digits to tell them apart); a fixed scale
// (heat_scale.mjs FIXED_SCALES) labels its reference values along the ramp, marks where the values
// shown lie on it, and names them on a last line. Values get at least the tables' 6 significant digits,
// more when the two ends would otherwise print alike.
// The ramp is drawn as rects (no gradient ids), so several legends can share a page.
import { chartRoot } from './svg.mjs';
import { formatValue, textWidth } from './format.mjs';
import { interpolateHeat, distinctDigits } from './heat_scale.mjs';

const STEPS = 32;
const TICK_FONT = 9;
const TABLE_DIGITS = 6; // the tables' significant digits: the legend's ends read as the rows do

// The reference values along a fixed ramp: every tick marked, labels kept where they do not overlap
// (the ends first). -> [{x, text, anchor}] of the labels drawn.
function tickLabels(legend, rampW) {
  const ends = [{ at: 0, value: legend.best, anchor: 'start' }, { at: 1, value: legend.worst, anchor: 'end' }];
  const span = (l) => {
    const w = textWidth(l.text, TICK_FONT);
    const left = l.anchor === 'start' ? l.x : l.anchor === 'end' ? l.x - w : l.x - w / 2;
    return [left - 3, left + w + 3];
  };
  const labels = [];
  for (const t of [...ends, ...legend.ticks.map((k) => ({ ...k, anchor: 'middle' }))]) {
    const label = { x: Math.round(t.at * rampW * 100) / 100, text: formatValue(t.value, 6), anchor: t.anchor };
    const [a, b] = span(label);
    if (labels.every((o) => { const [c, d] = span(o); return b <= c || a >= d; })) labels.push(label);
  }
  return labels;
}

/**
 * renderHeatLegend(target, legend, options) -> {svg}
 * legend: heatScale(...).legend, or {title, direction, domain, best?, worst?, nanColor?}.
 * options: width (260), showNaN (true), title (true: the metric and its direction on the first line;
 *   false when the host prints them itself, e.g. wrapped over a narrow legend).
 */
export function renderHeatLegend(target, legend, options = {}) {
  const lowerWorse = /^lower/.test(legend.direction);
  const best = legend.best ?? (lowerWorse ? legend.domain[1] : legend.domain[0]);
  const worst = legend.worst ?? (lowerWorse ? legend.domain[0] : legend.domain[1]);
  const fixed = legend.scale === 'fixed';
  const title = `${legend.title} (${legend.direction})`;
  const titled = options.title !== false;
  const width = Math.max(options.width ?? 260, titled ? Math.ceil(textWidth(title, 11)) + 8 : 0);
  const dy = titled ? 0 : -14; // everything moves up by the title's line when it is left out
  const height = (fixed ? 82 : 58) + dy;
  const svg = chartRoot(target, width, height, 'heat-legend');
  svg.attr('data-scale', legend.scale ?? 'range');
  if (titled) svg.append('text').attr('class', 'legend-title').attr('x', 4).attr('y', 13).text(title);
  const rampW = width - 8 - (options.showNaN === false ? 0 : 46);
  const ramp = svg.append('g').attr('class', 'ramp').attr('transform', `translate(4,${20 + dy})`);
  for (let i = 0; i < STEPS; i++) {
    ramp.append('rect').attr('x', Math.round((i * rampW) / STEPS * 100) / 100).attr('width', Math.ceil(rampW / STEPS) + 0.5)
      .attr('height', 12).attr('fill', interpolateHeat(i / (STEPS - 1)));
  }
  const ends = svg.append('g').attr('class', 'ends').attr('font-size', 10).attr('transform', dy ? `translate(0,${dy})` : null);
  if (fixed) {
    // Reference values under the ramp; the stretch of it the values shown take, outlined.
    const ticks = svg.append('g').attr('class', 'ticks').attr('transform', `translate(4,${32 + dy})`).attr('font-size', TICK_FONT);
    for (const t of legend.ticks ?? []) {
      const x = Math.round(t.at * rampW * 100) / 100;
      ticks.append('line').attr('x1', x).attr('x2', x).attr('y1', 0).attr('y2', 4).attr('stroke', '#333');
    }
    for (const l of tickLabels(legend, rampW)) {
      ticks.append('text').attr('class', 'tick-label').attr('x', l.x).attr('y', 13).attr('text-anchor', l.anchor).text(l.text);
    }
    ends.append('text').attr('class', 'best').attr('x', 4).attr('y', 59).text('better');
    ends.append('text').attr('class', 'worst').attr('x', 4 + rampW).attr('y', 59).attr('text-anchor', 'end').text('worse');
    if (legend.shown) {
      const [a, b] = legend.shown.map((t) => Math.round(t * rampW * 100) / 100);
      svg.append('rect').attr('class', 'shown').attr('x', 4 + a).attr('y', 18.5 + dy).attr('width', Math.max(2, b - a)).attr('height', 15)
        .attr('fill', 'none').attr('stroke', '#000').attr('stroke-width', 1.5);
      const [lo, hi] = lowerWorse ? [legend.domain[1], legend.domain[0]] : legend.domain;
      const digits = distinctDigits(lo, hi, TABLE_DIGITS);
      svg.append('text').attr('class', 'shown-values').attr('x', 4).attr('y', 75 + dy).attr('font-size', 10)
        .text(`shown: ${formatValue(lo, digits)}${lo === hi ? '' : ` … ${formatValue(hi, digits)}`}`);
    }
  } else {
    const digits = distinctDigits(best, worst, TABLE_DIGITS);
    ends.append('text').attr('class', 'best').attr('x', 4).attr('y', 46).text(`better ${formatValue(best, digits)}`);
    ends.append('text').attr('class', 'worst').attr('x', 4 + rampW).attr('y', 46).attr('text-anchor', 'end')
      .text(`worse ${formatValue(worst, digits)}`);
  }
  if (options.showNaN !== false) {
    const nan = svg.append('g').attr('class', 'nan').attr('transform', `translate(${width - 38},${20 + dy})`);
    nan.append('rect').attr('width', 12).attr('height', 12).attr('fill', legend.nanColor || '#bdbdbd');
    nan.append('text').attr('x', 15).attr('y', 10).attr('font-size', 10).text('nan');
  }
  return { svg: svg.node() };
}
