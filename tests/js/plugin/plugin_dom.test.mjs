// The plugin against the recorded Netron 9.x DOM (linkedom page + fake __view__, fake_netron.mjs),
// with the real analysis pipeline (Node workers running the wasm core) on the recorded model
// horizon_calibrated_tiny.onnx and generated calibration data.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { installPlugin } from '../../../plugin/plugin.mjs';
import { nodeElementMap } from '../../../plugin/netron/nodes.mjs';
import { graphNodeElements, headerPath, headerGroup } from '../../../plugin/netron/contract.mjs';
import { coloredCount } from '../../../plugin/netron/decorate.mjs';
import { BANNER_ID } from '../../../plugin/ui/banner.mjs';
import { PANEL_ID } from '../../../plugin/ui/panel.mjs';
import { ANALYSES } from '../../../web/app/analysis/requests.mjs';
import { EXPORTS } from '../../../web/app/export/panel.mjs';
import { heatScale } from '../../../web/charts/heat_scale.mjs';
import { loadPtqModule } from '../../../web/cli/lib/wasm.mjs';
import fs from 'node:fs';
import path from 'node:path';
import { FIXTURES as FIXTURES_ROOT, fixture, readCalibrationFolder } from '../helpers.mjs';
import {
  netronPage, pluginDeps, until, nextRunnerEvent, settle, openModelThroughNetron, calibrationFolder,
  asPickedFiles, modelBytes, choose, runTab, analysisForm, setChecked, useTopK, appHost, fileSaver, unzipText,
} from './helpers.mjs';

const REQUEST = { analysis: 'sensitivity', options: { node_type: 'activation', metrics: ['cosine-similarity', 'mse'], data_num: 0, sample_selection: 'last', output_node: null, interested_nodes: null } };

// The same request straight through the wasm API: the reference the page's colours must match.
async function referenceResult() {
  const ptq = await loadPtqModule();
  const session = new ptq.Session();
  try {
    session.loadModel(modelBytes());
    session.loadCalibrationData(calibrationFolder().map((f) => ({ path: f.path.replace(/^calibration_data\//, ''), bytes: f.bytes })));
    return JSON.parse(session.analyze(JSON.stringify(REQUEST)));
  } finally {
    session.delete();
  }
}

describe('plugin on the recorded Netron page', () => {
  let page;
  let plugin;
  let state;

  beforeAll(async () => {
    page = netronPage();
    plugin = installPlugin(page.window, pluginDeps());
    expect(plugin.ok).toBe(true);
    state = plugin.state;
  });
  afterAll(() => plugin?.dispose?.());

  it('adds its panel and wraps the metadata loader, leaving Netron\'s own elements alone', async () => {
    const doc = page.document;
    expect(doc.getElementById(PANEL_ID)).not.toBeNull();
    expect(doc.getElementById(BANNER_ID)).toBeNull();
    expect(plugin.metadataWrapped).toBe(true);
    const list = JSON.parse(await page.view.host.asset('onnx-metadata.json'));
    expect(list.map((e) => e.name)).toEqual(expect.arrayContaining(['Conv', 'HzCalibration', 'HzPreprocess']));
    expect(list.find((e) => e.name === 'HzCalibration')).toMatchObject({ module: 'horizon', category: 'Quantization' });
  });

  it('captures the model Netron opens and maps every rendered node, the unnamed one included', async () => {
    await openModelThroughNetron(page.window, page.view);
    const graph = await until(state, 'graph');
    expect(state.get('modelName')).toBe('horizon_calibrated_tiny.onnx');
    expect(state.get('modelBytes')).toEqual(modelBytes());
    const map = nodeElementMap(page.document, graph);
    expect(map.size).toBe(16);
    for (const n of graph.nodes) expect(map.has(n.name), n.name).toBe(true);
    // The unnamed Relu (12th node of the file): the reader calls it Relu_11, Netron node-id-0.
    expect(map.get('Relu_11').id).toBe('node-id-0');
    expect([...map].filter(([, el]) => el.id.startsWith('node-id-')).map(([n]) => n)).toEqual(['Relu_11']);
  });

  it('gives horizon ops their category class when Netron has no schema for them', async () => {
    await settle();
    const map = nodeElementMap(page.document, state.get('graph'));
    const cls = (name) => [...headerGroup(map.get(name)).classList];
    expect(cls('backbone.conv1.weight_HzCalibration')).toContain('node-item-type-quantization');
    expect(cls('images_HzPreprocess')).toContain('node-item-type-normalization');
    expect(cls('/backbone/conv1/Conv')).not.toContain('node-item-type-quantization');
  });

  it('the panel is the web app\'s: every analysis tab, Run all, progress, and every export', () => {
    const panel = page.document.getElementById(PANEL_ID);
    const tabs = [...panel.querySelectorAll('.ptq-analysis-tabs button')].map((b) => b.getAttribute('data-analysis'));
    expect(tabs).toEqual([...ANALYSES.map((a) => a.id), 'runall']);
    expect(panel.querySelector('.ptq-analysis-tabs button[data-analysis="runall"]').textContent).toBe('Run all');
    for (const id of tabs) expect(analysisForm(panel, id), id).not.toBeNull();
    expect(panel.querySelectorAll('.ptq-run')).toHaveLength(1);
    expect(panel.querySelector('.ptq-cancel').disabled).toBe(true);
    expect(panel.querySelector('.ptq-progress')).not.toBeNull();
    const exports = [...panel.querySelectorAll('.ptq-export button')];
    expect(exports.map((b) => b.getAttribute('data-export'))).toEqual(EXPORTS.map((e) => e.id));
    expect(exports.every((b) => b.disabled)).toBe(true); // nothing to export yet
  });

  it('panel: calibration folder, Run with progress, and nodes coloured by the real result', async () => {
    const doc = page.document;
    const picker = doc.querySelector(`#${PANEL_ID} .ptq-data-input`);
    Object.defineProperty(picker, 'files', { value: asPickedFiles(calibrationFolder()), configurable: true });
    picker.dispatchEvent(new page.window.Event('change'));
    const files = await until(state, 'calibrationFiles');
    expect(files.map((f) => f.path)).toEqual(['images/0.npy', 'images/1.npy', 'images/2.npy']);
    expect(doc.querySelector(`#${PANEL_ID} .ptq-data-status`).textContent).toBe('3 calibration samples (calibration_data: images)');

    const progress = [];
    const offProgress = plugin.runner.on((ev) => ev.type === 'progress' && progress.push([ev.done, ev.total]));
    const ev = await runTab(page.window, doc.getElementById(PANEL_ID), plugin, 'sensitivity', (form) => {
      choose(page.window, form.querySelector('select[name="node_type"]'), 'activation');
      setChecked(form, 'metrics', 'mse');
    });
    offProgress();
    expect(ev).toMatchObject({ type: 'done', cancelled: false });
    expect(progress.at(-1)).toEqual([3, 3]); // three activation calibration nodes
    expect(doc.querySelector(`#${PANEL_ID} .ptq-progress`).value).toBe(3);
    expect(doc.querySelector(`#${PANEL_ID} .ptq-progress-text`).textContent).toMatch(/^Sensitivity: done in /);
    // The app's sensitivity table, most sensitive first (the core's order).
    const order = [...doc.querySelectorAll(`#${PANEL_ID} .ptq-analysis-output table.sensitivity-table tbody tr`)].map((tr) => tr.getAttribute('data-item'));
    expect(order).toEqual(state.get('results').sensitivity_order.activation);

    const ref = await referenceResult();
    const rows = state.get('results').sensitivity.activation;
    expect(Object.keys(rows).sort()).toEqual(Object.keys(ref.sensitivity.activation).sort());
    for (const [item, row] of Object.entries(ref.sensitivity.activation)) {
      expect(rows[item]['cosine-similarity']).toBe(row['cosine-similarity']);
      expect(rows[item].mse).toBe(row.mse);
    }

    await until(state, 'heat');
    await settle();
    // Expected colours from the reference rows: the calibration node and the nodes consuming it.
    const values = Object.values(ref.sensitivity.activation).map((r) => r['cosine-similarity']);
    const scale = heatScale('cosine-similarity', values);
    const map = nodeElementMap(doc, state.get('graph'));
    const colorOf = (name) => headerPath(map.get(name)).style.getPropertyValue('fill');
    for (const [item, row] of Object.entries(ref.sensitivity.activation)) {
      expect(colorOf(item), item).toBe(scale.color(row['cosine-similarity']));
    }
    expect(colorOf('/backbone/conv1/Conv')).toBe(scale.color(ref.sensitivity.activation.images_preprocessed_HzCalibration['cosine-similarity']));
    expect(colorOf('/head/fc/Gemm')).toBe(scale.color(ref.sensitivity.activation['/head/Flatten_output_0_HzCalibration']['cosine-similarity']));
    expect(colorOf('backbone.conv1.weight_HzCalibration')).toBe(''); // weights were not analysed
    expect(coloredCount(doc)).toBe(state.get('heat').values.size);
    // Legend (web/charts/legend.mjs) and heat controls.
    expect(doc.querySelector(`#${PANEL_ID} .ptq-heat-legend svg.heat-legend`)).not.toBeNull();
    expect(doc.querySelector(`#${PANEL_ID} .ptq-heat-metric`).value).toBe('cosine-similarity');
  });

  it('switching the heat metric recolours the nodes', async () => {
    const doc = page.document;
    choose(page.window, doc.querySelector(`#${PANEL_ID} .ptq-heat-metric`), 'mse');
    const heat = await until(state, 'heat', (h) => h?.legend?.metric === 'mse');
    await settle();
    const map = nodeElementMap(doc, state.get('graph'));
    for (const [name, entry] of heat.values) expect(headerPath(map.get(name)).style.getPropertyValue('fill'), name).toBe(entry.color);
  });

  it('Cancel stops a running sweep and keeps the colours of the last result', async () => {
    const doc = page.document;
    const heat = state.get('heat');
    const done = runTab(page.window, doc.getElementById(PANEL_ID), plugin, 'leave_one_out', (form) => {
      choose(page.window, form.querySelector('select[name="node_type"]'), 'node');
    });
    expect(doc.querySelector(`#${PANEL_ID} .ptq-cancel`).disabled).toBe(false);
    doc.querySelector(`#${PANEL_ID} .ptq-cancel`).dispatchEvent(new page.window.Event('click'));
    expect(await done).toMatchObject({ type: 'done', cancelled: true });
    expect(doc.getElementById(PANEL_ID).getAttribute('data-run')).toBe('cancelled');
    expect(doc.querySelector(`#${PANEL_ID} .ptq-run`).disabled).toBe(false);
    expect(state.get('error')).toBeNull();
    await settle();
    expect(coloredCount(doc)).toBe(heat.values.size);
  });

  it('accumulated error from the top-k of the sensitivity table: the chart module\'s curves in the panel', async () => {
    const doc = page.document;
    const root = doc.getElementById(PANEL_ID);
    const ev = await runTab(page.window, root, plugin, 'acc_error', (form) => {
      const items = useTopK(page.window, form, 'quantize_node');
      expect(items.split(', ').sort()).toEqual(Object.keys(state.get('results').sensitivity.activation).sort());
    });
    expect(ev).toMatchObject({ type: 'done', cancelled: false });
    const figures = root.querySelectorAll('.ptq-analysis-output figure[data-kind="acc_error"]');
    expect(figures.length).toBe(state.get('results').acc_error_figures.length);
    expect(root.querySelectorAll('.ptq-analysis-output figure[data-kind="acc_error"] svg path.curve').length).toBeGreaterThan(0);
    // The heatmap still shows the sensitivity sweep.
    await settle();
    expect(coloredCount(doc)).toBe(state.get('heat').values.size);
  });

  it('colours survive Netron re-rendering the graph (Show Names, re-open)', async () => {
    const doc = page.document;
    const before = graphNodeElements(doc);
    const heat = state.get('heat');
    await page.view.toggle('names');
    await settle();
    const after = graphNodeElements(doc);
    expect(after).toHaveLength(16);
    expect(after.some((el) => before.includes(el))).toBe(false); // every element is new
    expect(before[0].isConnected).toBe(false);
    const map = nodeElementMap(doc, state.get('graph'));
    for (const [name, entry] of heat.values) expect(headerPath(map.get(name)).style.getPropertyValue('fill'), name).toBe(entry.color);
    expect(coloredCount(doc)).toBe(heat.values.size);
    await page.view.toggle('names');
    await settle();
    expect(coloredCount(doc)).toBe(heat.values.size);
  });

  it('shows the results of the node selected in Netron', async () => {
    const doc = page.document;
    page.view.select('node-name-/backbone/pool/MaxPool_output_0_HzCalibration');
    await until(state, 'selection', (s) => s === '/backbone/pool/MaxPool_output_0_HzCalibration');
    const panelNode = doc.querySelector(`#${PANEL_ID} .ptq-node`);
    expect(panelNode.querySelector('.ptq-node-title').textContent).toBe('/backbone/pool/MaxPool_output_0_HzCalibration');
    expect(panelNode.querySelector('[data-section="analysis-results"] h4').textContent).toContain('sensitivity (activation)');
    // The consumer Conv shows the same row "via" the calibration node.
    page.view.select('node-name-Conv_0');
    await until(state, 'selection', (s) => s === 'Conv_0');
    expect(panelNode.querySelector('[data-section="analysis-results"] h4').textContent).toContain('via /backbone/pool/MaxPool_output_0_HzCalibration');
    // Per-node charts: the distribution of the selected calibration node, drawn by web/charts.
    page.view.select('node-name-/backbone/pool/MaxPool_output_0_HzCalibration');
    await until(state, 'selection', (s) => s === '/backbone/pool/MaxPool_output_0_HzCalibration');
    const done = nextRunnerEvent(plugin.runner, (ev) => ev.type === 'done' || ev.type === 'error');
    panelNode.querySelector('.ptq-node-actions [data-analysis="distribution"]').dispatchEvent(new page.window.Event('click'));
    expect(await done).toMatchObject({ type: 'done', cancelled: false });
    expect(Object.keys(state.get('results').distribution ?? {}).length).toBeGreaterThan(0);
    expect(panelNode.querySelectorAll('figure[data-kind="distribution"] svg').length).toBeGreaterThan(0);
    page.view.select(null);
    await until(state, 'selection', (s) => s === null);
    expect(panelNode.querySelector('.ptq-node-actions').hidden).toBe(true);
  });

  it('a box plot channel (keyboard: arrow, Enter) gets its histogram from the plugin\'s runner', async () => {
    const doc = page.document;
    const name = state.get('graph').nodes.find((n) => n.calibration?.kind === 'weight').name;
    state.set('selection', name);
    const panelNode = doc.querySelector(`#${PANEL_ID} .ptq-node`);
    let done = nextRunnerEvent(plugin.runner, (ev) => ev.type === 'done' || ev.type === 'error');
    panelNode.querySelector('.ptq-node-actions [data-analysis="channelwise"]').dispatchEvent(new page.window.Event('click'));
    expect(await done).toMatchObject({ type: 'done', cancelled: false });
    const channels = state.get('results').channelwise[name].channels.length;
    expect(channels).toBeGreaterThan(1);
    const key = (k) => Object.defineProperty(new page.window.Event('keydown'), 'key', { value: k });
    const svg = panelNode.querySelector(`figure[data-kind="channelwise"] svg[role="slider"]`);
    done = nextRunnerEvent(plugin.runner, (ev) => ev.type === 'done' || ev.type === 'error');
    svg.dispatchEvent(key('ArrowRight'));
    svg.dispatchEvent(key('Enter'));
    expect(await done).toMatchObject({ type: 'done', cancelled: false });
    await settle();
    const [h] = state.get('results').channelwise[name].channel_histograms;
    expect(h.channel).toBe(1);
    const drawn = panelNode.querySelector(`figure[data-kind="channelwise"] .ptq-channel-histogram[data-channel="1"] svg.histogram`);
    expect(drawn.querySelector('.title tspan').textContent).toBe(`${name} channel 2 of ${channels} (index 1)`);
    state.set('selection', null);
  });

  it('Pick and Ctrl+click fill the picked set the analyses read; Netron\'s picked nodes are outlined', async () => {
    const doc = page.document;
    const root = doc.getElementById(PANEL_ID);
    const click = (el, mods = {}) => {
      const ev = new page.window.Event('click', { bubbles: true });
      for (const [k, v] of Object.entries(mods)) Object.defineProperty(ev, k, { value: v });
      el.dispatchEvent(ev);
    };
    page.view.select('node-name-/backbone/conv1/Conv');
    await until(state, 'selection', (s) => s === '/backbone/conv1/Conv');
    expect(root.querySelector('.ptq-pick-node').textContent).toBe('Pick');
    click(root.querySelector('.ptq-pick-node'));
    expect([...state.get('picked')]).toEqual(['/backbone/conv1/Conv']);
    expect(root.querySelector('.ptq-pick-node').textContent).toBe('Unpick');
    // Ctrl+click on a header in Netron's graph picks that node too (Netron selects it as usual).
    click(headerGroup(nodeElementMap(doc, state.get('graph')).get('/head/fc/Gemm')), { ctrlKey: true });
    expect([...state.get('picked')]).toEqual(['/backbone/conv1/Conv', '/head/fc/Gemm']);
    await until(state, 'selection', (s) => s === '/head/fc/Gemm');
    await settle();
    const marked = () => graphNodeElements(doc).filter((el) => el.hasAttribute('data-ptq-picked')).map((el) => el.id);
    expect(marked()).toEqual(['node-name-/backbone/conv1/Conv', 'node-name-/head/fc/Gemm']);
    // The app panel's "← picked" buttons read them.
    root.querySelector('.ptq-analysis-tabs button[data-analysis="distribution"]').dispatchEvent(new page.window.Event('click'));
    const form = analysisForm(root, 'distribution');
    const usePicked = form.querySelector('[name="nodes_list"]').parentNode.querySelector('.ptq-use-picked');
    expect(usePicked.textContent).toBe('← picked (2)');
    click(usePicked);
    expect(form.querySelector('[name="nodes_list"]').value).toBe('/backbone/conv1/Conv, /head/fc/Gemm');
    // The mark survives a re-render; a plain click does not pick; a second Ctrl+click unpicks.
    await page.view.toggle('names');
    await settle();
    expect(marked()).toEqual(['node-name-/backbone/conv1/Conv', 'node-name-/head/fc/Gemm']);
    click(headerGroup(nodeElementMap(doc, state.get('graph')).get('/backbone/conv1/Conv')));
    click(headerGroup(nodeElementMap(doc, state.get('graph')).get('/head/fc/Gemm')), { shiftKey: true });
    expect([...state.get('picked')]).toEqual(['/backbone/conv1/Conv']);
    await settle();
    expect(marked()).toEqual(['node-name-/backbone/conv1/Conv']);
    await page.view.toggle('names');
  });

  it('a new model through Netron clears the old results, comparison and colours', async () => {
    // A comparison of two results drawn as the heat (the compare panel's state 'compare').
    const comparison = { source: 'sensitivity:node', metric: 'cosine-similarity', better: 'higher', rows: [{ name: '/backbone/conv1/Conv', a: 1, b: 0.99, delta: -0.01 }], onlyA: [], onlyB: [] };
    state.setMany({ compare: { nameA: 'A', nameB: 'B', source: comparison.source, metric: comparison.metric, comparison }, heatSettings: { view: 'compare', metric: 'cosine-similarity' } });
    await settle();
    expect(coloredCount(page.document)).toBe(1);
    await openModelThroughNetron(page.window, page.view);
    await until(state, 'graph');
    await settle();
    expect(state.get('results')).toBeNull();
    expect(state.get('compare')).toBeNull();
    expect(coloredCount(page.document)).toBe(0);
  });
});

// A model saved with external data, opened in Netron together with its side file: the plugin hands
// the file to its workers, and a sweep gives the wasm API's result on the model with embedded tensors.
describe('plugin: a model with external data', () => {
  let page;
  let plugin;
  let state;
  beforeAll(() => {
    page = netronPage();
    plugin = installPlugin(page.window, pluginDeps());
    state = plugin.state;
  });
  afterAll(() => plugin?.dispose?.());

  it('without its side file the panel names it; with it, the sweep equals the embedded model\'s', async () => {
    const entry = fixture('digits_cnn_calibrated_external');
    const name = path.basename(entry.model);
    const bytes = new Uint8Array(fs.readFileSync(entry.model));
    const side = { name: entry.external_data, bytes: new Uint8Array(fs.readFileSync(path.join(path.dirname(entry.model), entry.external_data))) };
    await openModelThroughNetron(page.window, page.view, bytes, name);
    expect(await until(state, 'error')).toContain(`its data is stored in the external file '${entry.external_data}', which was not provided`);

    await openModelThroughNetron(page.window, page.view, bytes, name, [side]);
    const graph = await until(state, 'graph');
    expect(state.get('error')).toBeNull();
    const ptq = await loadPtqModule();
    const reference = new ptq.Session();
    try {
      reference.loadModel(fs.readFileSync(path.join(FIXTURES_ROOT, entry.embedded_model)));
      expect(graph.nodes.length).toBe(JSON.parse(reference.graphJson()).nodes.length);
      const files = readCalibrationFolder(entry.data);
      const picker = page.document.querySelector(`#${PANEL_ID} .ptq-data-input`);
      Object.defineProperty(picker, 'files', { value: asPickedFiles(files.map((f) => ({ path: `calibration_data/${f.path}`, bytes: new Uint8Array(f.bytes) }))), configurable: true });
      picker.dispatchEvent(new page.window.Event('change'));
      await until(state, 'calibrationFiles');
      const ev = await runTab(page.window, page.document.getElementById(PANEL_ID), plugin, 'sensitivity', (form) => {
        choose(page.window, form.querySelector('select[name="node_type"]'), 'activation');
      });
      expect(ev).toMatchObject({ type: 'done', cancelled: false });
      reference.loadCalibrationData(files);
      const options = { ...REQUEST.options, metrics: ['cosine-similarity'] };
      const expected = JSON.parse(reference.analyze(JSON.stringify({ analysis: 'sensitivity', options })));
      expect(state.get('results').sensitivity.activation).toEqual(expected.sensitivity.activation);
    } finally {
      reference.delete();
    }
  });
});

describe('plugin: a float model', () => {
  it('says it has nothing quantized, and its calibrated model, made with the data picked, is saved for Netron', async () => {
    const page = netronPage();
    const { saved, save } = fileSaver();
    const plugin = installPlugin(page.window, pluginDeps({ save }));
    const { state } = plugin;
    try {
      const entry = fixture('digits_cnn');
      await openModelThroughNetron(page.window, page.view, new Uint8Array(fs.readFileSync(entry.model)), 'digits_cnn.onnx');
      await until(state, 'graph');
      const files = readCalibrationFolder(entry.data);
      const picker = page.document.querySelector(`#${PANEL_ID} .ptq-data-input`);
      Object.defineProperty(picker, 'files', { value: asPickedFiles(files.map((f) => ({ path: `calibration_data/${f.path}`, bytes: new Uint8Array(f.bytes) }))), configurable: true });
      picker.dispatchEvent(new page.window.Event('change'));
      await until(state, 'samples');
      const panel = page.document.getElementById(PANEL_ID);
      const notice = panel.querySelector('.ptq-float-model');
      expect(notice.hidden).toBe(false);
      expect(notice.textContent).toMatch(/^digits_cnn\.onnx has no calibration nodes: it is a float model/);
      expect(panel.querySelector('.ptq-run').disabled).toBe(true);
      panel.querySelector('.ptq-calibrate').dispatchEvent(new page.window.Event('click'));
      const file = await until(saved, 'file');
      expect(file.name).toBe('digits_cnn_calibrated_model.onnx');
      // The core's calibration of the same files, as `ptqscope calibrate` makes it.
      const ptq = await loadPtqModule();
      const expected = ptq.calibrate(new Uint8Array(fs.readFileSync(entry.model)), files, {}).model;
      expect(Buffer.from(file.data).equals(Buffer.from(expected))).toBe(true);
      expect(state.get('status')).toBe('digits_cnn_calibrated_model.onnx saved: open it in Netron (Open Model…) to analyse it.');
    } finally {
      plugin.dispose();
    }
  });
});

// The same user steps on the plugin's panel and on the web app's panels mounted as the app's dock
// mounts them (own store, runner and Node worker pool): the exported results JSON must be the same.
// The recorded model with one op_type renamed to one the core does not run (same length, so the
// protobuf lengths stay valid): Netron draws the same graph; the plugin opens it in the limited state
// and outlines that node in Netron's drawing. NodeProto.op_type is field 4 (tag 0x22), then the length.
function withUnsupportedOp(bytes, opType, to) {
  const text = Buffer.from(bytes).toString('latin1');
  const field = (s) => `\x22${String.fromCharCode(s.length)}${s}`;
  const [from, at] = [field(opType), text.indexOf(field(opType))];
  to = field(to);
  expect(from.length).toBe(to.length);
  expect(at >= 0 && text.indexOf(from, at + 1) < 0).toBe(true);
  return new Uint8Array(Buffer.from(text.slice(0, at) + to + text.slice(at + from.length), 'latin1'));
}

describe('plugin: a model with an op the core does not run', () => {
  let page;
  let plugin;
  beforeAll(() => {
    page = netronPage();
    plugin = installPlugin(page.window, pluginDeps());
  });
  afterAll(() => plugin?.dispose?.());

  it('opens limited, names the op, and outlines its node in Netron\'s graph until another model opens', async () => {
    const { state } = plugin;
    await openModelThroughNetron(page.window, page.view, withUnsupportedOp(modelBytes(), 'Flatten', 'Flattex'));
    await until(state, 'graph');
    expect(state.get('error')).toContain("Flattex (domain '', node '/head/Flatten')");
    await settle();
    const marked = () => graphNodeElements(page.document).filter((el) => el.hasAttribute('data-ptq-unsupported')).map((el) => el.id);
    expect(marked()).toEqual(['node-name-/head/Flatten']);
    await page.view.toggle('names'); // survives Netron's re-render
    await settle();
    expect(marked()).toEqual(['node-name-/head/Flatten']);
    await page.view.toggle('names');
    await openModelThroughNetron(page.window, page.view);
    await until(state, 'graph');
    await settle();
    expect(state.get('error')).toBeNull();
    expect(marked()).toEqual([]);
  });
});

describe('exports: the plugin writes the app\'s results JSON', () => {
  const steps = async (win, root, host) => {
    await runTab(win, root, host, 'sensitivity', (form) => {
      choose(win, form.querySelector('select[name="node_type"]'), 'activation');
      setChecked(form, 'metrics', 'mse');
    });
    await runTab(win, root, host, 'acc_error', (form) => useTopK(win, form, 'quantize_node'));
  };
  const exported = (win, root, { saved }, id) => {
    saved.set('file', null);
    root.querySelector(`.ptq-export button[data-export="${id}"]`).dispatchEvent(new win.Event('click'));
    return until(saved, 'file');
  };
  // Wall-clock timings are the only field two runs may differ in.
  const comparable = (text) => {
    const { timings_ms: timings, ...doc } = JSON.parse(text);
    expect(Object.keys(timings).sort()).toEqual(['acc_error', 'sensitivity']);
    return doc;
  };

  it('same inputs, same steps: plugin export == app export (results JSON, CSV tables)', async () => {
    const page = netronPage();
    const plugin = fileSaver();
    Object.assign(plugin, installPlugin(page.window, pluginDeps({ save: plugin.save })));
    try {
      await openModelThroughNetron(page.window, page.view);
      const graph = await until(plugin.state, 'graph');
      const picker = page.document.querySelector(`#${PANEL_ID} .ptq-data-input`);
      Object.defineProperty(picker, 'files', { value: asPickedFiles(calibrationFolder()), configurable: true });
      picker.dispatchEvent(new page.window.Event('change'));
      const files = await until(plugin.state, 'calibrationFiles');
      const pluginRoot = page.document.getElementById(PANEL_ID);
      await steps(page.window, pluginRoot, plugin);

      // The app: its store holds what the app's opener puts there; its dock mounts both panels.
      const app = appHost({ graph, files, ...fileSaver() });
      await steps(app.window, app.root, app);

      const pluginJson = await exported(page.window, pluginRoot, plugin, 'json');
      const appJson = await exported(app.window, app.root, app, 'json');
      expect(pluginJson.name).toBe(appJson.name);
      expect(pluginJson.name).toBe('horizon_calibrated_tiny.ptqscope.json');
      expect(pluginJson.type).toBe('application/json');
      const doc = comparable(pluginJson.data);
      expect(doc).toEqual(comparable(appJson.data));
      expect(doc.schema).toBe('ptqscope.result');
      expect(Object.keys(doc.sensitivity.activation).length).toBe(3);
      expect(Object.keys(doc.acc_error).length).toBeGreaterThan(0);

      const pluginCsv = await exported(page.window, pluginRoot, plugin, 'csv');
      const appCsv = await exported(app.window, app.root, app, 'csv');
      expect(pluginCsv.name).toBe('horizon_calibrated_tiny.tables.zip');
      expect(unzipText(pluginCsv.data)['sensitivity_activation.csv']).toBe(unzipText(appCsv.data)['sensitivity_activation.csv']);
      expect(unzipText(pluginCsv.data)['acc_error.csv']).toBe(unzipText(appCsv.data)['acc_error.csv']);
      app.dispose();
    } finally {
      plugin.dispose?.();
    }
  });
});

describe('fail soft when the page is not the Netron the plugin knows', () => {
  const expectUntouched = (page, result) => {
    expect(result.ok).toBe(false);
    const banners = page.document.querySelectorAll(`#${BANNER_ID}`);
    expect(banners).toHaveLength(1);
    expect(page.document.getElementById(PANEL_ID)).toBeNull();
    expect(page.document.getElementById('ptqscope-style')).toBeNull();
    return banners[0].textContent;
  };

  it('missing globals: one banner, no panel, Netron still opens models', async () => {
    const page = netronPage();
    delete page.window.__view__.toggle;
    const result = installPlugin(page.window, pluginDeps());
    expect(expectUntouched(page, result)).toContain('window.__view__.toggle is missing');
    await openModelThroughNetron(page.window, page.view);
    expect(graphNodeElements(page.document)).toHaveLength(16);
    expect(page.document.body.className).toBe('default');
  });

  it('changed page skeleton and another major version', () => {
    const page = netronPage({ version: '10.0.1', mutate: (doc) => doc.getElementById('sidebar').remove() });
    const text = expectUntouched(page, installPlugin(page.window, pluginDeps()));
    expect(text).toContain('#sidebar is missing');
    expect(text).toContain('Netron 10.0.1 is not supported');
  });

  it('a render with other node ids: banner, no colours, Netron\'s elements unchanged', async () => {
    const page = netronPage();
    const plugin = installPlugin(page.window, pluginDeps({ spawn: () => ({ postMessage() {}, terminate() {} }) }));
    expect(plugin.ok).toBe(true);
    // Another Netron renders nodes as g.node.graph-node with a data attribute instead of the id.
    const renders = page.view;
    const original = page.document.getElementById('target');
    await openModelThroughNetron(page.window, renders);
    for (const el of graphNodeElements(page.document)) {
      el.setAttribute('data-name', el.id);
      el.removeAttribute('id');
    }
    const snapshot = original.innerHTML;
    plugin.decorate();
    expect(page.document.querySelectorAll(`#${BANNER_ID}`)).toHaveLength(1);
    expect(page.document.getElementById(BANNER_ID).textContent).toContain('neither node-name-<name> nor node-id-<n>');
    expect(original.innerHTML).toBe(snapshot);
    plugin.dispose();
  });
});

describe('model capture by drop', () => {
  const silentWorker = () => ({ postMessage() {}, terminate() {} });
  const dropEvent = (window, files) => {
    const ev = new window.Event('drop', { bubbles: true, cancelable: true });
    Object.defineProperty(ev, 'dataTransfer', { value: { files, items: [] } });
    return ev;
  };
  const file = (name, bytes = modelBytes()) => ({ name, size: bytes.length, arrayBuffer: async () => bytes.slice().buffer });

  it('reads the file Netron opens from a drop on the page', async () => {
    const page = netronPage();
    const plugin = installPlugin(page.window, pluginDeps());
    page.document.body.dispatchEvent(dropEvent(page.window, [file('notes.txt'), file('horizon_calibrated_tiny.onnx')]));
    await page.view.lastOpen;
    const bytes = await until(plugin.state, 'modelBytes');
    expect(plugin.state.get('modelName')).toBe('horizon_calibrated_tiny.onnx');
    expect(bytes).toEqual(modelBytes());
    expect(graphNodeElements(page.document)).toHaveLength(16);
    plugin.dispose();
  });

  it('a drop on the panel is not a model for Netron nor for the capture; another format is reported', async () => {
    const page = netronPage();
    const plugin = installPlugin(page.window, pluginDeps({ spawn: silentWorker }));
    const zone = page.document.querySelector(`#${PANEL_ID} .ptq-drop`);
    const held = until(plugin.state, 'heldData');
    zone.dispatchEvent(dropEvent(page.window, [file('model.onnx')]));
    expect(page.view.lastOpen).toBeUndefined(); // Netron's body listener never saw it
    expect(plugin.state.get('modelName')).toBeNull();
    // The panel took it as calibration data, kept until a model is read, and says so.
    expect(await held).toEqual({ label: 'calibration_data', files: 1, reading: false });
    expect(page.document.querySelector(`#${PANEL_ID} .ptq-data-status`).textContent)
      .toBe('calibration_data (1 file) is kept: open the calibrated model in Netron (Open Model… or drop it) to check and use it');
    expect(plugin.state.get('error')).toBeNull();
    page.document.body.dispatchEvent(dropEvent(page.window, [file('weights.npy')]));
    await page.view.lastOpen;
    expect(plugin.state.get('modelName')).toBe('weights.npy');
    expect(plugin.state.get('modelBytes')).toBeNull();
    expect(plugin.state.get('status')).toContain('weights.npy is not an ONNX model');
    plugin.dispose();
  });
});
