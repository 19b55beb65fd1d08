import { describe, it, expect } from 'vitest';
import { heatScale, worseDirection, distinctDigits, NAN_COLOR, interpolateHeat } from '../../../web/charts/heat_scale.mjs';
import { formatValue } from '../../../web/charts/format.mjs';
import { renderHeatLegend } from '../../../web/charts/legend.mjs';
import { renderIn, texts } from './util.mjs';

describe('heatScale', () => {
  it('knows the worse direction of each metric (§4 optimal functions)', () => {
    expect(worseDirection('cosine-similarity')).toBe('lower');
    expect(worseDirection('sqnr')).toBe('lower');
    expect(worseDirection('mse')).toBe('higher');
    expect(worseDirection('mre')).toBe('higher');
    expect(worseDirection('chebyshev')).toBe('higher');
    expect(() => heatScale('cosine', [1])).toThrow(/unknown metric "cosine"/);
  });

  it('on the range scale, makes the lowest cosine the hottest and the highest the coolest', () => {
    const s = heatScale('cosine-similarity', [0.9, 0.95, 1.0], { scale: 'range' });
    expect(s.worseness(0.9)).toBe(1);
    expect(s.worseness(1.0)).toBe(0);
    expect(s.worseness(0.95)).toBeCloseTo(0.5, 12);
    expect(s.color(0.9)).toBe(interpolateHeat(1));
    expect(s.color(1.0)).toBe(interpolateHeat(0));
    expect(s.legend).toMatchObject({ title: 'cosine-similarity', direction: 'lower is worse', domain: [0.9, 1], worst: 0.9, best: 1, scale: 'range' });
  });

  it('colours cosine on its fixed scale by default: a 1e-5 loss stays pale, 0.999 is mid-scale, 0.9 and below the worst', () => {
    // The example's sweep: every cosine between 0.999987 and 0.9999945 (a range scale paints the first dark red).
    const s = heatScale('cosine-similarity', [0.999987, 0.9999945]);
    expect(s.legend.scale).toBe('fixed');
    // Position = (log10(1 − cos) + 6) / 5: 1 − 0.999987 = 1.3e-5 -> (log10(1.3e-5) + 6) / 5 = (-4.886 + 6) / 5 = 0.2228.
    expect(s.worseness(0.999987)).toBeCloseTo(0.2228, 4);
    expect(s.worseness(0.9999945)).toBeCloseTo((Math.log10(5.5e-6) + 6) / 5, 9);
    expect(s.worseness(0.999)).toBeCloseTo(0.6, 12); // 1e-3: three of five decades
    expect(s.worseness(0.9)).toBeCloseTo(1, 12);
    expect(s.worseness(0.5)).toBe(1);
    expect(s.worseness(1)).toBe(0);
    expect(s.legend).toMatchObject({ best: 0.999999, worst: 0.9, domain: [0.999987, 0.9999945] });
    expect(s.legend.best).toBeCloseTo(1 - 1e-6, 15);
    expect(s.legend.shown.map((t) => Math.round(t * 1e4) / 1e4)).toEqual([0.1481, 0.2228]);
    expect(s.legend.ticks.map((t) => t.value)).toEqual([0.99999, 0.9999, 0.999, 0.99]);
    expect(s.legend.note).toMatch(/^fixed scale/);
    // sqnr in dB: 60 best, 10 worst; mre on a log axis 1e-4 … 1; mse has no fixed reference.
    expect(heatScale('sqnr', [35]).worseness(35)).toBeCloseTo(0.5, 12);
    expect(heatScale('mre', [0.01]).worseness(0.01)).toBeCloseTo(0.5, 12);
    expect(heatScale('mse', [1e-4, 0.02]).legend.scale).toBe('range');
    expect(heatScale('mse', [1e-4, 0.02], { scale: 'fixed' }).legend.scale).toBe('range');
    expect(() => heatScale('mse', [1], { scale: 'bands' })).toThrow(/unknown scale 'bands'/);
  });

  it('makes the highest mse the hottest; values outside the domain clamp', () => {
    const s = heatScale('mse', [0.001, 0.002, 0.005]);
    expect(s.worseness(0.005)).toBe(1);
    expect(s.worseness(0.001)).toBe(0);
    expect(s.worseness(0.003)).toBeCloseTo(0.5, 12);
    expect(s.worseness(1)).toBe(1);
    expect(s.legend.direction).toBe('higher is worse');
  });

  it('handles the schema strings: NaN grey, sqnr +inf best, mse +inf worst', () => {
    const sqnr = heatScale('sqnr', [10, 20, 'inf', 'nan']);
    expect(sqnr.legend.domain).toEqual([10, 20]);
    expect(sqnr.worseness('inf')).toBe(0);
    expect(sqnr.worseness(10)).toBe(1);
    expect(sqnr.color('nan')).toBe(NAN_COLOR);
    const mse = heatScale('mse', [0.1, 'inf']);
    expect(mse.worseness('inf')).toBe(1);
    expect(mse.worseness('-inf')).toBe(0);
  });

  it('puts a single distinct value, or no finite value, mid-scale', () => {
    expect(heatScale('mse', [0.2, 0.2]).worseness(0.2)).toBe(0.5);
    expect(heatScale('mse', ['nan']).worseness(3)).toBe(0.5);
  });

  it('takes very long value lists', () => {
    const values = Array.from({ length: 300000 }, (_, i) => i);
    expect(heatScale('mse', values).legend.domain).toEqual([0, 299999]);
  });

  it('spreads values logarithmically on request', () => {
    const s = heatScale('mse', [1e-6, 1e-4, 1e-2], { scale: 'log' });
    expect(s.legend.scale).toBe('log');
    expect(s.worseness(1e-4)).toBeCloseTo(0.5, 12);
    expect(heatScale('mse', [0, 1e-2], { scale: 'log' }).legend.scale).toBe('range');
  });

  it('prints two values with the fewest digits (at least 4) that tell them apart', () => {
    // 5 digits print both as 0.99999; 6 give 0.999987 and 0.999995.
    expect(distinctDigits(0.999987, 0.9999945)).toBe(6);
    expect(distinctDigits(0.99998712, 0.99998734)).toBe(7);
    expect(formatValue(0.99998734, distinctDigits(0.99998712, 0.99998734))).toBe('0.9999873');
    expect(distinctDigits(1e-4, 0.02)).toBe(4);
    expect(distinctDigits(3, 3)).toBe(4);
  });
});

describe('renderHeatLegend', () => {
  it('states the direction and the range ends, with digits enough to tell them apart (at least the tables\' 6)', () => {
    const close = renderIn(renderHeatLegend, heatScale('cosine-similarity', [0.999987, 0.9999945], { scale: 'range' }).legend).svg;
    expect(texts(close, 'text.best')).toEqual(['better 0.999995']);
    expect(texts(close, 'text.worst')).toEqual(['worse 0.999987']);
    const { svg } = renderIn(renderHeatLegend, heatScale('cosine-similarity', [0.9, 0.99], { scale: 'range' }).legend);
    expect(texts(svg, '.legend-title')).toEqual(['cosine-similarity (lower is worse)']);
    expect(texts(svg, 'text.best')).toEqual(['better 0.99']);
    expect(texts(svg, 'text.worst')).toEqual(['worse 0.9']);
    const ramp = [...svg.querySelectorAll('.ramp rect')].map((r) => r.getAttribute('fill'));
    expect(ramp[0]).toBe(interpolateHeat(0));
    expect(ramp[ramp.length - 1]).toBe(interpolateHeat(1));
    expect(svg.querySelector('.nan rect').getAttribute('fill')).toBe(NAN_COLOR);
  });
  it('draws a fixed scale with its reference values, where the values shown lie, and what they are', () => {
    const { svg } = renderIn(renderHeatLegend, heatScale('cosine-similarity', [0.999987, 0.9999945]).legend, { width: 260 });
    expect(svg.getAttribute('data-scale')).toBe('fixed');
    const labels = texts(svg, '.tick-label');
    expect(labels[0]).toBe('0.999999');
    expect(labels[1]).toBe('0.9');
    expect(labels.length).toBeGreaterThan(2); // some of the decades between the ends
    expect(svg.querySelectorAll('.ticks line').length).toBe(4);
    expect(texts(svg, '.shown-values')).toEqual(['shown: 0.999995 … 0.999987']);
    // The bar over the ramp spans the values' positions: 4 + 0.1481 … 0.2228 of the ramp (260 − 8 − 46 = 206 px).
    const bar = svg.querySelector('rect.shown');
    expect(Number(bar.getAttribute('x'))).toBeCloseTo(4 + 0.1481 * 206, 0);
    expect(Number(bar.getAttribute('width'))).toBeCloseTo((0.2228 - 0.1481) * 206, 0);
  });
  it('works from the plain legend shape of the app state', () => {
    const { svg } = renderIn(renderHeatLegend, { title: 'mse', direction: 'higher is worse', domain: [0.5, 2] });
    expect(texts(svg, 'text.best')).toEqual(['better 0.5']);
    expect(texts(svg, 'text.worst')).toEqual(['worse 2']);
  });
});
