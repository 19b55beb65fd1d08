// `ptqscope fix` and `ptqscope export-config` end to end on the YOLO-like and the PP-OCR fixtures,
// through the real CLI:
//  - the as-calibrated model's mean output cosine (computed here in JavaScript from the stored and the
//    float runs of the last sample) gives a target halfway to 1 that it misses; fix reaches it and
//    writes the path chart and the configuration;
//  - export-config calibrated-onnx, reopened, computes exactly what the original model computes under
//    the found configuration (bit-identical outputs of the last sample);
//  - the Horizon YAML, onnxruntime JSON / Python and RKNN exports, read back here line by line, name
//    exactly the nodes fix chose (float ones in run_on_cpu / nodes_to_exclude);
//  - bad input: an unknown metric in the target, an unknown export format (exit code 2).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixture, loadPtqModule, readCalibrationFolder } from './helpers.mjs';
import { cli } from './cli_fixture.mjs';

const readJson = (f) => JSON.parse(fs.readFileSync(f, 'utf8'));

// Copies of every output of `sample` under `config` ('stored', 'off' or {on, qtype}).
function outputs(session, sample, config) {
  session.run(sample, config);
  return Array.from({ length: session.outputCount() }, (_, i) => Float32Array.from(session.output(i).data));
}

function cosine(a, b) {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return dot / Math.sqrt(na * nb);
}

const mean = (v) => v.reduce((s, x) => s + x, 0) / v.length;

// A session on `modelBytes` with the fixture's data.
async function open(modelBytes, dataDir) {
  const ptq = await loadPtqModule();
  const session = new ptq.Session();
  const summary = session.loadModel(modelBytes);
  const { sampleCount } = session.loadCalibrationData(readCalibrationFolder(dataDir));
  return { session, summary, last: sampleCount - 1 };
}

// Session.run's configuration object from a configuration document's calibrations map.
function runConfig(summary, doc) {
  const on = [];
  const qtype = [];
  for (const c of summary.calibrations) {
    const entry = doc.calibrations[c.name];
    on.push(entry.on ? 1 : 0);
    qtype.push(entry.qtype);
  }
  return { on, qtype, round: doc.round };
}

// The non-comment lines of a text export.
const codeLines = (text) => text.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('#'));
const sorted = (v) => [...v].sort();

let tmp;
beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ptqscope-cli-fix-'));
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

for (const name of ['yolov8n_like_calibrated', 'ppocr_det_calibrated']) {
  describe(`fix and export-config on ${name}`, () => {
    const { model, data } = fixture(name);
    const dir = () => path.join(tmp, name);
    let doc;
    let target;

    it('fix reaches a target the as-calibrated model misses', async () => {
      fs.mkdirSync(dir(), { recursive: true });
      const { session, last } = await open(fs.readFileSync(model), data);
      const ref = outputs(session, last, 'off');
      const got = outputs(session, last, 'stored');
      session.delete();
      const start = mean(ref.map((r, i) => cosine(r, got[i])));
      expect(start).toBeLessThan(0.99999);
      const bound = Number((1 - (1 - start) / 2).toPrecision(8));
      target = `cosine-similarity>=${bound}`;
      const json = path.join(dir(), 'fix.json');
      const config = path.join(dir(), 'fix.config.json');
      // -d 1: the last sample alone (tuned on, nothing held out), the one the start above is computed on.
      const r = await cli(['fix', model, data, '--target', target, '-d', '1', '--json', json, '--config-out', config, '-s', dir(), '--quiet']);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      doc = readJson(json);
      const fix = doc.fix;
      expect(fix.target.text).toBe(target);
      expect(fix.start).toBeLessThan(bound);
      expect(Math.abs(fix.start - start)).toBeLessThan(1e-5);  // the core's float32 metric vs the one above
      expect(fix.reached).toBe(true);
      expect(fix.final).toBeGreaterThanOrEqual(bound);
      expect(fix.nodes.length).toBeGreaterThan(0);
      expect(fix.steps.at(-1).value).toBe(fix.final);
      expect(r.stdout).toContain(`fix: target reached: `);
      for (const n of fix.nodes) expect(r.stdout).toContain(n.node);
      expect(readJson(config)).toEqual(doc.config);
      expect(doc.config.provenance).toMatchObject({ analysis: 'fix', target, met: true });
      expect(doc.config.intents.map((i) => i.node)).toEqual(fix.nodes.map((n) => n.node));
      expect(fs.readFileSync(path.join(dir(), 'fix_path.svg'), 'utf8')).toContain('<svg');
      expect(fs.existsSync(path.join(dir(), 'fix_path.png'))).toBe(true);
    });

    it('each chosen node\'s "without" is what-if of the found configuration with that node left as calibrated', async () => {
      const { session } = await open(fs.readFileSync(model), data);
      try {
        const withoutOf = (node) => {
          const config = { schema: 'ptqscope.config', version: 1, base: 'stored', intents: doc.config.intents.filter((i) => i.node !== node) };
          const r = JSON.parse(session.analyze(JSON.stringify({ analysis: 'what_if', options: { data_num: 1 }, config })));
          return r.what_if.mean['cosine-similarity'];
        };
        for (const n of doc.fix.nodes) expect(n.without, n.node).toBe(withoutOf(n.node));
      } finally {
        session.delete();
      }
    });

    it('the exported calibrated model, reopened, computes the configuration exactly', async () => {
      const out = path.join(dir(), 'fixed.onnx');
      const r = await cli(['export-config', path.join(dir(), 'fix.config.json'), '--model', model, '--format', 'calibrated-onnx', '--out', out]);
      expect(r.code).toBe(0);
      const original = await open(fs.readFileSync(model), data);
      const configured = outputs(original.session, original.last, runConfig(original.summary, doc.config));
      const ref = outputs(original.session, original.last, 'off');
      original.session.delete();
      const reopened = await open(fs.readFileSync(out), data);
      const stored = outputs(reopened.session, reopened.last, 'stored');
      reopened.session.delete();
      expect(stored.length).toBe(configured.length);
      stored.forEach((o, i) => expect(Buffer.from(o.buffer).equals(Buffer.from(configured[i].buffer))).toBe(true));
      // ... and so meets the target on its own.
      expect(mean(ref.map((x, i) => cosine(x, stored[i])))).toBeGreaterThan(doc.fix.start + (doc.fix.final - doc.fix.start) / 2);
    });

    it('the toolchain exports name exactly the nodes fix chose', async () => {
      const config = path.join(dir(), 'fix.config.json');
      const chosen = doc.fix.nodes.map((n) => n.node);
      const floats = doc.fix.nodes.filter((n) => n.action === 'float').map((n) => n.node);
      const text = async (format) => {
        const r = await cli(['export-config', config, '--model', model, '--format', format]);
        expect(r.code).toBe(0);
        return r.stdout;
      };
      // Horizon: one node_info entry per node, in the flow mapping's fixed layout; run_on_cpu = float nodes.
      const yaml = await text('horizon-yaml');
      expect(yaml.split('\n')[0]).toMatch(/^# Written by ptqscope \d+\.\d+\.\d+ .*Metric reached: cosine-similarity /);
      const lines = codeLines(yaml);
      expect(lines.slice(0, 2)).toEqual(['model_parameters:', '  node_info: {']);
      const entries = [];
      let i = 2;
      for (; lines[i] !== '  }'; i++) {
        const m = lines[i].match(/^ {4}("(?:[^"\\]|\\.)*"): (\{.*\}),?$/);
        expect(m, lines[i]).not.toBeNull();
        const info = JSON.parse(m[2]);
        entries.push([JSON.parse(m[1]), info]);
        const action = doc.fix.nodes.find((n) => n.node === JSON.parse(m[1]))?.action;
        expect(info).toEqual(action === 'float' ? { ON: 'CPU' } : { ON: 'BPU', InputType: action, OutputType: action });
      }
      expect(sorted(entries.map((e) => e[0]))).toEqual(sorted(chosen));
      const cpu = lines.slice(i + 1);
      if (floats.length) {
        expect(cpu[0]).toBe('calibration_parameters:');
        expect(sorted(JSON.parse(cpu[1].replace(/^ {2}run_on_cpu: /, '')).split(';'))).toEqual(sorted(floats));
      } else {
        expect(cpu).toEqual([]);
      }
      // onnxruntime JSON: excluded = float nodes; every override belongs to a chosen int16 node.
      const ort = JSON.parse(await text('ort-json'));
      expect(sorted(ort.nodes_to_exclude)).toEqual(sorted(floats));
      expect(sorted(Object.keys(ort.ptqscope.nodes))).toEqual(sorted(chosen));
      const tensors = Object.values(ort.ptqscope.nodes).flatMap((n) => n.tensors);
      expect(sorted(Object.keys(ort.extra_options.TensorQuantOverrides))).toEqual(sorted(new Set(tensors)));
      for (const [node, n] of Object.entries(ort.ptqscope.nodes)) expect(n.tensors.length > 0).toBe(!floats.includes(node));
      // The Python snippet: the same exclusions.
      const py = codeLines(await text('ort-python'));
      const start = py.indexOf('nodes_to_exclude = [');
      const end = py.indexOf(']', start);
      expect(sorted(py.slice(start + 1, end).map((l) => JSON.parse(l.trim().replace(/,$/, ''))))).toEqual(sorted(floats));
      // RKNN: one entry per output tensor of each chosen node, the comment naming the node.
      const rknn = codeLines(await text('rknn-cfg'));
      expect(rknn[0]).toBe('custom_quantize_layers:');
      const named = new Set();
      for (const l of rknn.slice(1)) {
        const m = l.match(/^ {4}("(?:[^"\\]|\\.)*"): (int16|float16) {2}# (.*) \((\w+)\)$/);
        expect(m, l).not.toBeNull();
        named.add(m[3]);
        expect(m[2]).toBe(m[4] === 'float' ? 'float16' : 'int16');
      }
      expect(sorted(named)).toEqual(sorted(chosen));
    });
  });
}

describe('bad input', () => {
  it('an unknown metric in the target and an unknown export format exit with code 2', async () => {
    const { model, data } = fixture('digits_cnn_calibrated');
    const r = await cli(['fix', model, data, '--target', 'cosine>=0.9', '--quiet']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("options.target 'cosine>=0.9': unknown metric 'cosine'");
    const config = path.join(tmp, 'empty.config.json');
    fs.writeFileSync(config, JSON.stringify({ schema: 'ptqscope.config', version: 1 }));
    const e = await cli(['export-config', config, '--model', model, '--format', 'tflite']);
    expect(e.code).toBe(2);
    expect(e.stderr).toContain("--format: unknown format 'tflite' (known: horizon-yaml, horizon-quant-config, calibrated-onnx, qdq-onnx, ort-json, ort-python, rknn-cfg)");
  });
});
