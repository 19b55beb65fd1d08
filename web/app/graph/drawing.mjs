// Drawing what the view shows: only the boxes and edges that intersect the visible area (plus a
// margin) are in the DOM. A pan or zoom asks for an update; each pass removes what left the view and
// draws what came into it for about a frame's budget, so 20,000-node graphs never block the page.
import { zoomTransform } from 'd3';
import { createGridIndex, visibleRect, nodeBox } from './cull.mjs';
import { nodeMark, edgeMarks, edgeBox } from './marks.mjs';

const BUDGET_MS = 24; // drawing time per animation frame
const MARGIN_PX = 300; // drawn beyond each side of the view, in screen pixels

const frame = () => new Promise((resolve) => requestAnimationFrame(() => resolve()));

/**
 * createDrawing({svg, layers, container, size(), decorate(g)}) -> {setScene, clear, requestUpdate, suspend, nodeAt, drawn}
 * layers: {edges, labels, nodes} <g> elements; decorate(g): marks a node or badge element just drawn.
 * container.dataset.drawnNodes / drawnEdges count what is in the DOM after each pass.
 */
export function createDrawing({ svg, layers, container, size, decorate }) {
  let scene = null; // {model, positions, index: {nodes, edges}}
  let drawnNodes = new Map(); // index in model.nodes -> <g>
  let drawnEdges = new Map(); // index in model.edges -> [its elements]
  const drawn = new Map(); // view node id -> <g>, drawn ones only

  const drawNode = (i) => {
    const v = scene.model.nodes[i];
    const g = nodeMark(layers.nodes, v, scene.positions.nodes[v.id]);
    drawn.set(v.id, g);
    drawnNodes.set(i, g);
    decorate(g);
    for (const b of g.querySelectorAll('.badge')) decorate(b);
  };
  const drawEdge = (i) => {
    const parts = edgeMarks(layers, scene.model.edges[i], scene.positions.edges[i]);
    for (const p of parts) if (p.classList.contains('badge')) decorate(p);
    drawnEdges.set(i, parts);
  };

  // Removes what left the view (plus margin) and returns the drawing jobs for what came into it.
  function reconcile() {
    if (!scene) return [];
    if (suspended) {
      // The overview draws the graph (overview.mjs): nothing of it in the DOM.
      if (drawnNodes.size || drawnEdges.size) removeAll();
      return [];
    }
    const { w, h } = size();
    const rect = visibleRect(zoomTransform(svg), w, h, MARGIN_PX);
    const nodesIn = scene.index.nodes.query(rect);
    const edgesIn = scene.index.edges.query(rect);
    for (const [i, g] of drawnNodes) {
      if (nodesIn.has(i)) continue;
      g.remove();
      drawnNodes.delete(i);
      drawn.delete(scene.model.nodes[i].id);
    }
    for (const [i, parts] of drawnEdges) {
      if (edgesIn.has(i)) continue;
      parts.forEach((part) => part.remove());
      drawnEdges.delete(i);
    }
    const jobs = [];
    for (const i of edgesIn) if (!drawnEdges.has(i)) jobs.push(() => drawEdge(i));
    for (const i of nodesIn) if (!drawnNodes.has(i)) jobs.push(() => drawNode(i));
    return jobs;
  }

  // One update loop at a time: a zoom event during it (or jobs left over) asks for another pass.
  let suspended = false; // far out, the overview replaces the drawing
  let updating = null; // promise of the running loop (resolves to its number of passes)
  let dirty = false;
  async function updateLoop() {
    let passes = 0;
    while (dirty) {
      dirty = false;
      const jobs = reconcile();
      const start = performance.now();
      let i = 0;
      while (i < jobs.length) {
        jobs[i++]();
        if (i % 64 === 0 && performance.now() - start > BUDGET_MS) break;
      }
      if (i < jobs.length) dirty = true;
      passes++;
      container.dataset.drawnNodes = String(drawnNodes.size);
      container.dataset.drawnEdges = String(drawnEdges.size);
      await frame();
    }
    return passes;
  }

  function removeAll() {
    for (const layer of Object.values(layers)) layer.replaceChildren();
    drawn.clear();
    drawnNodes = new Map();
    drawnEdges = new Map();
  }
  function clear() {
    removeAll();
    scene = null;
  }

  return {
    drawn,
    clear,
    // A new laid-out model: the previous drawing is removed, nothing is drawn until requestUpdate().
    setScene(model, positions) {
      clear();
      scene = {
        model, positions,
        index: {
          nodes: createGridIndex(model.nodes.map((v) => nodeBox(v, positions.nodes[v.id]))),
          edges: createGridIndex(model.edges.map((e, i) => edgeBox(e, positions.edges[i]))),
        },
      };
    },
    // On: nothing is drawn (what is drawn goes on the next update); off: culling draws again.
    suspend(on) { suspended = on; },
    // The view node nearest to layout point (x, y) within `r` layout units of its box, or null.
    nodeAt(x, y, r) {
      if (!scene) return null;
      let best = null;
      let bestD = Infinity;
      for (const i of scene.index.nodes.query({ x0: x - r, y0: y - r, x1: x + r, y1: y + r })) {
        const v = scene.model.nodes[i];
        const p = scene.positions.nodes[v.id];
        const d = Math.max(0, Math.abs(x - p.x) - v.width / 2) ** 2 + Math.max(0, Math.abs(y - p.y) - v.height / 2) ** 2;
        if (d < bestD) [best, bestD] = [v, d];
      }
      return best;
    },
    // Stops culling (the previous drawing stays as it is until the next scene replaces it).
    freeze() { scene = null; },
    requestUpdate() {
      dirty = true;
      if (!updating && scene) updating = updateLoop().finally(() => { updating = null; });
      return updating;
    },
  };
}
