// The analyses and export panels as mountable components (the app's dock and the Netron plugin mount
// the same code): host hooks (focus, save), one result view per mount, dispose. linkedom page, a
// stub runner and a fixed result document (the real runs are in runner_pool and the plugin tests).
import { describe, it, expect } from 'vitest';
import { parseHTML } from 'linkedom';
import { createStore, DEFAULTS } from '../../../web/app/state.mjs';
import { mountAnalysesPanel } from '../../../web/app/analysis/panel.mjs';
import { mountExportPanel, EXPORTS } from '../../../web/app/export/panel.mjs';
import { mountHeatPanel } from '../../../web/app/heatmap/panel.mjs';
import { createHeatController } from '../../../web/app/heatmap/controller.mjs';
import { heatScale } from '../../../web/charts/heat_scale.mjs';

// graph: a calibration node feeding a Conv (calibration.consumers), as graphJson describes it.
const GRAPH = {
  nodes: [
    { name: 'x_HzCalibration', op_type: 'HzCalibration', inputs: ['x'], outputs: ['xq'], calibration: { consumers: ['Conv_0'] } },
    { name: 'Conv_0', op_type: 'Conv', inputs: ['xq'], outputs: ['y'], calibration: null },
  ],
  values: {},
};
const RESULT = {
  schema: 'ptqscope.result', version: 1,
  sensitivity: { activation: { x_HzCalibration: { node: 'Conv_0', 'cosine-similarity': 0.5 } } },
  sensitivity_order: { activation: ['x_HzCalibration'] },
  timings_ms: { sensitivity: 1 },
};

function host() {
  const { window } = parseHTML('<!DOCTYPE html><html><body><div id="a"></div><div id="b"></div></body></html>');
  const state = createStore({ ...DEFAULTS, picked: new Set(), graph: GRAPH, modelName: 'm.onnx' });
  const listeners = new Set();
  const runner = { run: async () => null, cancel() {}, on: (fn) => (listeners.add(fn), () => listeners.delete(fn)), listeners };
  return { window, doc: window.document, state, runner };
}

describe('mountAnalysesPanel', () => {
  it('a table row click selects the calibration node and hands its consumer to the host\'s focus hook', () => {
    const { window, doc, state, runner } = host();
    const focused = [];
    mountAnalysesPanel(doc.getElementById('a'), state, runner, { focus: (n) => focused.push(n) });
    state.set('results', RESULT);
    doc.querySelector('#a tr[data-item="x_HzCalibration"]').dispatchEvent(new window.Event('click'));
    expect(state.get('selection')).toBe('x_HzCalibration');
    expect(focused).toEqual(['Conv_0']);
    expect(state.get('focus')).toBeNull(); // a host hook replaces the app's state 'focus'
  });

  it('without hooks it sets state focus (the app\'s graph view centres it)', () => {
    const { window, doc, state, runner } = host();
    mountAnalysesPanel(doc.getElementById('a'), state, runner);
    state.set('results', RESULT);
    doc.querySelector('#a tr[data-item="x_HzCalibration"]').dispatchEvent(new window.Event('click'));
    expect(state.get('focus')).toBe('Conv_0');
  });

  it('two mounts are independent, and dispose stops listening and removes the panel', () => {
    const { doc, state, runner } = host();
    const one = mountAnalysesPanel(doc.getElementById('a'), state, runner);
    const two = mountAnalysesPanel(doc.getElementById('b'), state, runner);
    two.select('acc_error');
    state.set('results', RESULT);
    expect(doc.querySelectorAll('#a table.sensitivity-table')).toHaveLength(1);
    expect(doc.querySelectorAll('#b table.sensitivity-table')).toHaveLength(0); // b shows its acc_error tab
    expect(runner.listeners.size).toBe(2);
    one.dispose();
    expect(runner.listeners.size).toBe(1);
    expect(doc.querySelector('#a .ptq-analyses')).toBeNull();
    state.set('results', { ...RESULT }); // no listener of the disposed panel may throw or redraw
    expect(doc.querySelector('#a').children).toHaveLength(0);
    two.dispose();
    expect(runner.listeners.size).toBe(0);
  });
});

describe('mountExportPanel', () => {
  it('writes through the host\'s save hook; buttons follow state results', async () => {
    const { window, doc, state } = host();
    const files = [];
    const panel = mountExportPanel(doc.getElementById('a'), state, { save: (name, data, type) => files.push({ name, data, type }) });
    const buttons = [...doc.querySelectorAll('#a .ptq-export button')];
    expect(buttons.map((b) => b.getAttribute('data-export'))).toEqual(EXPORTS.map((e) => e.id));
    expect(buttons.every((b) => b.disabled)).toBe(true);
    state.set('results', { ...RESULT, partial: true });
    expect(buttons.some((b) => b.disabled)).toBe(false);
    doc.querySelector('#a button[data-export="json"]').dispatchEvent(new window.Event('click'));
    await expect.poll(() => files.length).toBe(1);
    expect(files[0]).toMatchObject({ name: 'm.ptqscope.json', type: 'application/json' });
    const saved = JSON.parse(files[0].data);
    expect(saved).toEqual({ ...RESULT }); // the streaming marker is dropped
    doc.querySelector('#a button[data-export="csv"]').dispatchEvent(new window.Event('click'));
    await expect.poll(() => files.length).toBe(2);
    expect(files[1].name).toBe('sensitivity_activation.csv');
    expect(files[1].data.split('\n')[1]).toContain('x_HzCalibration');
    panel.dispose();
    expect(doc.querySelector('#a .ptq-export')).toBeNull();
  });
});

describe('mountHeatPanel', () => {
  it('views and metrics of the results, the legend of state heat; choices go to heatSettings; dispose', () => {
    const { window, doc, state } = host();
    const controller = createHeatController(state, heatScale); // the host's: heatSettings -> heat
    const panel = mountHeatPanel(doc.getElementById('a'), state, { legendWidth: 250 });
    const views = () => [...doc.querySelectorAll('#a .ptq-heat-views button')];
    expect(views().every((b) => b.disabled)).toBe(true);
    expect(doc.querySelector('#a .ptq-heat-summary').textContent).toBe('Run an analysis to colour the graph.');

    state.set('results', { ...RESULT, sensitivity: { activation: { x_HzCalibration: { node: 'Conv_0', 'cosine-similarity': 0.5, mse: 2 } } } });
    expect(views().filter((b) => !b.disabled).map((b) => b.getAttribute('data-view'))).toEqual(['activation']);
    expect(doc.querySelector('#a button[data-view="activation"]').getAttribute('aria-checked')).toBe('true');
    const metric = doc.querySelector('#a select.ptq-heat-metric');
    expect([...metric.options].map((o) => o.value)).toEqual(['cosine-similarity', 'mse']);
    expect(doc.querySelector('#a .ptq-heat-legend svg.heat-legend')).not.toBeNull();
    expect(doc.querySelector('#a .ptq-heat-summary').textContent).toMatch(/^2 nodes coloured · activation sensitivity: cosine-similarity · lower is worse/);

    for (const o of metric.options) o.toggleAttribute('selected', o.value === 'mse'); // linkedom: no value setter
    metric.dispatchEvent(new window.Event('change'));
    expect(state.get('heatSettings')).toMatchObject({ metric: 'mse' });
    expect(state.get('heat').legend.title).toMatch(/mse/);
    doc.querySelector('#a button[data-view="activation"]').dispatchEvent(new window.Event('click'));
    expect(state.get('heatSettings')).toMatchObject({ view: 'activation', metric: 'mse' });

    panel.dispose();
    expect(doc.querySelector('#a .ptq-heat')).toBeNull();
    state.set('results', null); // no listener of the disposed panel may throw
    expect(state.get('error')).toBeNull();
    controller.dispose();
  });
});
