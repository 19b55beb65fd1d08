// The "Why" view's histogram of one quantizer's evidence (web/charts/hint_histogram.mjs), on
// hand-made evidence whose drawing is worked out by hand below, and on the evidence the core gives for
// the planted clipping fault (its numbers printed as the core wrote them).
import { describe, it, expect } from 'vitest';
import { renderHintHistogram, quantizerLevels, usedLevels, percent } from '../../../web/charts/hint_histogram.mjs';
import { hintEvidence } from '../../../web/pipeline/result.mjs';
import { openSession, fixture } from '../helpers.mjs';
import { renderIn, texts, tickPositions } from './util.mjs';

// A uint8-like quantizer over [0, 1] with 5 levels (step 0.25), and data over [0, 2] in 4 bins of 0.5:
// half of the data's span lies beyond the threshold 1.
const EVIDENCE = {
  name: 'x_HzCalibration', qtype: 'uint2', asymmetric: false, per_channel: false,
  thresholds: [1], scales: [0.25], range: [0, 1], min: 0, max: 2, p99_99: 1.9,
  clipped: 0.5, levels_used: 0.8, zero_rounded: 0.1,
  bins: [{ x0: 0, x1: 0.5, count: 3 }, { x0: 0.5, x1: 1, count: 0 }, { x0: 1, x1: 1.5, count: 2 }, { x0: 1.5, x1: 2, count: 1 }],
};

// [[left, right], ...] of the rectangles of a bars path ("M left,base V top H right V base Z").
const rects = (d) => [...String(d).matchAll(/M([-\d.]+),[-\d.]+V[-\d.]+H([-\d.]+)/g)].map((m) => [Number(m[1]), Number(m[2])]);

describe('renderHintHistogram', () => {
  it('the levels of the range and those some value rounds to', () => {
    // (1 − 0) / 0.25 + 1 = 5 levels: 0, 0.25, 0.5, 0.75, 1.
    const levels = quantizerLevels(EVIDENCE);
    expect(levels).toEqual({ step: 0.25, lo: 0, count: 5 });
    // Bin [0, 0.5] rounds to levels 0 … 2 (0.5 / 0.25 = 2); bin [0.5, 1] is empty; the bins beyond 1
    // clamp to the last level (4). Used: 0, 1, 2, 4.
    expect([...usedLevels(levels, EVIDENCE.bins)]).toEqual([1, 1, 1, 0, 1]);
    // A per-channel node's range is its widest channel's, whose scale is the largest.
    expect(quantizerLevels({ range: [-2, 2], scales: [1 / 127, 2 / 127] })).toEqual({ step: 2 / 127, lo: -2, count: 255 });
  });

  it('in a narrow dock the x labels keep apart (about one per 60 px of plot)', () => {
    const spread = { ...EVIDENCE, max: 0.4, p99_99: 0.4, bins: Array.from({ length: 8 }, (_, i) => ({ x0: i * 0.05, x1: (i + 1) * 0.05, count: 1 + i })) };
    for (const width of [360, 420, 640]) {
      const { svg } = renderIn(renderHintHistogram, spread, { width, height: 380 });
      const ticks = Object.entries(tickPositions(svg, 'axis-x')).sort((a, b) => a[1] - b[1]);
      expect(ticks.length, `${width} px`).toBeGreaterThanOrEqual(2);
      // A label's characters are about 6 px wide at the axis' font: neighbours' centres lie at least the
      // longer one's width and a 4 px gap apart.
      for (let i = 1; i < ticks.length; i++) {
        const room = 6 * Math.max(ticks[i][0].length, ticks[i - 1][0].length) + 4;
        expect(ticks[i][1] - ticks[i - 1][1], `${width} px: ${ticks[i - 1][0]} | ${ticks[i][0]}`).toBeGreaterThanOrEqual(room);
      }
    }
  });

  it('the data inside the range in blue, beyond it in red, the threshold dashed at the range end', () => {
    const { svg } = renderIn(renderHintHistogram, EVIDENCE, { width: 640, height: 380 });
    // The x axis spans the data and the range: [0, 2].
    const ticks = Object.entries(tickPositions(svg, 'axis-x')).map(([l, p]) => [Number(l), p]);
    expect(ticks[0][0]).toBe(0);
    expect(ticks.at(-1)[0]).toBe(2);
    const px = (v) => ticks[0][1] + (v / 2) * (ticks.at(-1)[1] - ticks[0][1]);
    // Inside: bin [0, 0.5]; beyond: [1, 1.5] and [1.5, 2] (the empty bin draws nothing).
    const round = (pairs) => pairs.map((p) => p.map((v) => Math.round(v)));
    expect(round(rects(svg.querySelector('path.bars').getAttribute('d')))).toEqual(round([[px(0), px(0.5)]]));
    expect(round(rects(svg.querySelector('path.bars-clipped').getAttribute('d')))).toEqual(round([[px(1), px(1.5)], [px(1.5), px(2)]]));
    // One threshold line (the range starts at 0: only its upper end is a threshold), at x = 1.
    const lines = svg.querySelectorAll('line.threshold');
    expect(lines).toHaveLength(1);
    expect(Math.round(Number(lines[0].getAttribute('x1')))).toBe(Math.round(px(1)));
    // The shaded range from 0 to 1.
    const range = svg.querySelector('rect.range');
    expect(Math.round(Number(range.getAttribute('x')))).toBe(Math.round(px(0)));
    expect(Math.round(Number(range.getAttribute('width')))).toBe(Math.round(px(1) - px(0)));
    // The levels strip: 5 levels, 4 used; 0.25 is far more than 2 px, so one mark per used level.
    const strip = svg.querySelector('g.levels');
    expect(strip.getAttribute('data-levels')).toBe('5');
    expect(strip.getAttribute('data-used')).toBe('4');
    expect((strip.querySelector('path.levels-used').getAttribute('d').match(/M/g) ?? [])).toHaveLength(4);
    // The core's shares, as it gave them.
    expect(texts(svg, 'text.summary')[0]).toBe('clipped 50% · levels used 80% · rounded to zero 10%');
    expect(texts(svg, '.legend-item text')).toEqual(['values read (tuning samples)', 'clipped 50%', 'quantizer range (uint2)', 'threshold 1', 'levels used 80% of 5']);
  });

  it('an asymmetric or signed range gets a line at each end', () => {
    const { svg } = renderIn(renderHintHistogram, { ...EVIDENCE, asymmetric: true, thresholds: [-0.5, 1], range: [-0.5, 1], scales: [0.25] });
    expect([...svg.querySelectorAll('line.threshold')].map((l) => l.getAttribute('data-value'))).toEqual(['-0.5', '1']);
    expect(texts(svg, '.legend-item text')[3]).toBe('threshold -0.5 … 1');
  });

  it('percent: three significant digits', () => {
    expect(percent(0.48808593)).toBe('48.8%');
    expect(percent(0)).toBe('0%');
    expect(percent(0.0234375)).toBe('2.34%');
  });

  it('the planted clipping fault as the core explains it: half of the values beyond the threshold', async () => {
    const entry = fixture('planted_clipping');
    const { session } = await openSession(entry);
    try {
      const result = JSON.parse(session.analyze(JSON.stringify({ analysis: 'explain', options: { data_num: 4 } })));
      const name = result.hints[0].calibration_node;
      const evidence = { ...hintEvidence(result, name), name };
      const { svg } = renderIn(renderHintHistogram, evidence);
      // The threshold is a tenth of the data's maximum (planted_models.py divides it by 10): the line
      // lies at a tenth of the x axis, which spans the data.
      const [line] = svg.querySelectorAll('line.threshold');
      const x = tickPositions(svg, 'axis-x');
      const t = Number(line.getAttribute('data-value'));
      expect(t).toBeCloseTo(Number(evidence.max) / 10, 6);
      const ticks = Object.entries(x).map(([l, p]) => [Number(l), p]);
      const [[a, pa], [b, pb]] = [ticks[0], ticks.at(-1)];
      expect(Number(line.getAttribute('x1'))).toBeCloseTo(pa + ((t - a) * (pb - pa)) / (b - a), 0);
      expect(texts(svg, 'text.summary')[0]).toBe(`clipped ${percent(evidence.clipped)} · levels used ${percent(evidence.levels_used)} · rounded to zero ${percent(evidence.zero_rounded)}`);
      expect(svg.querySelector('path.bars-clipped').getAttribute('d')).not.toBe('');
    } finally {
      session.delete();
    }
  });
});
