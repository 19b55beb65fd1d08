// The PTQ panel floating over Netron: calibration data, run/cancel with progress, heat view and
// legend, and the results of the node selected in Netron. All analysis logic is the web app's
// (request building, runner, heat mapping, charts); this file only wires DOM controls to the store.
import { h, clear } from './dom.mjs';
import { buildRequest, METRICS, NODE_TYPES } from '../../web/app/analysis/requests.mjs';
import { availableViews, metricsOfView, resolveSettings } from '../../web/app/heatmap/controller.mjs';
import { stripRoot, placeLooseNpy, checkCalibrationLayout, isJunk } from '../../web/app/open/checks.mjs';

export const PANEL_ID = 'ptqscope-panel';
const RUNNABLE = [['sensitivity', 'Sensitivity'], ['leave_one_out', 'Leave-one-out']];
const NODE_ANALYSES = [['distribution', 'Distribution'], ['channelwise', 'Channels'], ['stat_info', 'Stat info']];

// Keeps our panel's events away from Netron's document/body listeners (drop opens a model; any
// keydown clears Netron's selection).
function isolate(el) {
  for (const type of ['keydown', 'keyup', 'dragover', 'drop', 'wheel', 'mousedown', 'click']) {
    el.addEventListener(type, (e) => e.stopPropagation());
  }
}

// `checked` property, or the attribute where the DOM has no property (linkedom under test).
const isChecked = (input) => input.checked ?? input.hasAttribute('checked');

function options(doc, select, entries, value) {
  clear(select);
  for (const [v, label] of entries) select.append(h(doc, 'option', { value: v, text: label, selected: v === value }));
  select.disabled = entries.length === 0;
}

export function inputNamesOf(graph) {
  return (graph?.inputs ?? []).map((v) => (typeof v === 'string' ? v : v?.name)).filter(Boolean)
    .filter((name) => !graph.values?.[name]?.initializer);
}

// Sorts the files of a dropped/picked calibration_data folder into [{path: '<input>/<file>', bytes}],
// or throws an Error listing every layout problem (names the folder and files).
export function prepareCalibrationFiles(files, graph) {
  const inputs = inputNamesOf(graph);
  if (!inputs.length) throw new Error('open the calibrated model in Netron first (its inputs name the calibration folders)');
  const kept = files.filter((f) => !isJunk(f.path));
  const { root, files: stripped } = stripRoot(kept);
  const { files: placed, errors } = placeLooseNpy(stripped, inputs);
  const all = [...errors, ...checkCalibrationLayout(placed, inputs, root || 'calibration_data')];
  if (all.length) throw new Error(all.join('\n'));
  return { root: root || 'calibration_data', files: placed };
}

/**
 * mountPanel(doc, deps) -> {element, dispose}
 * deps: state (web/app/state.mjs store), runner (web/app/analysis/runner.mjs), renderLegend
 * (web/charts/legend.mjs), sections() ([{id, title, render(el, nodeName, state)}]: the node's rows and
 * charts, e.g. web/app/heatmap/sidebar.mjs), readDrop(dt) and
 * readPicked(fileList) (web/app/open/sources.mjs) returning [{path, bytes}].
 */
export function mountPanel(doc, { state, runner, renderLegend, sections = () => [], readDrop, readPicked }) {
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

  const takeFiles = async (read) => {
    try {
      state.set('status', 'Reading calibration data…');
      const { root, files } = prepareCalibrationFiles(await read(), state.get('graph'));
      state.setMany({ dataName: root, calibrationFiles: files, error: null, status: null });
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

  // --- run ---
  const analysis = h(doc, 'select', { class: 'ptq-analysis', 'aria-label': 'analysis' });
  options(doc, analysis, RUNNABLE, 'sensitivity');
  const nodeType = h(doc, 'select', { class: 'ptq-node-type', 'aria-label': 'node type' });
  options(doc, nodeType, NODE_TYPES.map((t) => [t, t]), 'activation');
  const metricBoxes = METRICS.map((m) => h(doc, 'label', { class: 'ptq-metric' },
    h(doc, 'input', { type: 'checkbox', value: m, checked: m === 'cosine-similarity' || m === 'mse' }), ` ${m}`));
  const dataNum = h(doc, 'input', { type: 'number', class: 'ptq-data-num', min: 1, value: 1, 'aria-label': 'data_num', style: 'width:4em' });
  const runButton = h(doc, 'button', { type: 'button', class: 'ptq-run', text: 'Run' });
  const cancelButton = h(doc, 'button', { type: 'button', class: 'ptq-cancel', text: 'Cancel', disabled: true });
  const progress = h(doc, 'progress', { class: 'ptq-progress', max: 1, value: 0 });
  const runStatus = h(doc, 'div', { class: 'ptq-run-status' });

  runButton.addEventListener('click', () => {
    let request;
    try {
      request = buildRequest(analysis.value, {
        node_type: nodeType.value,
        metrics: metricBoxes.map((l) => l.querySelector('input')).filter(isChecked).map((i) => i.value),
        data_num: dataNum.value,
      });
    } catch (err) {
      state.set('error', err.message);
      return;
    }
    state.set('error', null);
    runner.run('analysis', request).catch(() => {}); // the runner reports failures in state 'error'
  });
  cancelButton.addEventListener('click', () => runner.cancel());
  let panel = null; // set below; data-run / data-graph mirror the state for scripts and tests
  const mark = (k, v) => panel?.setAttribute(`data-${k}`, v);
  const offRunner = runner.on((ev) => {
    if (ev.type !== 'progress' && ev.type !== 'item') mark('run', ev.type === 'start' ? 'running' : ev.type === 'error' ? 'error' : ev.cancelled ? 'cancelled' : 'done');
    if (ev.type === 'start') {
      runButton.disabled = true;
      cancelButton.disabled = false;
      progress.value = 0;
      runStatus.textContent = `${ev.label}: starting…`;
    } else if (ev.type === 'progress') {
      progress.max = Math.max(1, ev.total);
      progress.value = ev.done;
      const eta = Number.isFinite(ev.etaMs) && ev.done < ev.total ? `, ~${Math.ceil(ev.etaMs / 1000)} s left` : '';
      runStatus.textContent = `${ev.done}/${ev.total} items${eta}`;
    } else if (ev.type === 'done' || ev.type === 'error') {
      runButton.disabled = false;
      cancelButton.disabled = true;
      runStatus.textContent = ev.type === 'error' ? `${ev.label} failed: ${ev.message}`
        : `${ev.label} ${ev.cancelled ? 'cancelled' : 'done'} in ${(ev.elapsedMs / 1000).toFixed(1)} s`;
    }
  });

  // --- heat ---
  const heatView = h(doc, 'select', { class: 'ptq-heat-view', 'aria-label': 'heat view' });
  const heatMetric = h(doc, 'select', { class: 'ptq-heat-metric', 'aria-label': 'heat metric' });
  const legend = h(doc, 'div', { class: 'ptq-legend' });
  const heatChanged = () => state.set('heatSettings', { view: heatView.value, metric: heatMetric.value });
  heatView.addEventListener('change', () => {
    state.set('heatSettings', { view: heatView.value, metric: null });
  });
  heatMetric.addEventListener('change', heatChanged);
  const syncHeatControls = () => {
    const result = state.get('results');
    const s = resolveSettings(result, state.get('heatSettings') ?? {});
    options(doc, heatView, availableViews(result).map((v) => [v, v.replace(/_/g, '-')]), s.view);
    options(doc, heatMetric, s.view ? metricsOfView(result, s.view).map((m) => [m, m]) : [], s.metric);
  };
  on('results', syncHeatControls);
  on('heatSettings', syncHeatControls);
  on('heat', (heat) => {
    clear(legend);
    if (heat?.legend) renderLegend(legend, heat.legend, { width: 250 });
  });

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
  const nodeActions = h(doc, 'div', { class: 'ptq-node-actions', hidden: true },
    ...NODE_ANALYSES.map(([kind, label]) => h(doc, 'button', { type: 'button', 'data-analysis': kind, text: label, onclick: () => runForNode(kind) })));
  const renderNode = () => {
    const name = state.get('selection');
    clear(nodeBody);
    nodeTitle.textContent = name ? name : 'Select a node in the graph to see its results.';
    nodeActions.hidden = !name;
    if (!name) return;
    const list = sections();
    for (const section of list) {
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
  on('calibrationFiles', (files) => {
    const inputs = [...new Set((files ?? []).map((f) => f.path.split('/')[0]))];
    dataLine.textContent = files?.length ? `${state.get('dataName') ?? 'calibration_data'}: ${files.length} files (${inputs.join(', ')})` : 'No calibration data.';
  });

  const body = h(doc, 'div', { class: 'ptq-body' },
    errorLine, statusLine,
    h(doc, 'section', {}, modelLine, drop, dataLine),
    h(doc, 'section', { class: 'ptq-run-form' },
      h(doc, 'div', {}, analysis, ' ', nodeType),
      h(doc, 'label', { title: 'samples per item (empty: all)' }, 'data_num ', dataNum),
      h(doc, 'div', { class: 'ptq-metrics' }, metricBoxes),
      h(doc, 'div', {}, runButton, ' ', cancelButton, ' ', progress),
      runStatus),
    h(doc, 'section', { class: 'ptq-heat' }, h(doc, 'div', {}, 'Colour by ', heatView, ' ', heatMetric), legend),
    h(doc, 'section', { class: 'ptq-node' }, nodeTitle, nodeActions, nodeBody));
  const toggle = h(doc, 'button', { type: 'button', class: 'ptq-toggle', 'aria-label': 'collapse', text: '–' });
  toggle.addEventListener('click', () => {
    body.hidden = !body.hidden;
    toggle.textContent = body.hidden ? '+' : '–';
  });
  on('graph', (graph) => mark('graph', graph ? 'loaded' : 'none'));
  panel = h(doc, 'div', { id: PANEL_ID, class: 'ptq-panel', 'data-run': 'idle', 'data-graph': 'none' },
    h(doc, 'div', { class: 'ptq-header' }, h(doc, 'strong', { text: 'PTQ' }), toggle), body);
  isolate(panel);
  doc.body.append(panel);
  syncHeatControls();

  return {
    element: panel,
    dispose() {
      offs.forEach((off) => off());
      offRunner();
      panel.remove();
    },
  };
}
