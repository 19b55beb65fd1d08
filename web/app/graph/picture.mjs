// A picture of the whole graph for the HTML report: the page's own view model (model.mjs), layout
// (layout_core.mjs) and marks (marks.mjs: the same boxes, badges, heat colours and the configuration in
// effect on the badges), drawn into one standalone SVG that carries the marks' stylesheet
// (marks_style.mjs). It runs wherever there is a DOM document: the page's and the plugin's (exports at
// the time of export, coloured as the graph is then), and Node's linkedom for the CLI's report
// (web/charts/node_dom.mjs; text widths are then estimated as the Node tests' layouts are).
import { buildViewModel } from './model.mjs';
import { layoutGraph } from './layout_core.mjs';
import { decorateBadge, decorateNode, edgeBox, edgeMarks, nodeMark } from './marks.mjs';
import { ARROW_DEFS, MARKS_CSS } from './marks_style.mjs';

const SVG_NS = 'http://www.w3.org/2000/svg';
// More boxes than this make a report of many megabytes that no one reads as a picture: the report
// then says so instead (the page's graph view shows such a model).
export const PICTURE_MAX_BOXES = 1500;
const PICTURE_FONT = '"DejaVu Sans", Verdana, Arial, sans-serif';

/**
 * graphPicture(graph, {document, heat, states}) -> {svg, boxes} | {note}
 * graph: the graph document (graph-schema.md); heat: state 'heat' ({values, legend}) or null; states:
 * the calibration nodes' states in effect ({name: {on, qtype}}, state 'calibrationStates') or null.
 * svg: the SVG text; note: why there is no picture (too many boxes).
 */
export function graphPicture(graph, { document, heat = null, states = null } = {}) {
  const model = buildViewModel(graph);
  if (model.nodes.length > PICTURE_MAX_BOXES) {
    return { note: `The graph has ${model.nodes.length} boxes, more than the ${PICTURE_MAX_BOXES} a picture in the report holds: open the model in ptqscope to see it coloured.` };
  }
  const layout = layoutGraph({ nodes: model.nodes, edges: model.edges });
  // The layout's extent, widened to the edges' badges and labels (drawn right of an edge's middle).
  const MARGIN = 8;
  const boxes = model.edges.map((e, i) => (layout.edges[i]?.length ? edgeBox(e, layout.edges[i]) : null)).filter(Boolean);
  const width = Math.ceil(Math.max(layout.width, ...boxes.map((b) => b.x1 + MARGIN)));
  const height = Math.ceil(Math.max(layout.height, ...boxes.map((b) => b.y1 + MARGIN)));
  const svg = document.createElementNS(SVG_NS, 'svg');
  for (const [k, v] of Object.entries({ xmlns: SVG_NS, class: 'ptq-graph-picture', width, height, viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': 'model graph' })) {
    svg.setAttribute(k, String(v));
  }
  svg.innerHTML = `<style>.ptq-graph-picture{--font:${PICTURE_FONT}}${MARKS_CSS}</style>${ARROW_DEFS}`;
  const group = (cls) => {
    const g = document.createElementNS(SVG_NS, 'g');
    g.setAttribute('class', cls);
    svg.appendChild(g);
    return g;
  };
  const layers = { edges: group('edges'), labels: group('edge-labels'), nodes: group('nodes') };
  const marks = { selected: null, picked: new Set(), heat: heat?.values ? heat : null, states };
  model.edges.forEach((e, i) => {
    const points = layout.edges[i];
    if (points?.length) edgeMarks(layers, e, points);
  });
  for (const v of model.nodes) {
    const p = layout.nodes[v.id];
    if (p) decorateNode(nodeMark(layers.nodes, v, p), marks);
  }
  for (const b of svg.querySelectorAll('.badge')) decorateBadge(b, marks, null);
  return { svg: svg.outerHTML, boxes: model.nodes.length };
}

// The report's Graph section (web/report/report.mjs buildReport's `graph`): the picture, the heat's
// legend and whether the badges show a configuration in effect; null without a graph.
export function reportGraph({ graph, heat = null, states = null, document }) {
  if (!graph) return null;
  return { ...graphPicture(graph, { document, heat, states }), legend: heat?.legend ?? null, configuration: Boolean(states) };
}
