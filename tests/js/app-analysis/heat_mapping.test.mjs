// Heatmap mapping on a real result: the calibrated digits example analysed with the wasm core.
import { describe, it, expect, beforeAll } from 'vitest';
import { openDigits, analyzeWithEvents } from './fixture.mjs';
import { buildHeat, formatValue, nodeValues, targetsOfItem, viewTable, toNumber } from '../../../web/app/heatmap/mapping.mjs';
import { createHeatController, resolveSettings } from '../../../web/app/heatmap/controller.mjs';
import { applyItemEvent, combineResults } from '../../../web/app/analysis/results.mjs';
import { rowsForNode } from '../../../web/app/heatmap/sidebar.mjs';
import { heatScale, NAN_COLOR } from '../../../web/charts/heat_scale.mjs';
import { createStore } from '../../../web/app/state.mjs';

let graph;
let activation; // {result, events}
let node;
let weight;

const request = (nodeType) => ({ analysis: 'sensitivity', options: { node_type: nodeType, metrics: ['cosine-similarity', 'mse'], data_num: 2 } });

beforeAll(async () => {
  const d = await openDigits();
  graph = d.graph;
  activation = analyzeWithEvents(d.session, request('activation'));
  node = analyzeWithEvents(d.session, request('node'));
  weight = analyzeWithEvents(d.session, request('weight'));
  d.session.delete();
});

const byName = (name) => graph.nodes.find((n) => n.name === name);
const cosine = (r, type, item) => toNumber(r.sensitivity[type][item]['cosine-similarity']);

describe('activation view', () => {
  it('colours every activation calibration node and each of its consumers', () => {
    const feature = graph.nodes.filter((n) => n.calibration?.kind === 'feature');
    expect(feature.length).toBeGreaterThan(0);
    const heat = buildHeat(activation.result, graph, { view: 'activation', metric: 'cosine-similarity' }, heatScale);
    for (const c of feature) {
      expect(heat.values.get(c.name)?.value).toBe(cosine(activation.result, 'activation', c.name));
      for (const consumer of c.calibration.consumers) {
        expect(byName(consumer)).toBeTruthy();
        expect(heat.values.has(consumer)).toBe(true);
      }
    }
  });

  it('shows the worst (lowest cosine) of several calibration inputs on a consumer', () => {
    const values = nodeValues(activation.result, graph, { view: 'activation', metric: 'cosine-similarity' });
    for (const [name, entry] of values) {
      const items = entry.items.map((i) => i.value).filter((v) => !Number.isNaN(v));
      if (items.length) expect(entry.value).toBe(Math.min(...items));
      // Each contributing item really maps here (the cali_normal_map consumers, or the node itself).
      for (const { item } of entry.items) {
        expect(targetsOfItem(item, activation.result.sensitivity.activation[item], graph)).toContain(name);
      }
    }
  });

  it('colours with the chart heat scale, hot = low cosine, and states direction and range in the legend', () => {
    const heat = buildHeat(activation.result, graph, { view: 'activation', metric: 'cosine-similarity' }, heatScale);
    const finite = [...heat.values.values()].map((v) => v.value).filter(Number.isFinite);
    const scale = heatScale('cosine-similarity', finite);
    for (const [, v] of heat.values) expect(v.color).toBe(Number.isNaN(v.value) ? NAN_COLOR : scale.color(v.value));
    expect(heat.legend.direction).toBe('lower is worse');
    expect(heat.legend.domain).toEqual([Math.min(...finite), Math.max(...finite)]);
    expect(heat.legend.title).toContain('activation');
    const [worst] = activation.result.sensitivity_order.activation;
    expect(heat.values.get(worst).label.split('\n')[0]).toBe(formatValue(activation.result.sensitivity.activation[worst]['cosine-similarity']));
    const consumer = byName(worst).calibration.consumers[0];
    expect(heat.values.get(consumer).label).toContain(`(${worst})`);
  });

  it('uses mse (higher is worse) when asked', () => {
    const heat = buildHeat(activation.result, graph, { view: 'activation', metric: 'mse' }, heatScale);
    expect(heat.legend.direction).toBe('higher is worse');
    expect(heat.legend.metric).toBe('mse');
  });
});

describe('node and weight views', () => {
  it('node view: items are normal nodes and colour themselves', () => {
    const heat = buildHeat(node.result, graph, { view: 'node' }, heatScale);
    const items = Object.keys(node.result.sensitivity.node);
    expect(items.length).toBeGreaterThan(0);
    for (const item of items) {
      expect(byName(item).calibration ?? null).toBe(null);
      expect(heat.values.get(item).value).toBe(cosine(node.result, 'node', item));
    }
  });

  it('weight view: a weight calibration node maps to the node consuming the weight', () => {
    const values = nodeValues(weight.result, graph, { view: 'weight', metric: 'cosine-similarity' });
    for (const item of Object.keys(weight.result.sensitivity.weight)) {
      const consumers = byName(item).calibration.consumers;
      expect(consumers.length).toBeGreaterThan(0);
      for (const c of consumers) expect(['Conv', 'Gemm', 'MatMul', 'ConvTranspose']).toContain(byName(c).op_type);
      for (const c of consumers) expect(values.get(c).items.map((i) => i.item)).toContain(item);
    }
  });
});

describe('state wiring', () => {
  it('the controller sets state heat from results and follows the view toggle', () => {
    const state = createStore({ graph, results: null, heat: null });
    createHeatController(state, heatScale);
    expect(state.get('heat')).toBe(null);
    state.set('results', combineResults(combineResults(null, activation.result), node.result));
    // Both tables present: 'node' is the first view; switching to activation recolours.
    expect(resolveSettings(state.get('results'), {}).view).toBe('node');
    expect(state.get('heat').legend.view).toBe('node');
    state.set('heatSettings', { view: 'activation', metric: 'mse' });
    expect(state.get('heat').legend).toMatchObject({ view: 'activation', metric: 'mse' });
    expect(viewTable(state.get('results'), 'leave_one_out')).toBe(null);
  });

  it('item events build the same rows as the final document (the heatmap fills while a sweep runs)', () => {
    expect(activation.events.length).toBe(Object.keys(activation.result.sensitivity.activation).length);
    let partial = null;
    const sizes = [];
    for (const ev of activation.events) {
      partial = applyItemEvent(partial, ev);
      sizes.push(nodeValues(partial, graph, { view: 'activation' }).size);
    }
    expect(sizes[0]).toBeGreaterThan(0);
    expect(sizes.at(-1)).toBeGreaterThanOrEqual(sizes[0]);
    expect(partial.sensitivity.activation).toEqual(activation.result.sensitivity.activation);
    expect(new Set(partial.sensitivity_order.activation)).toEqual(new Set(activation.result.sensitivity_order.activation));
  });

  it('the sidebar lists the rows about a consumer node', () => {
    const [item] = activation.result.sensitivity_order.activation;
    const consumer = byName(item).calibration.consumers[0];
    const rows = rowsForNode(activation.result, graph, consumer);
    expect(rows.map((r) => r.item)).toContain(item);
    expect(rows.find((r) => r.item === item).rank).toBe(1);
  });
});
