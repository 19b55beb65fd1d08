// The graph far out (level of detail): below the zoom where text is hidden, a big graph is drawn on
// one <canvas> over the SVG instead of as SVG groups. At "Fit" a 10,000-node graph would otherwise
// put every box in the DOM (style, layout and paint of tens of thousands of elements per frame);
// here the boxes and edges become a few Path2D objects in layout units, built once per layout, and a
// frame only sets the canvas transform and fills them, so its cost does not grow with what is in view.
// Heat colours, the selection and the picks are drawn on top, at least a few pixels wide, so they stay
// visible (and findable) however small the boxes are. Box and edge colours are read from the
// stylesheet (a probe element per node class): the CSS stays the one place that defines them.
// Nothing is built until the overview is first shown (most graphs never need it).
import { nodeClass, nodeHeat, isSelected, isPicked } from './marks.mjs';

const SVG_NS = 'http://www.w3.org/2000/svg';
const HEAT_MIN_PX = 4; // a heated box is drawn at least this wide on screen
const MARK_MIN_PX = 10; // the selection / pick ring around a box, at least this wide

/**
 * createOverview({svg, container}) -> {setScene, setMarks, show, update, drawNow, clear, toLayout}
 * The canvas is placed over `svg` and lets pointer events through to it (d3's zoom stays on the SVG).
 */
export function createOverview({ svg, container }) {
  const canvas = document.createElement('canvas');
  canvas.className = 'graph-overview';
  canvas.hidden = true;
  svg.after(canvas);
  let ctx = null;
  let laid = null; // {model, positions}: the layout to draw
  let scene = null; // {fills: [[colour, Path2D]], edges: Path2D}, built from `laid` when first drawn
  let marks = null; // the state's marks (marks.mjs's shape)
  let marked = null; // {heat, rings: [{x0, y0, x1, y1, colour}] in layout units}, from `marks` when drawn
  let transform = { x: 0, y: 0, k: 1 };
  let visible = false;
  let queued = false;
  const colours = new Map(); // node class -> fill
  let style = null; // {edge, selected, picked}

  // The colour a box of this class has in the SVG drawing: its header's fill (the box's own is white).
  function fillOf(cls) {
    if (!colours.has(cls)) {
      const g = document.createElementNS(SVG_NS, 'g');
      g.setAttribute('class', cls);
      const header = document.createElementNS(SVG_NS, 'path');
      header.setAttribute('class', 'node-header');
      g.appendChild(header);
      svg.appendChild(g);
      colours.set(cls, getComputedStyle(header).fill);
      g.remove();
    }
    return colours.get(cls);
  }
  function readStyle() {
    const edge = document.createElementNS(SVG_NS, 'path');
    edge.setAttribute('class', 'edge');
    svg.appendChild(edge);
    const css = getComputedStyle(container);
    style = {
      edge: getComputedStyle(edge).stroke,
      selected: css.getPropertyValue('--selected').trim() || 'red',
      picked: css.getPropertyValue('--picked').trim() || 'blue',
    };
    edge.remove();
  }

  // The boxes grouped by colour and the edges, each group one path.
  function build({ model, positions }) {
    const fills = new Map();
    for (const v of model.nodes) {
      const p = positions.nodes[v.id];
      if (!p) continue;
      const fill = fillOf(nodeClass(v));
      if (!fills.has(fill)) fills.set(fill, new Path2D());
      fills.get(fill).rect(p.x - v.width / 2, p.y - v.height / 2, v.width, v.height);
    }
    const edges = new Path2D();
    for (const points of positions.edges) {
      if (!points?.length) continue;
      edges.moveTo(points[0].x, points[0].y);
      for (let i = 1; i < points.length; i++) edges.lineTo(points[i].x, points[i].y);
    }
    return { fills: [...fills], edges };
  }
  // The heated, selected and picked boxes, found once per change of the marks, not on every frame.
  function mark({ model, positions }) {
    const out = { heat: [], rings: [] };
    if (!marks) return out;
    for (const v of model.nodes) {
      const p = positions.nodes[v.id];
      if (!p) continue;
      const box = { x0: p.x - v.width / 2, y0: p.y - v.height / 2, x1: p.x + v.width / 2, y1: p.y + v.height / 2 };
      const h = nodeHeat(marks, v.id, v.stands);
      if (h) out.heat.push({ ...box, colour: h.color });
      if (isPicked(marks, v.id, v.stands)) out.rings.push({ ...box, colour: style.picked });
      if (isSelected(marks, v.id, v.stands)) out.rings.push({ ...box, colour: style.selected });
    }
    return out;
  }

  function draw() {
    queued = false;
    if (!visible || !laid) return;
    const t0 = performance.now();
    if (!style) readStyle();
    ctx ??= canvas.getContext('2d');
    scene ??= build(laid);
    marked ??= mark(laid);
    const w = svg.clientWidth || 800;
    const h = svg.clientHeight || 600;
    const dpr = window.devicePixelRatio || 1;
    if (canvas.width !== Math.round(w * dpr) || canvas.height !== Math.round(h * dpr)) {
      canvas.width = Math.round(w * dpr);
      canvas.height = Math.round(h * dpr);
      canvas.style.width = `${w}px`;
      canvas.style.height = `${h}px`;
    }
    canvas.style.left = `${svg.offsetLeft}px`;
    canvas.style.top = `${svg.offsetTop}px`;
    const { x, y, k } = transform;
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    ctx.setTransform(dpr * k, 0, 0, dpr * k, dpr * x, dpr * y);
    ctx.lineWidth = 1 / k; // one screen pixel
    ctx.strokeStyle = style.edge;
    ctx.stroke(scene.edges);
    for (const [fill, path] of scene.fills) {
      ctx.fillStyle = fill;
      ctx.fill(path);
    }
    // Marks in screen pixels, with a minimum size.
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    const screen = (b, min) => {
      const cx = x + ((b.x0 + b.x1) / 2) * k;
      const cy = y + ((b.y0 + b.y1) / 2) * k;
      const bw = Math.max((b.x1 - b.x0) * k, min);
      const bh = Math.max((b.y1 - b.y0) * k, min);
      return [cx - bw / 2, cy - bh / 2, bw, bh];
    };
    for (const m of marked.heat) {
      ctx.fillStyle = m.colour;
      ctx.fillRect(...screen(m, HEAT_MIN_PX));
    }
    ctx.lineWidth = 2;
    for (const m of marked.rings) {
      ctx.strokeStyle = m.colour;
      const [rx, ry, rw, rh] = screen(m, MARK_MIN_PX);
      ctx.strokeRect(rx - 2, ry - 2, rw + 4, rh + 4);
    }
    container.dataset.overviewMs = (performance.now() - t0).toFixed(1); // this frame's drawing, for the benchmark
  }
  const request = () => {
    if (visible && !queued) {
      queued = true;
      requestAnimationFrame(draw);
    }
  };

  return {
    // A new layout (drawn when the overview is shown).
    setScene(model, positions) {
      laid = { model, positions };
      scene = null;
      marked = null;
      request();
    },
    // The state's marks (marks.mjs's shape).
    setMarks(m) {
      marks = m;
      marked = null;
      request();
    },
    show(on) {
      visible = on;
      canvas.hidden = !on;
      if (on) request();
    },
    get shown() { return visible; },
    update(t) {
      transform = t;
      request();
    },
    // Draws now (the first view waits for it), not on the next frame.
    drawNow: () => draw(),
    clear() {
      laid = null;
      scene = null;
      marked = null;
      ctx?.clearRect(0, 0, canvas.width, canvas.height);
    },
    // A point of the view (client coordinates) in layout units.
    toLayout(clientX, clientY) {
      const r = svg.getBoundingClientRect();
      return { x: (clientX - r.left - transform.x) / transform.k, y: (clientY - r.top - transform.y) / transform.k };
    },
  };
}
