import { describe, it, expect } from 'vitest';
import { renderAccError, accErrorFigures, accErrorYLabel, runningMean, averagedFigure } from '../../../web/charts/acc_error.mjs';
import { renderIn, texts, tickPositions, subpaths, segments, pointerEvent } from './util.mjs';

const X = ['t0', 't1', 't2', 't3', 't4', 't5', 't6'];
const figure = {
  prefix: 'weight_activation_quantized_separately', metric: 'cosine-similarity', average_mode: false,
  curves: [
    { name: 'weight_activation_calibrated', x: X, y: [1, 0.99, 'inf', 0.97, 0.96, 'nan', 0.95] },
    { name: 'only_activation_calibrated', x: X, y: [1, 0.995, 0.99, 0.985, 0.98, 0.975, 0.97] },
    { name: 'only_weight_calibrated', x: X, y: [1, 1, 1, 0.999, 0.999, 0.998, 0.998] },
  ],
};

describe('renderAccError', () => {
  it('draws one line per curve with the title, axis labels and legend of §5.5', () => {
    const { svg } = renderIn(renderAccError, figure);
    expect(texts(svg, '.title tspan')).toEqual(['weight_activation_quantized_separately']);
    expect(texts(svg, '.axis-label-x')).toEqual(['node index']);
    expect(texts(svg, '.axis-label-y')).toEqual(['cosine-similarity']);
    expect(svg.querySelectorAll('path.curve').length).toBe(3);
    expect(texts(svg, '.legend-item text')).toEqual(figure.curves.map((c) => c.name));
    // x ticks are integer node indices only
    for (const label of Object.keys(tickPositions(svg, 'axis-x'))) expect(Number.isInteger(Number(label))).toBe(true);
  });

  it('splits a line at +inf and NaN and keeps an isolated point as a dot', () => {
    const { svg } = renderIn(renderAccError, figure);
    const [first, second] = svg.querySelectorAll('path.curve');
    // points 0-1 | inf | 3-4 | nan | 6 (alone)
    expect(segments(first.getAttribute('d'))).toBe(2);
    expect(subpaths(second.getAttribute('d'))).toBe(1);
    expect(segments(second.getAttribute('d'))).toBe(1);
    const dots = svg.querySelectorAll('path.isolated');
    expect(dots.length).toBe(1);
    expect(dots[0].getAttribute('data-series')).toBe('weight_activation_calibrated');
  });

  it('places points on the axes scales (x = index, y = value)', () => {
    const { svg } = renderIn(renderAccError, figure);
    const xt = tickPositions(svg, 'axis-x');
    const yt = tickPositions(svg, 'axis-y');
    const step = xt['1'] - xt['0'];
    const ys = Object.entries(yt).map(([l, p]) => [Number(l), p]).sort((a, b) => a[0] - b[0]);
    const [[v0, p0], [v1, p1]] = [ys[0], ys[ys.length - 1]];
    const py = (v) => p0 + ((v - v0) * (p1 - p0)) / (v1 - v0);
    const d = svg.querySelector('path.curve[data-series="only_activation_calibrated"]').getAttribute('d');
    const pts = d.slice(1).split('L').map((p) => p.split(',').map(Number));
    expect(pts.length).toBe(7);
    figure.curves[1].y.forEach((v, i) => {
      expect(pts[i][0]).toBeCloseTo(xt['0'] + i * step, 1);
      expect(pts[i][1]).toBeCloseTo(py(v), 1);
    });
  });

  it('grows to fit a long legend', () => {
    const many = { ...figure, curves: Array.from({ length: 50 }, (_, i) => ({ name: `Conv_${i}`, x: X, y: X.map(() => 1) })) };
    const { svg } = renderIn(renderAccError, many);
    const items = svg.querySelectorAll('.legend-item');
    expect(items.length).toBe(50);
    const legendTop = Number(/translate\([-\d.]+,([-\d.]+)\)/.exec(svg.querySelector('.legend').getAttribute('transform'))[1]);
    expect(legendTop + 49 * 16).toBeLessThan(Number(svg.getAttribute('height')));
  });

  it('is deterministic', () => {
    expect(renderIn(renderAccError, figure).text).toBe(renderIn(renderAccError, figure).text);
  });

  it('marks running-mean figures on the y label', () => {
    const { svg } = renderIn(renderAccError, { ...figure, metric: 'mse', average_mode: true });
    expect(texts(svg, '.axis-label-y')).toEqual(['mse (running mean)']);
    expect(accErrorYLabel({ metric: 'sqnr', average_mode: false })).toBe('sqnr');
  });

  it('toggles series from the legend and hides them from the crosshair', () => {
    const { svg, chart, document } = renderIn(renderAccError, figure);
    const item = svg.querySelector('.legend-item[data-series="only_weight_calibrated"]');
    item.dispatchEvent(new document.defaultView.Event('click'));
    expect(svg.querySelector('path.curve[data-series="only_weight_calibrated"]').getAttribute('display')).toBe('none');
    chart.showCrosshair(2);
    const lines = texts(svg, '.crosshair-label tspan');
    expect(lines[0]).toBe('#2 t2');
    expect(lines.slice(1)).toEqual(['weight_activation_calibrated: inf', 'only_activation_calibrated: 0.99']);
    item.dispatchEvent(new document.defaultView.Event('click'));
    expect(svg.querySelector('path.curve[data-series="only_weight_calibrated"]').getAttribute('display')).toBe(null);
  });

  it('shows the crosshair at the index under the pointer, with the node name, and focuses on click', () => {
    const focused = [];
    const nodes = Object.fromEntries(X.map((t, i) => [t, `Conv_${i}`]));
    const { svg, document } = renderIn(renderAccError, figure, { nodeOf: (t) => nodes[t], onFocus: (n, info) => focused.push([n, info.index]) });
    const xt = tickPositions(svg, 'axis-x');
    const step = xt['1'] - xt['0'];
    const overlay = svg.querySelector('rect.overlay');
    overlay.dispatchEvent(pointerEvent(document, 'mousemove', xt['0'] + 3 * step + step * 0.3));
    const rule = svg.querySelector('.crosshair line');
    expect(svg.querySelector('.crosshair').getAttribute('display')).toBe(null);
    expect(Number(rule.getAttribute('x1'))).toBeCloseTo(xt['0'] + 3 * step, 1);
    expect(texts(svg, '.crosshair-label tspan')[0]).toBe('#3 t3 (Conv_3)');
    overlay.dispatchEvent(pointerEvent(document, 'click', xt['0'] + 5 * step - step * 0.3));
    expect(focused).toEqual([['Conv_5', 5]]);
  });

  it('renders no listeners or crosshair when not interactive (CLI)', () => {
    const { svg } = renderIn(renderAccError, figure, { interactive: false });
    expect(svg.querySelector('.crosshair')).toBe(null);
    expect(svg.querySelector('rect.overlay')).toBe(null);
  });
});

describe('accErrorFigures', () => {
  const result = {
    acc_error: {
      partial_qmodel_0: { label: 'partial_qmodel_0', x: ['a'], y: [1] },
      'non_quantize_node_accumulate_err_of_partial_qmodel/partial_qmodel_0': { label: 'partial_qmodel_0', x: ['a'], y: [0.5] },
    },
    acc_error_figures: [
      { prefix: 'quantize_node_accumulate_err_of_partial_qmodel', metric: 'mse', curves: ['partial_qmodel_0'] },
      { prefix: 'non_quantize_node_accumulate_err_of_partial_qmodel', metric: 'mse', curves: ['non_quantize_node_accumulate_err_of_partial_qmodel/partial_qmodel_0'] },
    ],
  };
  it('resolves curve keys and shows labels in the legend', () => {
    const figs = accErrorFigures(result);
    expect(figs.map((f) => f.curves.map((c) => [c.name, c.y[0]]))).toEqual([[['partial_qmodel_0', 1]], [['partial_qmodel_0', 0.5]]]);
    const { svg } = renderIn(renderAccError, figs[1]);
    expect(texts(svg, '.legend-item text')).toEqual(['partial_qmodel_0']);
  });
  it('names a missing curve', () => {
    expect(() => accErrorFigures({ acc_error: {}, acc_error_figures: [{ prefix: 'p', curves: ['zz'] }] })).toThrow(/curve "zz" of figure "p"/);
  });
});

describe('runningMean / averagedFigure', () => {
  it('reproduces the reference example and leaves +inf out of the mean', () => {
    // §5.4 docs example: [1.0, 0.9, 0.9, 0.8] -> [1.0, 0.95, 0.933, 0.9]
    expect(runningMean([1.0, 0.9, 0.9, 0.8])).toEqual([1, Math.fround(0.95), Math.fround(2.8 / 3), Math.fround(0.9)]);
    expect(runningMean(['inf', 2, 'inf', 4])).toEqual([Infinity, 2, 2, 3]);
    expect(runningMean([1, 'nan', 3]).map(Number.isNaN)).toEqual([false, true, true]);
  });
  it('switches a raw figure to average mode once', () => {
    const avg = averagedFigure({ ...figure, file_name: 'p_cosine-similarity.png' });
    expect(avg.average_mode).toBe(true);
    expect(avg.file_name).toBe('average_p_cosine-similarity.png');
    expect(avg.curves[2].y).toEqual(runningMean(figure.curves[2].y));
    expect(averagedFigure(avg)).toBe(avg);
  });
});
