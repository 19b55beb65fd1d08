// The heatmap legend: metric name with its direction ("lower is worse"), a colour ramp from the best
// value (left, cool) to the worst (right, hot) labelled with both ends, and the NaN swatch.
// The ramp is drawn as rects (no gradient ids), so several legends can share a page.
import { chartRoot } from './svg.mjs';
import { formatValue, textWidth } from './format.mjs';
import { interpolateHeat } from './heat_scale.mjs';

const STEPS = 32;

/**
 * renderHeatLegend(target, legend, options) -> {svg}
 * legend: heatScale(...).legend, or {title, direction, domain, best?, worst?, nanColor?}.
 * options: width (260), showNaN (true).
 */
export function renderHeatLegend(target, legend, options = {}) {
  const lowerWorse = /^lower/.test(legend.direction);
  const best = legend.best ?? (lowerWorse ? legend.domain[1] : legend.domain[0]);
  const worst = legend.worst ?? (lowerWorse ? legend.domain[0] : legend.domain[1]);
  const title = `${legend.title} (${legend.direction})`;
  const width = Math.max(options.width ?? 260, Math.ceil(textWidth(title, 11)) + 8);
  const height = 58;
  const svg = chartRoot(target, width, height, 'heat-legend');
  svg.append('text').attr('class', 'legend-title').attr('x', 4).attr('y', 13).text(title);
  const rampW = width - 8 - (options.showNaN === false ? 0 : 46);
  const ramp = svg.append('g').attr('class', 'ramp').attr('transform', 'translate(4,20)');
  for (let i = 0; i < STEPS; i++) {
    ramp.append('rect').attr('x', Math.round((i * rampW) / STEPS * 100) / 100).attr('width', Math.ceil(rampW / STEPS) + 0.5)
      .attr('height', 12).attr('fill', interpolateHeat(i / (STEPS - 1)));
  }
  const ends = svg.append('g').attr('class', 'ends').attr('font-size', 10);
  ends.append('text').attr('class', 'best').attr('x', 4).attr('y', 46).text(`better ${formatValue(best, 4)}`);
  ends.append('text').attr('class', 'worst').attr('x', 4 + rampW).attr('y', 46).attr('text-anchor', 'end')
    .text(`worse ${formatValue(worst, 4)}`);
  if (options.showNaN !== false) {
    const nan = svg.append('g').attr('class', 'nan').attr('transform', `translate(${width - 38},20)`);
    nan.append('rect').attr('width', 12).attr('height', 12).attr('fill', legend.nanColor || '#bdbdbd');
    nan.append('text').attr('x', 15).attr('y', 10).attr('font-size', 10).text('nan');
  }
  return { svg: svg.node() };
}
