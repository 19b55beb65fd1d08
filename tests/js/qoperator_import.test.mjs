// QOperator models (§1.12) against onnxruntime-node running the ORIGINAL QOperator model, on the
// qoperator/ fixtures (scripts/fixtures/qoperator_models.py: QLinearConv/MatMul and the com.microsoft
// QLinearAdd/Mul/Concat/Sigmoid/LeakyRelu/AveragePool/GlobalAveragePool, MaxPool and Flatten on
// integer tensors, written from one layer list together with their float model and Q/DQ variants):
//  - every QOperator node is rewritten (no warning), its float operator keeps its name, and the
//    quantizers are named after the float tensors (the weights after their initializers);
//  - the float reference (every quantizer OFF) equals onnxruntime on the fixture's float model (the
//    float operators with the dequantized weights, written by the generator) within float tolerance;
//  - the model as stored (every quantizer ON) equals onnxruntime on the QOperator model: element-wise
//    within float tolerance except where a rounding decision of a quantizer flips; the fraction of
//    such elements must stay within onnxruntime's own spread, measured between its valid evaluations
//    of the same quantized network (its integer kernels on the QOperator model with graph
//    optimisation off and at 'basic', and its float kernels on the fixture's Q/DQ equivalent);
//  - sensitivity (that quantizer alone) and leave-one-out (all but that quantizer) items equal an
//    independent evaluation: onnxruntime running the fixture's only__/without__ models against its
//    float model, with the metrics computed here in float64, judged as in qdq_import.test.mjs (within
//    onnxruntime's spread, or the float budget against the fixture's float64 evaluation);
//  - the CLI runs the sensitivity analysis, runall and the fix search on a QOperator model.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as ort from 'onnxruntime-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES, loadManifest, openSession, relError, runCopy } from './helpers.mjs';
import { cli } from './cli_fixture.mjs';
import { expectItemJudged, exportAgreement, float64Variants, judgeItem, offAgainstSpread, oracleItem, ortRun, ourFloatRuns, ourItemRuns, quantizerKinds } from './quant_oracle.mjs';
import { feedsOf } from './tie_origin.mjs';
import { buildViewModel } from '../../web/app/graph/model.mjs';

const FLOAT_TOL = 1e-5; // relError of two float evaluations of these small nets
const entries = loadManifest().filter((m) => m.kind === 'qoperator');

const open = (file, level = 'disabled') => ort.InferenceSession.create(path.join(FIXTURES, file), { intraOpNumThreads: 1, graphOptimizationLevel: level, logSeverityLevel: 3 });

describe('QOperator fixtures', () => {
  it('are in the manifest', () => {
    expect(entries.map((e) => e.name).sort()).toEqual(['qop_cnn', 'qop_dynamic', 'qop_mixed']);
  });
});

describe.each(entries.map((e) => [e.name, e]))('%s', (name, entry) => {
  let session;
  let summary;
  let inputs; // one feed per sample
  let reference; // onnxruntime-node, optimisations off, the QOperator model
  let floatRef; // onnxruntime-node on the float model
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

  it('rewrites every QOperator node into its float operator, quantizers named after the float tensors', () => {
    expect(summary.warnings).toEqual([]);
    expect(quantizerKinds(summary)).toEqual(entry.quantizers);
    const names = summary.calibrations.map((c) => c.name);
    for (const o of entry.oracle) expect(names).toContain(o.quantizer);
    const graph = JSON.parse(session.graphJson());
    expect(graph.nodes.filter((n) => n.domain === 'com.microsoft' || n.op_type.startsWith('QLinear'))).toEqual([]);
    for (const q of entry.qoperator_nodes) {
      const node = graph.nodes.find((n) => n.name === q.name);
      expect(node?.op_type, `${q.op_type} '${q.name}'`).toBe(q.float_op);
    }
    // The page's viewer folds every quantizer into a badge, as it does HzCalibration nodes.
    expect(buildViewModel(graph).stats.badges).toBe(entry.quantizers.activation + entry.quantizers.weight);
  });

  it('float reference (every quantizer OFF) equals onnxruntime on the float model', async () => {
    for (let k = 0; k < inputs.length; k++) {
      const ours = runCopy(session, k, 'off');
      const theirs = await ortRun(floatRef, inputs[k]);
      ours.forEach((o, i) => expect(relError(o.data, theirs[i]), `${name} sample ${k} ${o.name}`).toBeLessThan(FLOAT_TOL));
    }
  });

  it("fully quantized (as stored) equals onnxruntime on the QOperator model within onnxruntime's own spread", async () => {
    const others = [await open(path.relative(FIXTURES, entry.model), 'basic'), await open(entry.qdq_equivalent)];
    try {
      for (let k = 0; k < inputs.length; k++) {
        const ours = runCopy(session, k, 'stored');
        const theirs = await ortRun(reference, inputs[k]);
        const spreads = await Promise.all(others.map((s) => ortRun(s, inputs[k])));
        for (const { name: output, size, off, spread } of offAgainstSpread(ours, theirs, spreads)) {
          if (process.env.PTQ_REPORT) console.log(`${name} sample ${k} ${output}: ours ${(off * size).toFixed(0)} / onnxruntime's spread ${(spread * size).toFixed(0)} of ${size} off`);
          expect(off, `${name} sample ${k} ${output}: fraction off by > 1e-4`).toBeLessThanOrEqual(spread);
        }
      }
    } finally {
      for (const s of others) await s.release();
    }
  });

  it('qdq-onnx export: the model in its Q/DQ form with the configuration applied, as ptqscope runs it (a dynamic model: refused, naming ort-json)', async () => {
    const names = summary.calibrations.map((c) => c.name);
    const [off, ...rest] = entry.oracle;
    const calibrations = { [off.quantizer]: { on: false } };
    for (const o of rest) calibrations[o.quantizer] = { qtype: 'int16' };
    const doc = JSON.stringify({ schema: 'ptqscope.config', version: 1, calibrations });
    if (entry.name === 'qop_dynamic') { // onnxruntime's dynamic quantization (DynamicQuantizeLinear)
      expect(() => session.exportConfig(doc, 'qdq-onnx')).toThrow(/qdq-onnx: '.+' is a dynamic quantizer .*ort-json or ort-python/);
      return;
    }
    const bytes = session.exportConfig(doc, 'qdq-onnx');
    const config = { on: names.map((n) => (n === off.quantizer ? 0 : 1)), qtype: names.map((n) => calibrations[n]?.qtype ?? '') };
    const { worst, spread, rel } = await exportAgreement(ort, session, bytes, inputs, config);
    if (process.env.PTQ_REPORT) console.log(`${name} qdq-onnx export vs ptqscope: fraction off ${worst}, onnxruntime's spread ${spread}`);
    expect(rel, name).toBeLessThan(0.1);
    expect(worst).toBeLessThanOrEqual(spread);
  });

  for (const analysis of ['sensitivity', 'leave_one_out']) {
    it(`${analysis} items equal onnxruntime with the quantizer ${analysis === 'sensitivity' ? 'alone' : 'removed'}`, async () => {
      const exact = float64Variants(entry.oracle_float64).items;
      const ourFloat = ourFloatRuns(session, summary.calibrations, inputs.length);
      const floatOuts = await Promise.all(inputs.map((feed) => ortRun(floatRef, feed)));
      for (const o of entry.oracle) {
        const request = { analysis, options: { node_type: o.kind, metrics: ['mse', 'cosine-similarity'], data_num: 0, interested_nodes: [o.quantizer] } };
        const result = JSON.parse(session.analyze(JSON.stringify(request)));
        const row = result[analysis][o.kind][o.quantizer];
        expect(row, `${name} ${o.quantizer}`).toBeDefined();
        // onnxruntime with graph optimisation off (the reference) and at 'basic': their distance is
        // onnxruntime's own spread.
        const file = analysis === 'sensitivity' ? o.only : o.without;
        const { change } = exact.get(file);
        const expected = await oracleItem([(f) => open(f), (f) => open(f, 'basic')], file, inputs, floatOuts, change);
        if (process.env.PTQ_REPORT) console.log(`${name} ${analysis} ${o.quantizer}: mse ours ${row.mse} onnxruntime ${expected.mse} (spread ${expected.spreadMse}); cos ${row['cosine-similarity']} / ${expected.cos} (spread ${expected.spreadCos})`);
        if (expected.mse === 0) {
          // A weight (integers: ON and OFF are the same values), or a sensitivity item whose every
          // value is on its grid.
          expect(row.mse, `${name} ${o.quantizer} mse`).toBe(0);
          continue;
        }
        // As for Q/DQ models (qdq_import.test.mjs): the float32 metric of our runs, and within
        // onnxruntime's spread or the float budget against the float64 evaluation.
        expectItemJudged(`${name} ${analysis} ${o.quantizer}`, row, judgeItem(ourItemRuns(session, summary.calibrations, o.quantizer, analysis, ourFloat), expected, change));
      }
    });
  }
});

describe('CLI on QOperator models', () => {
  let tmp;
  beforeAll(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ptqscope-qop-'));
  });
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('get-sensitivity-of-nodes -n activation ranks the quantized tensors of the float model', async () => {
    const entry = entries.find((e) => e.name === 'qop_cnn');
    const out = path.join(tmp, 'activations.json');
    const r = await cli(['get-sensitivity-of-nodes', entry.model, entry.data, '-n', 'activation', '-m', "['mse','cosine-similarity']", '--quiet', '--workers', '1', '--json', out]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const doc = JSON.parse(fs.readFileSync(out, 'utf8'));
    const names = Object.keys(doc.sensitivity.activation);
    expect(names).toHaveLength(entry.quantizers.activation);
    expect(names).toEqual(expect.arrayContaining(['input', 'conv1_out', 'pool1_out', 'add2_out', 'fc_out']));
    // Each row names the node that consumes the quantizer's output: the float operator keeps the
    // QOperator node's name.
    expect(doc.sensitivity.activation.add2_out.node).toBe('conv3');
  });

  it('runall runs every analysis and fix finds the quantizers to raise', async () => {
    const entry = entries.find((e) => e.name === 'qop_mixed');
    const out = path.join(tmp, 'runall');
    const r = await cli(['runall', entry.model, entry.data, '-s', out, '--workers', '1', '--quiet']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const doc = JSON.parse(fs.readFileSync(path.join(out, 'results.json'), 'utf8'));
    for (const section of ['sensitivity', 'distribution', 'channelwise', 'acc_error', 'sensitivity_analysis']) expect(doc[section], section).toBeDefined();
    expect(Object.keys(doc.sensitivity.weight)).toContain('c1.weight_quantized');
    const json = path.join(tmp, 'fix.json');
    const f = await cli(['fix', entry.model, entry.data, '--target', 'cosine-similarity>=0.9999', '--prefer', 'int16,float', '--workers', '1', '--quiet', '--json', json], { cwd: tmp });
    expect(f.code).toBe(0);
    const fix = JSON.parse(fs.readFileSync(json, 'utf8')).fix;
    expect(fix.reached).toBe(true);
    expect(fix.config).not.toBeNull();
  });
});
