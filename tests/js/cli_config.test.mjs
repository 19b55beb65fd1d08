// Quantization configurations through the real CLI (docs/config-schema.md):
//  - `--config FILE` on every analysis sub-command: the result records the resolved configuration;
//  - bad configuration files exit 2 naming the file and the field;
//  - save a result's configuration, reopen it: the same numbers (real fixture: PP-OCR cls);
//  - node-errors: own / accumulated errors of the nodes that produce a model output, checked against
//    an independent evaluation: the session run with explicit per-node configurations, the metrics
//    computed here in float64.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { calibratedDigits, cli } from './cli_fixture.mjs';
import { fixture, openSession, runCopy } from './helpers.mjs';

const readJson = (f) => JSON.parse(fs.readFileSync(f, 'utf8'));
const HEAD = { schema: 'ptqscope.config', version: 1 };

let tmp;
beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ptqscope-cli-config-'));
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

function writeConfig(name, doc) {
  const file = path.join(tmp, name);
  fs.writeFileSync(file, JSON.stringify(doc));
  return file;
}

// The model's normal nodes (with calibrated inputs, graph order), its graph and calibration summary.
async function modelFacts(entry) {
  const { session, summary, data } = await openSession(entry);
  const graph = JSON.parse(session.graphJson());
  const normal = graph.nodes.filter((n) => n.input_calibrations?.length && n.op_type !== 'HzCalibration' && n.op_type !== 'HzFilter');
  return { session, summary, graph, normal, sampleNames: data.sampleNames };
}

// §4 metrics in float64 (reference = the float model's tensor a, b = the quantized one).
function cosine(a, b) {
  let dot = 0; let na = 0; let nb = 0;
  for (let i = 0; i < a.length; i++) { dot += a[i] * b[i]; na += a[i] * a[i]; nb += b[i] * b[i]; }
  return dot / (Math.max(Math.sqrt(na), 1e-8) * Math.max(Math.sqrt(nb), 1e-8));
}

describe('--config on every analysis sub-command', () => {
  const { model, data } = calibratedDigits();
  let facts;
  beforeAll(async () => {
    facts = await modelFacts({ model, data });
  });

  it('is accepted by each of them and recorded in the result', async () => {
    const [first, second] = facts.normal;
    const cfg = writeConfig('every.json', { ...HEAD, intents: [{ node: first.name, action: 'int16' }, { node: second.name, action: 'float' }] });
    const cali = facts.summary.calibrations.map((c) => c.name);
    const runs = {
      'get-sensitivity-of-nodes': [],
      'leave-one-out': [],
      'plot-acc-error': ['-q', 'weight', '-s', path.join(tmp, 'ae')],
      'plot-distribution': ['-n', `['${first.name}']`, '-s', path.join(tmp, 'dis')],
      'get-channelwise-data-distribution': ['-n', `['${cali[0]}']`, '-s', path.join(tmp, 'cw')],
      'get-calibration-nodes-stat-info': [],
      'sensitivity-analysis': ['-sd', path.join(tmp, 'sa')],
      'node-errors': [],
      runall: ['-s', path.join(tmp, 'runall')],
    };
    for (const [command, extra] of Object.entries(runs)) {
      const out = path.join(tmp, `every-${command}.json`);
      const r = await cli([command, model, data, ...extra, '--config', cfg, '--json', out, '--quiet', '--workers', '1']);
      expect(r.stderr, command).toBe('');
      expect(r.code, command).toBe(0);
      const doc = readJson(out);
      expect(doc.config?.intents, command).toEqual([{ node: first.name, action: 'int16' }, { node: second.name, action: 'float' }]);
      expect(Object.keys(doc.config.calibrations), command).toEqual(cali);
      for (const c of second.input_calibrations) expect(doc.config.calibrations[c].on, `${command} ${c}`).toBe(false);
    }
  }, 300_000);

  it('bad configuration files exit 2 naming the file and the field', async () => {
    const cases = [
      [path.join(tmp, 'missing.json'), /missing\.json: cannot read the configuration: no such file/],
      [writeConfig('syntax.json', {}), /syntax\.json: config\.schema must be "ptqscope\.config" \(missing\)/],
      [writeConfig('node.json', { ...HEAD, intents: [{ node: 'Conv_999', action: 'float' }] }),
        /node\.json: config\.intents\[0\]\.node: 'Conv_999' is not a node of the model/],
      [writeConfig('action.json', { ...HEAD, intents: [{ node: facts.normal[0].name, action: 'int8x' }] }),
        /action\.json: config\.intents\[0\]\.action: unknown action 'int8x'/],
      [writeConfig('cal.json', { ...HEAD, calibrations: { nope: { on: true } } }),
        /cal\.json: config\.calibrations\.nope: 'nope' is not a calibration node of the model/],
    ];
    fs.writeFileSync(path.join(tmp, 'text.json'), '{"schema": ');
    cases.push([path.join(tmp, 'text.json'), /text\.json: not a JSON document/]);
    for (const [file, message] of cases) {
      for (const command of ['node-errors', 'get-sensitivity-of-nodes']) {
        const r = await cli([command, model, data, '--config', file, '--quiet', '--workers', '1']);
        expect(r.code, `${command} ${file}`).toBe(2);
        expect(r.stderr, `${command} ${file}`).toMatch(message);
      }
    }
  }, 120_000);
});

describe('a saved configuration reopened gives the same numbers (PP-OCR cls)', () => {
  it('node-errors and leave-one-out', async () => {
    const entry = fixture('ppocr_cls_calibrated');
    const { normal } = await modelFacts(entry);
    const picked = [normal[1].name, normal[Math.floor(normal.length / 2)].name];
    const cfg = writeConfig('ocr.json', { ...HEAD, intents: [{ node: picked[0], action: 'float' }, { node: picked[1], action: 'int16' }] });
    const run = async (command, config, out) => {
      const r = await cli([command, entry.model, entry.data, '--config', config, '--json', out, '--quiet', '--workers', '1', '-d', '2']);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      return readJson(out);
    };
    const first = await run('node-errors', cfg, path.join(tmp, 'ocr-1.json'));
    // Saved: the result's config section, as the page and the plugin save it.
    const saved = writeConfig('ocr-saved.json', first.config);
    const again = await run('node-errors', saved, path.join(tmp, 'ocr-2.json'));
    expect(again.node_errors).toEqual(first.node_errors);
    expect(again.config.calibrations).toEqual(first.config.calibrations);
    // The configuration changes the numbers (not a no-op) ...
    const plain = path.join(tmp, 'ocr-plain.json');
    expect((await cli(['node-errors', entry.model, entry.data, '--json', plain, '--quiet', '-d', '2'])).code).toBe(0);
    expect(readJson(plain).config).toBeUndefined();
    expect(readJson(plain).node_errors.nodes).not.toEqual(first.node_errors.nodes);
    // ... and a sweep too: same table from the original and the saved document.
    const a = await run('leave-one-out', cfg, path.join(tmp, 'ocr-loo-1.json'));
    const b = await run('leave-one-out', saved, path.join(tmp, 'ocr-loo-2.json'));
    expect(b.leave_one_out).toEqual(a.leave_one_out);
  }, 300_000);
});

describe('node-errors against an independent evaluation', () => {
  // Models whose last normal node produces the model output (the PP-OCR classifier ends in a Softmax
  // without calibrated inputs); the int16 one keeps its classifier in int16.
  for (const name of ['digits_cnn_calibrated', 'digits_cnn_int16_calibrated']) {
    it(`${name}: own and accumulated at the nodes that produce a model output`, async () => {
      const entry = fixture(name);
      const { session, summary, graph, normal, sampleNames } = await modelFacts(entry);
      const out = path.join(tmp, `ne-${name}.json`);
      const r = await cli(['node-errors', entry.model, entry.data, '--json', out, '--quiet', '--workers', '1']);
      expect(r.code).toBe(0);
      const doc = readJson(out).node_errors;
      expect(doc.order).toEqual(normal.map((n) => n.name));
      // The default sample: the last one in file-name order.
      const sampleIndex = sampleNames.length - 1;
      expect(doc.samples).toEqual([sampleNames[sampleIndex]]);
      const outputs = graph.outputs.map((o) => o.name);
      const stored = summary.calibrations.map((c) => (c.switch ? 1 : 0));
      const floatRun = runCopy(session, sampleIndex, 'off');
      const storedRun = runCopy(session, sampleIndex, 'stored');
      let checked = 0;
      for (const node of normal) {
        const k = outputs.indexOf(node.outputs[0]);
        if (k < 0) continue;
        const on = summary.calibrations.map((c) => (node.input_calibrations.includes(c.name) ? stored[summary.calibrations.indexOf(c)] : 0));
        const ownRun = runCopy(session, sampleIndex, { on });
        expect(doc.nodes[node.name].own).toBeCloseTo(cosine(floatRun[k].data, ownRun[k].data), 6);
        expect(doc.nodes[node.name].accumulated).toBeCloseTo(cosine(floatRun[k].data, storedRun[k].data), 6);
        expect(doc.nodes[node.name].own).not.toBe(doc.nodes[node.name].accumulated);
        checked++;
      }
      expect(checked).toBeGreaterThan(0);
      session.delete();
    }, 120_000);
  }
});
