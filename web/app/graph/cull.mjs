// Viewport culling for the graph view: a uniform grid over the layout's boxes answers "what
// intersects this rectangle" without scanning every node, so a pan or zoom only touches what enters
// or leaves the view. Pure (no DOM), shared by the view and its tests.

const CELL = 512; // layout units per grid cell (a few boxes wide)
const MAX_CELLS = 256; // an item spanning more cells (a very long edge) is checked on every query

// boxes: [{x0, y0, x1, y1} | null] -> { query(rect) -> Set of the indices whose box intersects rect }
export function createGridIndex(boxes, cell = CELL) {
  const grid = new Map();
  const wide = [];
  const span = (b) => [Math.floor(b.x0 / cell), Math.floor(b.y0 / cell), Math.floor(b.x1 / cell), Math.floor(b.y1 / cell)];
  boxes.forEach((b, i) => {
    if (!b) return;
    const [cx0, cy0, cx1, cy1] = span(b);
    if ((cx1 - cx0 + 1) * (cy1 - cy0 + 1) > MAX_CELLS) {
      wide.push(i);
      return;
    }
    for (let cx = cx0; cx <= cx1; cx++) {
      for (let cy = cy0; cy <= cy1; cy++) {
        const key = `${cx},${cy}`;
        if (!grid.has(key)) grid.set(key, []);
        grid.get(key).push(i);
      }
    }
  });
  return {
    query(r) {
      const found = new Set();
      const test = (i) => {
        const b = boxes[i];
        if (b.x0 <= r.x1 && b.x1 >= r.x0 && b.y0 <= r.y1 && b.y1 >= r.y0) found.add(i);
      };
      const [cx0, cy0, cx1, cy1] = span(r);
      if ((cx1 - cx0 + 1) * (cy1 - cy0 + 1) > grid.size) {
        for (const list of grid.values()) list.forEach(test); // zoomed far out: fewer filled cells than cells in view
      } else {
        for (let cx = cx0; cx <= cx1; cx++) for (let cy = cy0; cy <= cy1; cy++) grid.get(`${cx},${cy}`)?.forEach(test);
      }
      wide.forEach(test);
      return found;
    },
  };
}

// The layout rectangle shown by a d3 zoom transform {x, y, k} on a width × height view, grown by
// `margin` screen pixels on every side (what is about to scroll in is drawn already).
export const visibleRect = ({ x, y, k }, width, height, margin) =>
  ({ x0: (-x - margin) / k, y0: (-y - margin) / k, x1: (width - x + margin) / k, y1: (height - y + margin) / k });

// A view node's box around its layout centre.
export const nodeBox = (v, p) => (p ? { x0: p.x - v.width / 2, y0: p.y - v.height / 2, x1: p.x + v.width / 2, y1: p.y + v.height / 2 } : null);

// An edge's box: its points, grown by `pad` ({right, y}) for the badges and label drawn beside it.
export function pointsBox(points, pad = { right: 0, y: 0 }) {
  if (!points?.length) return null;
  const xs = points.map((p) => p.x);
  const ys = points.map((p) => p.y);
  return { x0: Math.min(...xs), y0: Math.min(...ys) - pad.y, x1: Math.max(...xs) + pad.right, y1: Math.max(...ys) + pad.y };
}
