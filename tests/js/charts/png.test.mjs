import { describe, it, expect } from 'vitest';
import zlib from 'node:zlib';
import { svgToPng } from '../../../web/charts/png.mjs';
import { renderToString } from '../../../web/charts/svg.mjs';
import { renderSensitivityAnalysis } from '../../../web/charts/sensitivity_analysis.mjs';
import { createDocument } from '../../../web/charts/node_dom.mjs';

// Minimal PNG reader for 8-bit RGBA (what resvg writes): size and the unfiltered pixel rows.
function readPng(buf) {
  expect([...buf.subarray(0, 8)]).toEqual([137, 80, 78, 71, 13, 10, 26, 10]);
  let pos = 8;
  let width = 0;
  let height = 0;
  const idat = [];
  while (pos < buf.length) {
    const len = buf.readUInt32BE(pos);
    const type = buf.toString('ascii', pos + 4, pos + 8);
    const body = buf.subarray(pos + 8, pos + 8 + len);
    if (type === 'IHDR') { width = body.readUInt32BE(0); height = body.readUInt32BE(4); expect(body[8]).toBe(8); expect(body[9]).toBe(6); }
    if (type === 'IDAT') idat.push(body);
    pos += 12 + len;
  }
  const raw = zlib.inflateSync(Buffer.concat(idat));
  const stride = width * 4;
  const px = Buffer.alloc(stride * height);
  for (let y = 0; y < height; y++) {
    const f = raw[y * (stride + 1)];
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let i = 0; i < stride; i++) {
      const a = i >= 4 ? px[y * stride + i - 4] : 0;
      const b = y > 0 ? px[(y - 1) * stride + i] : 0;
      const c = i >= 4 && y > 0 ? px[(y - 1) * stride + i - 4] : 0;
      const p = a + b - c;
      const pred = [0, a, b, Math.floor((a + b) / 2), Math.abs(p - a) <= Math.abs(p - b) && Math.abs(p - a) <= Math.abs(p - c) ? a : Math.abs(p - b) <= Math.abs(p - c) ? b : c][f];
      px[y * stride + i] = (line[i] + pred) & 0xff;
    }
  }
  return { width, height, px };
}

const svg = (body) => `<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20" viewBox="0 0 40 20">${body}</svg>`;
const dark = ({ px }) => { let n = 0; for (let i = 0; i < px.length; i += 4) if (px[i] < 128) n++; return n; };

describe('svgToPng', () => {
  it('renders at the SVG size (or scaled) on a white background', () => {
    const img = readPng(svgToPng(svg('<rect x="0" y="0" width="20" height="20" fill="#000"/>')));
    expect([img.width, img.height]).toEqual([40, 20]);
    expect(dark(img)).toBe(400); // the black 20x20 square, the rest white
    expect([...img.px.subarray((10 * 40 + 30) * 4, (10 * 40 + 30) * 4 + 4)]).toEqual([255, 255, 255, 255]);
    const big = readPng(svgToPng(svg(''), { scale: 2 }));
    expect([big.width, big.height]).toEqual([80, 40]);
  });

  it('draws text with the system fonts', () => {
    const img = readPng(svgToPng(svg('<text x="2" y="15" font-family="DejaVu Sans" font-size="14" fill="#000">Wg</text>')));
    expect(dark(img)).toBeGreaterThan(10);
  });

  it('renders a whole chart', () => {
    const text = renderToString(renderSensitivityAnalysis, { x: ['none', 'a'], cumulative: [0.9, 0.95], per_node: [0.97] }, {}, createDocument());
    const img = readPng(svgToPng(text));
    expect(img.width).toBe(800);
    expect(dark(img)).toBeGreaterThan(1000);
  });

  it('names the failure for a broken SVG', () => {
    expect(() => svgToPng('<svg')).toThrow();
  });
});
