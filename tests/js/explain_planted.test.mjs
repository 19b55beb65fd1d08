// Cause hints, threshold fixes and their exports on the planted-fault fixtures (scripts/fixtures/
// planted_models.py: each planted model is its clean counterpart with one quantizer made faulty by the
// generator's own onnx edits):
//  - explain names the planted quantizer with its cause as the first hint of a cure, and the clean
//    counterpart has no hint of that cause on that quantizer;
//  - fix --prefer threshold,int16,float reaches the clean model's accuracy (its metric on the same
//    tuning samples), by thresholds alone where the planted fault is a threshold;
//  - the fix's export computes what ptqscope computed for the configuration, judged by onnxruntime-node:
//    the calibrated model through the test's own HzCalibration -> Q/DQ rewrite (hz_qdq_oracle.mjs),
//    the Q/DQ model as written; within onnxruntime's own spread;
//  - reopened, the exported model gives the what-if numbers of the configuration exactly;
//  - the command line: explain's table and section; calibration-methods' best Horizon setting in the
//    quant_config export, and its thresholds in the calibrated model.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as ort from 'onnxruntime-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixture, loadManifest, loadPtqModule, openSession, readCalibrationFolder, samplesOf } from './helpers.mjs';
import { calibratedToQdq } from './hz_qdq_oracle.mjs';
import { attribute, decode, first, nameOf, nodesOf } from './bad_inputs/onnx_wire.mjs';
import { exportAgreement } from './quant_oracle.mjs';
import { cli } from './cli_fixture.mjs';
import { explainRows, toNumber } from '../../web/pipeline/result.mjs';

const planted = loadManifest().filter((e) => e.kind === 'planted');
// The faults a re-calibrated threshold cures by itself.
const THRESHOLD_FAULTS = new Set(['clipping', 'coarse-resolution']);

const analyze = (session, request) => JSON.parse(session.analyze(JSON.stringify(request)));

describe.each(planted.map((e) => [e.name, e]))('%s', (name, entry) => {
  let opened;
  let clean;
  let cleanHints;
  let fix;
  beforeAll(async () => {
    opened = await openSession(entry);
    clean = await openSession(fixture(entry.clean));
    cleanHints = analyze(clean.session, { analysis: 'explain' });
  });
  afterAll(() => {
    opened?.session.delete();
    clean?.session.delete();
  });

  it('explain names the planted quantizer with its cause first; the clean model has no such hint', () => {
    const doc = analyze(opened.session, { analysis: 'explain' });
    const cures = explainRows(doc).filter((h) => h.cause !== 'inherited');
    expect(cures.length, JSON.stringify(explainRows(doc).map((h) => [h.cause, h.calibration_node]))).toBeGreaterThan(0);
    expect(cures[0].calibration_node).toBe(entry.planted.calibration_node);
    expect(cures[0].cause).toBe(entry.planted.cause);
    expect(cures[0].effect.after).toBeGreaterThan(cures[0].effect.before);
    expect(cures[0].effect.held_out.after).toBeGreaterThan(cures[0].effect.held_out.before);
    expect(doc.hints_evidence[entry.planted.calibration_node].causes).toContain(entry.planted.cause);
    const same = explainRows(cleanHints).filter((h) => h.calibration_node === entry.planted.calibration_node && h.cause === entry.planted.cause);
    expect(same).toEqual([]);
    expect(cleanHints.hints_evidence[entry.planted.calibration_node].causes).not.toContain(entry.planted.cause);
  });

  it('fix --prefer threshold,int16,float restores the clean accuracy', () => {
    const target = toNumber(cleanHints.hints_start.tune);
    const doc = analyze(opened.session, {
      analysis: 'fix', model_file: `${name}.onnx`,
      options: { target: `cosine-similarity>=${target}`, prefer: ['threshold', 'int16', 'float'] },
    });
    fix = doc;
    expect(doc.fix.reached, doc.fix.message).toBe(true);
    expect(toNumber(doc.fix.start)).toBeLessThan(target);
    expect(toNumber(doc.fix.final)).toBeGreaterThanOrEqual(target);
    if (THRESHOLD_FAULTS.has(entry.planted.cause)) expect(doc.fix.nodes.map((n) => n.action)).toEqual(doc.fix.nodes.map(() => 'threshold'));
    // The held-out samples are reported; the threshold chosen on the tuning samples holds there too.
    expect(doc.fix.held_out.samples.length).toBeGreaterThan(0);
    expect(toNumber(doc.fix.held_out.final)).toBeGreaterThan(toNumber(doc.fix.held_out.start));
  });

  it('the export computes the fix (onnxruntime), and reopened gives the what-if numbers exactly', async () => {
    const qdq = Boolean(entry.planted.calibration_node && !entry.planted.calibration_node.endsWith('_HzCalibration'));
    const format = qdq ? 'qdq-onnx' : 'calibrated-onnx';
    const config = fix.config;
    const bytes = opened.session.exportConfig(JSON.stringify(config), format);
    const input = entry.inputs[0].name;
    const feeds = samplesOf(entry, input).map((s) => ({ [input]: new ort.Tensor('float32', s.data, s.dims) }));
    const judged = qdq ? bytes : calibratedToQdq(bytes);
    const { worst, spread, rel } = await exportAgreement(ort, opened.session, judged, feeds, config);
    if (process.env.PTQ_REPORT) console.log(`${name} ${format} vs ptqscope: fraction off ${worst}, onnxruntime's spread ${spread}, relative ${rel}`);
    expect(rel).toBeLessThan(0.1);
    expect(worst).toBeLessThanOrEqual(spread);

    const whatIf = (session, withConfig) => analyze(session, { analysis: 'what_if', options: { data_num: 0 }, ...(withConfig ? { config } : {}) }).what_if;
    const ptq = await loadPtqModule();
    const reopened = new ptq.Session();
    try {
      reopened.loadModel(bytes);
      reopened.loadCalibrationData(readCalibrationFolder(entry.data));
      const back = whatIf(reopened, false);
      const here = whatIf(opened.session, true);
      expect(back.outputs).toEqual(here.outputs);
      expect(back.nodes).toEqual(here.nodes);
    } finally {
      reopened.delete();
    }
  });
});

describe('threshold exports', () => {
  it('write the new ranges where the toolchain takes them, and Horizon refuses per-node thresholds', async () => {
    const entry = fixture('planted_clipping');
    const { session } = await openSession(entry);
    try {
      const node = entry.planted.calibration_node;
      const config = JSON.stringify({ schema: 'ptqscope.config', version: 1, intents: [{ node, action: 'threshold', value: 0.25 }] });
      const tensor = node.replace(/_HzCalibration$/, '');
      const ortJson = JSON.parse(session.exportConfig(config, 'ort-json'));
      // The node is uint8 (one-sided data, symmetric): its real range is [0, 0.25].
      expect(ortJson.extra_options.TensorQuantOverrides[tensor]).toEqual([{ rmin: 0, rmax: 0.25 }]);
      const rknn = session.exportConfig(config, 'rknn-cfg');
      expect(rknn).toContain(`quantize_parameters:\n    ${JSON.stringify(tensor)}:\n        min: [0]\n        max: [0.25]\n`);
      expect(() => session.exportConfig(config, 'horizon-yaml')).toThrow(`horizon-yaml: calibration node '${node}' has thresholds set by the configuration`);
      // The calibrated model holds them: its thresholds attribute, read by the test's own codec.
      const written = nodesOf(decode(Buffer.from(session.exportConfig(config, 'calibrated-onnx')))).find((n) => nameOf(n) === node);
      const floats = Buffer.from(first(attribute(written, 'thresholds'), 7).value);
      expect(floats.length).toBe(4);
      expect(floats.readFloatLE(0)).toBe(0.25);
    } finally {
      session.delete();
    }
  });
});

describe('the command line', () => {
  let tmp;
  beforeAll(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ptqscope-explain-'));
  });
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('explain prints the ranked hints and writes the hints section', async () => {
    const entry = fixture('planted_clipping');
    const json = path.join(tmp, 'hints.json');
    const r = await cli(['explain', entry.model, entry.data, '--json', json, '--quiet']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const doc = JSON.parse(fs.readFileSync(json, 'utf8'));
    const first = doc.hints[0];
    expect(first).toMatchObject({ calibration_node: entry.planted.calibration_node, cause: 'clipping', suggestion: { action: 'threshold' } });
    expect(Object.keys(first).sort()).toEqual(['calibration_node', 'cause', 'effect', 'evidence', 'node', 'suggestion']);
    expect(r.stdout.split('\n')[1]).toMatch(new RegExp(`^ +1\\. clipping +${entry.planted.calibration_node.replace(/[/.]/g, '\\$&')} -> ${first.node}: `));
    expect(r.stdout).toContain(`${doc.hints.length} hint(s)`);
  });

  // The comparison on a calibrated zoo fixture and on a planted one: the Horizon setting named in
  // quant_config is the comparison's best for Horizon, and the calibrated model carries its thresholds.
  for (const name of ['digits_cnn_calibrated', 'planted_coarse']) {
    it(`calibration-methods on ${name}: the best Horizon setting, exported`, async () => {
      const entry = fixture(name);
      const json = path.join(tmp, `${name}.methods.json`);
      const config = path.join(tmp, `${name}.methods.config.json`);
      const r = await cli(['calibration-methods', entry.model, entry.data, '--toolchain', 'horizon', '--json', json, '--config-out', config, '--quiet']);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      const doc = JSON.parse(fs.readFileSync(json, 'utf8'));
      const section = doc.calibration_methods;
      const best = section.settings.find((s) => s.label === section.best);
      expect(section.best).toBe(section.best_by_toolchain.horizon);
      // The best for Horizon: no Horizon-expressible setting measures better on the tuning samples.
      for (const s of section.settings.filter((x) => x.toolchains.includes('horizon'))) {
        expect(toNumber(s.tune['cosine-similarity'])).toBeLessThanOrEqual(toNumber(best.tune['cosine-similarity']));
      }
      const exported = await cli(['export-config', config, '--model', entry.model, '--format', 'horizon-quant-config']);
      expect(exported.code).toBe(0);
      const quantConfig = JSON.parse(exported.stdout);
      if (best.stored) {
        expect(quantConfig.model_config).toBeUndefined();
      } else {
        const activation = quantConfig.model_config.activation;
        expect(activation).toMatchObject({ calibration_type: best.method === 'kl' ? 'kl' : 'max', per_channel: best.per_channel, asymmetric: false });
        expect(Math.fround(activation.max_percentile ?? 1)).toBe(Math.fround(best.method === 'percentile' ? best.percentile / 100 : 1));
        // The calibrated model with those thresholds: reopened, it gives the comparison's numbers.
        const out = path.join(tmp, `${name}.best.onnx`);
        expect((await cli(['export-config', config, '--model', entry.model, '--format', 'calibrated-onnx', '--out', out])).code).toBe(0);
        const reopened = path.join(tmp, `${name}.best.json`);
        expect((await cli(['calibration-methods', out, entry.data, '--json', reopened, '--quiet', '--per-channel', 'False'])).code).toBe(0);
        const stored = JSON.parse(fs.readFileSync(reopened, 'utf8')).calibration_methods.settings[0];
        expect(stored.tune).toEqual(best.tune);
      }
    });
  }
});
