// A model whose graph input is a sequence of tensors (SequenceAt picks one): .npy calibration files
// hold tensors, so every command that feeds the model exits 2 naming the input, never a crash.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli } from './cli_fixture.mjs';
import { buildModel } from './onnx_builder.mjs';
import { encodeNpy } from '../../web/cli/lib/npy.mjs';

let tmp;
let model;
let data;
beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ptqscope-sequence-'));
  model = path.join(tmp, 'sequence_input.onnx');
  fs.writeFileSync(model, buildModel({
    nodes: [{ name: 'pick', op: 'SequenceAt', inputs: ['s', 'index'], outputs: ['y'] }],
    initializers: [{ name: 'index', dims: [], int64s: [0] }],
    inputs: [{ name: 's', dims: [1, 4], sequence: true }],
    outputs: [{ name: 'y', dims: [1, 4] }],
  }));
  data = path.join(tmp, 'calibration_data');
  fs.mkdirSync(path.join(data, 's'), { recursive: true });
  fs.writeFileSync(path.join(data, 's', '0.npy'), encodeNpy('float32', [1, 4], Float32Array.of(1, 2, 3, 4)));
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const MESSAGE = "Model input 's' is a sequence, not a tensor: calibration data (.npy files) can only feed tensor inputs, so this model cannot be run.";

describe('a model with a sequence graph input on the command line', () => {
  for (const args of [['run', '--quant', 'off', '--out', 'run-out'], ['get-sensitivity-of-nodes', '--quiet', '--workers', '1']]) {
    it(`${args[0]} exits 2 naming the input`, async () => {
      const [command, ...rest] = args;
      const r = await cli([command, model, data, ...rest], { cwd: tmp });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(MESSAGE);
      expect(r.stderr).not.toContain('internal error');
    });
  }
});
