// The graph view: D3 zoom/pan, fit, the first view, selection, picks, heat, focus, toolbar and keys,
// around four parts: drawing.mjs (viewport culling: only what is near the visible area is in the
// DOM, drawn in frame-sized chunks), marks.mjs (the SVG of nodes, edges and badges and their
// decoration), overview.mjs (a big graph far out: one canvas instead of SVG) and search_box.mjs.
// Layout happens once per model (or calibration toggle) in a worker; a pan or zoom changes one
// transform and never re-lays out. Selection, picks and heat colours live in the state and are
// applied to each element when it is drawn, so they hold for nodes that are off-screen now. A double-click on a node with a subgraph (If, Loop, Scan) shows that body, as Netron
// does; the path bar above the graph goes back. Analysis marks belong to the main graph only.
import { select, zoom as d3zoom, zoomIdentity, zoomTransform } from 'd3';
import { viewNodeFor, hasQdq, bodiesOf } from './model.mjs';
import { createDrawing } from './drawing.mjs';
import { createOverview } from './overview.mjs';
import { decorateNode, decorateBadge } from './marks.mjs';
import { ARROW_DEFS, addMarksStyle } from './marks_style.mjs';
import { mountSearchBox } from './search_box.mjs';

const LOD_SCALE = 0.35; // below this zoom, text is hidden
// ...and a graph of this many boxes is drawn by the overview (a canvas) instead of SVG: far out, a
// big graph puts thousands of boxes in view, too many SVG groups to pan in a frame. Smaller graphs
// keep their SVG boxes (tooltips, double-click) at every zoom.
const OVERVIEW_BOXES = 1000;
const MIN_ZOOM = 0.02; // the zoom's floor, lowered to what "Fit" needs for a bigger layout

// layout(graph, options) -> {model, layout, ms} (the layout worker's answer; workers.mjs's
// modelAndLayout in the app); cancelLayout() drops a running one.
export function createGraphView(container, state, { setStatus = () => {}, layout, cancelLayout = () => {} } = {}) {
  addMarksStyle(container.ownerDocument);
  container.classList.add('graph');
  container.innerHTML = `
    <svg class="graph-canvas" tabindex="0" aria-label="model graph">
      ${ARROW_DEFS}
      <g class="viewport"><g class="edges"></g><g class="edge-labels"></g><g class="nodes"></g></g>
    </svg>
    <div class="graph-toolbar">
      <button type="button" data-act="zoom-in" title="Zoom in (+)">+</button>
      <button type="button" data-act="zoom-out" title="Zoom out (-)">−</button>
      <button type="button" data-act="fit" title="Fit to screen (F or 0)">Fit</button>
      <button type="button" data-act="search" title="Search nodes, tensors, op types (Ctrl+F)">Search</button>
      <label class="calibration-toggle" title="Show HzCalibration nodes as nodes instead of badges (C)"><input type="checkbox" data-act="calibration"> <span>calibration nodes</span></label>
    </div>
    <nav class="graph-path" aria-label="subgraph path" hidden></nav>
    <div class="graph-search" hidden>
      <input type="search" placeholder="node, tensor or op type" aria-label="search the graph">
      <ul class="graph-search-results"></ul>
    </div>
    <div class="graph-legend" hidden></div>`;
  const svg = container.querySelector('svg');
  const viewport = svg.querySelector('.viewport');
  const layers = { edges: svg.querySelector('.edges'), labels: svg.querySelector('.edge-labels'), nodes: svg.querySelector('.nodes') };
  const calibrationToggle = container.querySelector('[data-act=calibration]');
  // A Q/DQ model's quantizers are its QuantizeLinear/DequantizeLinear nodes: the toggle says so.
  function labelToggle(g) {
    const qdq = hasQdq(g);
    const label = calibrationToggle.closest('label');
    label.querySelector('span').textContent = qdq ? 'Show Q/DQ as nodes' : 'calibration nodes';
    label.title = qdq ? 'Show the QuantizeLinear/DequantizeLinear nodes instead of badges (C)' : 'Show HzCalibration nodes as nodes instead of badges (C)';
  }

  let model = null; // view model
  let graph = null; // graphJson
  let trail = []; // [{node, attr, graph}]: the bodies opened from the main graph down to the one shown
  const shown = () => trail.at(-1)?.graph ?? graph;
  let positions = null; // layout result
  let marks = { selected: null, picked: new Set(), heat: null }; // view node ids / heat, from the state
  let generation = 0; // bumps on every new graph / toggle; stale async work stops
  let lod = false;

  // The extent is the view's size (as culling sees it), not d3's guess from the SVG's attributes.
  const zoomBehavior = d3zoom().scaleExtent([MIN_ZOOM, 4]).extent(() => [[0, 0], [size().w, size().h]]).on('zoom', (ev) => {
    viewport.setAttribute('transform', ev.transform.toString());
    const low = ev.transform.k < LOD_SCALE;
    if (low !== lod) {
      lod = low;
      svg.classList.toggle('lod-low', low);
    }
    syncOverview(ev.transform);
    drawing.requestUpdate();
  });
  const svgSel = select(svg).call(zoomBehavior).on('dblclick.zoom', null);

  const size = () => ({ w: svg.clientWidth || 800, h: svg.clientHeight || 600 });
  const decorate = (g) => (g.classList.contains('badge') ? decorateBadge(g, marks, state.get('selection')) : decorateNode(g, marks));
  const drawing = createDrawing({ svg, layers, container, size, decorate });
  const overview = createOverview({ svg, container });
  // The overview replaces the SVG drawing of a big graph below LOD_SCALE; back above it, the culled
  // SVG drawing draws what is in view again.
  function syncOverview(t) {
    const on = Boolean(model && positions && model.nodes.length >= OVERVIEW_BOXES && t.k < LOD_SCALE);
    if (on !== overview.shown) {
      drawing.suspend(on);
      overview.show(on);
      container.dataset.overview = on ? 'on' : 'off';
    }
    overview.update(t);
  }
  // The zoom that shows the whole layout (at most 2×).
  const fitScale = () => {
    const { w, h } = size();
    return Math.min(2, 0.95 * Math.min(w / Math.max(positions.width, 1), h / Math.max(positions.height, 1)));
  };
  // The whole graph, however big: far out the overview draws it, so no zoom is too small to pan.
  function fit(animate = true) {
    if (!positions) return;
    const { w, h } = size();
    const k = fitScale();
    zoomBehavior.scaleExtent([Math.min(MIN_ZOOM, k), 4]);
    const t = zoomIdentity.translate((w - positions.width * k) / 2, Math.max(10, (h - positions.height * k) / 2)).scale(k);
    (animate ? svgSel.transition().duration(300) : svgSel).call(zoomBehavior.transform, t);
  }
  // First view of a model: the whole graph when it fits readably, else its top at 100 % (like
  // Netron); F fits anyway.
  function initialView() {
    const { w, h } = size();
    const k = Math.min(w / Math.max(positions.width, 1), h / Math.max(positions.height, 1));
    if (k >= 0.5) return fit(false);
    const first = model.nodes.find((n) => n.kind === 'input') ?? model.nodes[0];
    const p = positions.nodes[first?.id] ?? { x: positions.width / 2, y: 0 };
    svgSel.call(zoomBehavior.transform, zoomIdentity.translate(w / 2 - p.x, 40 - p.y + (first?.height ?? 0) / 2));
  }
  function centreOn(id, animate = true) {
    const p = positions?.nodes[id];
    if (!p) return false;
    const { w, h } = size();
    const current = svg.__zoom?.k ?? 1;
    const k = Math.max(current, 0.8);
    const t = zoomIdentity.translate(w / 2 - p.x * k, h / 2 - p.y * k).scale(k);
    (animate ? svgSel.transition().duration(300) : svgSel).call(zoomBehavior.transform, t);
    return true;
  }

  async function render(gen) {
    drawing.setScene(model, positions);
    overview.setScene(model, positions);
    zoomBehavior.scaleExtent([Math.min(MIN_ZOOM, fitScale()), 4]);
    container.dataset.layoutWidth = String(Math.round(positions.width));
    container.dataset.layoutHeight = String(Math.round(positions.height));
    computeMarks();
    container.dataset.state = 'drawing';
    setStatus(`Drawing ${model.nodes.length} nodes…`);
    const t0 = performance.now();
    initialView();
    syncOverview(zoomTransform(svg));
    if (overview.shown) overview.drawNow();
    const slices = await drawing.requestUpdate();
    if (gen !== generation) return;
    container.dataset.state = 'ready';
    container.dataset.nodes = String(model.nodes.length);
    container.dataset.drawMs = String(Math.round(performance.now() - t0));
    container.dataset.drawSlices = String(slices);
    setStatus(null);
    container.dispatchEvent(new CustomEvent('graph-ready', { detail: model.stats }));
  }

  function show(newGraph) {
    graph = newGraph;
    trail = [];
    return display();
  }
  async function display() {
    const gen = ++generation;
    const current = shown();
    drawPath();
    model = null;
    positions = null;
    drawing.freeze(); // the previous drawing stays, unculled, until the new one replaces it
    if (current) labelToggle(current);
    if (!current) {
      drawing.clear();
      overview.clear();
      container.dataset.state = 'empty';
      return;
    }
    container.dataset.state = 'layout';
    setStatus(`Laying out ${current.nodes.length} nodes…`);
    cancelLayout(); // a previous model's layout is of no use any more
    let result;
    try {
      result = await layout(current, { showCalibration: calibrationToggle.checked });
    } catch (err) {
      if (err.name === 'AbortError' || gen !== generation) return;
      setStatus(null);
      state.set('error', `Graph layout failed: ${err.message}`);
      return;
    }
    if (gen !== generation) return;
    model = result.model;
    positions = result.layout;
    container.dataset.layoutMs = String(Math.round(result.ms));
    container.dataset.layout = result.layout.engine;
    await render(gen);
  }

  // --- selection, picks, heat, focus ---------------------------------------------------------
  // The view node ids the state marks (a calibration node collapsed into a badge marks its consumer).
  const viewIdOf = (name) => (model && graph && name ? viewNodeFor(model, graph, name)?.id ?? null : null);
  function computeMarks() {
    if (trail.length) {
      // A body's node names are its own (they may repeat main-graph names): no analysis marks there.
      marks = { selected: null, picked: new Set(), heat: null, selectedName: null, pickedNames: new Set() };
      container.classList.remove('heat-on');
      overview.setMarks(marks);
      return;
    }
    marks = {
      selected: viewIdOf(state.get('selection')),
      picked: new Set([...(state.get('picked') ?? [])].map(viewIdOf).filter(Boolean)),
      heat: state.get('heat')?.values ? state.get('heat') : null,
      selectedName: state.get('selection') ?? null,
      pickedNames: new Set(state.get('picked') ?? []),
      states: state.get('calibrationStates'),
    };
    container.classList.toggle('heat-on', Boolean(state.get('heat')));
    overview.setMarks(marks);
  }
  // A state change re-marks what is drawn; what is drawn later gets its marks then.
  function applyMarks() {
    computeMarks();
    for (const g of drawing.drawn.values()) decorate(g);
    for (const b of svg.querySelectorAll('.badge')) decorate(b);
  }
  async function focus(name, animate = true) {
    if (!name || !model) return;
    if (trail.length) await openTrail([]); // names the state holds are the main graph's
    const v = viewNodeFor(model, graph, name) ?? (model.byName.get(`input:${name}`) || model.byName.get(`output:${name}`));
    if (v) centreOn(v.id, animate);
  }

  // A wider or taller view (the sidebar closing, a window resize) shows more of the layout.
  if (typeof ResizeObserver === 'function') new ResizeObserver(() => {
    drawing.requestUpdate();
    overview.update(zoomTransform(svg));
  }).observe(svg);

  state.on('selection', applyMarks);
  state.on('picked', applyMarks);
  state.on('heat', applyMarks);
  state.on('calibrationStates', applyMarks);
  state.on('focus', (name) => focus(name));
  state.on('graph', (g) => show(g));

  // --- pointer ---------------------------------------------------------------------------------
  // The node under a click: its SVG box, or far out the overview's box nearest the click (within 4 px).
  function nodeAtClick(ev) {
    const g = ev.target.closest?.('.node');
    if (g) return { node: g.classList.contains('node-node'), name: g.dataset.stands || g.dataset.name };
    if (!overview.shown) return null;
    const p = overview.toLayout(ev.clientX, ev.clientY);
    const v = drawing.nodeAt(p.x, p.y, 4 / zoomTransform(svg).k);
    return v ? { node: v.kind === 'node', name: v.stands || v.name } : null;
  }
  svg.addEventListener('click', (ev) => {
    const badge = ev.target.closest?.('.badge');
    const hit = badge ? null : nodeAtClick(ev);
    // Badges stand for their calibration node; graph input/output boxes select nothing.
    // A Q/DQ node stands for its calibration node.
    const name = badge ? badge.dataset.calibration : hit?.node ? hit.name : null;
    if (trail.length) return; // a body's nodes are not the main graph's (their tooltip names them)
    if (!name) {
      if (!hit) state.set('selection', null);
      return;
    }
    if (ev.ctrlKey || ev.metaKey || ev.shiftKey) {
      const picked = new Set(state.get('picked') ?? []);
      if (picked.has(name)) picked.delete(name);
      else picked.add(name);
      state.set('picked', picked);
    } else {
      state.set('selection', name);
    }
  });

  // --- subgraphs ------------------------------------------------------------------------------
  function openTrail(next) {
    trail = next;
    return display();
  }
  function openBody(nodeName, attr) {
    const node = shown()?.nodes.find((n) => n.name === nodeName);
    const body = bodiesOf(node).find((b) => attr === undefined || b.attr === attr);
    if (body) openTrail([...trail, { node: nodeName, attr: body.attr, graph: body.graph }]);
  }
  svg.addEventListener('dblclick', (ev) => {
    const g = ev.target.closest?.('.node.node-has-body');
    if (g) openBody(g.dataset.name);
  });
  // main graph › Loop_3 · body [› ...]; the body shown also offers its node's other bodies (If's else_branch).
  const pathBar = container.querySelector('.graph-path');
  function drawPath() {
    pathBar.hidden = trail.length === 0;
    container.dataset.path = trail.map((t) => `${t.node}.${t.attr}`).join('/');
    pathBar.replaceChildren();
    if (!trail.length) return;
    const crumb = (text, act, title) => {
      const b = document.createElement('button');
      b.type = 'button';
      b.textContent = text;
      b.title = title;
      b.addEventListener('click', act);
      pathBar.append(b);
      return b;
    };
    crumb(graph?.name || 'main graph', () => openTrail([]), 'Back to the main graph (Backspace goes up one level)');
    trail.forEach((t, i) => {
      pathBar.append(' › ');
      const here = crumb(`${t.node} · ${t.attr}`, () => openTrail(trail.slice(0, i + 1)), `The ${t.attr} of ${t.node}`);
      if (i < trail.length - 1) return;
      here.setAttribute('aria-current', 'true');
      const parent = i === 0 ? graph : trail[i - 1].graph;
      for (const other of bodiesOf(parent.nodes.find((n) => n.name === t.node))) {
        if (other.attr === t.attr) continue;
        crumb(other.attr, () => openTrail([...trail.slice(0, i), { node: t.node, attr: other.attr, graph: other.graph }]), `Show the ${other.attr} of ${t.node} instead`)
          .classList.add('graph-path-sibling');
      }
    });
  }

  // --- toolbar, search, keys -----------------------------------------------------------------
  const zoomBy = (f) => svgSel.transition().duration(200).call(zoomBehavior.scaleBy, f);
  function toggleCalibration(on) {
    calibrationToggle.checked = on;
    if (graph) display();
  }
  container.querySelector('.graph-toolbar').addEventListener('click', (ev) => {
    const act = ev.target.closest('[data-act]')?.dataset.act;
    if (act === 'zoom-in') zoomBy(1.25);
    else if (act === 'zoom-out') zoomBy(0.8);
    else if (act === 'fit') fit();
    else if (act === 'search') search.open();
  });
  calibrationToggle.addEventListener('change', () => toggleCalibration(calibrationToggle.checked));

  const search = mountSearchBox(container.querySelector('.graph-search'), {
    graph: () => graph,
    close: () => svg.focus(),
    async choose(m) {
      if (!m) return;
      if (trail.length) await openTrail([]); // search finds main-graph nodes
      const name = m.kind === 'tensor' && model?.byName.has(`input:${m.tensor}`) ? m.tensor : m.node;
      if (!name || !model) return;
      // Select first: the sidebar opening narrows the graph, and centring must use the final size.
      if (!model.byName.has(`input:${name}`)) state.set('selection', name);
      state.set('focus', name);
    },
  });

  document.addEventListener('keydown', (ev) => {
    const typing = /^(INPUT|TEXTAREA|SELECT)$/.test(document.activeElement?.tagName ?? '');
    if ((ev.ctrlKey || ev.metaKey) && ev.key.toLowerCase() === 'f' && graph) {
      ev.preventDefault();
      search.open();
      return;
    }
    if (typing || ev.ctrlKey || ev.metaKey || ev.altKey || !graph) return;
    if (ev.key === '+' || ev.key === '=') zoomBy(1.25);
    else if (ev.key === '-') zoomBy(0.8);
    else if (ev.key === 'f' || ev.key === '0') fit();
    else if (ev.key === 'c') toggleCalibration(!calibrationToggle.checked);
    else if (ev.key === 'Escape') state.set('selection', null);
    else if (ev.key === 'Backspace' && trail.length) openTrail(trail.slice(0, -1));
  });

  return {
    show, fit, focus, openBody,
    // Resolves once what the current transform shows is drawn (and what it does not is removed).
    update: () => drawing.requestUpdate() ?? Promise.resolve(0),
    get model() { return model; },
    get positions() { return positions; },
  };
}
