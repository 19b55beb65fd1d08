// A model's own bytes against the wasm heap: a session counts its model file and external data
// against the memory budget while it is loaded (memoryUsage().inUse), memoryUsage() reports the heap
// and the budget's peak, and a model whose bytes cannot fit is refused up front with the estimate and
// the budget (CLI exit 2 before any side file is read; PtqError in the API; the session stays usable),
// never an out-of-memory abort. The 1 GiB model itself: big_model.test.mjs.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeNpy } from '../../web/cli/lib/npy.mjs';
import { cli } from './cli_fixture.mjs';
import { loadPtqModule } from './helpers.mjs';
import { buildModel } from './onnx_builder.mjs';

const GIB = 2 ** 30;
const BUDGET = 3 * GIB; // the default memory budget (docs/wasm-api.md)

// x [2] + w -> y; w's float32 data in the external file `huge.bin`, declared `length` bytes long.
function declaredModel(length) {
  return buildModel({
    nodes: [{ name: 'add', op: 'Add', inputs: ['x', 'w'], outputs: ['y'] }],
    initializers: [{ name: 'w', dims: [length / 4], floats: [], external: { location: 'huge.bin', offset: 0, length } }],
    inputs: [{ name: 'x', dims: [length / 4] }],
    outputs: [{ name: 'y' }],
  });
}

// x [1, 4] -> Relu -> y, w unused but an initializer of `n` floats (the model's own bytes).
function smallModel(n) {
  return buildModel({
    nodes: [{ name: 'relu', op: 'Relu', inputs: ['x'], outputs: ['y'] }],
    initializers: [{ name: 'w', dims: [n], floats: Array.from({ length: n }, (_, i) => i) }],
    inputs: [{ name: 'x', dims: [1, 4] }],
    outputs: [{ name: 'y' }],
  });
}

let tmp;
beforeAll(() => { tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ptqscope-model-memory-')); });
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('a model that cannot fit the wasm heap is refused up front', () => {
  const EXTERNAL = 5 * GIB;
  let model;
  let data;
  beforeAll(() => {
    model = path.join(tmp, 'huge.onnx');
    fs.writeFileSync(model, declaredModel(EXTERNAL)); // huge.bin does not exist: nothing is read
    data = path.join(tmp, 'calibration_data');
    fs.mkdirSync(path.join(data, 'x'), { recursive: true });
    fs.writeFileSync(path.join(data, 'x', '0.npy'), encodeNpy('float32', [2], Float32Array.of(1, 2)));
  });

  // What the core says: the file's bytes + the 5 GiB declared in huge.bin, against the 3 GiB budget.
  const expected = () => {
    const file = fs.statSync(model).size;
    const total = file + EXTERNAL;
    return `the model needs ${total} bytes (${(total / GIB).toFixed(1)} GiB) (its file ${file} bytes, its external data ` +
      `${EXTERNAL} bytes (5.0 GiB)) of the wasm heap for as long as it is loaded, before any tensor is computed, but 0 bytes ` +
      `are already in use and the memory budget is ${BUDGET} bytes (3.0 GiB) (what the 4 GB WebAssembly heap leaves for a ` +
      'model and its tensors): it cannot be loaded';
  };

  it.each([
    ['run', ['--quant', 'off', '--out', 'out_run']],
    ['get-sensitivity-of-nodes', ['-n', 'activation', '--quiet']],
  ])('ptqscope %s exits 2 with the estimate and the budget, before looking for the side file', async (command, extra) => {
    const r = await cli([command, model, data, ...extra.map((a) => (a.startsWith('out_') ? path.join(tmp, a) : a))]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`${model}: ${expected()}`);
    expect(r.stderr).not.toMatch(/not beside the model|RuntimeError|out of memory|\n\s+at /);
  });

  it('externalDataFiles throws the same PtqError', async () => {
    const ptq = await loadPtqModule();
    let error;
    try {
      ptq.externalDataFiles(fs.readFileSync(model), ['huge.bin']);
    } catch (e) {
      error = e;
    }
    expect(error?.name).toBe('PtqError');
    expect(error.message).toBe(expected());
  });
});

describe('a loaded model counts against the memory budget', () => {
  it('inUse holds the model bytes while loaded; a model beyond the budget is refused and the session stays usable', async () => {
    const ptq = await loadPtqModule();
    const session = new ptq.Session();
    const bytes = smallModel(4096); // 16 KiB of weights
    try {
      const before = ptq.memoryUsage();
      expect(before.heapBytes % 65536).toBe(0); // whole wasm pages
      expect(before.heapBytes).toBeGreaterThanOrEqual(16 * 2 ** 20);
      session.loadModel(bytes);
      const loaded = ptq.memoryUsage();
      // The file's bytes, plus an aligned copy of w (16 KiB) if its data sits misaligned in the file.
      expect(loaded.inUse - before.inUse).toBeGreaterThanOrEqual(bytes.length);
      expect(loaded.inUse - before.inUse).toBeLessThanOrEqual(bytes.length + 4096 * 4);
      expect(loaded.peakInUse).toBeGreaterThanOrEqual(loaded.inUse);

      // Room for everything held now but this model's bytes loaded a second time.
      ptq.setMemoryBudget(loaded.inUse + bytes.length - 1);
      session.loadModel(bytes); // releases the first copy, then needs the bytes again: fits
      const other = new ptq.Session();
      let error;
      try {
        other.loadModel(bytes); // a second session's copy does not
      } catch (e) {
        error = e;
      } finally {
        other.delete();
      }
      expect(error?.name).toBe('PtqError');
      expect(error.message).toContain(`the model needs ${bytes.length} bytes (${(bytes.length / 1024).toFixed(1)} KiB) (its file ${bytes.length} bytes`);
      expect(error.message).toContain(`but ${loaded.inUse} bytes`);
      expect(ptq.memoryUsage().inUse).toBe(loaded.inUse); // the refused load holds nothing
      session.loadCalibrationData([{ path: 'x/0.npy', bytes: encodeNpy('float32', [1, 4], Float32Array.of(1, -2, 3, -4)) }]);
      session.run(0, 'off');
      expect(Array.from(session.output(0).data)).toEqual([1, 0, 3, 0]);
    } finally {
      ptq.setMemoryBudget(0);
      session.delete();
    }
    expect(ptq.memoryUsage().inUse).toBe(0);
  });
});
