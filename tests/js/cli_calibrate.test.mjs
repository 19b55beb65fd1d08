// `ptqscope calibrate` (wasm, and native where built) against the native ptq_calibrate that made the calibrated fixtures: the
// same model bytes from two compilers/platforms (and from a float model saved with external data),
// a model the other commands accept, and bad input exiting with 2 and a message naming the file or option.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli } from './cli_fixture.mjs';
import { FIXTURES, fixture, loadPtqModule } from './helpers.mjs';
import { builtEngines } from '../../web/cli/lib/wasm.mjs';

describe('ptqscope calibrate', () => {
  let tmp;
  beforeAll(() => { tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ptqscope-calibrate-')); });
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

  // Every engine this checkout has: the native one calibrates on its portable GEMM kernel, so the bytes
  // do not depend on the CPU's instruction sets (its AVX kernels fuse multiply-adds).
  const cases = builtEngines().flatMap((engine) => ['digits_cnn', 'mobilenet_v3_small'].map((name) => [engine, name]));
  for (const [engine, name] of cases) {
    it(`${name}: the ${engine} engine writes the bytes the native tool wrote (calibrated and QDQ)`, async () => {
      const calibrated = fixture(`${name}_calibrated`);
      const float = path.join(FIXTURES, calibrated.float_model);
      const out = path.join(tmp, `${engine}-${name}.onnx`);
      const qdq = path.join(tmp, `${engine}-${name}_qdq.onnx`);
      const r = await cli(['calibrate', float, calibrated.data, '--out', out, '--qdq', qdq], { env: { PTQSCOPE_ENGINE: engine } });
      expect(r.code, r.stderr).toBe(0);
      expect(Buffer.compare(fs.readFileSync(out), fs.readFileSync(calibrated.model))).toBe(0);
      expect(Buffer.compare(fs.readFileSync(qdq), fs.readFileSync(path.join(FIXTURES, calibrated.qdq_model)))).toBe(0);
    });
  }

  it('a float model saved with external data (its side file beside it): the bytes of its embedded twin\'s calibration', async () => {
    const external = fixture('digits_cnn_external');
    const calibrated = fixture('digits_cnn_calibrated');
    const out = path.join(tmp, 'digits_external_calibrated.onnx');
    const qdq = path.join(tmp, 'digits_external_qdq.onnx');
    const r = await cli(['calibrate', external.model, external.data, '--out', out, '--qdq', qdq]);
    expect(r.code, r.stderr).toBe(0);
    expect(Buffer.compare(fs.readFileSync(out), fs.readFileSync(calibrated.model))).toBe(0);
    expect(Buffer.compare(fs.readFileSync(qdq), fs.readFileSync(path.join(FIXTURES, calibrated.qdq_model)))).toBe(0);
    // Its side file missing: exit 2 naming the file where it was looked for.
    const alone = path.join(tmp, 'alone');
    fs.mkdirSync(alone);
    fs.copyFileSync(external.model, path.join(alone, 'float.onnx'));
    const missing = await cli(['calibrate', path.join(alone, 'float.onnx'), external.data, '--out', path.join(tmp, 'never.onnx')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`its tensors are stored in the external file '${external.external_data}', which is not beside the model`);
    expect(fs.existsSync(path.join(tmp, 'never.onnx'))).toBe(false);
  });

  it('the calibrated model has the reported calibration nodes, all switched on, and runs', async () => {
    const float = fixture('digits_cnn');
    const out = path.join(tmp, 'digits_int16.onnx');
    const r = await cli(['calibrate', float.model, float.data, '--out', out, '--method', 'percentile',
      '--percentile', '99.9', '--int16', 'input_HzCalibration']);
    expect(r.code, r.stderr).toBe(0);
    const [, activations, weights] = /(\d+) activation and (\d+) weight calibration nodes/.exec(r.stdout).map(Number);
    const ptq = await loadPtqModule();
    const session = new ptq.Session();
    try {
      const summary = session.loadModel(new Uint8Array(fs.readFileSync(out)));
      const kinds = summary.calibrations.map((c) => c.kind);
      expect(kinds.filter((k) => k === 'weight').length).toBe(weights);
      expect(kinds.filter((k) => k !== 'weight').length).toBe(activations);
      expect(summary.calibrations.every((c) => c.switch)).toBe(true);
      const input = summary.calibrations.find((c) => c.name === 'input_HzCalibration');
      expect(input.qtype).toBe('int16');
      expect(summary.calibrations.filter((c) => c.qtype === 'int16').length).toBe(1);
      session.loadCalibrationData(
        fs.readdirSync(path.join(float.data, 'input')).map((f) => ({ path: `input/${f}`, bytes: new Uint8Array(fs.readFileSync(path.join(float.data, 'input', f))) })));
      session.run(0, 'stored');
      expect(session.output(0).dims).toEqual([1, 10]);
    } finally {
      session.delete();
    }
  });

  it('bad input exits with 2 and names the file or option', async () => {
    const float = fixture('digits_cnn');
    const calibrated = fixture('digits_cnn_calibrated');
    const out = path.join(tmp, 'bad.onnx');
    const cases = [
      [['calibrate', calibrated.model, float.data, '--out', out], /already calibrated.*HzCalibration node 'input_HzCalibration'/],
      [['calibrate', float.model, float.data, '--out', out, '--percentile', 'abc'], /--percentile must be a number/],
      [['calibrate', float.model, float.data, '--out', out, '--method', 'entropy'], /--method must be one of max, percentile, kl/],
      [['calibrate', float.model, float.data, '--out', out, '--int16', 'nosuch'], /digits_cnn\.onnx.*nosuch/],
      [['calibrate', float.model, float.data], /missing option --out/],
    ];
    for (const [args, message] of cases) {
      const r = await cli(args);
      expect(r.code, `${args.join(' ')}\n${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(message);
    }
    expect(fs.existsSync(out)).toBe(false);
  });
});
