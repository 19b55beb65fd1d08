// The page's analysis runner on the real pipeline pool with Node worker threads running the real
// worker_core and wasm module: streaming into state 'results', progress, cancel, and a second run.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { openDigits, analyzeWithEvents, WASM_PATH } from './fixture.mjs';
import { spawnNodeWorker } from '../../../web/pipeline/node_worker.mjs';
import * as pipeline from '../../../web/app/analysis/pipeline.mjs';
import { createAnalysisRunner, progressText, queuedRun } from '../../../web/app/analysis/runner.mjs';
import { buildRequest, runAllOptions } from '../../../web/app/analysis/requests.mjs';
import { createStore } from '../../../web/app/state.mjs';

let digits;
let reference;
let state;
let runner;
const request = buildRequest('sensitivity', { node_type: 'activation', metrics: ['cosine-similarity', 'mse'], data_num: '3' });

beforeAll(async () => {
  digits = await openDigits();
  reference = analyzeWithEvents(digits.session, request).result;
  state = createStore({ graph: digits.graph, modelBytes: digits.modelBytes, calibrationFiles: digits.files, results: null, error: null });
  runner = createAnalysisRunner({ state, pipeline, spawn: () => spawnNodeWorker(WASM_PATH), size: 2 });
});

afterAll(() => {
  runner?.dispose();
  digits?.session.delete();
});

describe('analysis runner', () => {
  it('streams rows into state results, reports progress and ends with the merged table of one run', async () => {
    const seen = [];
    const progress = [];
    const off = state.on('results', (r) => seen.push(Object.keys(r.sensitivity?.activation ?? {}).length));
    const offRunner = runner.on((ev) => ev.type === 'progress' && progress.push(ev));
    const doc = await runner.run('analysis', request);
    off();
    offRunner();
    expect(doc.sensitivity.activation).toEqual(reference.sensitivity.activation);
    expect(doc.sensitivity_order.activation).toEqual(reference.sensitivity_order.activation);
    expect(state.get('results').sensitivity_order.activation).toEqual(reference.sensitivity_order.activation);
    expect(state.get('results').partial).toBeUndefined();
    const total = reference.sensitivity_order.activation.length;
    expect(progress.length).toBe(total);
    expect(progress.at(-1)).toMatchObject({ done: total, total });
    expect(progressText(progress[0])).toMatch(new RegExp(`^1 / ${total} items`));
    expect(seen.at(-1)).toBe(total);
  });

  it('keeps other analyses when a new one lands, and refuses a second run while one is in flight', async () => {
    const loo = buildRequest('leave_one_out', { node_type: 'activation', metrics: ['cosine-similarity'] });
    const p = runner.run('analysis', loo);
    await expect(runner.run('analysis', request)).rejects.toThrow(/still running/);
    await p;
    const r = state.get('results');
    expect(Object.keys(r.leave_one_out.activation).length).toBe(reference.sensitivity_order.activation.length);
    expect(r.sensitivity.activation).toEqual(reference.sensitivity.activation);
  });

  it('queuedRun waits for the run in flight, says what it waits for, and queued runs go one at a time', async () => {
    const loo = buildRequest('leave_one_out', { node_type: 'activation', metrics: ['cosine-similarity'] });
    const weight = buildRequest('sensitivity', { node_type: 'weight', metrics: ['cosine-similarity'] });
    const queued = queuedRun(runner);
    const waits = { a: [], b: [] };
    const first = runner.run('analysis', loo);
    const a = queued(request, 'queued A', (label) => waits.a.push(label));
    const b = queued(weight, 'queued B', (label) => waits.b.push(label));
    const [, docA, docB] = await Promise.all([first, a, b]);
    expect(waits.a).toEqual(['leave_one_out', null]);
    expect(waits.b).toEqual(['leave_one_out', 'queued A', null]);  // woken with A, then waited for A
    expect(docA.sensitivity.activation).toEqual(reference.sensitivity.activation);
    expect(Object.keys(docB.sensitivity.weight).length).toBeGreaterThan(0);
    expect(runner.running).toBe(null);
    expect(await queued(request, 'idle', (label) => waits.a.push(label))).toBeTruthy();
    expect(waits.a).toEqual(['leave_one_out', null]);  // nothing in flight: no wait
  });

  it('cancel stops the sweep, keeps finished rows marked cancelled, and the next run works', async () => {
    const events = [];
    const off = runner.on((ev) => {
      events.push(ev.type);
      if (ev.type === 'item') runner.cancel(); // after the first finished item
    });
    const nodeReq = buildRequest('sensitivity', { node_type: 'node', metrics: ['cosine-similarity'] });
    await runner.run('analysis', nodeReq);
    off();
    expect(events).toContain('done');
    const r = state.get('results');
    expect(r.cancelled).toBe(true);
    const done = Object.keys(r.sensitivity.node ?? {}).length;
    expect(done).toBeGreaterThanOrEqual(1);
    // The pool replaced the terminated workers: a full run still works.
    const doc = await runner.run('analysis', nodeReq);
    expect(doc.cancelled).toBe(false);
    expect(state.get('results').cancelled).toBe(false);
    expect(Object.keys(doc.sensitivity.node).length).toBeGreaterThan(done - 1);
  });

  it('reports a bad request in state error and stays usable', async () => {
    await expect(runner.run('analysis', { analysis: 'sensitivity', options: { node_type: 'bogus' } })).rejects.toThrow(/node_type/);
    expect(state.get('error')).toMatch(/node_type/);
    const doc = await runner.run('analysis', request);
    expect(doc.sensitivity.activation).toEqual(reference.sensitivity.activation);
  });

  it('Run all (§8.4) fills every section, with node_type=node mapped to calibration sets', async () => {
    const stages = [];
    const off = runner.on((ev) => ev.type === 'stage' && stages.push(ev.stage));
    const doc = await runner.run('runall', runAllOptions({ node_type: 'node', ns_metrics: ['cosine-similarity'], pick_threshold: '1' }));
    off();
    // §8.4's stages, then the model's outputs as calibrated (the summary Run all ends with).
    expect(stages).toEqual(['sensitivity', 'distribution', 'channelwise', 'acc_error', 'sensitivity_analysis', 'outputs as calibrated']);
    const r = state.get('results');
    for (const key of ['distribution', 'channelwise', 'acc_error', 'sensitivity_analysis']) expect(r[key], key).toBeTruthy();
    expect(r.sensitivity.node).toEqual(doc.sensitivity.node);
    // The top-5 nodes became their calibration nodes (§1.9) for the distribution / box plot stages.
    const calibration = new Set(digits.graph.nodes.filter((n) => n.calibration).map((n) => n.name));
    expect(r.channelwise_order.length).toBeGreaterThan(0);
    for (const name of r.channelwise_order) expect(calibration.has(name)).toBe(true);
    expect(r.sensitivity_analysis.x[0]).toBe('none');
    // Those outputs are the stored configuration's what_if on Run all's samples.
    const calibrated = await runner.run('analysis', { analysis: 'what_if', options: { data_num: doc.options.sensitivity.data_num } });
    expect(doc.what_if.outputs).toEqual(calibrated.what_if.outputs);
    expect(doc.what_if.samples).toEqual(calibrated.what_if.samples);
  });
});
