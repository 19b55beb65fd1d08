import { describe, it, expect } from 'vitest';
import { toNumber, formatValue, ellipsize, safeName, textWidth } from '../../../web/charts/format.mjs';
import { renderToString, serializeSvg, chartRoot } from '../../../web/charts/svg.mjs';
import { renderHistogram } from '../../../web/charts/histogram.mjs';
import { createDocument } from '../../../web/charts/node_dom.mjs';

describe('format helpers', () => {
  it('reads the schema numbers', () => {
    expect(toNumber('inf')).toBe(Infinity);
    expect(toNumber('-inf')).toBe(-Infinity);
    expect(toNumber('nan')).toBeNaN();
    expect(toNumber(0.5)).toBe(0.5);
    expect(toNumber('0.25')).toBe(0.25);
    expect(toNumber(null)).toBeNaN();
    expect(toNumber('Conv_2')).toBeNaN();
    expect(toNumber('')).toBeNaN();
  });
  it('formats values shortly and spells non-finite values as the schema', () => {
    expect(formatValue(0.998120009899)).toBe('0.99812');
    expect(formatValue(1.2e-5)).toBe('1.2e-5');
    expect(formatValue(3)).toBe('3');
    expect(formatValue(Infinity)).toBe('inf');
    expect(formatValue('-inf')).toBe('-inf');
    expect(formatValue(NaN)).toBe('nan');
    expect(formatValue('int8')).toBe('int8');
    expect(formatValue(null)).toBe('');
  });
  it('shortens labels from the left and makes file-safe names', () => {
    expect(ellipsize('backbone/layer1/conv', 8)).toBe('…r1/conv');
    expect(ellipsize('short', 8)).toBe('short');
    expect(safeName('a/b\\c')).toBe('a_b_c');
    expect(textWidth('abcd', 10)).toBe(24);
  });
});

describe('svg helpers', () => {
  it('serialises a standalone SVG file with its namespace', () => {
    const text = renderToString(renderHistogram, { title: 't', histograms: [] }, {}, createDocument());
    expect(text.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<svg')).toBe(true);
    expect(text).toContain('xmlns="http://www.w3.org/2000/svg"');
    expect(text).not.toContain('class="overlay"');
  });
  it('reuses a given <svg> (cleared) and rejects a non-DOM target', () => {
    const doc = createDocument();
    const svg = doc.createElementNS('http://www.w3.org/2000/svg', 'svg');
    svg.appendChild(doc.createElementNS('http://www.w3.org/2000/svg', 'g'));
    chartRoot(svg, 10, 10, 'x');
    expect(svg.childNodes.length).toBe(0);
    expect(serializeSvg(svg)).toContain('width="10"');
    expect(() => chartRoot({}, 10, 10, 'histogram')).toThrow(/histogram: the target/);
  });
});
