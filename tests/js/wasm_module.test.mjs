// (a) The wasm module loads in Node and runs the embedded example (the trained digits CNN).
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeNpy, fixture, loadPtqModule, openSession, runCopy } from './helpers.mjs';

describe('wasm module', () => {
  it('loads and exposes the Session class', async () => {
    const ptq = await loadPtqModule();
    expect(typeof ptq.Session).toBe('function');
    const s = new ptq.Session();
    expect(s.outputCount()).toBe(0);
    s.delete();
  });

  it('describes itself: ptq.describe() and session.describe() give the same document', async () => {
    const ptq = await loadPtqModule();
    const doc = JSON.parse(ptq.describe());
    const s = new ptq.Session();
    expect(s.describe()).toBe(ptq.describe()); // no model needed
    s.delete();
    expect(doc).toMatchObject({ schema: 'ptqscope.describe', version: 1, tool: { name: 'ptqscope' } });
    const pkg = JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    expect(doc.tool.version).toBe(pkg.version);
    // Reference §4: the metrics whose optimum is the maximum are better high.
    expect(Object.fromEntries(doc.metrics.map((m) => [m.name, m.better]))).toEqual({
      'cosine-similarity': 'higher', mse: 'lower', mre: 'lower', sqnr: 'higher', chebyshev: 'lower',
    });
    const sensitivity = doc.analyses.find((a) => a.name === 'sensitivity');
    expect(sensitivity.options.find((o) => o.name === 'node_type')).toMatchObject({ type: 'string', default: 'node', choices: doc.node_types });
  });
});

describe('digits example', () => {
  const entry = fixture('digits_cnn');
  const labels = JSON.parse(fs.readFileSync(path.join(path.dirname(entry.model), 'calibration_labels.json'), 'utf8'));
  let ctx;
  beforeAll(async () => {
    ctx = await openSession(entry);
  });
  afterAll(() => ctx?.session.delete());

  it('summarises the model', () => {
    const { summary } = ctx;
    expect(summary.inputs).toEqual([{ name: 'input', dtype: 'float32', dims: [1, 1, 8, 8], dimParams: expect.any(Array) }]);
    expect(summary.outputs.map((o) => [o.name, o.dtype, o.dims])).toEqual([['logits', 'float32', [1, 10]]]);
    expect(summary.nodeCount).toBeGreaterThan(5);
    expect(summary.calibrations).toEqual([]); // a float model
  });

  it('loads the calibration data in lexicographic order', () => {
    const names = Object.keys(labels).sort();
    expect(ctx.data.sampleCount).toBe(names.length);
    expect(ctx.data.sampleNames).toEqual(names);
  });

  it('classifies the calibration samples like the trained model', () => {
    let correct = 0;
    ctx.data.sampleNames.forEach((name, k) => {
      const [out] = runCopy(ctx.session, k, 'off');
      expect(out.dims).toEqual([1, 10]);
      expect(out.dtype).toBe('float32');
      const argmax = out.data.indexOf(Math.max(...out.data));
      if (argmax === labels[name]) correct++;
    });
    // The CNN reaches >= 95% on the held-out split (checked when it is trained).
    expect(correct / ctx.data.sampleCount).toBeGreaterThanOrEqual(0.9);
  });

  it('returns outputs as zero-copy views into wasm memory', () => {
    ctx.session.run(0, 'off');
    const a = ctx.session.output(0).data;
    const b = ctx.session.output(0).data;
    expect(a).toBeInstanceOf(Float32Array);
    expect(a.buffer).toBe(b.buffer);
    expect(a.byteOffset).toBe(b.byteOffset);
  });

  it('profiles a forward pass: a wall time per executed node, the same outputs, errors named', () => {
    const graph = JSON.parse(ctx.session.graphJson());
    const names = new Set(graph.nodes.map((n) => n.name));
    const before = runCopy(ctx.session, 2, 'off')[0].data;
    const times = ctx.session.profile(2, 'off');
    const timed = Object.keys(times);
    expect(timed.length).toBeGreaterThan(0);
    for (const name of timed) {
      expect(names.has(name)).toBe(true);
      expect(Number.isFinite(times[name]) && times[name] >= 0).toBe(true);
    }
    for (const n of graph.nodes.filter((m) => m.op_type === 'Conv' || m.op_type === 'Gemm')) expect(timed).toContain(n.name);
    expect(() => ctx.session.profile(99, 'off')).toThrow(/profile: sample index 99 out of range/);
    expect(runCopy(ctx.session, 2, 'off')[0].data).toEqual(before);
    expect(Object.keys(ctx.session.profile(2, 'off'))).toEqual(timed);
  });

  it("gives identical outputs for 'off', 'on', 'stored' and an explicit config on a float model", () => {
    const off = runCopy(ctx.session, 3, 'off')[0].data;
    for (const config of ['on', 'stored', { on: new Uint8Array(0) }, { on: [], qtype: [] }]) {
      expect(runCopy(ctx.session, 3, config)[0].data).toEqual(off);
    }
  });
});

// What "Check with onnxruntime" hands another engine and takes back (docs/wasm-api.md): a sample's
// inputs as the executor receives them, and the §4 metrics of outputs computed elsewhere, aggregated
// as what_if aggregates ptqscope's own.
describe('sampleInputs and OutputComparison (calibrated digits)', () => {
  let ctx;
  beforeAll(async () => {
    ctx = await openSession(fixture('digits_cnn_calibrated'));
  });
  afterAll(() => ctx?.session.delete());

  it('sampleInputs(k): the npy file of sample k, as a copy named after the graph input', () => {
    const entry = fixture('digits_cnn_calibrated');
    const [input] = ctx.session.sampleInputs(4);
    const file = decodeNpy(fs.readFileSync(path.join(entry.data, 'input', ctx.data.sampleNames[4])));
    expect(input).toMatchObject({ name: 'input', dtype: 'float32', dims: file.dims });
    expect(input.data).toEqual(file.data);
    ctx.session.run(0, 'off'); // later calls leave the copy as it was
    expect(input.data).toEqual(file.data);
    expect(() => ctx.session.sampleInputs(99)).toThrow(/sampleInputs: sample index 99 out of range/);
  });

  it('OutputComparison of the executor\'s own runs gives what_if\'s numbers exactly', () => {
    const { ptq, session } = ctx;
    const config = { schema: 'ptqscope.config', version: 1, base: 'stored' };
    const doc = JSON.parse(session.analyze(JSON.stringify({ analysis: 'what_if', options: { data_num: 3 }, config })));
    const names = doc.what_if.output_order;
    const comparison = new ptq.OutputComparison(names);
    try {
      for (const name of doc.what_if.samples) {
        const k = ctx.data.sampleNames.indexOf(name);
        const float = runCopy(session, k, 'off').map((o) => o.data);
        const quantized = runCopy(session, k, config).map((o) => o.data);
        comparison.add(float, quantized);
      }
      const r = JSON.parse(comparison.result());
      expect(r).toEqual({ outputs: doc.what_if.outputs, output_order: names, mean: doc.what_if.mean, samples: 3 });
      // Wrong shapes of the call are errors naming what is wrong.
      expect(() => comparison.add([], [])).toThrow(/OutputComparison.add: reference must be an array of 1 typed arrays, one per output/);
      expect(() => comparison.add([[1, 2]], [new Float32Array(2)])).toThrow(/output 'logits' \(reference\) must be a typed array \(Float32Array, Int32Array, \.\.\.\), not Array/);
    } finally {
      comparison.delete();
    }
  });
});
