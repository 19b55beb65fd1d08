import { describe, it, expect } from 'vitest';
import { renderBoxplot, MEDIAN_COLOR, MEAN_COLOR } from '../../../web/charts/boxplot.mjs';
import { renderIn, texts, tickPositions, pointerEvent } from './util.mjs';

// Box statistics of small channels computed by hand (numpy linear percentiles, matplotlib whiskers):
// [1,2,3,4,100]: q1 2, median 3, q3 4, IQR 2 -> whiskers within [-1, 7]: 1 and 4; outlier 100; mean 22.
// [0,0,0,0]: everything 0.
const channels = [
  { count: 5, mean: 22, q1: 2, median: 3, q3: 4, whisker_low: 1, whisker_high: 4, outlier_count: 1, outliers: [100] },
  { count: 4, mean: 0, q1: 0, median: 0, q3: 0, whisker_low: 0, whisker_high: 0, outlier_count: 0, outliers: [] },
  { count: 3, mean: 'nan', q1: 'nan', median: 'nan', q3: 'nan', whisker_low: 'nan', whisker_high: 'nan', outlier_count: 0, outliers: [] },
];
const plot = { name: 'conv1.weight_HzCalibration', kind: 'weight', shape: [3, 5], axis: 0, rotate_labels: false, channels };

function yPixel(svg, v) {
  const t = Object.entries(tickPositions(svg, 'axis-y')).map(([l, p]) => [Number(l.replace('−', '-')), p]);
  const [[a, pa], [b, pb]] = [t[0], t[t.length - 1]];
  return pa + ((v - a) * (pb - pa)) / (b - a);
}

describe('renderBoxplot', () => {
  it('has the labels of §7 and 1-based channel ticks', () => {
    const { svg } = renderIn(renderBoxplot, plot);
    expect(texts(svg, '.axis-label-x')).toEqual(['channel']);
    expect(texts(svg, '.axis-label-y')).toEqual(['Range of data in channel']);
    expect(texts(svg, '.axis-x .tick text')).toEqual(['1', '2', '3']);
    expect(texts(svg, '.title tspan')).toEqual(['conv1.weight_HzCalibration']);
  });

  it('draws a box, whiskers, red median and blue dashed mean per valid channel; NaN channels are skipped', () => {
    const { svg } = renderIn(renderBoxplot, plot);
    const d = (cls) => svg.querySelector(`path.${cls}`).getAttribute('d');
    expect((d('boxes').match(/Z/g) || []).length).toBe(2);
    expect((d('medians').match(/M/g) || []).length).toBe(2);
    expect((d('means').match(/M/g) || []).length).toBe(2);
    expect((d('whiskers').match(/M/g) || []).length).toBe(8);
    expect(svg.querySelector('path.medians').getAttribute('stroke')).toBe(MEDIAN_COLOR);
    expect(svg.querySelector('path.means').getAttribute('stroke')).toBe(MEAN_COLOR);
    expect(svg.querySelector('path.means').getAttribute('stroke-dasharray')).toBeTruthy();
    expect(svg.querySelector('path.medians').getAttribute('stroke-dasharray')).toBe(null);
    // one outlier circle (two arcs)
    expect((d('outliers').match(/a/g) || []).length).toBe(2);
  });

  it('puts the first box between Q1 and Q3, the median and the outlier at their y values, centred on tick 1', () => {
    const { svg } = renderIn(renderBoxplot, plot);
    const box = svg.querySelector('path.boxes').getAttribute('d').split('M')[1].match(/-?[\d.]+/g).map(Number);
    // M x0,q3 H x1 V q1 H x0 Z
    expect(box[1]).toBeCloseTo(yPixel(svg, 4), 1);
    expect(box[3]).toBeCloseTo(yPixel(svg, 2), 1);
    expect((box[0] + box[2]) / 2).toBeCloseTo(tickPositions(svg, 'axis-x')['1'], 1);
    const med = svg.querySelector('path.medians').getAttribute('d').match(/-?[\d.]+/g).map(Number);
    expect(med[1]).toBeCloseTo(yPixel(svg, 3), 1);
    const out = svg.querySelector('path.outliers').getAttribute('d').match(/-?[\d.]+/g).map(Number);
    expect(out[1]).toBeCloseTo(yPixel(svg, 100), 1);
  });

  it('widens and rotates labels for hundreds of channels, in a scrolling container', () => {
    const many = { ...plot, rotate_labels: true, channels: Array.from({ length: 700 }, () => channels[0]) };
    const { holder, svg, chart } = renderIn(renderBoxplot, many);
    expect(holder.querySelector('div.ptq-scroll')).not.toBe(null);
    expect(chart.channelWidth).toBeGreaterThanOrEqual(6);
    expect(Number(svg.getAttribute('width'))).toBeGreaterThanOrEqual(700 * chart.channelWidth);
    expect(svg.querySelector('.axis-x .tick text').getAttribute('transform')).toBe('rotate(-90)');
    expect((svg.querySelector('path.boxes').getAttribute('d').match(/Z/g) || []).length).toBe(700);
    const zoomed = chart.zoom(2);
    expect(zoomed.channelWidth).toBeCloseTo(chart.channelWidth * 2, 5);
    expect(holder.querySelectorAll('svg').length).toBe(1);
  });

  it('reports the clicked channel', () => {
    const got = [];
    const { svg, chart, document } = renderIn(renderBoxplot, plot, { onChannel: (i, c) => got.push([i, c.median]) });
    const overlay = svg.querySelector('rect.overlay');
    overlay.dispatchEvent(pointerEvent(document, 'click', chart.channelWidth * 1.5));
    overlay.dispatchEvent(pointerEvent(document, 'click', chart.channelWidth * 0.2));
    expect(got).toEqual([[1, 0], [0, 3]]);
    expect(chart.channelAt(chart.channelWidth * 3.5)).toBe(null);
  });

  it('draws outliers on the same pixel row once', () => {
    const near = { ...plot, channels: [{ ...channels[0], outlier_count: 3, outliers: [100, 100.000001, 50] }] };
    const { svg } = renderIn(renderBoxplot, near);
    expect((svg.querySelector('path.outliers').getAttribute('d').match(/M/g) || []).length).toBe(2);
  });

  it('is deterministic', () => {
    expect(renderIn(renderBoxplot, plot).text).toBe(renderIn(renderBoxplot, plot).text);
  });
});
