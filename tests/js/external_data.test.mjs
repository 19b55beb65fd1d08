// Models saved with external data (scripts/fixtures/external_models.py: calibrated and Q/DQ fixtures
// with every tensor in one side file): the CLI reads the side file beside the model and gives the
// results of the same model with embedded tensors, byte for byte, on one worker and across workers;
// a missing side file or a location outside the model's folder exits 2 naming it; the wasm API takes
// the files with the model (Session.loadModel(bytes, files)) and says which files a model names.
// (calibrate reads a float model's side files too: cli_calibrate.test.mjs.)
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FIXTURES, fixture, loadPtqModule, readCalibrationFolder } from './helpers.mjs';
import { cli } from './cli_fixture.mjs';
import { buildModel } from './onnx_builder.mjs';
import { encodeNpy } from '../../web/cli/lib/npy.mjs';

let tmp;
beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ptqscope-external-'));
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const embedded = (entry) => path.join(FIXTURES, entry.embedded_model);
const outputsOf = (dir) => fs.readdirSync(dir, { recursive: true }).filter((f) => f.endsWith('.npy')).sort()
  .map((f) => [f, fs.readFileSync(path.join(dir, f))]);

// The analysis JSON without the fields that name the model file.
async function sensitivity(model, data, extra) {
  const out = path.join(fs.mkdtempSync(path.join(tmp, 'json-')), 'r.json');
  const r = await cli(['get-sensitivity-of-nodes', model, data, '-n', 'activation', '-d', '2', '--json', out, '--quiet', ...extra]);
  expect(r.code, r.stderr).toBe(0);
  const doc = JSON.parse(fs.readFileSync(out, 'utf8'));
  return JSON.stringify(doc.sensitivity);
}

describe('external data in the CLI', () => {
  for (const name of ['digits_cnn_calibrated_external', 'qdq_detector_int_external']) {
    it(`${name}: run --quant on writes the embedded model's outputs byte for byte`, async () => {
      const entry = fixture(name);
      expect(fs.existsSync(path.join(path.dirname(entry.model), entry.external_data))).toBe(true);
      const outs = await Promise.all([entry.model, embedded(entry)].map(async (model, i) => {
        const dir = path.join(tmp, `${name}-run-${i}`);
        const r = await cli(['run', model, entry.data, '--quant', 'on', '--out', dir]);
        expect(r.code, r.stderr).toBe(0);
        return outputsOf(dir);
      }));
      expect(outs[0].length).toBeGreaterThan(0);
      expect(outs[0].map(([f]) => f)).toEqual(outs[1].map(([f]) => f));
      outs[0].forEach(([f, bytes], i) => expect(Buffer.compare(bytes, outs[1][i][1]), f).toBe(0));
    });
  }

  it('qdq_detector_int_external: an activation sweep on two workers equals the embedded model on one', async () => {
    const entry = fixture('qdq_detector_int_external');
    const [ours, reference] = await Promise.all([
      sensitivity(entry.model, entry.data, ['--workers', '2']),
      sensitivity(embedded(entry), entry.data, ['--workers', '1']),
    ]);
    expect(ours).toBe(reference);
  });

  it('a missing side file exits 2 naming it and where it was looked for', async () => {
    const entry = fixture('digits_cnn_calibrated_external');
    const alone = path.join(tmp, 'alone');
    fs.mkdirSync(alone);
    const model = path.join(alone, path.basename(entry.model));
    fs.copyFileSync(entry.model, model);
    const r = await cli(['run', model, entry.data, '--quant', 'off', '--out', path.join(tmp, 'alone-out')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${model}: its tensors are stored in the external file '${entry.external_data}', which is not beside the model (looked for ${path.join(alone, entry.external_data)})`);
    expect(fs.existsSync(path.join(tmp, 'alone-out'))).toBe(false);
  });

  it('a location outside the model\'s folder exits 2 before any file is read', async () => {
    const secret = path.join(tmp, 'secret.bin');
    fs.writeFileSync(secret, Buffer.alloc(8));
    const dir = path.join(tmp, 'models');
    fs.mkdirSync(dir);
    const model = path.join(dir, 'escape.onnx');
    fs.writeFileSync(model, buildModel({
      nodes: [{ name: 'add', op: 'Add', inputs: ['x', 'w'], outputs: ['y'] }],
      initializers: [{ name: 'w', dims: [2], floats: [0, 0], external: { location: '../secret.bin' } }],
      inputs: [{ name: 'x', dims: [2] }],
      outputs: [{ name: 'y' }],
    }));
    const data = path.join(tmp, 'escape_data');
    fs.mkdirSync(path.join(data, 'x'), { recursive: true });
    fs.writeFileSync(path.join(data, 'x', '0.npy'), encodeNpy('float32', [2], Float32Array.of(1, 2)));
    const r = await cli(['run', model, data, '--quant', 'off', '--out', path.join(tmp, 'escape-out')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("tensor 'w': external data location '../secret.bin' is not a relative path below the model's folder");
  });
});

describe('external data in the wasm API', () => {
  it('externalDataFiles names the side files and which given path each means; loadModel takes them', async () => {
    const ptq = await loadPtqModule();
    const entry = fixture('digits_cnn_calibrated_external');
    const bytes = fs.readFileSync(entry.model);
    const side = fs.readFileSync(path.join(path.dirname(entry.model), entry.external_data));
    expect(ptq.externalDataFiles(bytes, [])).toEqual([{ location: entry.external_data, path: null }]);
    expect(ptq.externalDataFiles(bytes, ['other.bin', `folder/${entry.external_data}`]))
      .toEqual([{ location: entry.external_data, path: `folder/${entry.external_data}` }]);
    expect(ptq.externalDataFiles(fs.readFileSync(embedded(entry)), [])).toEqual([]);

    const session = new ptq.Session();
    try {
      expect(() => session.loadModel(bytes)).toThrow(`its data is stored in the external file '${entry.external_data}', which was not provided`);
      const summary = session.loadModel(bytes, [{ path: entry.external_data, bytes: side }]);
      const reference = new ptq.Session();
      const expected = reference.loadModel(fs.readFileSync(embedded(entry)));
      expect(summary.calibrations.map((c) => c.name)).toEqual(expected.calibrations.map((c) => c.name));
      const files = readCalibrationFolder(entry.data);
      session.loadCalibrationData(files);
      reference.loadCalibrationData(files);
      session.run(0, 'stored');
      reference.run(0, 'stored');
      expect(Buffer.compare(Buffer.from(session.output(0).data.slice().buffer), Buffer.from(reference.output(0).data.slice().buffer))).toBe(0);
      reference.delete();
    } finally {
      session.delete();
    }
  });
});
