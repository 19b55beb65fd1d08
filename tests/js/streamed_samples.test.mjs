// Calibration samples are read when used (behaviour.md §2.5): the session keeps file names, not
// decoded samples, so the memory an analysis counts does not grow with the sample count; the results
// are the same byte for byte whether the files' bytes are handed over at once or read on demand
// (from disk in the CLI's workers, from File objects in the page's), and a file that cannot be read
// any more is an error naming it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { decodeNpy, encodeNpy } from '../../web/cli/lib/npy.mjs';
import { wasmModulePath } from '../../web/cli/lib/wasm.mjs';
import { calibrationFilesOnDemand } from '../../web/cli/lib/files.mjs';
import { createPool } from '../../web/pipeline/pool.mjs';
import { runAnalysis } from '../../web/pipeline/sweep.mjs';
import { spawnNodeWorker } from '../../web/pipeline/node_worker.mjs';
import { fixture, readCalibrationFolder } from './helpers.mjs';

// A fresh module: its memory counters (peakInUse) start from nothing.
async function freshModule() {
  const { default: create } = await import(pathToFileURL(wasmModulePath()).href);
  return create();
}

// `count` distinct samples of a one-input fixture, [{path, bytes}]: its photos scaled by 1 - k/1000
// (so no two samples are equal and none is served from another's cached run).
function distinctSamples(entry, count) {
  const photos = readCalibrationFolder(entry.data);
  return Array.from({ length: count }, (_, k) => {
    const photo = photos[k % photos.length];
    const { dtype, dims, data } = decodeNpy(photo.bytes);
    const scaled = Float32Array.from(data, (v) => v * (1 - k / 1000));
    return { path: `${photo.path.split('/')[0]}/${String(k).padStart(3, '0')}.npy`, bytes: encodeNpy(dtype, dims, scaled) };
  });
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ptq-streamed-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('calibration samples read when used', () => {
  it('holds no decoded sample after loading: memory in use is the same for N and 4N samples', async () => {
    const entry = fixture('resnet18_calibrated');
    const ptq = await freshModule();
    const inUseAfterLoading = (count) => {
      const session = new ptq.Session();
      session.loadModel(fs.readFileSync(entry.model));
      const before = ptq.memoryUsage().inUse;
      expect(session.loadCalibrationData(distinctSamples(entry, count)).sampleCount).toBe(count);
      const held = ptq.memoryUsage().inUse - before;
      session.delete();
      return held;
    };
    // Decoded and kept, 4N samples would hold 3N × 602,112 bytes (1×3×224×224 float32) more than N.
    expect(inUseAfterLoading(4)).toBe(0);
    expect(inUseAfterLoading(16)).toBe(0);
  });

  it('a sweep over 4N samples counts no more memory at its peak than over N (samples in blocks of the run-cache budget)', async () => {
    // yolov8n_like: a keep-all base run is about 100 MB, so the 256 MB blocks hold a few samples; from
    // 16 samples on the peak is that of a steady block and the previous one's runs in the run cache.
    // Samples kept decoded would add 3N × 1,228,800 bytes (1×3×320×320 float32) at 4N.
    const entry = fixture('yolov8n_like_calibrated');
    const peak = async (count) => {
      const ptq = await freshModule();
      const session = new ptq.Session();
      session.loadModel(fs.readFileSync(entry.model));
      session.loadCalibrationData(distinctSamples(entry, count));
      const request = { analysis: 'sensitivity', options: { node_type: 'activation', data_num: 0 }, items: { begin: 0, end: 1 } };
      const doc = JSON.parse(session.analyze(JSON.stringify(request)));
      expect(Object.keys(doc.sensitivity.activation)).toHaveLength(1);
      session.delete();
      return ptq.memoryUsage().peakInUse;
    };
    const n = 16;
    const [small, large] = [await peak(n), await peak(4 * n)];
    expect(large - small).toBeLessThan(n * 1228800);
  }, 600_000);

  it('gives the same result, byte for byte, with the bytes handed over and with each file read on demand', async () => {
    const entry = fixture('resnet18_calibrated');
    const ptq = await freshModule();
    const request = JSON.stringify({ analysis: 'sensitivity', options: { node_type: 'activation', data_num: 0 }, items: { begin: 0, end: 6 } });
    const sweep = (files) => {
      const session = new ptq.Session();
      session.loadModel(fs.readFileSync(entry.model));
      session.loadCalibrationData(files);
      const doc = JSON.parse(session.analyze(request));
      session.delete();
      delete doc.timings_ms; // wall time
      return JSON.stringify(doc);
    };
    const held = sweep(readCalibrationFolder(entry.data));
    let reads = 0;
    const onDemand = calibrationFilesOnDemand(entry.data).map((f) => ({ path: f.path, bytes: () => (reads++, f.bytes()) }));
    expect(sweep(onDemand)).toBe(held);
    // Read once each to check the folder, then again by the sweep.
    expect(reads).toBeGreaterThan(onDemand.length);
  }, 120_000);

  it('reads the files from disk in the CLI\'s workers, with the result of one session', async () => {
    const entry = fixture('digits_cnn_calibrated');
    const request = { analysis: 'sensitivity', options: { node_type: 'activation', data_num: 0 }, model_file: 'model.onnx' };
    const ptq = await freshModule();
    const session = new ptq.Session();
    session.loadModel(fs.readFileSync(entry.model));
    session.loadCalibrationData(readCalibrationFolder(entry.data));
    const one = JSON.parse(session.analyze(JSON.stringify(request)));
    session.delete();
    const pool = createPool({ size: 2, spawn: () => spawnNodeWorker(wasmModulePath()) });
    try {
      const files = calibrationFilesOnDemand(entry.data).map((f) => ({ path: f.path, file: path.join(entry.data, f.path) }));
      await pool.load({ model: fs.readFileSync(entry.model), files });
      const split = await runAnalysis(pool, request);
      expect(JSON.stringify([split.sensitivity, split.sensitivity_order])).toBe(JSON.stringify([one.sensitivity, one.sensitivity_order]));
    } finally {
      pool.close();
    }
  }, 120_000);

  it('names a file that can no longer be read, and the session stays usable', async () => {
    const entry = fixture('resnet18_calibrated');
    const folder = path.join(tmp, 'calibration_data');
    for (const f of readCalibrationFolder(entry.data)) {
      fs.mkdirSync(path.dirname(path.join(folder, f.path)), { recursive: true });
      fs.writeFileSync(path.join(folder, f.path), f.bytes);
    }
    const files = calibrationFilesOnDemand(folder);
    const ptq = await freshModule();
    const session = new ptq.Session();
    try {
      session.loadModel(fs.readFileSync(entry.model));
      session.loadCalibrationData(files);
      const last = files[files.length - 1];
      fs.rmSync(path.join(folder, last.path));
      expect(() => session.run(files.length - 1, 'off')).toThrow(new RegExp(`${last.path}: could not be read: .*ENOENT`));
      // A file replaced by one the model does not take: the load's own message, naming the file.
      fs.writeFileSync(path.join(folder, last.path), encodeNpy('float32', [1, 3, 2, 2], new Float32Array(12)));
      expect(() => session.run(files.length - 1, 'off')).toThrow(new RegExp(`${last.path}: shape \\[1, 3, 2, 2\\] does not match`));
      expect(session.run(0, 'off').nodesExecuted).toBeGreaterThan(0);
    } finally {
      session.delete();
    }
  }, 120_000);
});
