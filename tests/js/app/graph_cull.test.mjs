// Viewport culling of the graph view (web/app/graph/cull.mjs + drawing.mjs, through view.mjs) on linkedom: the grid index
// answers like a scan of every box, and on a 20,102-box graph only the boxes that intersect the view
// (plus margin) are in the DOM, before and after a pan; selection, picks and heat set while a node is
// off-screen are on it once it is drawn. (Chromium: viewer_browser.test.mjs.)
import { describe, it, expect, beforeAll } from 'vitest';
import { parseHTML } from 'linkedom';
import { buildViewModel } from '../../../web/app/graph/model.mjs';
import { layoutGraph } from '../../../web/app/graph/layout_core.mjs';
import { createGridIndex, visibleRect, nodeBox } from '../../../web/app/graph/cull.mjs';
import { createStore, DEFAULTS } from '../../../web/app/state.mjs';
import { bigGraph } from './big_graph.mjs';

const VIEW = { w: 800, h: 600 }; // linkedom has no layout: the view's fallback size
const MARGIN_PX = 300; // drawing.mjs's

let createGraphView;
beforeAll(async () => {
  const { window, document } = parseHTML('<!doctype html><html><body></body></html>');
  Object.assign(globalThis, { window, document, CustomEvent: window.CustomEvent });
  globalThis.requestAnimationFrame ??= (fn) => setTimeout(() => fn(performance.now()), 0);
  if (!globalThis.navigator) globalThis.navigator = { maxTouchPoints: 0 }; // d3-zoom asks (Node 20 has none)
  ({ createGraphView } = await import('../../../web/app/graph/view.mjs'));
});

let layouts = 0; // a pan or zoom never lays out again
const layout = async (graph, options) => {
  layouts++;
  const model = buildViewModel(graph, options);
  return { model, layout: layoutGraph(model), ms: 0 };
};
const intersects = (a, b) => a.x0 <= b.x1 && a.x1 >= b.x0 && a.y0 <= b.y1 && a.y1 >= b.y0;

async function until(check, what) {
  for (let i = 0; i < 2000; i++) {
    if (check()) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('grid index', () => {
  it('finds exactly the boxes a scan finds', async () => {
    const { model, layout: pos } = await layout(bigGraph(300));
    const boxes = model.nodes.map((v) => nodeBox(v, pos.nodes[v.id]));
    const index = createGridIndex(boxes);
    const rects = [{ x0: 0, y0: 0, x1: 800, y1: 600 }, { x0: -50, y0: 20_000, x1: 90, y1: 21_000 },
      { x0: -1e6, y0: -1e6, x1: 1e6, y1: 1e6 }, { x0: 5_000, y0: 0, x1: 6_000, y1: 100 }];
    for (const r of rects) {
      const scan = boxes.flatMap((b, i) => (intersects(b, r) ? [i] : []));
      expect([...index.query(r)].sort((a, b) => a - b)).toEqual(scan);
    }
  });
});

describe('graph view culling (linkedom)', () => {
  it('20,102 boxes: the DOM holds what is in view; marks reach nodes drawn later', async () => {
    const container = document.createElement('div');
    document.body.append(container);
    const state = createStore({ ...DEFAULTS, picked: new Set() });
    const view = createGraphView(container, state, { layout });
    const far = 'relu6000';
    state.set('heat', { values: new Map([[far, { value: 1, color: 'rgb(10, 20, 30)', label: '1' }]]), legend: { title: 'mse' } });
    state.set('selection', far);
    state.set('picked', new Set(['add6000']));
    layouts = 0;
    state.set('graph', bigGraph(6700));
    await until(() => container.dataset.state === 'ready', 'the first drawing');

    const model = view.model;
    expect(model.nodes.length).toBe(20_102);
    // Exactly the boxes that intersect the view plus margin are drawn.
    const shown = () => {
      const t = container.querySelector('svg').__zoom;
      const rect = visibleRect(t, VIEW.w, VIEW.h, MARGIN_PX);
      return model.nodes.filter((v) => intersects(nodeBox(v, view.positions.nodes[v.id]), rect)).map((v) => v.id).sort();
    };
    const drawn = () => [...container.querySelectorAll('.node')].map((g) => g.dataset.id).sort();
    expect(drawn()).toEqual(shown());
    expect(drawn().length).toBeGreaterThan(0);
    expect(drawn().length).toBeLessThan(100);
    expect(drawn()).not.toContain(far);

    // Pan to a far node: it is drawn, with the marks set while it was off-screen; the top is gone.
    view.focus(far, false);
    await view.update();
    expect(drawn()).toEqual(shown());
    expect(drawn()).not.toContain('conv0');
    const g = container.querySelector(`.node[data-id="${far}"]`);
    expect(g.classList.contains('selected')).toBe(true);
    expect(g.classList.contains('heated')).toBe(true);
    expect(g.querySelector('.node-body').style.fill).toBe('rgb(10, 20, 30)');
    expect(container.querySelector('.node[data-id="add6000"]').classList.contains('picked')).toBe(true);
    // Marks follow the state for what is drawn now.
    state.set('selection', null);
    expect(g.classList.contains('selected')).toBe(false);
    expect(container.querySelectorAll('.badge').length).toBeLessThan(100);
    expect(layouts).toBe(1);
  });
});
