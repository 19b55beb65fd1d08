// A small calibrated model with an op the core does not run (docs/compatibility.md, "When an op is
// missing"): x [1, 2, 3, 3] -> x_HzCalibration -> Conv (w [2, 2, 1, 1] through w_HzCalibration,
// per-channel) -> FancyOp (domain com.example) -> y, and two calibration samples. Shared by the CLI and
// the page tests.
import fs from 'node:fs';
import path from 'node:path';
import { encodeNpy } from '../../web/cli/lib/npy.mjs';
import { buildModel } from './onnx_builder.mjs';

// The weight: out channel 0 = [0.5, -1.25], out channel 1 = [2, -0.25] (max |w| 1.25 and 2, smallest
// non-zero |w| 0.5 and 0.25 per row, by hand).
export const WEIGHT = [0.5, -1.25, 2, -0.25];
export const UNSUPPORTED = "FancyOp (domain 'com.example', node 'fancy')";

export function unsupportedOpModel() {
  return buildModel({
    opsets: [['', 17], ['horizon', 1], ['com.example', 1]],
    nodes: [
      { name: 'x_HzCalibration', op: 'HzCalibration', domain: 'horizon', inputs: ['x'], outputs: ['x_cal'],
        attrs: [{ name: 'thresholds', floats: [2] }, { name: 'qtype', s: 'int8' }] },
      { name: 'w_HzCalibration', op: 'HzCalibration', domain: 'horizon', inputs: ['w'], outputs: ['w_cal'],
        attrs: [{ name: 'thresholds', floats: [1.25, 2] }, { name: 'axis', i: 0 }, { name: 'qtype', s: 'int8' }] },
      { name: 'conv', op: 'Conv', inputs: ['x_cal', 'w_cal'], outputs: ['c'] },
      { name: 'fancy', op: 'FancyOp', domain: 'com.example', inputs: ['c'], outputs: ['y'] },
    ],
    initializers: [{ name: 'w', dims: [2, 2, 1, 1], floats: WEIGHT }],
    inputs: [{ name: 'x', dims: [1, 2, 3, 3] }],
    outputs: [{ name: 'y' }],
  });
}

// Writes DIR/fancy.onnx and DIR/calibration_data/x/{0,1}.npy -> {model, data}.
export function writeUnsupportedOpModel(dir) {
  const model = path.join(dir, 'fancy.onnx');
  fs.writeFileSync(model, unsupportedOpModel());
  const data = path.join(dir, 'calibration_data');
  fs.mkdirSync(path.join(data, 'x'), { recursive: true });
  for (let k = 0; k < 2; ++k) {
    const values = Float32Array.from({ length: 18 }, (_, i) => ((i * 7 + k * 3) % 11) / 5 - 1);
    fs.writeFileSync(path.join(data, 'x', `${k}.npy`), encodeNpy('float32', [1, 2, 3, 3], values));
  }
  return { model, data };
}
