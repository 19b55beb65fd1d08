import { describe, it, expect } from 'vitest';
import { MIN_BAR_PX, renderHistogram, THRESHOLD_COLOR, MAX_ABS_COLOR } from '../../../web/charts/histogram.mjs';
import { renderIn, texts, tickPositions } from './util.mjs';

// Hand-made bins: 4 bins over [0, 2] and an error histogram over [-0.5, 0.5].
const plot = {
  kind: 'node_output', title: 'Conv_2 output:317 distribution\ncosine-similarity:0.99812',
  threshold: 1.5, max_abs: 1.8, cosine: 0.99812,
  histograms: [
    { label: 'Before calibration', color: '#99ffbb', edges: [0, 0.5, 1, 1.5, 2], counts: [3, 0, 5, 1], zeros_excluded: 2, non_finite: 0 },
    { label: 'After calibration', color: '#FA8072', edges: [0, 0.5, 1, 1.5, 2], counts: [2, 1, 4, 2], zeros_excluded: 0, non_finite: 0 },
    { label: 'Quantization error distribution', color: '#33A1C9', edges: [-0.5, 0, 0.5], counts: [6, 3], zeros_excluded: 0, non_finite: 1 },
  ],
};

// The bins of a step-outline path: [[x0, x1, top y], ...] ("M x0,base (V top H x1)+ V base Z").
function steps(d) {
  const out = [];
  for (const sub of d.split('M').slice(1)) {
    const [start, rest] = [sub.slice(0, sub.indexOf('V')), sub.slice(sub.indexOf('V'))];
    let x0 = Number(start.split(',')[0]);
    for (const m of rest.matchAll(/V([-\d.]+)H([-\d.]+)/g)) {
      out.push([x0, Number(m[2]), Number(m[1])]);
      x0 = Number(m[2]);
    }
  }
  return out;
}

// Pixel of data value v on the x axis, interpolated from the axis' own tick marks.
function xPixel(svg, v) {
  const t = Object.entries(tickPositions(svg, 'axis-x')).map(([l, p]) => [Number(l.replace('−', '-')), p]);
  const [[a, pa], [b, pb]] = [t[0], t[t.length - 1]];
  return pa + ((v - a) * (pb - pa)) / (b - a);
}

describe('renderHistogram', () => {
  it('has the title lines, axis labels and legend of §6.2', () => {
    const { svg } = renderIn(renderHistogram, plot);
    expect(texts(svg, '.title tspan')).toEqual(['Conv_2 output:317 distribution', 'cosine-similarity:0.99812']);
    expect(texts(svg, '.axis-label-x')).toEqual(['data range']);
    expect(texts(svg, '.axis-label-y')).toEqual(['Total number of data']);
    expect(texts(svg, '.legend-item text')).toEqual(['Before calibration', 'After calibration', 'Quantization error distribution',
      'threshold 1.5', 'max |x| 1.8']);
  });

  it('draws one path per series in drawing order with the original colours, a step per non-empty bin', () => {
    const { svg } = renderIn(renderHistogram, plot);
    const bars = [...svg.querySelectorAll('path.bars')];
    expect(bars.map((b) => b.getAttribute('fill'))).toEqual(['#99ffbb', '#FA8072', '#33A1C9']);
    // one outline per run of adjacent non-empty bins: [3,0,5,1] -> 2, [2,1,4,2] -> 1, [6,3] -> 1
    expect(bars.map((b) => (b.getAttribute('d').match(/Z/g) || []).length)).toEqual([2, 1, 1]);
    expect(bars.map((b) => steps(b.getAttribute('d')).length)).toEqual([3, 4, 2]);
    const yt = tickPositions(svg, 'axis-y');
    const yOf = (c) => yt['0'] + (c * (yt['6'] - yt['0'])) / 6;
    const xs = plot.histograms[1].edges.map((v) => xPixel(svg, v));
    steps(bars[1].getAttribute('d')).forEach(([x0, x1, top], i) => {
      expect(x0).toBeCloseTo(xs[i], 1);
      expect(x1).toBeCloseTo(xs[i + 1], 1);
      expect(top).toBeCloseTo(yOf(plot.histograms[1].counts[i]), 1);
    });
    // drawing order: threshold line, the series, then the max-abs marker
    const marks = [...svg.querySelector('.marks').children].map((e) => e.getAttribute('class'));
    expect(marks).toEqual(['threshold', 'bars', 'bars', 'bars', 'max-abs']);
  });

  it('puts bar edges, the threshold line and the max |x| triangle at their x values', () => {
    const { svg } = renderIn(renderHistogram, plot);
    const line = svg.querySelector('line.threshold');
    expect(line.getAttribute('stroke')).toBe(THRESHOLD_COLOR);
    expect(line.getAttribute('stroke-dasharray')).toBeTruthy();
    expect(Number(line.getAttribute('x1'))).toBeCloseTo(xPixel(svg, 1.5), 1);
    const tri = svg.querySelector('path.max-abs');
    expect(tri.getAttribute('fill')).toBe(MAX_ABS_COLOR);
    const apex = /^M([-\d.]+),/.exec(tri.getAttribute('d'));
    expect(Number(apex[1])).toBeCloseTo(xPixel(svg, 1.8), 1);
    // bin 2 of "Before calibration" ([1, 1.5], count 5) is its second drawn bar (bin 1 is empty)
    const third = svg.querySelector('path.bars').getAttribute('d').split('M')[2];
    const nums = third.match(/-?[\d.]+/g).map(Number);
    expect(nums[0]).toBeCloseTo(xPixel(svg, 1), 1);
    expect(nums[3]).toBeCloseTo(xPixel(svg, 1.5), 1);
    // count 5 is the tallest bar: its top is the y pixel of 5 on the y axis
    const yt = tickPositions(svg, 'axis-y');
    expect(nums[2]).toBeCloseTo(yt['0'] + (5 * (yt['5'] - yt['0'])) / 5, 1);
  });

  it('extends the x range to the threshold and the marker', () => {
    const { svg } = renderIn(renderHistogram, { ...plot, threshold: 3, max_abs: -1 });
    const xt = Object.keys(tickPositions(svg, 'axis-x')).map((l) => Number(l.replace('−', '-')));
    expect(Math.min(...xt)).toBeLessThanOrEqual(-1);
    expect(Math.max(...xt)).toBeGreaterThanOrEqual(3);
  });

  it('has no threshold line for null / non-finite thresholds', () => {
    for (const threshold of [null, 'nan', 'inf']) {
      const { svg } = renderIn(renderHistogram, { ...plot, threshold });
      expect(svg.querySelector('line.threshold')).toBe(null);
    }
  });

  it('notes excluded zeros and non-finite values', () => {
    const { svg } = renderIn(renderHistogram, plot);
    expect(texts(svg, 'text.note')).toEqual(['Before calibration: 2 zeros not counted',
      'Quantization error distribution: 0 zeros, 1 non-finite not counted']);
  });

  it('log-y puts powers of ten on the axis and keeps count-1 bars visible', () => {
    const counts = [1, 10, 100, 1000];
    const { svg } = renderIn(renderHistogram, { title: 't', threshold: null, max_abs: 2,
      histograms: [{ label: 'Input data distribution', color: '#99ffbb', edges: [0, 0.5, 1, 1.5, 2], counts }] }, { logY: true });
    const labels = texts(svg, '.axis-y .tick text').filter(Boolean);
    expect(labels).toEqual(expect.arrayContaining(['1', '10', '100', '1000']));
    const yt = tickPositions(svg, 'axis-y');
    const d = svg.querySelector('path.bars').getAttribute('d');
    const tops = steps(d).map((b) => b[2]);
    counts.forEach((c, i) => expect(tops[i]).toBeCloseTo(yt[String(c)], 1));
    const base = Number(/,([-\d.]+)V/.exec(d)[1]);
    expect(base).toBeGreaterThan(tops[0]);
  });

  it('finds the bin of a value like numpy (half-open, last closed) and toggles series', () => {
    const { chart, svg } = renderIn(renderHistogram, plot);
    expect(chart.binAt('Before calibration', 0.5)).toMatchObject({ index: 1, count: 0 });
    expect(chart.binAt('Before calibration', 2)).toMatchObject({ index: 3, count: 1 });
    expect(chart.binAt('Before calibration', 2.01)).toBe(null);
    chart.setVisible('After calibration', false);
    expect(svg.querySelector('path.bars[data-series="After calibration"]').getAttribute('display')).toBe('none');
  });

  it('keeps a sub-pixel spike one pixel wide', () => {
    const { svg } = renderIn(renderHistogram, { title: 't', threshold: null, max_abs: 100,
      histograms: [{ label: 'e', color: '#33A1C9', edges: [0, 0.001], counts: [50] }] });
    const d = svg.querySelector('path.bars').getAttribute('d');
    const s = steps(d);
    expect(s.length).toBe(1);
    expect(s[0][1] - s[0][0]).toBeCloseTo(1, 5);
  });

  it('sums adjacent bins into bars at least MIN_BAR_PX wide when the bins are narrower, and says so', () => {
    // 1024 bins over [0, 1024), every 7th holding 1..3 values: single bins would be ~0.4 px hairlines.
    const counts = Array.from({ length: 1024 }, (_, i) => (i % 7 === 0 ? 1 + (i % 3) : 0));
    const edges = Array.from({ length: 1025 }, (_, i) => i);
    const { svg } = renderIn(renderHistogram, { title: 't', threshold: null, max_abs: 'nan',
      histograms: [{ label: 'Before calibration', color: '#99ffbb', edges, counts }] });
    const path = svg.querySelector('path.bars');
    const f = Number(path.getAttribute('data-bins-per-bar'));
    const bars = steps(path.getAttribute('d'));
    // The plot is 640 − margins ≈ 490 px wide: 1024 bins of 0.48 px; 8 bins per bar make 3.8 px bars.
    expect(f).toBe(8);
    for (const [x0, x1] of bars) expect(x1 - x0).toBeGreaterThanOrEqual(MIN_BAR_PX - 0.01);
    expect(bars).toHaveLength(1024 / 8); // every group of 8 holds a multiple of 7
    // The tallest bar holds the largest sum of 8 adjacent bins, which the y axis reaches.
    const sums = Array.from({ length: 128 }, (_, k) => counts.slice(8 * k, 8 * k + 8).reduce((a, b) => a + b, 0));
    const yt = tickPositions(svg, 'axis-y');
    const top = Math.min(...bars.map((b) => b[2]));
    const ticks = Object.keys(yt).map(Number);
    const step = ticks[1] - ticks[0];
    expect(top).toBeCloseTo(yt['0'] + (Math.max(...sums) * (yt[String(step)] - yt['0'])) / step, 1);
    expect(texts(svg, 'text.note')).toEqual(['bars of 8 adjacent bins (of 1024), counts summed']);
  });

  it('draws a subset of series on their own x range, without markers outside it', () => {
    const { svg } = renderIn(renderHistogram, plot, { series: ['Quantization error distribution'] });
    expect(texts(svg, '.legend-item text')).toEqual(['Quantization error distribution']);
    expect(svg.querySelector('line.threshold')).toBe(null);
    expect(svg.querySelector('path.max-abs')).toBe(null);
    const xs = Object.keys(tickPositions(svg, 'axis-x')).map((l) => Number(l.replace('−', '-')));
    expect(Math.min(...xs)).toBeGreaterThanOrEqual(-0.5);
    expect(Math.max(...xs)).toBeLessThanOrEqual(0.5);
  });

  it('is deterministic', () => {
    expect(renderIn(renderHistogram, plot).text).toBe(renderIn(renderHistogram, plot).text);
  });
});
