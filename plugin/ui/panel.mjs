// The PTQ panel, docked beside Netron's graph (dock.mjs: resizable, collapsible). Its analyses, exports, why (cause hints) and calibration methods ARE the web app's panels
// (web/app/analysis/panel.mjs: every analysis tab, Run all, progress / ETA / cancel, tables and charts;
// web/app/export/panel.mjs: JSON, CSV, SVG / PNG, HTML report, ...) mounted with the plugin's store and
// runner; so is the heatmap's view / metric / legend (web/app/heatmap/panel.mjs), and the toolchain
// report panel (web/app/reports/panel.mjs). Only the Netron glue
// lives here: calibration data drop and the results of the node selected in Netron.
import { h, clear } from './dom.mjs';
import { createDock } from './dock.mjs';
import { buildRequest } from '../../web/app/analysis/requests.mjs';
import { mountAnalysesPanel } from '../../web/app/analysis/panel.mjs';
import { mountExportPanel } from '../../web/app/export/panel.mjs';
import { mountHeatPanel } from '../../web/app/heatmap/panel.mjs';
import { createWhatIfController } from '../../web/app/whatif/controller.mjs';
import { mountWhatIfPanel } from '../../web/app/whatif/panel.mjs';
import { mountFixPanel } from '../../web/app/whatif/fix_panel.mjs';
import { mountWhyPanel } from '../../web/app/explain/why_panel.mjs';
import { mountMethodsPanel } from '../../web/app/explain/methods_panel.mjs';
import { mountComparePanel } from '../../web/app/compare/panel.mjs';
import { mountReportPanel } from '../../web/app/reports/panel.mjs';
import { samplesText, heldDataText } from '../../web/app/open/describe.mjs';
import { download } from '../../web/app/export/download.mjs';

export const PANEL_ID = 'ptqscope-panel';
const NODE_ANALYSES = [['distribution', 'Distribution'], ['channelwise', 'Channels'], ['stat_info', 'Stat info']];

// Keeps our panel's events away from Netron's document/body listeners (drop opens a model; any
// keydown clears Netron's selection).
function isolate(el) {
  for (const type of ['keydown', 'keyup', 'dragover', 'drop', 'wheel', 'mousedown', 'click']) {
    el.addEventListener(type, (e) => e.stopPropagation());
  }
}

// A new Set (the store's listeners compare by identity) with `name` added or removed.
export function togglePicked(picked, name) {
  const next = new Set(picked ?? []);
  if (next.has(name)) next.delete(name);
  else next.add(name);
  return next;
}

/**
 * mountPanel(doc, deps) -> {element, analyses, exports, heat, dispose}
 * deps: state (web/app/state.mjs store), runner (web/app/analysis/runner.mjs), opener (web/app/open/open.mjs
 * createOpener: checks the calibration data, holding it until the model is read), sections() ([{id, title, render(el, nodeName, state)}]: the node's rows and
 * charts, e.g. web/app/heatmap/sidebar.mjs), readDrop(dt) and readPicked(fileList)
 * (web/app/open/sources.mjs) returning [{path, bytes}], focus(nodeName) (show it in Netron's graph),
 * save(name, data, type) (optional: exports; default a browser download), onDockResize(delta) (the dock
 * took `delta` px more of the window's width).
 */
export function mountPanel(doc, { state, runner, opener, sections = () => [], readDrop, readPicked, focus, save, onDockResize }) {
  const offs = [];
  const on = (key, fn) => offs.push(state.on(key, fn));

  // --- model and data ---
  const modelLine = h(doc, 'div', { class: 'ptq-model', text: 'Open a calibrated .onnx in Netron (Open Model… or drop it).' });
  const picker = h(doc, 'input', { type: 'file', class: 'ptq-data-input', multiple: true, webkitdirectory: true, hidden: true });
  const zipPicker = h(doc, 'input', { type: 'file', class: 'ptq-zip-input', multiple: true, accept: '.zip,.npy', hidden: true });
  const dataLine = h(doc, 'div', { class: 'ptq-data-status', text: 'No calibration data.' });
  const drop = h(doc, 'div', { class: 'ptq-drop', tabindex: 0 },
    h(doc, 'div', { text: 'Drop the calibration_data folder (or a .zip, or .npy files) here' }),
    h(doc, 'button', { type: 'button', class: 'ptq-pick-folder', text: 'Folder…', onclick: () => picker.click() }),
    h(doc, 'button', { type: 'button', class: 'ptq-pick-files', text: '.zip / .npy…', onclick: () => zipPicker.click() }),
    picker, zipPicker);

  // Data may come at any time: before the model is read it is held (the opener says so) and checked
  // by the core once the model is read.
  const takeFiles = async (read) => {
    try {
      state.set('status', 'Reading calibration data…');
      const files = await read();
      state.set('status', null);
      await opener.openCalibration(files);
    } catch (err) {
      state.setMany({ error: `calibration data: ${err.message}`, status: null });
    }
  };
  drop.addEventListener('dragover', (e) => {
    e.preventDefault();
    drop.classList.add('ptq-drag');
  });
  drop.addEventListener('dragleave', () => drop.classList.remove('ptq-drag'));
  drop.addEventListener('drop', (e) => {
    e.preventDefault();
    drop.classList.remove('ptq-drag');
    const dt = e.dataTransfer;
    takeFiles(() => readDrop(dt));
  });
  for (const input of [picker, zipPicker]) {
    input.addEventListener('change', () => {
      const list = [...input.files];
      input.value = '';
      takeFiles(() => readPicked(list));
    });
  }

  // --- the web app's analyses and export panels ---
  const analysesHost = h(doc, 'div', { class: 'ptq-analyses-host' });
  const exportHost = h(doc, 'div', { class: 'ptq-export-host' });
  let panel = null; // set below; data-run / data-graph mirror the state for scripts and tests
  const mark = (k, v) => panel?.setAttribute(`data-${k}`, v);
  const offRunner = runner.on((ev) => {
    if (ev.type === 'start' || ev.type === 'done' || ev.type === 'error') {
      mark('run', ev.type === 'start' ? 'running' : ev.type === 'error' ? 'error' : ev.cancelled ? 'cancelled' : 'done');
    }
  });

  // --- heat: the app's Heatmap panel, mounted below ---
  const heatHost = h(doc, 'div', { class: 'ptq-heat-host' });
  // --- what-if, fix and compare: the app's panels ---
  const whatIfHost = h(doc, 'div', { class: 'ptq-whatif-host' });
  const fixHost = h(doc, 'div', { class: 'ptq-fix-host' });
  // --- why (cause hints) and calibration methods: the app's panels ---
  const whyHost = h(doc, 'div', { class: 'ptq-why-host' });
  const methodsHost = h(doc, 'div', { class: 'ptq-methods-host' });
  const compareHost = h(doc, 'div', { class: 'ptq-compare-host' });
  const reportHost = h(doc, 'div', { class: 'ptq-report-host' });

  // --- selected node ---
  const nodeTitle = h(doc, 'div', { class: 'ptq-node-title', text: 'Select a node in the graph to see its results.' });
  const nodeBody = h(doc, 'div', { class: 'ptq-node-body' });
  // Per-node analyses whose charts then show below (distribution histograms, channel box plots,
  // calibration stat info), run for the selected node only.
  const runForNode = (kind) => {
    const name = state.get('selection');
    try {
      runner.run('analysis', buildRequest(kind, { nodes_list: [name] })).catch(() => {});
    } catch (err) {
      state.set('error', err.message);
    }
  };
  // Netron selects one node at a time: "Pick" (or Ctrl/Shift+click in the graph, plugin.mjs) adds the
  // selected node to state 'picked', which the analyses' "← picked" buttons read.
  const pickButton = h(doc, 'button', {
    type: 'button', class: 'ptq-pick-node',
    onclick: () => state.set('picked', togglePicked(state.get('picked'), state.get('selection'))),
  });
  const nodeActions = h(doc, 'div', { class: 'ptq-node-actions', hidden: true },
    ...NODE_ANALYSES.map(([kind, label]) => h(doc, 'button', { type: 'button', 'data-analysis': kind, text: label, onclick: () => runForNode(kind) })),
    pickButton);
  const syncPick = () => {
    const name = state.get('selection');
    pickButton.textContent = state.get('picked')?.has(name) ? 'Unpick' : 'Pick';
  };
  const renderNode = () => {
    const name = state.get('selection');
    clear(nodeBody);
    nodeTitle.textContent = name ? name : 'Select a node in the graph to see its results.';
    nodeActions.hidden = !name;
    syncPick();
    if (!name) return;
    for (const section of sections()) {
      const box = h(doc, 'div', { class: 'ptq-node-section', 'data-section': section.id },
        section.title ? h(doc, 'div', { class: 'ptq-section-title', text: section.title }) : null);
      nodeBody.append(box);
      try {
        section.render(box, name, state);
      } catch (err) {
        box.append(h(doc, 'div', { class: 'ptq-error', text: `${section.id}: ${err.message}` }));
      }
    }
  };
  on('selection', renderNode);
  on('results', renderNode);
  on('report', renderNode);
  on('picked', syncPick);

  // --- status and errors ---
  const errorLine = h(doc, 'div', { class: 'ptq-error', role: 'alert', hidden: true });
  on('error', (msg) => {
    errorLine.hidden = !msg;
    errorLine.textContent = msg ?? '';
  });
  const statusLine = h(doc, 'div', { class: 'ptq-status' });
  on('status', (msg) => {
    statusLine.textContent = msg ?? '';
  });
  on('modelName', (name) => {
    modelLine.textContent = name ? `Model: ${name}` : 'Open a calibrated .onnx in Netron (Open Model… or drop it).';
  });
  const showData = () => {
    const held = state.get('heldData');
    dataLine.textContent = held ? heldDataText(held, 'open the calibrated model in Netron (Open Model… or drop it)')
      : state.get('samples') ? samplesText(state.get('samples'), state.get('calibrationFiles')) : 'No calibration data.';
  };
  for (const key of ['samples', 'calibrationFiles', 'heldData']) on(key, showData);

  const section = (cls, title, ...children) => h(doc, 'details', { class: `ptq-section ${cls}`, open: true },
    h(doc, 'summary', { text: title }), ...children);
  const body = h(doc, 'div', { class: 'ptq-body' },
    errorLine, statusLine,
    section('ptq-data', 'Model and calibration data', modelLine, drop, dataLine),
    section('ptq-section-analyses', 'Analyses', analysesHost),
    section('ptq-plugin-heat', 'Heatmap', heatHost),
    section('ptq-section-why', 'Why (cause hints)', whyHost),
    section('ptq-section-whatif', 'What-if', whatIfHost),
    section('ptq-section-fix', 'Fix', fixHost),
    section('ptq-section-methods', 'Calibration methods', methodsHost),
    section('ptq-section-report', 'Toolchain report', reportHost),
    section('ptq-section-compare', 'Compare two results', compareHost),
    section('ptq-node', 'Selected node', nodeTitle, nodeActions, nodeBody),
    section('ptq-section-export', 'Export', exportHost));
  const dock = createDock(doc, { id: PANEL_ID, title: 'PTQ', body, onResize: onDockResize });
  panel = dock.element;
  panel.setAttribute('data-run', 'idle');
  panel.setAttribute('data-graph', 'none');
  on('graph', (graph) => mark('graph', graph ? 'loaded' : 'none'));
  isolate(panel);
  // A float model calibrated in the panel: Netron shows the file it opened, so the calibrated model is
  // saved for the user to open in Netron.
  const useCalibrated = (name, bytes) => {
    (save ?? ((n, d, t) => download(doc, n, d, t)))(name, bytes, 'application/octet-stream');
    state.set('status', `${name} saved: open it in Netron (Open Model…) to analyse it.`);
  };
  const analyses = mountAnalysesPanel(analysesHost, state, runner, { focus, useCalibrated });
  const exports = mountExportPanel(exportHost, state, { save });
  const heat = mountHeatPanel(heatHost, state, { legendWidth: 250 });
  const whatIf = createWhatIfController(state, runner);
  const whatIfPanel = mountWhatIfPanel(whatIfHost, state, whatIf, runner, { focus, save });
  const fixPanel = mountFixPanel(fixHost, state, runner, whatIf, { focus, save });
  const whyPanel = mountWhyPanel(whyHost, state, runner, whatIf, { focus });
  const methodsPanel = mountMethodsPanel(methodsHost, state, runner, whatIf, { save });
  const comparePanel = mountComparePanel(compareHost, state, { focus });
  const reportPanel = mountReportPanel(reportHost, state, { focus });

  return {
    element: panel,
    dock,
    analyses,
    whatIf,
    whatIfPanel,
    fixPanel,
    whyPanel,
    methodsPanel,
    comparePanel,
    reportPanel,
    exports,
    heat,
    dispose() {
      offs.forEach((off) => off());
      offRunner();
      analyses.dispose();
      exports.dispose();
      heat.dispose();
      whatIfPanel.dispose();
      fixPanel.dispose();
      whyPanel.dispose();
      methodsPanel.dispose();
      comparePanel.dispose();
      reportPanel.dispose();
      whatIf.dispose();
      dock.dispose();
    },
  };
}
