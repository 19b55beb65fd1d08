// How the graph's marks (marks.mjs) look: the stylesheet of nodes, edges and badges, and the arrow
// marker edges end with. One text for the page's graph view (view.mjs puts it in the page's head) and
// for the standalone picture of the graph in the HTML report (picture.mjs puts it inside the SVG);
// what only an interactive view needs (cursors, hover, level of detail) stays in the page's app.css.
// `--font` is the host's font (the page's :root, the picture's own).

export const MARKS_CSS = `
.node text { font: 11px var(--font); }
.node-body { fill: #fff; stroke: #000; stroke-width: 1; }
.node-header { fill: #333; stroke: #000; stroke-width: 1; }
.node-title { fill: #fff; }
.node-row { fill: #000; }
.node-row .row-name { font-weight: 700; }
.node-input .node-header, .node-output .node-header { fill: #eee; }
.node-input .node-title, .node-output .node-title { fill: #000; }
.node-cat-layer .node-header { fill: rgb(51, 85, 136); }
.node-cat-activation .node-header { fill: rgb(112, 41, 33); }
.node-cat-pool .node-header { fill: rgb(51, 85, 51); }
.node-cat-normalization .node-header { fill: rgb(51, 85, 68); }
.node-cat-dropout .node-header { fill: rgb(69, 71, 112); }
.node-cat-shape .node-header { fill: rgb(108, 79, 71); }
.node-cat-tensor .node-header { fill: rgb(89, 66, 59); }
.node-cat-quantization .node-header { fill: rgb(80, 40, 0); }
.node-cat-data .node-header { fill: rgb(85, 85, 85); }
.node-calibration .node-header { fill: #5f5f5f; }
.node-unsupported .node-header { fill: #b00020; }
.node-unsupported .node-body { stroke: #b00020; stroke-width: 2; stroke-dasharray: 5 3; }
.node-has-body .node-body { stroke-width: 2; stroke-dasharray: 2 2; }
.node.selected .node-body, .node.selected .node-header { stroke: var(--selected); stroke-width: 2; }
.node.picked .node-body { stroke: var(--picked); stroke-width: 3; }
.node.heated .node-header { opacity: 0.85; }
.node.heat-dark .node-row, .badge.heat-dark text { fill: #fff; }
.edge { fill: none; stroke: #000; stroke-width: 1; }
.edge-hit { fill: none; stroke: transparent; stroke-width: 8; }
#ptq-arrow path { fill: #000; }
.edge-label { font: 10px var(--font); fill: #222; }
.badge rect { fill: #f0b429; stroke: #7a5a00; stroke-width: 0.8; }
.badge-weight rect { fill: #9ad0f5; stroke: #2a6a99; }
.badge-off rect { fill: #ddd; stroke: #999; stroke-dasharray: 2 1.5; }
.badge text { font: 9px var(--font); fill: #000; text-anchor: middle; }
.badge.selected rect { stroke: var(--selected); stroke-width: 2; }
.badge-changed rect { stroke: #b00020; stroke-width: 1.6; stroke-dasharray: none; }
.badge-changed text { font-weight: bold; }
`;

export const ARROW_DEFS = '<defs><marker id="ptq-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto">'
  + '<path d="M0,0L10,5L0,10z"/></marker></defs>';

// Puts MARKS_CSS into `doc`'s head once.
export function addMarksStyle(doc) {
  if (doc.getElementById('ptq-marks-style')) return;
  const style = doc.createElement('style');
  style.id = 'ptq-marks-style';
  style.textContent = MARKS_CSS;
  doc.head.append(style);
}
