// (c) Bad input: corrupt or truncated model bytes and garbage .npy data raise a JS Error (never an
// abort), and the session — and the module — stay usable afterwards.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeNpy } from '../../web/cli/lib/npy.mjs';
import { fixture, loadPtqModule, randomBytes, readCalibrationFolder, runCopy } from './helpers.mjs';

const entry = fixture('digits_cnn');
const modelBytes = new Uint8Array(fs.readFileSync(entry.model));
const dataFiles = readCalibrationFolder(entry.data);

// Expects fn to throw a ptqscope Error (not an abort / RuntimeError) and returns it.
function expectPtqError(fn, names = ['FormatError', 'PtqError']) {
  let error;
  try {
    fn();
  } catch (e) {
    error = e;
  }
  expect(error, 'expected an Error').toBeInstanceOf(Error);
  expect(names).toContain(error.name);
  expect(error.message.length).toBeGreaterThan(0);
  return error;
}

describe('bad input', () => {
  let ptq;
  let session;
  let reference; // digits outputs of sample 0 from a clean session
  beforeAll(async () => {
    ptq = await loadPtqModule();
    const clean = new ptq.Session();
    clean.loadModel(modelBytes);
    clean.loadCalibrationData(dataFiles);
    reference = runCopy(clean, 0, 'off')[0].data;
    clean.delete();
    session = new ptq.Session();
  });
  afterAll(() => session?.delete());

  // The session must accept a valid model + data after any failure and compute the same result.
  function expectUsable() {
    session.loadModel(modelBytes);
    session.loadCalibrationData(dataFiles);
    expect(runCopy(session, 0, 'off')[0].data).toEqual(reference);
  }

  it('rejects truncated model bytes', () => {
    for (const size of [0, 1, 16, modelBytes.length >> 1, modelBytes.length - 1]) {
      expectPtqError(() => session.loadModel(modelBytes.slice(0, size)));
    }
    expectUsable();
  });

  it('rejects garbage model bytes', () => {
    for (const seed of [1, 2, 3]) expectPtqError(() => session.loadModel(randomBytes(4096, seed)));
    expectUsable();
  });

  it('survives randomly mutated model bytes (loads or throws an Error, never aborts)', () => {
    for (let seed = 0; seed < 24; seed++) {
      const mutated = modelBytes.slice();
      const noise = randomBytes(16, 1000 + seed);
      for (let i = 0; i < 8; i++) {
        const at = ((noise[2 * i] << 8) | noise[2 * i + 1]) * 7919 % mutated.length;
        mutated[at] ^= 1 << (noise[i] & 7);
      }
      try {
        session.loadModel(mutated);
      } catch (e) {
        expect(e).toBeInstanceOf(Error);
        // RangeError: a mutated size field may ask for more than the 4 GB heap.
        expect(['FormatError', 'PtqError', 'RangeError']).toContain(e.name);
      }
    }
    expectUsable();
  });

  it('rejects a model argument that is not a Uint8Array', () => {
    expectPtqError(() => session.loadModel('model.onnx'));
    expectPtqError(() => session.loadModel([1, 2, 3]));
    expectUsable();
  });

  it('rejects garbage and truncated .npy files', () => {
    session.loadModel(modelBytes);
    const valid = dataFiles[0].bytes;
    const cases = [
      [{ path: 'input/0.npy', bytes: randomBytes(400, 7) }],
      [{ path: 'input/0.npy', bytes: new Uint8Array(0) }],
      [{ path: 'input/0.npy', bytes: valid.slice(0, 40) }], // inside the header
      [{ path: 'input/0.npy', bytes: valid.slice(0, valid.length - 4) }], // short data
    ];
    for (const files of cases) expectPtqError(() => session.loadCalibrationData(files));
    expectUsable();
  });

  it('rejects data that does not match the model input', () => {
    session.loadModel(modelBytes);
    const f64 = encodeNpy('float64', [1, 1, 8, 8], new Float64Array(64));
    const wrongShape = encodeNpy('float32', [1, 1, 4, 4], new Float32Array(16));
    expectPtqError(() => session.loadCalibrationData([{ path: 'input/0.npy', bytes: f64 }]));
    expectPtqError(() => session.loadCalibrationData([{ path: 'input/0.npy', bytes: wrongShape }]));
    expectPtqError(() => session.loadCalibrationData([{ path: 'not_an_input/0.npy', bytes: dataFiles[0].bytes }]));
    expectPtqError(() => session.loadCalibrationData([{ path: 'input/0.npy', bytes: 'text' }]));
    expectPtqError(() => session.loadCalibrationData('input'));
    expectUsable();
  });

  it('rejects bad run / output arguments', () => {
    expectUsable();
    expectPtqError(() => session.run(-1, 'off'));
    expectPtqError(() => session.run(dataFiles.length, 'off'));
    expectPtqError(() => session.run(0, 'sideways'));
    expectPtqError(() => session.run(0, { on: [1] })); // the float model has no calibration nodes
    expectPtqError(() => session.run(0, null));
    expectPtqError(() => session.output(5));
    expectUsable();
  });

  it('rejects calls made in the wrong order', () => {
    const fresh = new ptq.Session();
    try {
      expectPtqError(() => fresh.loadCalibrationData(dataFiles));
      expectPtqError(() => fresh.run(0, 'off'));
      fresh.loadModel(modelBytes);
      expectPtqError(() => fresh.run(0, 'off'));
      fresh.free();
      expectPtqError(() => fresh.run(0, 'off'));
      fresh.loadModel(modelBytes);
      fresh.loadCalibrationData(dataFiles);
      expect(runCopy(fresh, 0, 'off')[0].data).toEqual(reference);
    } finally {
      fresh.delete();
    }
  });
});
