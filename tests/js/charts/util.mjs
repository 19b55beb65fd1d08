// Helpers of the chart tests: a linkedom document, rendering into a fresh container, and readers of
// the produced SVG (axis tick positions, path sub-paths).
import { createDocument } from '../../../web/charts/node_dom.mjs';
import { serializeSvg } from '../../../web/charts/svg.mjs';

export function renderIn(render, data, options = {}) {
  const document = createDocument();
  const holder = document.createElement('div');
  document.body.appendChild(holder);
  const chart = render(holder, data, options);
  const svg = chart.svg || holder.querySelector('svg');
  return { document, holder, chart, svg, text: serializeSvg(svg) };
}

export const texts = (root, selector) => [...root.querySelectorAll(selector)].map((e) => e.textContent);

// Pixel position of each labelled tick of an axis group: {label: position} (d3 offsets by 0.5).
export function tickPositions(svg, axisClass) {
  const out = {};
  for (const t of svg.querySelectorAll(`.${axisClass} .tick`)) {
    const m = /translate\(([-\d.e]+),([-\d.e]+)\)/.exec(t.getAttribute('transform'));
    const label = t.querySelector('text').textContent;
    out[label] = axisClass === 'axis-x' ? Number(m[1]) - 0.5 : Number(m[2]) - 0.5;
  }
  return out;
}

// Sub-paths of a path's d attribute ("M" commands).
export const subpaths = (d) => (String(d || '').match(/M/g) || []).length;

// A click/mousemove event at plot-relative x (linkedom reports zero-size client rects, so the charts
// read clientX as the offset inside the plot).
export function pointerEvent(document, type, clientX) {
  const Event = document.defaultView?.Event || globalThis.Event;
  const ev = new Event(type);
  Object.defineProperty(ev, 'clientX', { value: clientX });
  return ev;
}

// Line segments of a path (sub-paths with at least one "L"; d3 writes a lone point as "Mx,yZ").
export const segments = (d) => String(d || '').split('M').filter((s) => s.includes('L')).length;
