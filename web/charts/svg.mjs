// The SVG root every chart draws into, and its serialisation. Works on a browser DOM and on linkedom
// (the document comes from the target element; nothing is read from window at import time).
import { select } from 'd3';

export const SVG_NS = 'http://www.w3.org/2000/svg';
export const FONT_FAMILY = 'DejaVu Sans, Verdana, Arial, sans-serif';

const isSvgRoot = (el) => el && String(el.tagName || el.nodeName).toLowerCase() === 'svg';

// The chart's <svg>: `target` itself when it is an <svg> (cleared first), otherwise a new <svg>
// appended to the container `target`. Returns a d3 selection of it, sized and styled.
export function chartRoot(target, width, height, className) {
  if (!target || !target.ownerDocument) {
    throw new Error(`${className}: the target must be an <svg> or a container element of a DOM document`);
  }
  let svg = target;
  if (isSvgRoot(target)) {
    while (target.firstChild) target.removeChild(target.firstChild);
  } else {
    svg = target.ownerDocument.createElementNS(SVG_NS, 'svg');
    target.appendChild(svg);
  }
  return select(svg)
    .attr('xmlns', SVG_NS)
    .attr('class', `ptq-chart ${className}`)
    .attr('width', width)
    .attr('height', height)
    .attr('viewBox', `0 0 ${width} ${height}`)
    .attr('font-family', FONT_FAMILY)
    .attr('font-size', 11);
}

// White background, so the PNG and the SVG opened alone look like the page.
export function background(svg, width, height) {
  svg.append('rect').attr('class', 'background').attr('width', width).attr('height', height).attr('fill', '#ffffff');
}

// The text of a chart, as the CLI writes it to a .svg file.
export function serializeSvg(svgOrSelection) {
  const el = svgOrSelection && typeof svgOrSelection.node === 'function' ? svgOrSelection.node() : svgOrSelection;
  return `<?xml version="1.0" encoding="UTF-8"?>\n${el.outerHTML}\n`;
}

// Renders a chart into a detached <svg> of `document` and returns its text:
// renderToString(renderHistogram, plot, {}, document).
export function renderToString(render, data, options, document) {
  const holder = document.createElement('div');
  const chart = render(holder, data, { ...options, interactive: false });
  const svg = chart && chart.svg ? chart.svg : holder.firstChild;
  return serializeSvg(svg);
}
