// The graph view: SVG drawing of the view model, D3 zoom/pan, fit, search, selection, heat colours.
// Layout happens once per model (or calibration toggle) in a worker. Only the boxes and edges that
// intersect the visible area (plus a margin) are in the DOM (viewport culling, cull.mjs): a pan or
// zoom changes one transform, then adds what came into view and removes what left, never
// re-laying out; drawing is chunked over animation frames so 20,000-node graphs never block the
// page. Selection, picks and heat colours live in the state and are applied to each element when it
// is drawn, so they hold for nodes that are off-screen now.
import { select, zoom as d3zoom, zoomIdentity, zoomTransform, line, curveBasis } from 'd3';
import { viewNodeFor, HEADER_HEIGHT, ROW_HEIGHT, badgeWidth, textWidth } from './model.mjs';
import { searchGraph } from './search.mjs';
import { createGridIndex, visibleRect, nodeBox, pointsBox } from './cull.mjs';

const SVG_NS = 'http://www.w3.org/2000/svg';
const BUDGET_MS = 24; // drawing time per animation frame
const LOD_SCALE = 0.35; // below this zoom, text is hidden
const MARGIN_PX = 300; // drawn beyond each side of the view, in screen pixels

const el = (name, attrs = {}, parent = null) => {
  const e = document.createElementNS(SVG_NS, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (parent) parent.appendChild(e);
  return e;
};
const frame = () => new Promise((resolve) => requestAnimationFrame(() => resolve()));
const edgePath = line().x((p) => p.x).y((p) => p.y).curve(curveBasis);

// Relative luminance of an 'rgb(...)' or '#rrggbb' colour (null if unparsed), to keep text readable.
function luminance(color) {
  const m = /^rgba?\(\s*([\d.]+)[ ,]+([\d.]+)[ ,]+([\d.]+)/.exec(color) ??
    /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(color)?.slice(0, 4).map((x, i) => (i ? parseInt(x, 16) : x));
  if (!m) return null;
  const [r, g, b] = m.slice(1, 4).map((v) => Number(v) / 255);
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

// Rounded-top rectangle for a node header.
function headerPath(w, h, r, roundBottom) {
  const b = roundBottom ? r : 0;
  return `M0,${r}a${r},${r} 0 0 1 ${r},-${r}h${w - 2 * r}a${r},${r} 0 0 1 ${r},${r}v${h - r - b}` +
    (b ? `a${b},${b} 0 0 1 -${b},${b}h-${w - 2 * b}a${b},${b} 0 0 1 -${b},-${b}z` : `h-${w}z`);
}

// layout(graph, options) -> {model, layout, ms} (the layout worker's answer; workers.mjs's
// modelAndLayout in the app); cancelLayout() drops a running one.
export function createGraphView(container, state, { setStatus = () => {}, layout, cancelLayout = () => {} } = {}) {
  container.classList.add('graph');
  container.innerHTML = `
    <svg class="graph-canvas" tabindex="0" aria-label="model graph">
      <defs><marker id="ptq-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto">
        <path d="M0,0L10,5L0,10z"/></marker></defs>
      <g class="viewport"><g class="edges"></g><g class="edge-labels"></g><g class="nodes"></g></g>
    </svg>
    <div class="graph-toolbar">
      <button type="button" data-act="zoom-in" title="Zoom in (+)">+</button>
      <button type="button" data-act="zoom-out" title="Zoom out (-)">−</button>
      <button type="button" data-act="fit" title="Fit to screen (F or 0)">Fit</button>
      <button type="button" data-act="search" title="Search nodes, tensors, op types (Ctrl+F)">Search</button>
      <label title="Show HzCalibration nodes as nodes instead of badges (C)"><input type="checkbox" data-act="calibration"> calibration nodes</label>
    </div>
    <div class="graph-search" hidden>
      <input type="search" placeholder="node, tensor or op type" aria-label="search the graph">
      <ul class="graph-search-results"></ul>
    </div>
    <div class="graph-legend" hidden></div>`;
  const svg = container.querySelector('svg');
  const viewport = svg.querySelector('.viewport');
  const layers = { edges: svg.querySelector('.edges'), labels: svg.querySelector('.edge-labels'), nodes: svg.querySelector('.nodes') };
  const searchBox = container.querySelector('.graph-search');
  const searchInput = searchBox.querySelector('input');
  const searchResults = searchBox.querySelector('ul');
  const calibrationToggle = container.querySelector('[data-act=calibration]');

  let model = null; // view model
  let graph = null; // graphJson
  let positions = null; // layout result
  let index = null; // {nodes, edges}: grid indexes of the layout boxes (cull.mjs)
  let elements = new Map(); // view node id -> <g>, drawn ones only
  let drawnNodes = new Map(); // index in model.nodes -> <g>
  let drawnEdges = new Map(); // index in model.edges -> [its elements]
  let marks = { selected: null, picked: new Set(), heat: null }; // view node ids / heat, from the state
  let generation = 0; // bumps on every new graph / toggle; stale async work stops
  let lod = false;

  // The extent is the view's size (as culling sees it), not d3's guess from the SVG's attributes.
  const zoomBehavior = d3zoom().scaleExtent([0.02, 4]).extent(() => [[0, 0], [size().w, size().h]]).on('zoom', (ev) => {
    viewport.setAttribute('transform', ev.transform.toString());
    const low = ev.transform.k < LOD_SCALE;
    if (low !== lod) {
      lod = low;
      svg.classList.toggle('lod-low', low);
    }
    requestUpdate();
  });
  const svgSel = select(svg).call(zoomBehavior).on('dblclick.zoom', null);

  const size = () => ({ w: svg.clientWidth || 800, h: svg.clientHeight || 600 });
  function fit(animate = true) {
    if (!positions) return;
    const { w, h } = size();
    // Not below the zoom's minimum: a 20,000-node graph is a sea of sub-pixel boxes (all drawn) there.
    const k = Math.max(zoomBehavior.scaleExtent()[0], Math.min(2, 0.95 * Math.min(w / Math.max(positions.width, 1), h / Math.max(positions.height, 1))));
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

  function drawNode(i) {
    const v = model.nodes[i];
    const p = positions.nodes[v.id];
    const g = el('g', {
      class: `node node-${v.kind}${v.category ? ` node-cat-${v.category}` : ''}${v.calibration ? ' node-calibration' : ''}`,
      transform: `translate(${p.x - v.width / 2},${p.y - v.height / 2})`,
    });
    g.dataset.name = v.name;
    g.dataset.id = v.id;
    el('title', {}, g).textContent = v.kind === 'node' ? `${v.name}\n${v.domain ? `${v.domain}::` : ''}${v.opType}` : v.name;
    el('rect', { class: 'node-body', width: v.width, height: v.height, rx: 5, ry: 5 }, g);
    el('path', { class: 'node-header', d: headerPath(v.width, HEADER_HEIGHT, 5, v.rows.length === 0) }, g);
    el('text', { class: 'node-title', x: 8, y: 15 }, g).textContent = v.title;
    v.rows.forEach((r, i) => {
      const y = HEADER_HEIGHT + 12 + i * ROW_HEIGHT;
      const t = el('text', { class: `node-row node-row-${r.kind}`, x: 8, y }, g);
      el('tspan', { class: 'row-name' }, t).textContent = `${r.name} `;
      el('tspan', {}, t).textContent = r.value;
      if (r.badge) drawBadge(g, r.badge, v.width - badgeWidth(r.badge) - 6, y - 10);
    });
    layers.nodes.appendChild(g);
    elements.set(v.id, g);
    drawnNodes.set(i, g);
    decorateNode(g);
  }

  function drawBadge(parent, badge, x, y) {
    const w = badgeWidth(badge);
    const g = el('g', { class: `badge badge-${badge.kind || 'unknown'}${badge.on ? '' : ' badge-off'}`, transform: `translate(${x},${y})` }, parent);
    g.dataset.calibration = badge.node;
    el('title', {}, g).textContent = `${badge.node}\n${badge.kind || 'calibration'} · ${badge.qtype} · switch ${badge.on ? 'ON' : 'OFF'}`;
    el('rect', { width: w, height: 13, rx: 6.5, ry: 6.5 }, g);
    el('text', { x: w / 2, y: 10 }, g).textContent = badge.text;
    decorateBadge(g);
    return g;
  }

  // Badges and label sit right of an edge's middle point: widths computed, not measured (getBBox
  // would force a layout per badge).
  const badgesWidth = (e) => e.badges.reduce((x, b) => x + badgeWidth(b) + 3, 4);
  const edgeBox = (e, points) => pointsBox(points, { right: badgesWidth(e) + (e.label ? textWidth(e.label) + 4 : 0), y: 12 });

  function drawEdge(i) {
    const e = model.edges[i];
    const points = positions.edges[i];
    const d = edgePath(points);
    const title = `${e.tensor}${e.consumed !== e.tensor ? ` → ${e.consumed}` : ''}\n${e.dtype}[${e.dims ? e.dims.join(',') : '?'}]`;
    const hit = el('path', { class: 'edge-hit', d }, layers.edges);
    el('title', {}, hit).textContent = title;
    const parts = [hit, el('path', { class: 'edge', d, 'marker-end': 'url(#ptq-arrow)' }, layers.edges)];
    const mid = points[Math.floor(points.length / 2)];
    let x = mid.x + 4;
    for (const b of e.badges) {
      parts.push(drawBadge(layers.labels, b, x, mid.y - 9));
      x += badgeWidth(b) + 3;
    }
    if (e.label) {
      const t = el('text', { class: 'edge-label', x: x + 2, y: mid.y + 3 }, layers.labels);
      t.textContent = e.label;
      el('title', {}, t).textContent = title;
      parts.push(t);
    }
    drawnEdges.set(i, parts);
  }

  // --- culling ---------------------------------------------------------------------------------
  // Removes what left the view (plus margin) and returns the drawing jobs for what came into it.
  function reconcile() {
    if (!index) return [];
    const { w, h } = size();
    const rect = visibleRect(zoomTransform(svg), w, h, MARGIN_PX);
    const nodesIn = index.nodes.query(rect);
    const edgesIn = index.edges.query(rect);
    for (const [i, g] of drawnNodes) {
      if (nodesIn.has(i)) continue;
      g.remove();
      drawnNodes.delete(i);
      elements.delete(model.nodes[i].id);
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

  // One update loop at a time: each pass reconciles with the current transform and draws for about
  // a frame's budget; a zoom event during it (or jobs left over) asks for another pass next frame.
  let updating = null; // promise of the running loop (resolves to its number of passes)
  let dirty = false;
  function requestUpdate() {
    dirty = true;
    if (!updating && index) updating = updateLoop().finally(() => { updating = null; });
    return updating;
  }
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

  function clear() {
    for (const layer of Object.values(layers)) layer.replaceChildren();
    index = null;
    elements = new Map();
    drawnNodes = new Map();
    drawnEdges = new Map();
  }

  async function render(gen) {
    clear();
    index = {
      nodes: createGridIndex(model.nodes.map((v) => nodeBox(v, positions.nodes[v.id]))),
      edges: createGridIndex(model.edges.map((e, i) => edgeBox(e, positions.edges[i]))),
    };
    computeMarks();
    container.dataset.state = 'drawing';
    setStatus(`Drawing ${model.nodes.length} nodes…`);
    const t0 = performance.now();
    initialView();
    const slices = await requestUpdate();
    if (gen !== generation) return;
    container.dataset.state = 'ready';
    container.dataset.nodes = String(model.nodes.length);
    container.dataset.drawMs = String(Math.round(performance.now() - t0));
    container.dataset.drawSlices = String(slices);
    setStatus(null);
    container.dispatchEvent(new CustomEvent('graph-ready', { detail: model.stats }));
  }

  async function show(newGraph) {
    const gen = ++generation;
    graph = newGraph;
    model = null;
    positions = null;
    index = null; // the previous drawing stays, unculled, until the new one replaces it
    if (!graph) {
      clear();
      container.dataset.state = 'empty';
      return;
    }
    container.dataset.state = 'layout';
    setStatus(`Laying out ${graph.nodes.length} nodes…`);
    cancelLayout(); // a previous model's layout is of no use any more
    let result;
    try {
      result = await layout(graph, { showCalibration: calibrationToggle.checked });
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
    marks = {
      selected: viewIdOf(state.get('selection')),
      picked: new Set([...(state.get('picked') ?? [])].map(viewIdOf).filter(Boolean)),
      heat: state.get('heat')?.values ? state.get('heat') : null,
    };
    container.classList.toggle('heat-on', Boolean(state.get('heat')));
  }
  const isDark = (color) => (luminance(color) ?? 1) < 0.4;
  function decorateNode(g) {
    const id = g.dataset.id;
    g.classList.toggle('selected', id === marks.selected);
    g.classList.toggle('picked', marks.picked.has(id));
    const h = marks.heat?.values.get(id);
    g.querySelector('.node-body').style.fill = h ? h.color : ''; // inline style beats the category CSS
    g.classList.toggle('heated', Boolean(h));
    g.classList.toggle('heat-dark', Boolean(h) && isDark(h.color));
    g.querySelector('title.heat')?.remove();
    if (h) el('title', { class: 'heat' }, g).textContent = `${id}\n${marks.heat.legend?.title ?? 'value'}: ${h.label ?? h.value}`;
  }
  function decorateBadge(b) {
    const name = b.dataset.calibration;
    const h = marks.heat?.values.get(name);
    b.classList.toggle('selected', name === state.get('selection'));
    b.querySelector('rect').style.fill = h ? h.color : '';
    b.classList.toggle('heat-dark', Boolean(h) && isDark(h.color));
  }
  // A state change re-marks what is drawn; what is drawn later gets its marks then.
  function applyMarks() {
    computeMarks();
    for (const g of elements.values()) decorateNode(g);
    for (const b of svg.querySelectorAll('.badge')) decorateBadge(b);
  }
  function focus(name, animate = true) {
    if (!name || !model) return;
    const v = viewNodeFor(model, graph, name) ?? (model.byName.get(`input:${name}`) || model.byName.get(`output:${name}`));
    if (v) centreOn(v.id, animate);
  }

  // A wider or taller view (the sidebar closing, a window resize) shows more of the layout.
  if (typeof ResizeObserver === 'function') new ResizeObserver(() => requestUpdate()).observe(svg);

  state.on('selection', applyMarks);
  state.on('picked', applyMarks);
  state.on('heat', applyMarks);
  state.on('focus', (name) => focus(name));
  state.on('graph', (g) => show(g));

  // --- pointer ---------------------------------------------------------------------------------
  svg.addEventListener('click', (ev) => {
    const badge = ev.target.closest?.('.badge');
    const g = ev.target.closest?.('.node');
    // Badges stand for their calibration node; graph input/output boxes select nothing.
    const name = badge ? badge.dataset.calibration : g?.classList.contains('node-node') ? g.dataset.name : null;
    if (!name) {
      if (!g) state.set('selection', null);
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

  // --- toolbar, search, keys -----------------------------------------------------------------
  const zoomBy = (f) => svgSel.transition().duration(200).call(zoomBehavior.scaleBy, f);
  function toggleCalibration(on) {
    calibrationToggle.checked = on;
    if (graph) show(graph);
  }
  container.querySelector('.graph-toolbar').addEventListener('click', (ev) => {
    const act = ev.target.closest('[data-act]')?.dataset.act;
    if (act === 'zoom-in') zoomBy(1.25);
    else if (act === 'zoom-out') zoomBy(0.8);
    else if (act === 'fit') fit();
    else if (act === 'search') openSearch();
  });
  calibrationToggle.addEventListener('change', () => toggleCalibration(calibrationToggle.checked));

  let matches = [];
  function openSearch() {
    searchBox.hidden = false;
    searchInput.focus();
    searchInput.select();
  }
  function closeSearch() {
    searchBox.hidden = true;
    svg.focus();
  }
  function choose(m) {
    if (!m) return;
    const name = m.kind === 'tensor' && model?.byName.has(`input:${m.tensor}`) ? m.tensor : m.node;
    if (!name || !model) return;
    // Select first: the sidebar opening narrows the graph, and centring must use the final size.
    if (!model.byName.has(`input:${name}`)) state.set('selection', name);
    state.set('focus', name);
  }
  searchInput.addEventListener('input', () => {
    matches = graph ? searchGraph(graph, searchInput.value) : [];
    searchResults.replaceChildren(...matches.map((m, i) => {
      const li = document.createElement('li');
      li.dataset.index = String(i);
      li.className = `match-${m.kind}`;
      li.innerHTML = '<span class="match-text"></span> <span class="match-detail"></span>';
      li.firstChild.textContent = m.text;
      li.lastChild.textContent = m.detail;
      return li;
    }));
    highlight(0);
  });
  let active = 0; // highlighted match (arrow keys), chosen by Enter
  const highlight = (i) => {
    active = Math.max(0, Math.min(i, matches.length - 1));
    [...searchResults.children].forEach((li, j) => li.classList.toggle('active', j === active));
    searchResults.children[active]?.scrollIntoView({ block: 'nearest' });
  };
  searchInput.addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter') choose(matches[active]);
    else if (ev.key === 'Escape') closeSearch();
    else if (ev.key === 'ArrowDown' || ev.key === 'ArrowUp') {
      ev.preventDefault();
      highlight(active + (ev.key === 'ArrowDown' ? 1 : -1));
    }
  });
  searchResults.addEventListener('click', (ev) => choose(matches[Number(ev.target.closest('li')?.dataset.index)]));

  document.addEventListener('keydown', (ev) => {
    const typing = /^(INPUT|TEXTAREA|SELECT)$/.test(document.activeElement?.tagName ?? '');
    if ((ev.ctrlKey || ev.metaKey) && ev.key.toLowerCase() === 'f' && graph) {
      ev.preventDefault();
      openSearch();
      return;
    }
    if (typing || ev.ctrlKey || ev.metaKey || ev.altKey || !graph) return;
    if (ev.key === '+' || ev.key === '=') zoomBy(1.25);
    else if (ev.key === '-') zoomBy(0.8);
    else if (ev.key === 'f' || ev.key === '0') fit();
    else if (ev.key === 'c') toggleCalibration(!calibrationToggle.checked);
    else if (ev.key === 'Escape') state.set('selection', null);
  });

  return {
    show, fit, focus,
    // Resolves once what the current transform shows is drawn (and what it does not is removed).
    update: () => requestUpdate() ?? Promise.resolve(0),
    get model() { return model; },
    get positions() { return positions; },
  };
}
