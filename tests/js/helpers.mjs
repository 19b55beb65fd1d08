// Shared by the Vitest suites: fixture manifest, wasm session helpers, comparison metric.
import fs from 'node:fs';
import path from 'node:path';
import { readCalibrationFolder } from '../../web/cli/lib/files.mjs';
import { decodeNpy } from '../../web/cli/lib/npy.mjs';
import { builtEngines, loadEngine, loadPtqModule, REPO_ROOT } from '../../web/cli/lib/wasm.mjs';

export { REPO_ROOT, builtEngines, decodeNpy, loadPtqModule, readCalibrationFolder };

export const FIXTURES = path.join(REPO_ROOT, '.cache/fixtures');

// The fixture manifest written by scripts/fixtures/make_fixtures.py (paths made absolute).
export function loadManifest() {
  const file = path.join(FIXTURES, 'manifest.json');
  if (!fs.existsSync(file)) {
    throw new Error(`${file} is missing: run /usr/bin/python3 scripts/fixtures/make_fixtures.py (scripts/test.sh does)`);
  }
  const manifest = JSON.parse(fs.readFileSync(file, 'utf8'));
  return manifest.models.map((m) => ({ ...m, model: path.join(FIXTURES, m.model), data: path.join(FIXTURES, m.data) }));
}

// A fixture made only when asked (make_fixtures.py --parts big): its entry, or null when absent.
export function optionalFixture(name) {
  const file = path.join(FIXTURES, 'manifest.json');
  if (!fs.existsSync(file)) return null;
  const m = loadManifest().find((e) => e.name === name);
  return m && fs.existsSync(m.model) ? m : null;
}

export function fixture(name) {
  const m = loadManifest().find((e) => e.name === name);
  if (!m) throw new Error(`fixture ${name} is not in the manifest`);
  return m;
}

// A session with `entry`'s model and calibration data loaded, on `engine` ('wasm' or 'native',
// web/cli/lib/wasm.mjs; default: PTQSCOPE_ENGINE's, wasm in the suites).
export async function openSession(entry, engine = null) {
  const ptq = await (engine ? loadEngine(engine) : loadPtqModule());
  const session = new ptq.Session();
  const summary = session.loadModel(fs.readFileSync(entry.model));
  const data = session.loadCalibrationData(readCalibrationFolder(entry.data));
  return { ptq, session, summary, data };
}

// Runs one sample and returns copies of every output: [{name, dtype, dims, data}].
export function runCopy(session, sample, config) {
  session.run(sample, config);
  const outs = [];
  for (let i = 0; i < session.outputCount(); i++) {
    const o = session.output(i);
    outs.push({ ...o, data: o.data.slice() });
  }
  return outs;
}

// The float accuracy budget (issue 17, docs/compatibility.md): against a float64 evaluation of the same
// model, ours at most FLOAT64_RATIO x onnxruntime-node's error, except below FLOAT64_FLOOR of the
// output's largest magnitude: there both are at the level of rounding the outputs themselves to
// float32 (half an ulp of the largest output is 6e-8 of it), where a ratio compares noise.
export const FLOAT64_RATIO = 1.5;
export const FLOAT64_FLOOR = 1e-6;

// Conformance metric: max|a - b| / max(max|b|, 1e-6), b being the reference (onnxruntime).
// Relative to the output's largest magnitude rather than per element, so values near zero (where
// float reassociation noise dominates) do not blow up the ratio; the 1e-6 floor keeps an all-zero
// reference meaningful (the error is then absolute).
export function relError(a, b) {
  if (a.length !== b.length) throw new Error(`length mismatch: ${a.length} vs ${b.length}`);
  let diff = 0;
  let ref = 0;
  for (let i = 0; i < b.length; i++) {
    const x = Number(a[i]);
    const y = Number(b[i]);
    if (Number.isNaN(x) !== Number.isNaN(y)) return Infinity;
    if (!Number.isNaN(y)) diff = Math.max(diff, Math.abs(x - y));
    ref = Math.max(ref, Math.abs(y));
  }
  return diff / Math.max(ref, 1e-6);
}

// The .npy files of one graph input of a calibration_data folder, in lexicographic order.
export function samplesOf(entry, inputName) {
  const dir = path.join(entry.data, inputName);
  return fs.readdirSync(dir).filter((f) => !f.startsWith('.')).sort()
    .map((f) => ({ file: f, ...decodeNpy(fs.readFileSync(path.join(dir, f))) }));
}

// Deterministic pseudo-random bytes (mulberry32), for corrupt-input tests.
export function randomBytes(count, seed) {
  let s = seed >>> 0;
  const out = new Uint8Array(count);
  for (let i = 0; i < count; i++) {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    out[i] = (t ^ (t >>> 14)) & 0xff;
  }
  return out;
}
