// web/pipeline on real worker threads running the wasm core (node_worker.mjs), on the calibrated
// digits model: a sweep split over 2 workers in several chunks equals the one-call result; item
// events are relayed; cancelling terminates the busy workers and the pool keeps working; acc_error split
// by curves across 2 workers gives exactly (same JSON text, timings aside) the one-worker document,
// with one item event per curve carrying that curve.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool } from '../../web/pipeline/pool.mjs';
import { spawnNodeWorker } from '../../web/pipeline/node_worker.mjs';
import { runAnalysis } from '../../web/pipeline/sweep.mjs';
import { calibrationSetResolver } from '../../web/pipeline/relations.mjs';
import { readCalibrationFolder } from './helpers.mjs';
import { WASM_PATH, calibratedDigits } from './cli_fixture.mjs';

const { model, data } = calibratedDigits();
const REQUEST = { analysis: 'sensitivity', options: { node_type: 'node', metrics: ['cosine-similarity', 'sqnr'], data_num: 8 } };
const CONV = ['/features/features.0/Conv', '/features/features.3/Conv', '/features/features.7/Conv'];
const ACC_REQUESTS = [
  { analysis: 'acc_error', options: { quantize_node: ['weight', 'activation'] } },
  // Both lists nested: "default calibrated model" and partial_qmodel_<i> are in both figures, so the
  // second figure's keys depend on the first one's ("<prefix>/<label>").
  { analysis: 'acc_error', options: { quantize_node: [[CONV[0]], [CONV[1], CONV[2]]], non_quantize_node: [[CONV[2]], ['/fc/Gemm']], metric: 'mse', average_mode: true } },
];
const withoutTimings = (doc) => JSON.stringify({ ...doc, timings_ms: undefined });
const stable = (doc) => ({ sensitivity: doc.sensitivity, sensitivity_order: doc.sensitivity_order, samples: doc.samples, cancelled: doc.cancelled });

describe('worker threads on the wasm core', () => {
  let one;
  let two;
  beforeAll(async () => {
    const load = { model: new Uint8Array(fs.readFileSync(model)), files: readCalibrationFolder(data), modelName: model, dataName: data };
    one = createPool({ size: 1, spawn: () => spawnNodeWorker(WASM_PATH) });
    two = createPool({ size: 2, spawn: () => spawnNodeWorker(WASM_PATH) });
    await Promise.all([one.load(load), two.load(load)]);
  });
  afterAll(() => {
    one?.close();
    two?.close();
  });

  it('a sweep in 3 chunks on 2 workers equals one call on one worker; every item event relayed once', async () => {
    const whole = await runAnalysis(one, REQUEST);
    const items = [];
    const progress = [];
    const split = await runAnalysis(two, REQUEST, { chunks: 3, onItem: (e) => items.push(e.item), onProgress: (d, t) => progress.push([d, t]) });
    const names = whole.sensitivity_order.node;
    expect(names.length).toBeGreaterThan(2);
    expect(stable(split)).toEqual(stable(whole));
    expect([...items].sort()).toEqual([...names].sort());
    expect(progress.map(([d]) => d)).toEqual(names.map((_, i) => i + 1));
    expect(split.cancelled).toBe(false);
  });

  it('cancelling stops the sweep; the pool then runs the next request normally', async () => {
    const ctrl = new AbortController();
    let seen = 0;
    const run = runAnalysis(two, REQUEST, {
      signal: ctrl.signal,
      chunks: 6,
      onItem: () => {
        seen++;
        if (seen === 1) ctrl.abort();
      },
    });
    const outcome = await run.then((doc) => doc, (err) => err);
    if (outcome instanceof Error) {
      expect(outcome.name).toBe('AbortError');
    } else {
      expect(outcome.cancelled).toBe(true);
      expect(outcome.sensitivity_order.node.length).toBeLessThan(
        (await runAnalysis(one, REQUEST)).sensitivity_order.node.length);
    }
    const after = await runAnalysis(two, REQUEST);
    expect(stable(after)).toEqual(stable(await runAnalysis(one, REQUEST)));
  });

  it('core errors come back with their kind and the pool stays usable', async () => {
    await expect(runAnalysis(two, { analysis: 'sensitivity', options: { node_type: 'node', metrics: ['psnr'] } }))
      .rejects.toMatchObject({ name: 'PtqError', message: expect.stringContaining('psnr') });
    await expect(runAnalysis(two, { analysis: 'distribution', options: { nodes_list: ['NoSuchNode'] } }))
      .rejects.toMatchObject({ message: expect.stringContaining('NoSuchNode does not exist in the model.') });
    const ok = await runAnalysis(two, REQUEST);
    expect(ok.sensitivity_order.node.length).toBeGreaterThan(2);
  });

  it("relations.mjs gives the core's calibration sets: each node's sensitivity = that of its set as one interested group", async () => {
    const graph = JSON.parse((await one.request({ type: 'graph' })).json);
    const setOf = calibrationSetResolver(graph);
    const metrics = ['cosine-similarity', 'mse'];
    const byNode = await runAnalysis(one, { analysis: 'sensitivity', options: { node_type: 'node', metrics, data_num: 2 } });
    const nodes = byNode.sensitivity_order.node;
    const groups = nodes.map((n) => setOf(n));
    expect(groups.every((g) => g.length >= 1 && g.every((c) => c.endsWith('_HzCalibration')))).toBe(true);
    const bySet = await runAnalysis(one, { analysis: 'sensitivity', options: { node_type: 'node', metrics, data_num: 2, interested_nodes: groups } });
    nodes.forEach((n, i) => {
      const key = groups[i].join('+');
      expect(bySet.sensitivity.node[key], `${n} -> ${key}`).toEqual(byNode.sensitivity.node[n]);
    });
  });

  it.each(ACC_REQUESTS.map((r) => [JSON.stringify(r.options), r]))('acc_error split by curves: 2 workers = 1 worker, byte for byte: %s', async (_, request) => {
    const { items } = await one.request({ type: 'listItems', request });
    expect(items.length).toBeGreaterThanOrEqual(3);
    const whole = await runAnalysis(one, request);
    const events = [];
    const split = await runAnalysis(two, request, { onItem: (e) => events.push(e) });
    expect(withoutTimings(split)).toBe(withoutTimings(whole));
    expect(Object.keys(whole.acc_error)).toEqual(items);
    expect(whole.acc_error_figures.flatMap((f) => f.curves)).toEqual(items);
    // One event per curve, from either worker; its row is the curve of the document.
    expect(events.map((e) => e.item).sort()).toEqual([...items].sort());
    for (const e of events) {
      expect(e.analysis).toBe('acc_error');
      expect(e.index).toBe(items.indexOf(e.item));
      expect(e.row).toEqual(whole.acc_error[e.item]);
    }
  });

  it('acc_error in 3 chunks on 2 workers, and cancelled, keeps the figures consistent with the curves', async () => {
    const request = ACC_REQUESTS[1];
    const whole = await runAnalysis(one, request);
    const chunked = await runAnalysis(two, request, { chunks: 3 });
    expect(withoutTimings(chunked)).toBe(withoutTimings(whole));
    const ctrl = new AbortController();
    const outcome = await runAnalysis(two, request, { signal: ctrl.signal, chunks: 6, onItem: () => ctrl.abort() })
      .then((doc) => doc, (err) => err);
    if (!(outcome instanceof Error)) {
      expect(outcome.cancelled).toBe(true);
      const keys = outcome.acc_error_figures.flatMap((f) => f.curves);
      expect(keys).toEqual(Object.keys(outcome.acc_error));
      for (const k of keys) expect(outcome.acc_error[k]).toEqual(whole.acc_error[k]);
    } else {
      expect(outcome.name).toBe('AbortError');
    }
  });
});
