// Session.analyze / listItems / graphJson and ptq.mergeResults through the wasm module
// (docs/wasm-api.md), on the calibrated digits model.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { calibratedDigits } from './cli_fixture.mjs';
import { loadPtqModule, readCalibrationFolder } from './helpers.mjs';

let ptq;
let session;

beforeAll(async () => {
  const { model, data } = calibratedDigits();
  ptq = await loadPtqModule();
  session = new ptq.Session();
  session.loadModel(fs.readFileSync(model));
  session.loadCalibrationData(readCalibrationFolder(data));
});

afterAll(() => session?.delete());

const analyze = (request, onEvent) => JSON.parse(onEvent ? session.analyze(JSON.stringify(request), onEvent)
  : session.analyze(JSON.stringify(request)));
const withoutTimings = ({ timings_ms: _t, ...rest }) => rest;

describe('Session.analyze', () => {
  const request = { analysis: 'sensitivity', options: { node_type: 'activation', metrics: ['cosine-similarity', 'mse'] } };

  it('a sweep split into two item ranges merges into the whole sweep', () => {
    const names = JSON.parse(session.listItems(JSON.stringify(request)));
    expect(names.length).toBeGreaterThan(3);
    const full = analyze(request);
    const cut = Math.floor(names.length / 2);
    const first = analyze({ ...request, items: { begin: 0, end: cut } });
    const second = analyze({ ...request, items: { begin: cut, end: names.length } });
    expect(Object.keys(first.sensitivity.activation)).toHaveLength(cut);
    const merged = JSON.parse(ptq.mergeResults(JSON.stringify([second, first])));
    expect(withoutTimings(merged)).toEqual(withoutTimings(full));
    expect(merged.timings_ms.sensitivity).toBeCloseTo(first.timings_ms.sensitivity + second.timings_ms.sensitivity, 6);
    // The ranking: most sensitive (lowest cosine) first.
    const cos = full.sensitivity_order.activation.map((k) => full.sensitivity.activation[k]['cosine-similarity']);
    expect([...cos].sort((a, b) => a - b)).toEqual(cos);
    expect([...full.sensitivity_order.activation].sort()).toEqual([...names].sort());
  });

  it('emits one event per item, in run order, with the row of the result', () => {
    const events = [];
    const result = analyze({ ...request, items: { begin: 1, end: 4 } }, (e) => events.push(JSON.parse(e)));
    const names = JSON.parse(session.listItems(JSON.stringify(request)));
    expect(events.map((e) => e.item)).toEqual(names.slice(1, 4));
    expect(events.map((e) => e.index)).toEqual([1, 2, 3]);
    expect(events.map((e) => e.done)).toEqual([1, 2, 3]);
    for (const e of events) {
      expect(e).toMatchObject({ type: 'item', analysis: 'sensitivity', section: 'activation', total: 3 });
      expect(e.row).toEqual(result.sensitivity.activation[e.item]);
    }
  });

  it('throws JS Errors carrying the C++ message', () => {
    const error = (fn) => { try { fn(); } catch (e) { return e; } return null; };
    let e = error(() => session.analyze(JSON.stringify({ analysis: 'sensitivity', options: { metric: 'mse' } })));
    expect(e).toBeInstanceOf(Error);
    expect(e.name).toBe('PtqError');
    expect(e.message).toMatch(/^options\.metric: unknown option of analysis 'sensitivity'/);
    e = error(() => session.analyze('{"analysis": "nope"}'));
    expect(e.message).toMatch(/^request\.analysis: unknown analysis 'nope'/);
    e = error(() => session.analyze('{'));
    expect(e.message).toBe('request: invalid JSON at offset 1: expected a string key');
    e = error(() => ptq.mergeResults('[]'));
    expect(e.message).toBe('mergeResults: expected a non-empty array of result documents');
    // The session stays usable after an error.
    expect(analyze({ ...request, items: { begin: 0, end: 1 } }).sweep.items).toHaveLength(1);
  });

  it('rethrows an exception of onEvent after the analysis, without further events', () => {
    let calls = 0;
    const boom = new Error('listener failed');
    expect(() => session.analyze(JSON.stringify({ ...request, items: { begin: 0, end: 3 } }), () => { calls += 1; throw boom; }))
      .toThrow(boom);
    expect(calls).toBe(1);
  });

  it('runs every other analysis into its schema section', () => {
    const cali = JSON.parse(session.listItems(JSON.stringify(request)));
    const acc = analyze({ analysis: 'acc_error', options: { quantize_node: ['weight', 'activation'] } });
    expect(acc.acc_error_figures[0].curves).toEqual(['weight_activation_calibrated', 'only_activation_calibrated', 'only_weight_calibrated']);
    const curve = acc.acc_error.weight_activation_calibrated;
    expect(curve.y).toHaveLength(curve.x.length);
    const dist = analyze({ analysis: 'distribution', options: { nodes_list: [cali[0]], bins: 32 } });
    expect(dist.distribution[cali[0]].histograms[0].counts).toHaveLength(32);
    const cw = analyze({ analysis: 'channelwise', options: { nodes_list: [cali[1]] } });
    expect(cw.channelwise[cali[1]].channels.length).toBeGreaterThan(0);
    const stat = analyze({ analysis: 'stat_info' });
    expect(stat.stat_info_order.length).toBeGreaterThan(cali.length);
    const sa = analyze({ analysis: 'sensitivity_analysis', options: { sensitive_nodes: [cali[0]] } });
    expect(sa.sensitivity_analysis.x).toEqual(['none', cali[0]]);
  });
});

describe('Session.graphJson', () => {
  it('describes the loaded model', () => {
    const graph = JSON.parse(session.graphJson());
    expect(graph.schema).toBe('ptqscope.graph');
    expect(graph.nodes.length).toBeGreaterThan(0);
  });
});
