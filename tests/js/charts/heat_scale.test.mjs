import { describe, it, expect } from 'vitest';
import { heatScale, worseDirection, NAN_COLOR, interpolateHeat } from '../../../web/charts/heat_scale.mjs';
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

  it('makes the lowest cosine the hottest and the highest the coolest', () => {
    const s = heatScale('cosine-similarity', [0.9, 0.95, 1.0]);
    expect(s.worseness(0.9)).toBe(1);
    expect(s.worseness(1.0)).toBe(0);
    expect(s.worseness(0.95)).toBeCloseTo(0.5, 12);
    expect(s.color(0.9)).toBe(interpolateHeat(1));
    expect(s.color(1.0)).toBe(interpolateHeat(0));
    expect(s.legend).toMatchObject({ title: 'cosine-similarity', direction: 'lower is worse', domain: [0.9, 1], worst: 0.9, best: 1 });
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
    expect(heatScale('mse', [0, 1e-2], { scale: 'log' }).legend.scale).toBe('linear');
  });
});

describe('renderHeatLegend', () => {
  it('states the direction and the range ends', () => {
    const { svg } = renderIn(renderHeatLegend, heatScale('cosine-similarity', [0.9, 0.99]).legend);
    expect(texts(svg, '.legend-title')).toEqual(['cosine-similarity (lower is worse)']);
    expect(texts(svg, 'text.best')).toEqual(['better 0.99']);
    expect(texts(svg, 'text.worst')).toEqual(['worse 0.9']);
    const ramp = [...svg.querySelectorAll('.ramp rect')].map((r) => r.getAttribute('fill'));
    expect(ramp[0]).toBe(interpolateHeat(0));
    expect(ramp[ramp.length - 1]).toBe(interpolateHeat(1));
    expect(svg.querySelector('.nan rect').getAttribute('fill')).toBe(NAN_COLOR);
  });
  it('works from the plain legend shape of the app state', () => {
    const { svg } = renderIn(renderHeatLegend, { title: 'mse', direction: 'higher is worse', domain: [0.5, 2] });
    expect(texts(svg, 'text.best')).toEqual(['better 0.5']);
    expect(texts(svg, 'text.worst')).toEqual(['worse 2']);
  });
});
