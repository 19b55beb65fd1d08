// Calibration folders of many samples for the benchmarks that run at the original tool's scale
// (bench-seed, bench-race), generated once into .cache/bench/<what>/<model>_<count>/ (git-ignored):
// flipped, shifted, rescaled and noisy variants of the fixture's own photos, deterministic.
import fs from 'node:fs';
import path from 'node:path';
import { decodeNpy, encodeNpy } from '../web/cli/lib/npy.mjs';
import { REPO_ROOT } from '../web/cli/lib/wasm.mjs';
import { readCalibrationFolder } from '../web/cli/lib/files.mjs';

// A deterministic uniform generator in [0, 1) (a linear congruential one: the samples must not
// change between runs or machines).
function uniform(seed) {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

// Variant k of a photo (NCHW, values in [0, 1] or the fixture's normalised range): mirrored every
// other pair, shifted by a k-dependent offset (edges repeated), brightness and contrast changed and
// noise added; values kept within the photo's own range.
function variant(base, dims, k) {
  const [, channels, height, width] = dims;
  const random = uniform(k + 1);
  const flip = (k >> 1) % 2 === 1;
  const dy = Math.floor(random() * height / 4) - height / 8, dx = Math.floor(random() * width / 4) - width / 8;
  const gain = 0.7 + 0.6 * random(), offset = 0.2 * random() - 0.1;
  let lo = Infinity, hi = -Infinity;
  for (const v of base) {
    lo = Math.min(lo, v);
    hi = Math.max(hi, v);
  }
  const out = new Float32Array(base.length);
  const clamp = (v, top) => Math.min(top, Math.max(0, v));
  const within = (v) => Math.min(Math.max(v, Math.min(lo, 0)), Math.max(hi, 1));
  for (let c = 0; c < channels; c++) {
    for (let y = 0; y < height; y++) {
      const sy = clamp(y + dy, height - 1);
      for (let x = 0; x < width; x++) {
        const sx = clamp(flip ? width - 1 - x - dx : x + dx, width - 1);
        const noise = 0.02 * (random() + random() - 1);
        out[(c * height + y) * width + x] = within(base[(c * height + sy) * width + sx] * gain + offset + noise);
      }
    }
  }
  return out;
}

// The calibration_data folder of the first `count` variants of `dataDir`'s samples (one input, float32
// NCHW), written once into .cache/bench/<what>/<name>_<count>/<input>/.
export function sampleFolder(dataDir, name, count, what) {
  const dir = path.join(REPO_ROOT, '.cache/bench', what, `${name}_${count}`);
  const inputs = fs.readdirSync(dataDir);
  if (inputs.length !== 1) throw new Error(`${dataDir}: one input folder expected, found ${inputs.join(', ')}`);
  const target = path.join(dir, inputs[0]);
  if (fs.existsSync(target) && fs.readdirSync(target).length === count) return dir;
  const photos = readCalibrationFolder(dataDir).map((f) => decodeNpy(f.bytes));
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(target, { recursive: true });
  for (let k = 0; k < count; k++) {
    const { dtype, dims, data } = photos[k % photos.length];
    if (dtype !== 'float32' || dims.length !== 4) throw new Error(`${dataDir}: a float32 NCHW image expected, found ${dtype} ${dims}`);
    fs.writeFileSync(path.join(target, `${String(k).padStart(3, '0')}.npy`), encodeNpy(dtype, dims, variant(data, dims, k)));
  }
  return dir;
}
