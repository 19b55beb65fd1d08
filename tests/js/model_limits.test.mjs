// Models whose intermediate tensors exceed the 4 GB wasm heap (a huge Conv `pads`, an Expand to a
// huge shape): the wasm core used to compute their sizes in 32-bit size_t, allocate the wrapped size
// and write past it ("RuntimeError: memory access out of bounds"). Now the CLI exits with 2 and a
// message naming the node and the size, and the session stays usable.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeNpy } from '../../web/cli/lib/npy.mjs';
import { cli } from './cli_fixture.mjs';
import { loadPtqModule } from './helpers.mjs';
import { buildModel } from './onnx_builder.mjs';

const BILLION = 1000000000;

// x [1, 1, 2, 2] -> Conv (1x1 weight, `pads`) -> y
function convModel(pads) {
  return buildModel({
    nodes: [{ name: 'big_conv', op: 'Conv', inputs: ['x', 'w'], outputs: ['y'], attrs: [{ name: 'pads', ints: pads }] }],
    initializers: [{ name: 'w', dims: [1, 1, 1, 1], floats: [2] }],
    inputs: [{ name: 'x', dims: [1, 1, 2, 2] }],
    outputs: [{ name: 'y' }],
  });
}

// x [1, 1, 2, 2] -> Relu -> Expand(shape) -> y
function expandModel(shape) {
  return buildModel({
    nodes: [
      { name: 'relu', op: 'Relu', inputs: ['x'], outputs: ['r'] },
      { name: 'big_expand', op: 'Expand', inputs: ['r', 'shape'], outputs: ['y'] },
    ],
    initializers: [{ name: 'shape', dims: [shape.length], int64s: shape }],
    inputs: [{ name: 'x', dims: [1, 1, 2, 2] }],
    outputs: [{ name: 'y' }],
  });
}

const SAMPLE = Float32Array.from([1, -2, 3, -4]);

describe('tensors larger than the wasm heap', () => {
  let tmp;
  let data;
  beforeAll(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ptqscope-limits-'));
    data = path.join(tmp, 'calibration_data');
    fs.mkdirSync(path.join(data, 'x'), { recursive: true });
    fs.writeFileSync(path.join(data, 'x', '0.npy'), encodeNpy('float32', [1, 1, 2, 2], SAMPLE));
  });
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

  const cases = [
    // 2000000002^2 floats: 16000000032000000016 bytes.
    ['conv_pads.onnx', () => convModel([BILLION, BILLION, BILLION, BILLION]), "node 'big_conv' (Conv)", '[1, 1, 2000000002, 2000000002]'],
    // 2^30 x 4 floats = 16 GiB; wrapped to 0 bytes in a 32-bit size_t.
    ['expand.onnx', () => expandModel([1 << 30, 1, 2, 2]), "node 'big_expand' (Expand)", '[1073741824, 1, 2, 2]'],
    // 2^32 + 4 floats: wrapped to 16 bytes.
    ['expand_wrap.onnx', () => expandModel([2 ** 30 + 1, 1, 2, 2]), "node 'big_expand' (Expand)", '17179869200 bytes'],
  ];

  it.each(cases)('ptqscope run %s exits with 2 naming the node and the size', async (file, make, node, size) => {
    const model = path.join(tmp, file);
    fs.writeFileSync(model, make());
    const r = await cli(['run', model, data, '--quant', 'off', '--out', path.join(tmp, `out_${file}`)]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(node);
    expect(r.stderr).toContain(size);
    expect(r.stderr).toContain('more than the 4294901760 bytes');
    expect(r.stderr).not.toMatch(/RuntimeError|out of bounds|\n\s+at /);
  });

  it('the session reports a PtqError and stays usable', async () => {
    const ptq = await loadPtqModule();
    const session = new ptq.Session();
    try {
      const files = [{ path: 'x/0.npy', bytes: fs.readFileSync(path.join(data, 'x', '0.npy')) }];
      session.loadModel(convModel([BILLION, BILLION, BILLION, BILLION]));
      session.loadCalibrationData(files);
      let error;
      try {
        session.run(0, 'off');
      } catch (e) {
        error = e;
      }
      expect(error?.name).toBe('PtqError');
      expect(error.message).toMatch(/^node 'big_conv' \(Conv\): a float32 tensor of shape \[1, 1, 2000000002, 2000000002\] needs/);
      // Same session, a model that fits: pads 1 -> 4x4 output, 2 * x in the middle, zeros around.
      session.loadModel(convModel([1, 1, 1, 1]));
      session.loadCalibrationData(files);
      session.run(0, 'off');
      const y = session.output(0);
      expect(y.dims).toEqual([1, 1, 4, 4]);
      expect(Array.from(y.data)).toEqual([0, 0, 0, 0, 0, 2, -4, 0, 0, 6, -8, 0, 0, 0, 0, 0]);
    } finally {
      session.delete();
    }
  });
});
