// Q/DQ models (§1.11) against onnxruntime-node, on the qdq/ fixtures (scripts/fixtures/qdq_models.py:
// torch fake-quant exports, onnxruntime-layout variants with integer weights, one of them with uint16 /
// int16 com.microsoft quantizers) and the blocked/
// one (scripts/fixtures/blocked_models.py: opset 21, blocked int4/uint4 weights):
//  - every quantizer is recognised, named after its quantized tensor, without warnings, and the
//    page's viewer draws each as a badge;
//  - the float reference (every calibration node OFF) equals onnxruntime on the model with every
//    Q/DQ removed (the fixture's float_model, made by the generator's own onnx editing) within float
//    tolerance;
//  - the model as stored (every quantizer ON) equals onnxruntime on the original model: element-wise
//    within float tolerance except where a float summation order moves a value across a rounding
//    boundary of a later quantizer (a "flip", one quantization step); the fraction of flipped
//    elements must stay within what onnxruntime's own evaluations (graph optimisation off / basic,
//    node / web backend) differ by, plus the elements one flip in ours can move, judged per output;
//  - sensitivity (white list: that quantizer only) and leave-one-out (all but that quantizer) items
//    equal an independent evaluation: onnxruntime running the fixture's only__/without__ models
//    against its float model, with the metrics computed here (§4 formulas in float64): the analysis
//    reports exactly the float32 metric of our runs, whose float64 metrics are within onnxruntime's own
//    spread (node at two optimisation levels, web) or else change the outputs within the float budget
//    against the fixture's float64 evaluation (quant_oracle.mjs judgeItem);
//  - a qtype override (int16, what the what-if and the fix search apply) equals onnxruntime running
//    the fixture's int16 variant of that quantizer (same real range, §1.11);
//  - the CLI runs an analysis on a Q/DQ model and names its items after the quantized tensors;
//  - our own `calibrate --qdq` output reads back as the calibrated model it was written from.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as ort from 'onnxruntime-node';
import * as ortWeb from 'onnxruntime-web';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES, loadManifest, loadPtqModule, openSession, readCalibrationFolder, relError, runCopy } from './helpers.mjs';
import { cli } from './cli_fixture.mjs';
import { buildModel } from './onnx_builder.mjs';
import { onnxNodes } from './onnx_nodes.mjs';
import { expectItemJudged, float64Variants, judgeItem, offAgainstSpread, offFraction, oracleItem, ortRun, ourFloatRuns, ourItemRuns, quantizerKinds } from './quant_oracle.mjs';
import { feedsOf } from './tie_origin.mjs';
import { buildViewModel, viewNodeFor } from '../../web/app/graph/model.mjs';

const FLOAT_TOL = 1e-5; // relError of two float evaluations of these small nets (measured ~1e-7)
const entries = loadManifest().filter((m) => m.kind === 'qdq');

ortWeb.env.wasm.numThreads = 1;
ortWeb.env.logLevel = 'error';

const open = (file, level = 'disabled') => ort.InferenceSession.create(path.join(FIXTURES, file), { intraOpNumThreads: 1, graphOptimizationLevel: level, logSeverityLevel: 3 });

describe.each(entries.map((e) => [e.name, e]))('%s', (name, entry) => {
  let session;
  let summary;
  let inputs; // one feed per sample
  let reference; // onnxruntime-node, optimisations off, original model
  let floatRef; // onnxruntime-node on the every-Q/DQ-removed model
  beforeAll(async () => {
    ({ session, summary } = await openSession(entry));
    inputs = feedsOf(entry.data);
    reference = await open(path.relative(FIXTURES, entry.model));
    floatRef = await open(entry.float_model);
  });
  afterAll(async () => {
    session?.delete();
    await reference?.release();
    await floatRef?.release();
  });

  it('recognises every quantizer, named after the quantized tensor', () => {
    expect(summary.warnings).toEqual([]);
    expect(quantizerKinds(summary)).toEqual(entry.quantizers);
    const names = summary.calibrations.map((c) => c.name);
    for (const o of entry.oracle) expect(names).toContain(o.quantizer);
    // The graph document keeps the file's own Q/DQ node names (viewer, Netron plugin).
    const graph = JSON.parse(session.graphJson());
    const input = graph.nodes.find((n) => n.name === 'input');
    expect(input.op_type).toBe('HzCalibration');
    expect(input.calibration.qdq_nodes).toEqual(['/q_in/QuantizeLinear', '/q_in/DequantizeLinear']);
    expect(graph.nodes.some((n) => n.op_type === 'QuantizeLinear' || n.op_type === 'DequantizeLinear')).toBe(false);
    // The page's viewer folds every quantizer into a badge, as it does HzCalibration nodes.
    const view = buildViewModel(graph);
    expect(view.stats.badges).toBe(entry.quantizers.activation + entry.quantizers.weight);
    const firstConv = graph.nodes.find((n) => n.op_type === 'Conv').name;
    expect(view.calibrationOf.get(firstConv)).toEqual(expect.arrayContaining(['input']));
    expect(viewNodeFor(view, graph, 'input').id).toBe(firstConv);
  });

  it('float reference (every quantizer OFF) equals onnxruntime on the model without Q/DQ', async () => {
    for (let k = 0; k < inputs.length; k++) {
      const ours = runCopy(session, k, 'off');
      const theirs = await ortRun(floatRef, inputs[k]);
      ours.forEach((o, i) => expect(relError(o.data, theirs[i]), `${name} sample ${k} ${o.name}`).toBeLessThan(FLOAT_TOL));
    }
  });

  it("fully quantized (as stored) equals onnxruntime on the original model within onnxruntime's own spread", async () => {
    const bytes = fs.readFileSync(entry.model);
    const others = [
      await ort.InferenceSession.create(bytes, { intraOpNumThreads: 1, graphOptimizationLevel: 'basic', logSeverityLevel: 3 }),
      await ortWeb.InferenceSession.create(bytes, { executionProviders: ['wasm'], graphOptimizationLevel: 'disabled' }),
    ];
    try {
      for (let k = 0; k < inputs.length; k++) {
        const ours = runCopy(session, k, 'stored');
        const theirs = await ortRun(reference, inputs[k]);
        const spreads = await Promise.all(others.map((s) => ortRun(s, inputs[k])));
        offAgainstSpread(ours, theirs, spreads).forEach(({ name: output, size, off, spread }, i) => {
          if (process.env.PTQ_REPORT) console.log(`${name} sample ${k} ${output}: ours ${(off * size).toFixed(0)} / onnxruntime's spread ${(spread * size).toFixed(0)} of ${size} off`);
          // A flip moves one element of a quantized tensor by one step; through the layers after it,
          // it moves the elements it reaches (a 1x1 head: one element; a pooled classifier: all).
          expect(off, `${name} sample ${k} ${output}: fraction off by > 1e-4`).toBeLessThanOrEqual(spread);
          expect(relError(ours[i].data, theirs[i]), `${name} sample ${k} ${output}`).toBeLessThan(0.1);
        });
      }
    } finally {
      for (const s of others) await s.release?.();
    }
  });

  it('a qtype override to int16 equals onnxruntime on the quantizer re-quantized to int16 (same real range)', async () => {
    const names = summary.calibrations.map((c) => c.name);
    for (const o of entry.oracle) {
      const index = names.indexOf(o.quantizer);
      const qtype = names.map((_, i) => (i === index ? 'int16' : ''));
      const variant = await open(o.int16);
      const basic = await open(o.int16, 'basic'); // onnxruntime's own spread on the same model
      let worst = 0;
      let spread = 0;
      for (let k = 0; k < inputs.length; k++) {
        const ours = runCopy(session, k, { on: names.map(() => 1), qtype });
        const theirs = await ortRun(variant, inputs[k]);
        const other = await ortRun(basic, inputs[k]);
        ours.forEach((out, i) => {
          worst = Math.max(worst, offFraction(out.data, theirs[i], 1e-4));
          spread = Math.max(spread, offFraction(other[i], theirs[i], 1e-4));
          expect(relError(out.data, theirs[i]), `${name} ${o.quantizer} sample ${k} ${out.name}`).toBeLessThan(0.1);
        });
      }
      await variant.release();
      await basic.release();
      if (process.env.PTQ_REPORT) console.log(`${name} int16 ${o.quantizer}: worst fraction off ${worst}, onnxruntime's spread ${spread}`);
      expect(worst, `${name} ${o.quantizer}: fraction of elements off by > 1e-4`).toBeLessThanOrEqual(spread);
    }
  });

  for (const analysis of ['sensitivity', 'leave_one_out']) {
    it(`${analysis} items equal onnxruntime with the quantizer ${analysis === 'sensitivity' ? 'alone' : 'removed'}`, async () => {
      const exact = float64Variants(entry.oracle_float64).items;
      const ourFloat = ourFloatRuns(session, summary.calibrations, inputs.length);
      for (const o of entry.oracle) {
        const request = { analysis, options: { node_type: o.kind, metrics: ['mse', 'cosine-similarity'], data_num: 0, interested_nodes: [o.quantizer] } };
        const result = JSON.parse(session.analyze(JSON.stringify(request)));
        const row = result[analysis][o.kind][o.quantizer];
        expect(row, `${name} ${o.quantizer}`).toBeDefined();
        const file = analysis === 'sensitivity' ? o.only : o.without;
        // Three valid evaluations of the item: onnxruntime-node with graph optimisation off (the
        // reference) and at 'basic', onnxruntime-web; their largest distance is onnxruntime's own spread.
        const openWeb = (f) => ortWeb.InferenceSession.create(path.join(FIXTURES, f), { executionProviders: ['wasm'], graphOptimizationLevel: 'disabled' });
        const { change } = exact.get(file);
        const expected = await oracleItem([(f) => open(f), (f) => open(f, 'basic'), openWeb], file, inputs, entry.float_model, change);
        if (process.env.PTQ_REPORT) console.log(`${name} ${analysis} ${o.quantizer}: mse ours ${row.mse} onnxruntime ${expected.mse} (spread ${expected.spreadMse}); cos ${row['cosine-similarity']} / ${expected.cos} (spread ${expected.spreadCos})`);
        if (expected.mse === 0) {
          // An integer weight (or a quantizer whose every value is on its grid): ON and OFF are the
          // same values, the model with or without it the same model.
          expect(row.mse, `${name} ${o.quantizer} mse`).toBe(0);
          continue;
        }
        expectItemJudged(`${name} ${analysis} ${o.quantizer}`, row, judgeItem(ourItemRuns(session, summary.calibrations, o.quantizer, analysis, ourFloat), expected, change));
      }
    });
  }
});

describe('qdq_detector_16bit: 16-bit types in the com.microsoft domain', () => {
  it('every Q/DQ node of the file is com.microsoft; activations are read as uint16, weights as int16', async () => {
    const entry = entries.find((e) => e.name === 'qdq_detector_16bit');
    const qdq = onnxNodes(entry.model).filter((n) => n.op_type === 'QuantizeLinear' || (n.op_type === 'DequantizeLinear' && !n.inputs[0].includes('bias')));
    expect(qdq.length).toBeGreaterThan(0);
    for (const n of qdq) expect(n.domain, n.name).toBe('com.microsoft');
    const { session, summary } = await openSession(entry);
    try {
      const qtypes = (kind) => [...new Set(summary.calibrations.filter((c) => c.kind === kind).map((c) => c.qtype))];
      expect(qtypes('feature')).toEqual(['uint16']); // the summary's kind of an activation quantizer
      expect(qtypes('weight')).toEqual(['int16']);
    } finally {
      session.delete();
    }
  });
});

describe('a blocked scale that does not fit its input', () => {
  it('is an error naming the node, the scale and the shape expected', async () => {
    const ptq = await loadPtqModule();
    // W: int4 [5, 2] (packed: 5 bytes), blocked along axis 0 by 2, which needs a [3, 2] scale.
    const model = (scaleDims) => buildModel({
      opsets: [['', 21]],
      inputs: [{ name: 'x', dims: [1, 5] }],
      outputs: [{ name: 'y', dims: [1, 2] }],
      initializers: [
        { name: 'w_q', dims: [5, 2], dataType: 22, raw: [0x21, 0x43, 0x65, 0x87, 0x09] },
        { name: 'w_scale', dims: scaleDims, floats: new Array(scaleDims[0] * scaleDims[1]).fill(0.1) },
      ],
      nodes: [
        { name: 'w_dq', op: 'DequantizeLinear', inputs: ['w_q', 'w_scale'], outputs: ['w'], attrs: [{ name: 'axis', i: 0 }, { name: 'block_size', i: 2 }] },
        { name: 'mm', op: 'MatMul', inputs: ['x', 'w'], outputs: ['y'] },
      ],
    });
    const s = new ptq.Session();
    try {
      const summary = s.loadModel(model([3, 2]));
      expect(summary.calibrations.map((c) => [c.name, c.qtype])).toEqual([['w_q', 'int4']]);
      expect(() => s.loadModel(model([2, 2]))).toThrow("DequantizeLinear 'w_dq': its blocked scale [2, 2] does not fit its input [5, 2] with block_size 2 along axis 0 (expected [3, 2]");
    } finally {
      s.delete();
    }
  });
});

describe('CLI on a Q/DQ model', () => {
  const entry = entries.find((e) => e.name === 'qdq_detector_int');
  let tmp;
  beforeAll(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ptqscope-qdq-'));
  });
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('get-sensitivity-of-nodes -n weight ranks the integer weights by their tensor names', async () => {
    const out = path.join(tmp, 'weights.json');
    const r = await cli(['get-sensitivity-of-nodes', entry.model, entry.data, '-n', 'weight', '-m', "['mse']", '--quiet', '--workers', '1', '--json', out]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const doc = JSON.parse(fs.readFileSync(out, 'utf8'));
    const names = Object.keys(doc.sensitivity.weight);
    expect(names).toHaveLength(entry.quantizers.weight);
    expect(names).toContain('c1.weight_quantized');
    // Each row names the node that consumes the quantizer's output.
    expect(doc.sensitivity.weight['c1.weight_quantized'].node).toBe('/c1/Conv');
  });

  it('get-sensitivity-of-nodes -n node ranks the model\'s own nodes', async () => {
    const out = path.join(tmp, 'nodes.json');
    const r = await cli(['get-sensitivity-of-nodes', entry.model, entry.data, '-n', 'node', '--quiet', '--workers', '1', '--json', out]);
    expect(r.code).toBe(0);
    const names = Object.keys(JSON.parse(fs.readFileSync(out, 'utf8')).sensitivity.node);
    expect(names).toContain('/c1/Conv');
    expect(names).toContain('/fuse/Conv');
  });
});

// Our own `calibrate --qdq` output (quant/hz_to_qdq.h: the calibrated fixtures' Q/DQ twins, int8 and
// the int16 variant at opset 21): read back, each quantizer is the calibration node it was written
// from (named after its tensor instead of `<tensor>_HzCalibration`), and every sensitivity item equals
// the calibrated model's exactly (the fake-quant conformance test checks the runs bit for bit).
describe.each(loadManifest().filter((m) => m.kind === 'calibrated' && m.qdq_model && m.name.startsWith('digits_cnn')).map((e) => [e.name, e]))('%s: calibrate --qdq read back', (name, entry) => {
  it('gives the calibrated model\'s calibration nodes and sensitivity', async () => {
    const ptq = await loadPtqModule();
    const open = (file) => {
      const s = new ptq.Session();
      const summary = s.loadModel(fs.readFileSync(file));
      s.loadCalibrationData(readCalibrationFolder(entry.data));
      return { s, summary };
    };
    const hz = open(entry.model);
    const twin = open(path.join(FIXTURES, entry.qdq_model));
    try {
      expect(twin.summary.warnings).toEqual([]);
      const strip = (n) => n.replace(/_HzCalibration$/, '');
      expect(twin.summary.calibrations.map((c) => [c.name, c.kind, c.qtype])).toEqual(hz.summary.calibrations.map((c) => [strip(c.name), c.kind, c.qtype]));
      for (const nodeType of ['activation', 'weight', 'node']) {
        const request = JSON.stringify({ analysis: 'sensitivity', options: { node_type: nodeType, metrics: ['mse', 'cosine-similarity'], data_num: 2 } });
        const a = JSON.parse(hz.s.analyze(request)).sensitivity[nodeType];
        const b = JSON.parse(twin.s.analyze(request)).sensitivity[nodeType];
        const rows = (doc, rename) => Object.fromEntries(Object.entries(doc).map(([k, v]) => [rename(k), [v.mse, v['cosine-similarity']]]));
        expect(Object.keys(a).length).toBeGreaterThan(0);
        expect(rows(b, (k) => k)).toEqual(rows(a, nodeType === 'node' ? (k) => k : strip));
      }
    } finally {
      hz.s.delete();
      twin.s.delete();
    }
  });
});

describe('CLI runall and fix on Q/DQ models', () => {
  let tmp;
  beforeAll(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ptqscope-qdq-runall-'));
  });
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('runall runs every analysis on the integer-weight model, items named after the quantized tensors', async () => {
    const entry = entries.find((e) => e.name === 'qdq_detector_int');
    const out = path.join(tmp, 'runall');
    const r = await cli(['runall', entry.model, entry.data, '-s', out, '--workers', '1', '--quiet']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const doc = JSON.parse(fs.readFileSync(path.join(out, 'results.json'), 'utf8'));
    for (const section of ['sensitivity', 'distribution', 'channelwise', 'acc_error', 'sensitivity_analysis']) expect(doc[section], section).toBeDefined();
    expect(Object.keys(doc.sensitivity.activation)).toContain('input');
    expect(Object.keys(doc.sensitivity.weight)).toContain('c1.weight_quantized');
    expect(fs.existsSync(path.join(out, 'report.html'))).toBe(true);
  });

  it('fix finds the quantizers to raise on the torch export', async () => {
    const entry = entries.find((e) => e.name === 'qdq_resnet_tiny');
    const json = path.join(tmp, 'fix.json');
    // Run in the temporary folder: fix writes its chart to ./debug_result by default.
    const r = await cli(['fix', entry.model, entry.data, '--target', 'cosine-similarity>=0.99999', '--prefer', 'int16,float', '--workers', '1', '--quiet', '--json', json], { cwd: tmp });
    expect(r.code).toBe(0);
    const doc = JSON.parse(fs.readFileSync(json, 'utf8'));
    expect(doc.fix.reached).toBe(true);
    expect(doc.fix.config).not.toBeNull();
  });
});
