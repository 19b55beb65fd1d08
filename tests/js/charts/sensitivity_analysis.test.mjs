import { describe, it, expect } from 'vitest';
import { renderSensitivityAnalysis, BASELINE_COLOR, CUMULATIVE_COLOR, PER_NODE_COLOR } from '../../../web/charts/sensitivity_analysis.mjs';
import { renderStatInfo } from '../../../web/charts/stat_info.mjs';
import { renderIn, texts, tickPositions, segments } from './util.mjs';

const data = { x: ['none', 'Conv_2', 'Conv_5', 'Gemm_9'], cumulative: [0.991, 0.995, 0.999, 'nan'], per_node: [0.993, 0.998, 0.9991], qtype: 'float32' };

function yPixel(svg, v) {
  const t = Object.entries(tickPositions(svg, 'axis-y')).map(([l, p]) => [Number(l), p]);
  const [[a, pa], [b, pb]] = [t[0], t[t.length - 1]];
  return pa + ((v - a) * (pb - pa)) / (b - a);
}

describe('renderSensitivityAnalysis', () => {
  it('has the §8.2 title, labels, rotated node ticks and legend', () => {
    const { svg } = renderIn(renderSensitivityAnalysis, data);
    expect(texts(svg, '.title tspan')).toEqual(['Partial Quantization Analysis']);
    expect(texts(svg, '.axis-label-x')).toEqual(['node']);
    expect(texts(svg, '.axis-label-y')).toEqual(['Cosine Similarity']);
    expect(texts(svg, '.axis-x .tick text')).toEqual(data.x);
    expect(svg.querySelector('.axis-x .tick text').getAttribute('transform')).toBe('rotate(-90)');
    expect(texts(svg, '.legend-item text')).toEqual(['baseline', 'partial quantization cumulative error', 'per-node quantization sensitivity']);
  });

  it('draws the baseline at 1.0, the cumulative line from "none" and one x marker per node', () => {
    const { svg } = renderIn(renderSensitivityAnalysis, data);
    const base = svg.querySelector('line.baseline');
    expect(base.getAttribute('stroke')).toBe(BASELINE_COLOR);
    expect(Number(base.getAttribute('y1'))).toBeCloseTo(yPixel(svg, 1), 1);
    const cum = svg.querySelector('path.cumulative');
    expect(cum.getAttribute('stroke')).toBe(CUMULATIVE_COLOR);
    const pts = cum.getAttribute('d').slice(1).split('L').map((p) => p.split(',').map(Number));
    const xt = tickPositions(svg, 'axis-x');
    expect(pts.length).toBe(3); // the NaN point is a gap
    pts.forEach(([px, py], i) => {
      expect(px).toBeCloseTo(xt[data.x[i]], 1);
      expect(py).toBeCloseTo(yPixel(svg, data.cumulative[i]), 1);
    });
    const marks = svg.querySelector('path.per-node');
    expect(marks.getAttribute('stroke')).toBe(PER_NODE_COLOR);
    expect((marks.getAttribute('d').match(/M/g) || []).length).toBe(2 * data.per_node.length);
    const firstX = marks.getAttribute('d').match(/-?[\d.]+/g).map(Number);
    expect((firstX[0] + firstX[2]) / 2).toBeCloseTo(xt.Conv_2, 1);
  });

  it('names the qtype the sensitive nodes became when it is not float32, and shows a lone baseline point', () => {
    const { svg } = renderIn(renderSensitivityAnalysis, { x: ['none'], cumulative: [0.98], per_node: [], qtype: 'int16' });
    expect(texts(svg, '.title tspan')).toEqual(['Partial Quantization Analysis', '(sensitive nodes as int16)']);
    expect(segments(svg.querySelector('path.cumulative').getAttribute('d'))).toBe(0);
    expect(svg.querySelector('path.cumulative-isolated')).not.toBe(null);
  });

  it('focuses a node from its tick', () => {
    const got = [];
    const { svg, document } = renderIn(renderSensitivityAnalysis, data, { onFocus: (n) => got.push(n) });
    const ticks = svg.querySelectorAll('.axis-x .tick');
    ticks[2].dispatchEvent(new document.defaultView.Event('click'));
    ticks[0].dispatchEvent(new document.defaultView.Event('click'));
    expect(got).toEqual(['Conv_5']);
  });
});

describe('renderStatInfo', () => {
  it('draws the four §8.1 curves on a log axis; zeros are gaps', () => {
    const curves = { nodes: ['a', 'b', 'c'], thresholds: [3, 4, 2], scales: [0.02, 0.03, 0.01], max_vals: [3, 4, 2], min_nz_vals: [1e-5, 0, 1e-4] };
    const { svg } = renderIn(renderStatInfo, curves, { tensorType: 'feature' });
    expect(texts(svg, '.title tspan')).toEqual(['feature calibration nodes']);
    expect(texts(svg, '.axis-label-x')).toEqual(['Node']);
    expect(texts(svg, '.axis-label-y')).toEqual(['Value']);
    expect(texts(svg, '.legend-item text')).toEqual(['Thresholds', 'Scales', 'Max_vals', 'Min_nz_vals']);
    const paths = [...svg.querySelectorAll('path.curve')];
    expect(paths.map((p) => segments(p.getAttribute('d')))).toEqual([1, 1, 1, 0]);
    // Min_nz_vals: 1e-5, 0 (not on a log axis), 1e-4 -> two lone dots
    const dots = svg.querySelectorAll('path.isolated');
    expect([...dots].map((e) => [e.getAttribute('data-series'), (e.getAttribute('d').match(/M/g) || []).length])).toEqual([['Min_nz_vals', 2]]);
    const yt = tickPositions(svg, 'axis-y');
    const first = paths[1].getAttribute('d').slice(1).split('L')[0].split(',').map(Number);
    // 0.02 on a log axis: between the 0.01 and 0.1 ticks at log10(2) of the decade
    expect(first[1]).toBeCloseTo(yt['0.01'] + Math.log10(2) * (yt['0.1'] - yt['0.01']), 1);
  });
});
