// The app shell: start screen, opening files (drop anywhere, pickers, the example), the graph view,
// the node sidebar, the bottom dock for registered panels, the error banner and the status line.
import './style/app.css';
import { state } from './state.mjs';
import { registeredPanels, onRegister, setPanelShower } from './shell.mjs';
import { createOpener } from './open/open.mjs';
import { filesFromDataTransfer, filesFromFileList } from './open/sources.mjs';
import { loadExample } from './open/example.mjs';
import { samplesText, heldDataText } from './open/describe.mjs';
import { createGraphView } from './graph/view.mjs';
import { createSidebar } from './sidebar/sidebar.mjs';
import { loadModel, loadCalibration, modelAndLayout, layoutWorker } from './graph/workers.mjs';

export { registerPanel, registerSidebarSection } from './shell.mjs';
export { state };

// Other modules of the app (analyses, heatmap, what-if and fix, compare, export) register their panels on import; load
// whichever exist so the shell builds without them.
import.meta.glob(['./analysis/index.mjs', './heatmap/index.mjs', './whatif/index.mjs', './compare/index.mjs', './reports/index.mjs', './export/index.mjs'], { eager: true });

const $ = (sel) => document.querySelector(sel);
const opener = createOpener(state, { loadModel, loadCalibration });

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
function describe() {
  const summary = state.get('summary');
  const graph = state.get('graph');
  const samples = state.get('samples');
  const parts = [];
  if (state.get('modelName')) parts.push(state.get('modelName'));
  if (graph) {
    const cali = graph.nodes.filter((n) => n.op_type === 'HzCalibration').length;
    parts.push(`${graph.nodes.length} nodes`, `${cali} calibration nodes`);
  } else if (summary) parts.push(`${summary.nodeCount} nodes`);
  if (summary) parts.push(samples ? samplesText(samples, state.get('calibrationFiles')) : 'no calibration data');
  const held = state.get('heldData');
  if (held) parts.push(heldDataText(held, 'open its model'));
  $('#held-data').textContent = held ? heldDataText(held, 'open its model') : '';
  $('#held-data').hidden = !held;
  parts.push(...memoryParts(state.get('memory')));
  $('#model-info').textContent = parts.join(' · ');
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
function createDock(dock) {
  const tabs = dock.querySelector('.dock-tabs');
  const body = dock.querySelector('.dock-body');
  const mounted = new Map();
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
  setPanelShower(activate);
  return { activate };
}

function boot() {
  bindPickers();
  bindDrop();
  createGraphView($('#graph'), state, { setStatus, layout: modelAndLayout, cancelLayout: () => layoutWorker.restart() });
  createSidebar($('#sidebar'), state);
  createDock($('#dock'));
  describe();
  // For the Netron-style plugin, tests and the console: the store is the app's whole public state.
  window.ptqscope = { state };
  document.body.dataset.ready = 'true';
}

boot();
