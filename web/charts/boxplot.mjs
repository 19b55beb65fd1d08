// Per-channel box plots (§7): box Q1–Q3, whiskers at the core's 1.5·IQR limits with caps,
// outliers as small red circles, median as a red solid line, mean as a blue dashed line. x "channel"
// (1-based labels), y "Range of data in channel". Each mark type is one path over all channels, so
// thousands of channels stay light; wide plots get a fixed channel width and scroll horizontally.
import { scaleLinear } from 'd3';
import { chartRoot, background } from './svg.mjs';
import { drawAxes, drawTitle, drawLegend, legendWidth, tickTexts, maxTextWidth } from './axes.mjs';
import { toNumber, formatValue, r2, textWidth } from './format.mjs';

export const MEDIAN_COLOR = '#ff0000';
export const MEAN_COLOR = '#0000ff';
export const OUTLIER_COLOR = '#ff0000';

const FIELDS = ['mean', 'q1', 'median', 'q3', 'whisker_low', 'whisker_high'];

function channelStats(c) {
  const s = { count: Number(c.count ?? 0), outlierCount: Number(c.outlier_count ?? 0) };
  for (const f of FIELDS) s[f] = toNumber(c[f]);
  s.outliers = (c.outliers || []).map(toNumber).filter(Number.isFinite);
  s.valid = Number.isFinite(s.q1) && Number.isFinite(s.q3) && Number.isFinite(s.median);
  return s;
}

function yDomain(channels) {
  let lo = Infinity;
  let hi = -Infinity;
  const take = (v) => { if (Number.isFinite(v)) { lo = Math.min(lo, v); hi = Math.max(hi, v); } };
  for (const c of channels) {
    if (!c.valid) continue;
    take(c.whisker_low); take(c.whisker_high); take(c.mean);
    for (const o of c.outliers) take(o);
  }
  if (lo === Infinity) return [0, 1];
  return lo === hi ? [lo - 0.5, hi + 0.5] : [lo, hi];
}

// Keyboard access to the channel click: the svg takes focus, arrows move a cursor band over the
// channels (announced through aria-valuetext), Enter / Space pick the channel under it.
function keyboardPicker(svg, g, { C, step, h, selected, describe, pick }) {
  let at = selected ?? 0;
  const cursor = g.append('rect').attr('class', 'channel-cursor').attr('y', 0).attr('width', r2(step)).attr('height', h)
    .attr('fill', 'none').attr('stroke', '#1a73e8').attr('stroke-width', 1.5).attr('display', 'none');
  const show = () => {
    cursor.attr('x', r2(at * step)).attr('display', null);
    svg.attr('aria-valuenow', at + 1).attr('aria-valuetext', describe(at));
  };
  svg.attr('tabindex', 0).attr('role', 'slider').attr('aria-label', 'box plot channels: arrows choose, Enter shows the histogram')
    .attr('aria-valuemin', 1).attr('aria-valuemax', C).attr('aria-valuenow', at + 1).attr('aria-valuetext', describe(at))
    .on('focus', show)
    .on('blur', () => cursor.attr('display', 'none'))
    .on('keydown', (event) => {
      const moves = { ArrowLeft: at - 1, ArrowRight: at + 1, ArrowDown: at - 1, ArrowUp: at + 1, Home: 0, End: C - 1,
        PageDown: at - 10, PageUp: at + 10 };
      if (event.key in moves) {
        at = Math.min(C - 1, Math.max(0, moves[event.key]));
        show();
      } else if (event.key === 'Enter' || event.key === ' ') {
        pick(at);
      } else {
        return;
      }
      event.preventDefault?.();
    });
}

/**
 * renderBoxplot(target, plot, options) -> {svg, channelCount, channelWidth, channelAt(px), zoom(factor)}
 * plot: a `channelwise` entry {name?, kind, shape, axis, rotate_labels, channels: [{count, mean, q1, median,
 *   q3, whisker_low, whisker_high, outlier_count, outliers}]}.
 * options: width (800: the width the channels are fitted into; more channels widen it), height (480),
 *   title (default plot.name), channelWidth (px per channel; default fits `width`, 6 to 60), interactive (true:
 *   click a channel -> onChannel(index, stats), Ctrl+wheel zooms the channel width),
 *   onChannel(index0, stats): with it the plot is also a keyboard control (Tab to it, ←/→/Home/End move
 *   the channel cursor, Enter or Space picks the channel),
 *   selected: a 0-based channel to mark (a grey band behind it, e.g. the one whose histogram is shown).
 * When `target` is a container, the <svg> goes into a horizontally scrolling <div class="ptq-scroll">.
 */
export function renderBoxplot(target, plot, options = {}) {
  const height = options.height ?? 480;
  const interactive = options.interactive ?? true;
  const channels = (plot.channels || []).map(channelStats);
  const C = channels.length;
  const y = scaleLinear().domain(yDomain(channels)).nice();
  const left = 30 + maxTextWidth(tickTexts(y, 8));
  const items = [
    { name: 'median', color: MEDIAN_COLOR, mark: 'line' },
    { name: 'mean', color: MEAN_COLOR, mark: 'dashed' },
    { name: 'outliers', color: OUTLIER_COLOR, mark: 'circle' },
  ];
  const legendW = legendWidth(items.map((i) => i.name));
  const fitWidth = (options.width ?? 800) - left - 14 - legendW - 24;
  let step = options.channelWidth ?? Math.min(60, Math.max(6, fitWidth / Math.max(1, C)));
  const rotate = plot.rotate_labels ?? C >= 640;
  const labelRoom = rotate ? textWidth(String(C), 10) + 14 : 0;
  // Plot width follows the channels (a few channels give a narrow chart, as the original's
  // C // 2-inch figure); at least 200 px.
  const w = Math.max(200, step * Math.max(1, C));
  step = w / Math.max(1, C);
  const width = Math.ceil(left + 14 + w + legendW + 24);

  let root = target;
  if (String(target.tagName || target.nodeName).toLowerCase() !== 'svg') {
    const doc = target.ownerDocument;
    root = doc.createElement('div');
    root.setAttribute('class', 'ptq-scroll');
    root.setAttribute('style', 'overflow-x:auto;max-width:100%');
    target.appendChild(root);
  }
  const svg = chartRoot(root, width, height, 'boxplot');
  background(svg, width, height);
  const title = options.title ?? plot.name;
  const top = drawTitle(svg, title, left + 14 + Math.min(w, 600) / 2) + 8;
  const margin = { top, bottom: 48 + labelRoom, left: left + 14 };
  const h = Math.max(40, height - margin.top - margin.bottom);
  y.range([h, 0]);
  // Channel i (0-based) is centred at (i + 0.5) * step; its label is i + 1 as in the original.
  const x = scaleLinear().domain([0.5, C + 0.5]).range([0, w]);
  const cx = (i) => r2((i + 0.5) * step);
  const every = Math.max(1, Math.ceil((rotate ? 14 : textWidth(String(C), 10) + 8) / step));
  const tickValues = [];
  for (let k = 1; k <= C; k += every) tickValues.push(k);
  const g = svg.append('g').attr('class', 'plot').attr('transform', `translate(${margin.left},${margin.top})`);
  drawAxes(g, x, y, w, h, { xLabel: 'channel', yLabel: 'Range of data in channel', xTickValues: tickValues,
    xFormat: (v) => String(v), yTicks: 8, rotateX: rotate, xLabelOffset: 34 + labelRoom, yLabelOffset: left });

  // The picked channel sits on a band behind the marks (drawn first).
  const selected = Number.isInteger(options.selected) && options.selected >= 0 && options.selected < C ? options.selected : null;
  if (selected !== null) {
    g.append('rect').attr('class', 'selected-channel').attr('x', r2(selected * step)).attr('y', 0)
      .attr('width', r2(step)).attr('height', h).attr('fill', '#e3e3e3');
  }

  const half = r2(Math.max(1, step * 0.25));
  let boxes = '';
  let whiskers = '';
  let medians = '';
  let means = '';
  let outliers = '';
  const R = 1.4;
  channels.forEach((c, i) => {
    if (!c.valid) return;
    const m = cx(i);
    const [q1, q3] = [r2(y(c.q1)), r2(y(c.q3))];
    boxes += `M${r2(m - half)},${q3}H${r2(m + half)}V${q1}H${r2(m - half)}Z`;
    if (Number.isFinite(c.whisker_low) && Number.isFinite(c.whisker_high)) {
      const [lo, hi] = [r2(y(c.whisker_low)), r2(y(c.whisker_high))];
      const cap = r2(half / 2);
      whiskers += `M${m},${q1}V${lo}M${r2(m - cap)},${lo}H${r2(m + cap)}M${m},${q3}V${hi}M${r2(m - cap)},${hi}H${r2(m + cap)}`;
    }
    medians += `M${r2(m - half)},${r2(y(c.median))}H${r2(m + half)}`;
    if (Number.isFinite(c.mean)) means += `M${r2(m - half)},${r2(y(c.mean))}H${r2(m + half)}`;
    // Outliers on the same pixel row look identical: draw one (keeps thousands of channels light).
    const rows = new Set();
    for (const o of c.outliers) {
      const py = r2(y(o));
      if (rows.has(Math.round(py))) continue;
      rows.add(Math.round(py));
      outliers += `M${r2(m - R)},${py}a${R},${R} 0 1,0 ${2 * R},0a${R},${R} 0 1,0 ${-2 * R},0`;
    }
  });
  const marks = g.append('g').attr('class', 'marks');
  marks.append('path').attr('class', 'whiskers').attr('fill', 'none').attr('stroke', '#000').attr('d', whiskers);
  marks.append('path').attr('class', 'boxes').attr('fill', 'none').attr('stroke', '#000').attr('d', boxes);
  marks.append('path').attr('class', 'medians').attr('stroke', MEDIAN_COLOR).attr('stroke-width', 1).attr('d', medians);
  marks.append('path').attr('class', 'means').attr('stroke', MEAN_COLOR).attr('stroke-width', 1).attr('stroke-dasharray', '3,2').attr('d', means);
  marks.append('path').attr('class', 'outliers').attr('fill', OUTLIER_COLOR).attr('stroke', OUTLIER_COLOR)
    .attr('stroke-width', 0.5).attr('d', outliers);
  drawLegend(svg, items, left + 14 + w + 16, margin.top + 6);

  const channelAt = (px) => {
    const i = Math.floor(px / step);
    return i >= 0 && i < C ? i : null;
  };
  const zoom = (factor) => {
    const next = { ...options, channelWidth: Math.min(80, Math.max(1, step * factor)) };
    if (root !== target) target.removeChild(root);
    return renderBoxplot(target, plot, next);
  };
  if (interactive && C > 0) {
    const readout = g.append('text').attr('class', 'readout').attr('x', 0).attr('y', -4).attr('font-size', 10);
    const pxOf = (el, event) => {
      const rect = el.getBoundingClientRect();
      return (event.clientX - rect.left) * (w / (rect.width || w));
    };
    g.append('rect').attr('class', 'overlay').attr('width', w).attr('height', h).attr('fill', 'none').attr('pointer-events', 'all')
      .on('mousemove', function (event) {
        const i = channelAt(pxOf(this, event));
        const c = i === null ? null : channels[i];
        readout.text(c ? `channel ${i + 1}: median ${formatValue(c.median)}  mean ${formatValue(c.mean)}  Q1 ${formatValue(c.q1)}  Q3 ${formatValue(c.q3)}  outliers ${c.outlierCount}` : '');
      })
      .on('click', function (event) {
        const i = channelAt(pxOf(this, event));
        if (i !== null && options.onChannel) options.onChannel(i, plot.channels[i]);
      })
      .on('wheel', (event) => {
        if (!event.ctrlKey) return;
        event.preventDefault();
        zoom(event.deltaY < 0 ? 1.25 : 0.8);
      });
  }
  if (interactive && C > 0 && options.onChannel) keyboardPicker(svg, g, { C, step, h, selected, describe: (i) =>
    `channel ${i + 1} of ${C}${channels[i].valid ? `, median ${formatValue(channels[i].median)}` : ''}`,
  pick: (i) => options.onChannel(i, plot.channels[i]) });
  return { svg: svg.node(), channelCount: C, channelWidth: step, channelAt, zoom };
}
