import { describe, it, expect } from 'vitest';
import { renderFixPath, stepLabel } from '../../../web/charts/fix_path.mjs';
import { BASELINE_COLOR, CUMULATIVE_COLOR } from '../../../web/charts/sensitivity_analysis.mjs';
import { renderIn, texts, tickPositions } from './util.mjs';

const data = {
  target: { text: 'cosine-similarity>=0.999', metric: 'cosine-similarity', op: '>=', bound: 0.999 },
  reached: true, start: 0.991, final: 0.9993,
  steps: [{ phase: 'add', node: 'Conv_2', action: 'int16', value: 0.995 },
    { phase: 'add', node: 'Conv_5', action: 'int16', value: 'nan' },
    { phase: 'escalate', node: 'Conv_2', action: 'float', value: 0.9996 },
    { phase: 'prune', node: 'Conv_5', action: 'removed', value: 0.9993 }],
};

function yPixel(svg, v) {
  const t = Object.entries(tickPositions(svg, 'axis-y')).map(([l, p]) => [Number(l), p]);
  const [[a, pa], [b, pb]] = [t[0], t[t.length - 1]];
  return pa + ((v - a) * (pb - pa)) / (b - a);
}

describe('renderFixPath', () => {
  it('labels the steps by phase and names the outcome, the metric and the target', () => {
    expect(data.steps.map(stepLabel)).toEqual(['+Conv_2 int16', '+Conv_5 int16', 'Conv_2 → float', '−Conv_5']);
    const { svg } = renderIn(renderFixPath, data);
    expect(texts(svg, '.title tspan')).toEqual(['Automatic fix search', '(target reached)']);
    expect(texts(svg, '.axis-x .tick text')).toEqual(['start', ...data.steps.map(stepLabel)]);
    expect(texts(svg, '.axis-label-y')).toEqual(['cosine-similarity']);
    expect(texts(svg, '.legend-item text')).toEqual(['target cosine-similarity>=0.999', 'metric after each step']);
    const { svg: missed } = renderIn(renderFixPath, { ...data, reached: false });
    expect(texts(missed, '.title tspan')[1]).toBe('(target not reached)');
  });

  it('draws the target bound as a dashed line and the path through every finite step', () => {
    const { svg, chart: { points } } = renderIn(renderFixPath, data);
    const target = svg.querySelector('line.target');
    expect(target.getAttribute('stroke')).toBe(BASELINE_COLOR);
    expect(Number(target.getAttribute('y1'))).toBeCloseTo(yPixel(svg, 0.999), 1);
    const path = svg.querySelector('path.path');
    expect(path.getAttribute('stroke')).toBe(CUMULATIVE_COLOR);
    // start and the first step, a gap at the NaN step, then the last two steps.
    expect(path.getAttribute('d').split('M').filter(Boolean).length).toBe(2);
    expect((svg.querySelector('path.steps').getAttribute('d').match(/M/g) || []).length).toBe(4);
    const xt = tickPositions(svg, 'axis-x');
    expect(points.map((p) => p.name)).toEqual(['start', ...data.steps.map(stepLabel)]);
    points.forEach((p) => expect(p.x).toBeCloseTo(xt[p.name], 1));
  });

  it('fitted to a width, labels one step in k, no two labels nearer than 14 px, the last one always', () => {
    for (const count of [30, 47, 58, 61, 113, 250]) {
      for (const width of [420, 520, 800]) {
        const steps = Array.from({ length: count }, (_, i) => ({ phase: 'add', node: `n${i}`, action: 'int16', value: 0.99 + i * 1e-5 }));
        const { svg } = renderIn(renderFixPath, { ...data, steps }, { width, fit: true });
        const xs = [...svg.querySelectorAll('.axis-x .tick')].map((t) => Number(/translate\(([-\d.e]+),/.exec(t.getAttribute('transform'))[1]));
        const labels = texts(svg, '.axis-x .tick text');
        expect(labels.at(-1), `${count} steps, ${width} px`).toBe(stepLabel(steps.at(-1)));
        for (let i = 1; i < xs.length; i++) expect(xs[i] - xs[i - 1], `${count} steps, ${width} px`).toBeGreaterThanOrEqual(14 - 1e-9);
      }
    }
  });
});
