// The app shell: start screen, opening files (drop anywhere, pickers, the example), the graph view,
// the node sidebar, the bottom dock for registered panels, the error banner and the status line.
import './style/app.css';
import { state } from './state.mjs';
import { registeredPanels, onRegister } from './shell.mjs';
import { opener } from './open/page_opener.mjs';
import { filesFromDataTransfer, filesFromFileList } from './open/sources.mjs';
import { loadExample } from './open/example.mjs';
import { samplesText, heldDataText } from './open/describe.mjs';
import { createGraphView } from './graph/view.mjs';
import { createSidebar } from './sidebar/sidebar.mjs';
import { mountHeatLegend } from './heatmap/legend_overlay.mjs';
import { bindResizeHandle } from './resize_handle.mjs';
import { modelAndLayout, layoutWorker } from './graph/workers.mjs';

export { registerPanel, registerSidebarSection } from './shell.mjs';
export { state };

// Other modules of the app (analyses, heatmap, what-if and fix, compare, export) register their panels on import; load
// whichever exist so the shell builds without them.
import.meta.glob(['./analysis/index.mjs', './heatmap/index.mjs', './whatif/index.mjs', './explain/index.mjs', './compare/index.mjs', './reports/index.mjs', './export/index.mjs'], { eager: true });

const $ = (sel) => document.querySelector(sel);

function setStatus(text) {
  state.set('status', text);
}

// --- banner and status ---------------------------------------------------------------------------
state.on('error', (message) => {
  const banner = $('#error-banner');
  banner.hidden = !message;
  banner.querySelector('.error-text').textContent = message ?? '';
  if (message) console.warn(message);
});
$('#error-banner .error-close').addEventListener('click', () => state.set('error', null));
state.on('status', (text) => {
  $('#status').textContent = text ?? '';
  document.body.classList.toggle('busy', Boolean(text));
});

// --- start screen / loaded model header ------------------------------------------------------------
// The header: the model's name (cut with an ellipsis when the bar is short, whole in its tooltip), the
// calibration data (never cut: the sample count is what every number is computed on), then the graph's
// counts and the wasm heaps (cut first). Its text reads "name · samples · nodes · …".
function describe() {
  const summary = state.get('summary');
  const graph = state.get('graph');
  const samples = state.get('samples');
  const name = state.get('modelName') ?? '';
  const data = [];
  if (summary) data.push(samples ? samplesText(samples, state.get('calibrationFiles')) : 'no calibration data');
  const held = state.get('heldData');
  if (held) data.push(heldDataText(held, 'open its model'));
  $('#held-data').textContent = held ? heldDataText(held, 'open its model') : '';
  $('#held-data').hidden = !held;
  const rest = [];
  if (graph) {
    const cali = graph.nodes.filter((n) => n.op_type === 'HzCalibration').length;
    rest.push(`${graph.nodes.length} nodes`, `${cali} calibration nodes`);
  } else if (summary) rest.push(`${summary.nodeCount} nodes`);
  rest.push(...memoryParts(state.get('memory')));
  const parts = [['info-name', name], ['info-data', data.join(' · ')], ['info-graph', rest.join(' · ')]].filter(([, text]) => text);
  $('#model-info').replaceChildren(...parts.flatMap(([cls, text], i) => {
    const span = document.createElement('span');
    span.className = cls;
    span.textContent = text;
    span.title = text;
    return i ? [' · ', span] : [span];
  }));
}

// "1.2 GB": a wasm heap size for the header (decimal units, as the 4 GB heap limit is spoken of).
const gigabytes = (bytes) => `${(bytes / 1e9).toFixed(bytes < 1e8 ? 2 : 1)} GB`;

// The wasm heaps (state 'memory'): the header's text, and its data-heap-load / data-heap-analysis
// attributes in bytes (the largest worker's).
function memoryParts(memory) {
  const info = $('#model-info');
  const analysis = memory?.analysis?.length ? Math.max(...memory.analysis) : null;
  info.dataset.heapLoad = memory?.load ?? '';
  info.dataset.heapAnalysis = analysis ?? '';
  const parts = [];
  if (memory?.load) parts.push(`wasm heap ${gigabytes(memory.load)} after load`);
  if (analysis) parts.push(`${gigabytes(analysis)} per analysis worker (${memory.analysis.length})`);
  return parts;
}
state.on('summary', (s) => {
  document.body.classList.toggle('has-model', Boolean(s));
  describe();
});
state.on('graph', describe);
for (const key of ['samples', 'calibrationFiles', 'heldData']) state.on(key, describe);
// The analyses panel's relation rules: the graph's relations are the core's, read again under them.
state.on('relationRules', (v, prev) => {
  if (v !== prev) opener.readRelations();
});
state.on('memory', describe);

async function guarded(task) {
  try {
    await task();
  } catch (err) {
    console.error(err);
    state.set('status', null);
    state.set('error', err.message ?? String(err));
  }
}

// --- opening ---------------------------------------------------------------------------------------
async function openExample() {
  setStatus('Opening the example…');
  const ex = await loadExample();
  if (await opener.openModel(ex.model)) await opener.openCalibration(ex.files, ex.folder);
}

function bindPickers() {
  const pick = (id, label) => {
    const input = $(id);
    input.addEventListener('change', () => guarded(async () => {
      const files = await filesFromFileList(input.files);
      input.value = '';
      await opener.openFiles(files, label);
    }));
  };
  pick('#open-model', 'calibration_data');
  pick('#open-data-folder', 'calibration_data');
  pick('#open-data-files', 'calibration_data');
  pick('#open-report', 'calibration_data');
  for (const b of document.querySelectorAll('[data-open]')) {
    b.addEventListener('click', () => $(`#${b.dataset.open}`).click());
  }
  for (const b of document.querySelectorAll('[data-example]')) b.addEventListener('click', () => guarded(openExample));
}

function bindDrop() {
  let depth = 0;
  const zone = document.body;
  zone.addEventListener('dragenter', (ev) => {
    ev.preventDefault();
    if (++depth === 1) zone.classList.add('dragging');
  });
  zone.addEventListener('dragleave', () => {
    if (--depth <= 0) {
      depth = 0;
      zone.classList.remove('dragging');
    }
  });
  zone.addEventListener('dragover', (ev) => ev.preventDefault());
  zone.addEventListener('drop', (ev) => {
    ev.preventDefault();
    depth = 0;
    zone.classList.remove('dragging');
    guarded(async () => {
      setStatus('Reading dropped files…');
      const files = await filesFromDataTransfer(ev.dataTransfer);
      await opener.openFiles(files, 'calibration_data');
    });
  });
}

// --- dock of registered panels ------------------------------------------------------------------
// Its height: dragged by the handle on its top edge (or ↑ / ↓ on the focused handle, Shift for larger
// steps), kept in localStorage; 40 % of the window until changed. The graph keeps at least
// MIN_GRAPH px and the dock at least MIN_DOCK px.
const DOCK_KEY = 'ptqscope.dockHeight';
const MIN_DOCK = 140;
const MIN_GRAPH = 160;

function dockResizer(dock) {
  const handle = document.createElement('div');
  Object.assign(handle, { className: 'dock-resize', tabIndex: 0, title: 'Drag to resize the panels (↑ ↓ with the keyboard)' });
  handle.setAttribute('role', 'separator');
  handle.setAttribute('aria-orientation', 'horizontal');
  handle.setAttribute('aria-label', 'resize the panels');
  dock.prepend(handle);
  const limit = (h) => Math.round(Math.min(window.innerHeight - MIN_GRAPH, Math.max(MIN_DOCK, h)));
  let height = null; // px, null: the stylesheet's 40vh
  try {
    const saved = Number(localStorage.getItem(DOCK_KEY));
    if (saved > 0) height = saved;
  } catch {
    // storage may be disabled: the dock still resizes for this page
  }
  function apply(h, save = true) {
    height = limit(h);
    dock.style.setProperty('--dock-height', `${height}px`);
    dock.dataset.height = String(height);
    handle.setAttribute('aria-valuenow', String(height));
    if (!save) return;
    try {
      localStorage.setItem(DOCK_KEY, String(height));
    } catch {
      // as above
    }
  }
  if (height) apply(height, false);
  const current = () => height ?? dock.getBoundingClientRect().height;
  bindResizeHandle(handle, dock, {
    resizingClass: 'resizing', keys: { ArrowUp: 1, ArrowDown: -1 },
    onDrag: (e) => apply(window.innerHeight - e.clientY), onStep: (px) => apply(current() + px),
  });
  // A smaller window: the dock shrinks with it so that the graph keeps its share.
  window.addEventListener('resize', () => height && apply(height, false));
}

function createDock(dock) {
  const tabs = dock.querySelector('.dock-tabs');
  const body = dock.querySelector('.dock-body');
  const mounted = new Map();
  dockResizer(dock);
  function activate(id) {
    for (const t of tabs.children) t.classList.toggle('active', t.dataset.panel === id);
    for (const [pid, el] of mounted) el.hidden = pid !== id;
    dock.classList.remove('collapsed');
  }
  function add(panel) {
    const tab = document.createElement('button');
    tab.type = 'button';
    tab.className = 'dock-tab';
    tab.dataset.panel = panel.id;
    tab.textContent = panel.title ?? panel.id;
    tab.addEventListener('click', () => (tab.classList.contains('active') && !dock.classList.contains('collapsed')
      ? dock.classList.add('collapsed') : activate(panel.id)));
    tabs.appendChild(tab);
    const el = document.createElement('div');
    el.className = 'dock-panel';
    el.dataset.panel = panel.id;
    el.hidden = true;
    body.appendChild(el);
    mounted.set(panel.id, el);
    try {
      panel.mount(el, state);
    } catch (err) {
      el.textContent = `${panel.id}: ${err.message}`;
      state.set('error', `Panel '${panel.title ?? panel.id}' failed to start: ${err.message}`);
    }
    dock.hidden = false;
    // The first tab is marked active but the dock stays collapsed until a tab is clicked.
    if (mounted.size === 1) {
      tab.classList.add('active');
      el.hidden = false;
    }
  }
  registeredPanels().forEach(add);
  onRegister((kind, item) => kind === 'panel' && add(item));
  // A panel asks for another one (Run all's next steps: state 'showPanel').
  state.on('showPanel', (id) => mounted.has(id) && activate(id));
  return { activate };
}

function boot() {
  bindPickers();
  bindDrop();
  createGraphView($('#graph'), state, { setStatus, layout: modelAndLayout, cancelLayout: () => layoutWorker.restart() });
  createSidebar($('#sidebar'), state);
  mountHeatLegend($('#graph .graph-legend'), state);
  createDock($('#dock'));
  describe();
  // For the Netron-style plugin, tests and the console: the store is the app's whole public state.
  window.ptqscope = { state };
  document.body.dataset.ready = 'true';
}

boot();
