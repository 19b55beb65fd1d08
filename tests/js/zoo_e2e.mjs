// One model end to end through the CLI, against onnxruntime-node: the check that the zoo subset test
// (zoo_models.test.mjs) and the coverage run over the torchvision zoo (scripts/coverage-zoo.mjs) share.
//   float:     `run --quant off` vs onnxruntime-node on the float model twice, graph optimisations on and off
//              (two valid float32 evaluations), every output of every sample: max|a - b| / max|b| of ours vs
//              the nearer of the two runs (worst sample) at most FLOAT_TOL or at most the same error between
//              the two runs (onnxruntime's own spread), or where it is beyond both, ours within FLOAT64_RATIO of
//              onnxruntime's error against the exporter's float64 forward; a detector's post-processed outputs are compared as
//              sets (rows matched by label and box, then every per-detection output compared in that order)
//   calibrate: `calibrate --qdq`: the calibrated model and its QuantizeLinear/DequantizeLinear twin
//   quant:     `run --quant on` on the calibrated model vs onnxruntime-node running the Q/DQ twin (the
//              same quantizers as float QuantizeLinear/DequantizeLinear arithmetic with graph optimisations
//              off, and all on: Q/DQ fused into integer kernels). Rounding decisions flip where two float
//              evaluations differ in the last bits, so the yardstick is onnxruntime's own spread: per output,
//              1 - cosine (worst sample) of ours vs the nearer of those two runs must be at most 1 - cosine
//              between them, or below FLIP_SHARE of what quantization itself changes (1 - cosine of
//              onnxruntime's unoptimised Q/DQ run vs its float run), or else explained by a rounding tie: on
//              every sample the first quantizer where ours parts from onnxruntime rounds, in the elements
//              that differ, inputs on either side of a boundary no further apart than onnxruntime's own
//              float spread there (the largest difference at that input between its unoptimised run and
//              its other valid evaluations, tie_origin.mjs's ONNXRUNTIME_EVALUATIONS). The outputs must be finite where onnxruntime's are; outputs whose size changes
//              (detections) are recorded as NaN and not judged
//   sweep:     `get-sensitivity-of-nodes -n activation` on a few activation calibration nodes, one sample:
//              every requested node has a row (a detector whose detection count changes has NaN metrics)
import fs from 'node:fs';
import path from 'node:path';
import * as ort from 'onnxruntime-node';
import { cli } from './cli_fixture.mjs';
import { decodeNpy, FLOAT64_RATIO, loadPtqModule, relError } from './helpers.mjs';
import { cosine } from './quant_oracle.mjs';
import { divergences, feedsOf } from './tie_origin.mjs';

export const FLOAT_TOL = 1e-4;
export const FLIP_SHARE = 0.01;

// graphOptimizationLevel 'disabled' for Q/DQ models: QuantizeLinear/DequantizeLinear evaluated as written
// (float arithmetic, as the fake-quant executor), not fused into integer kernels.
async function ortOutputs(model, dataDir, { optimize = true } = {}) {
  const session = await ort.InferenceSession.create(model, { intraOpNumThreads: 1, interOpNumThreads: 1, logSeverityLevel: 3,
    ...(optimize ? {} : { graphOptimizationLevel: 'disabled' }) });
  const out = [];
  for (const feeds of feedsOf(dataDir)) {
    const r = await session.run(feeds);
    out.push(session.outputNames.map((n) => ({ name: n, dims: r[n].dims, data: r[n].data })));
  }
  return out;
}

// DIR/sample_<k>/<i>.npy written by `run`: [sample][output] = {dims, data}.
function runOutputs(dir) {
  const samples = fs.readdirSync(dir).filter((d) => d.startsWith('sample_')).sort((a, b) => Number(a.slice(7)) - Number(b.slice(7)));
  return samples.map((s) => {
    const files = fs.readdirSync(path.join(dir, s)).filter((f) => f.endsWith('.npy')).sort((a, b) => parseInt(a, 10) - parseInt(b, 10));
    return files.map((f) => decodeNpy(fs.readFileSync(path.join(dir, s, f))));
  });
}

const num = (v) => Number(v);

// Rows of a detector's outputs matched as sets: theirs[i] ~ ours[perm[i]] (same label, nearest box and
// score), or a reason when the counts differ. boxes/scores/labels are outputs 0/1/2 (zoo_models.py).
export function matchDetections(ours, theirs) {
  const n = theirs[0].dims[0];
  if (ours[0].dims[0] !== n) return { reason: `${ours[0].dims[0]} detections, onnxruntime ${n}` };
  const box = (o, i) => Array.from(o[0].data.subarray(i * 4, i * 4 + 4), num);
  let scale = 1e-6;
  for (const v of theirs[0].data) scale = Math.max(scale, Math.abs(v));
  const used = new Set();
  const perm = [];
  for (let i = 0; i < n; i++) {
    const b = box(theirs, i);
    let best = -1;
    let bestCost = Infinity;
    for (let j = 0; j < n; j++) {
      if (used.has(j) || num(ours[2].data[j]) !== num(theirs[2].data[i])) continue;
      const c = box(ours, j).reduce((s, v, k) => Math.max(s, Math.abs(v - b[k])), 0) / scale
        + Math.abs(num(ours[1].data[j]) - num(theirs[1].data[i]));
      if (c < bestCost) { bestCost = c; best = j; }
    }
    if (best < 0) return { reason: `detection ${i} (label ${theirs[2].data[i]}) has no match` };
    used.add(best);
    perm.push(best);
  }
  return { perm };
}

// Rows of `o` (first dimension = detections) in the order `perm`.
function permuteRows(o, perm) {
  const n = o.dims[0];
  const row = n ? o.data.length / n : 0;
  const out = new o.data.constructor(o.data.length);
  perm.forEach((j, i) => out.set(o.data.subarray(j * row, (j + 1) * row), i * row));
  return out;
}

// The data of each output of `ours` with a detector's rows in the order of `theirs` (outputs whose
// first dimension is the detection count), or {reason} when the detections do not match as sets.
export function alignDetections(ours, theirs) {
  const m = matchDetections(ours, theirs);
  if (m.reason) return m;
  return { data: ours.map((o, i) => (theirs[i].dims[0] === theirs[0].dims[0] ? permuteRows(o, m.perm) : o.data)) };
}

// Per output, the worst over samples of `distance` from ours to the nearer of onnxruntime's two valid
// evaluations ("deviation"), to the first of them ("first"), and between the two ("spread"): the
// yardstick of the float and the quant checks alike. Each run: per sample, its outputs' data in the
// first run's detection order, or null where its detections do not match the first run's (ours: NaN
// throughout; the second run: only the first run counts, and the spread is NaN).
function againstTwoRuns(names, ours, first, second, distance) {
  const rows = names.map((name) => ({ name, deviation: 0, first: 0, spread: 0 }));
  first.forEach((f, k) => rows.forEach((r, i) => {
    const toFirst = ours[k] ? distance(ours[k][i], f[i]) : NaN;
    r.first = Math.max(r.first, toFirst);
    r.deviation = Math.max(r.deviation, Math.min(toFirst, ours[k] && second[k] ? distance(ours[k][i], second[k][i]) : Infinity));
    r.spread = Math.max(r.spread, second[k] ? distance(second[k][i], f[i]) : NaN);
  }));
  return rows;
}

const floatDistance = (a, b) => (b.length ? relError(a, b) : 0);

// Ours vs onnxruntime's optimised run `theirs` and its unoptimised run `unoptimised`, max relative error
// per output (againstTwoRuns: "first" is the optimised run); detections as sets, matched to `theirs`.
export function compareOutputs(ours, theirs, unoptimised, { detection = false } = {}) {
  const inOrder = (run, k) => (detection ? alignDetections(run[k], theirs[k]) : { data: run[k].map((o) => o.data) });
  const mine = [];
  for (let k = 0; k < theirs.length; k++) {
    if (ours[k].length !== theirs[k].length) throw new Error(`sample ${k}: ${ours[k].length} outputs, onnxruntime ${theirs[k].length}`);
    theirs[k].forEach((t, i) => {
      const o = ours[k][i];
      if (o.dims.join('x') !== t.dims.join('x')) throw new Error(`sample ${k} ${t.name}: shape ${o.dims} vs onnxruntime ${t.dims}`);
    });
    const aligned = inOrder(ours, k);
    if (aligned.reason) return { failure: `sample ${k}: ${aligned.reason}` };
    mine.push(aligned.data);
  }
  const second = theirs.map((_, k) => inOrder(unoptimised, k).data ?? null);
  return { outputs: againstTwoRuns(theirs[0].map((o) => o.name), mine, theirs.map((t) => t.map((o) => o.data)), second, floatDistance) };
}

// Which rule passes a float output (a row of compareOutputs): within FLOAT_TOL of onnxruntime's optimised
// run (null), of its unoptimised run ("unopt"), or no further from the nearer run than the two runs are
// from each other ("spread"); undefined when none does (the float64 judge decides).
export function floatRule(r) {
  if (r.first <= FLOAT_TOL) return null;
  if (r.deviation <= FLOAT_TOL) return 'unopt';
  return r.deviation <= r.spread ? 'spread' : undefined;
}

// Per output, the worst over samples of each engine's error against the float64 outputs the exporter
// wrote (DIR/<output name>/<k>.npy): {name: {ours, onnxruntime}}.
function againstFloat64(ours, theirs, dir) {
  const errors = {};
  theirs.forEach((t, k) => t.forEach((o, i) => {
    const exact = decodeNpy(fs.readFileSync(path.join(dir, o.name, `${k}.npy`))).data;
    const e = errors[o.name] ?? (errors[o.name] = { ours: 0, onnxruntime: 0 });
    e.ours = Math.max(e.ours, relError(ours[k][i].data, exact));
    e.onnxruntime = Math.max(e.onnxruntime, relError(o.data, exact));
  }));
  return errors;
}

async function step(result, name, fn) {
  const t0 = performance.now();
  try {
    result[name] = { ...(await fn()), seconds: (performance.now() - t0) / 1000 };
  } catch (e) {
    result[name] = { error: String(e.message || e).slice(0, 2000), seconds: (performance.now() - t0) / 1000 };
  }
  return !result[name].error;
}

async function cliOk(args) {
  const r = await cli(args);
  if (r.code !== 0) throw new Error(`ptqscope ${args[0]} exited ${r.code}: ${(r.stderr || r.stdout).trim().split('\n').slice(0, 4).join('\n')}`);
  return r;
}

// Up to `count` activation calibration nodes of a calibrated model, evenly spaced in model order.
export async function activationNodes(model, count) {
  const ptq = await loadPtqModule();
  const session = new ptq.Session();
  try {
    const s = session.loadModel(fs.readFileSync(model));
    const acts = (typeof s === 'string' ? JSON.parse(s) : s).calibrations.filter((c) => c.kind === 'feature').map((c) => c.name);
    if (acts.length <= count) return acts;
    return Array.from({ length: count }, (_, i) => acts[Math.round((i * (acts.length - 1)) / (count - 1))]);
  } finally {
    session.delete?.();
  }
}

// The whole check of one model entry ({name, model, data, detection}) in workDir: a result object
// with float / calibrate / quant / sweep steps (each with seconds, and error when it failed) and `pass`.
export async function checkModel(entry, workDir, { sweepNodes = 4, workers = 1 } = {}) {
  fs.mkdirSync(workDir, { recursive: true });
  const result = { name: entry.name };
  const calibrated = path.join(workDir, 'calibrated_model.onnx');
  const qdq = path.join(workDir, 'qdq_model.onnx');
  let floatRef = null;
  const floatOk = await step(result, 'float', async () => {
    const out = path.join(workDir, 'float');
    fs.rmSync(out, { recursive: true, force: true });
    await cliOk(['run', entry.model, entry.data, '--quant', 'off', '--out', out]);
    const theirs = await ortOutputs(entry.model, entry.data);
    floatRef = theirs;
    // A reference of zeros (or no detections) would make the comparison empty.
    theirs.forEach((t, k) => t.forEach((o) => {
      if (!o.data.some((v) => Number(v) !== 0)) throw new Error(`sample ${k}: onnxruntime's ${o.name} is all zero or empty: nothing to compare`);
    }));
    const ours = runOutputs(out);
    const cmp = compareOutputs(ours, theirs, await ortOutputs(entry.model, entry.data, { optimize: false }), { detection: entry.detection });
    if (cmp.failure) throw new Error(cmp.failure);
    for (const r of cmp.outputs) r.rule = floatRule(r);
    const beyond = cmp.outputs.filter((r) => r.rule === undefined);
    // Two float32 evaluations of a deep network may drift apart beyond FLOAT_TOL; then the exact value
    // decides: an output passes when ours is within FLOAT64_RATIO of onnxruntime's error against float64.
    const exact = beyond.length && entry.float64 ? againstFloat64(ours, theirs, entry.float64) : null;
    for (const r of beyond) if (exact && exact[r.name].ours <= FLOAT64_RATIO * exact[r.name].onnxruntime) r.rule = 'float64';
    const bad = beyond.filter((r) => r.rule === undefined);
    if (bad.length) {
      throw new Error(`outputs beyond ${FLOAT_TOL} of onnxruntime and beyond its own spread: ${bad.map((r) => `${r.name} ${r.first.toExponential(2)}`
        + ` (nearer run ${r.deviation.toExponential(2)}, spread ${r.spread.toExponential(2)}${exact
          ? `; against float64: ours ${exact[r.name].ours.toExponential(2)}, onnxruntime ${exact[r.name].onnxruntime.toExponential(2)}` : ''})`).join(', ')}`);
    }
    return { max_rel_error: Math.max(...cmp.outputs.map((r) => r.first)), outputs: cmp.outputs, ...(exact ? { float64: exact } : {}) };
  });
  const calOk = await step(result, 'calibrate', async () => {
    fs.rmSync(calibrated, { force: true });
    fs.rmSync(qdq, { force: true });
    await cliOk(['calibrate', entry.model, entry.data, '--out', calibrated, '--qdq', qdq]);
    return { activations: (await activationNodes(calibrated, Infinity)).length };
  });
  if (calOk) {
    await step(result, 'quant', async () => {
      const out = path.join(workDir, 'quant');
      fs.rmSync(out, { recursive: true, force: true });
      await cliOk(['run', calibrated, entry.data, '--quant', 'on', '--out', out]);
      const ours = runOutputs(out);
      const theirs = await ortOutputs(qdq, entry.data, { optimize: false });
      const fused = await ortOutputs(qdq, entry.data);
      // Per output, worst over samples, as 1 - cosine: ours vs the nearer of onnxruntime's two Q/DQ runs
      // ("deviation"), its fused run vs its unoptimised one ("spread"), and the unoptimised run vs its float
      // run ("quantization").
      const distance = (a, b) => (a.length === b.length ? (a.length ? 1 - cosine(a, b) : 0) : NaN);
      // Each run's outputs as float64 arrays, a detector's rows in the order of onnxruntime's Q/DQ run
      // (null where the detections differ: another count or label after quantization, not judged).
      const asRef = (run, k) => {
        if (!entry.detection) return run[k].map((o) => Float64Array.from(o.data, num));
        const a = alignDetections(run[k], theirs[k]);
        return a.reason ? null : a.data.map((d) => Float64Array.from(d, num));
      };
      theirs.forEach((t, k) => t.forEach((o, i) => {
        const b = o.data;
        const mine = ours[k][i].data;
        if (mine.length === b.length && mine.some((v, j) => !Number.isFinite(num(v)) && Number.isFinite(num(b[j])))) {
          throw new Error(`sample ${k} ${o.name}: non-finite values where onnxruntime's are finite`);
        }
      }));
      const [a, b, f, q] = [ours, theirs, fused, floatRef].map((run) => run && theirs.map((_, k) => asRef(run, k)));
      const rows = againstTwoRuns(theirs[0].map((o) => o.name), a, b, f, distance).map(({ name, deviation, spread }, i) => ({
        name, deviation, spread, quantization: q ? Math.max(0, ...b.map((t, k) => (q[k] ? distance(t[i], q[k][i]) : NaN))) : 0,
      }));
      const bad = rows.filter((r) => {
        const allowed = [r.spread, FLIP_SHARE * r.quantization].filter(Number.isFinite);
        return Number.isFinite(r.deviation) && allowed.length && r.deviation > Math.max(...allowed);
      });
      if (!bad.length) return { outputs: rows };
      // Beyond onnxruntime's spread: legitimate only if, on every sample, ours first parts from it at a
      // rounding tie (tie_origin.mjs), which onnxruntime's runs all decided the same way.
      const origins = await divergences(fs.readFileSync(calibrated), fs.readFileSync(qdq), entry.data);
      const explained = origins.every((d) => d === null || d.tie) && origins.some((d) => d?.tie);
      if (!explained) {
        throw new Error(`outputs off onnxruntime's Q/DQ run by more than its own spread: ${bad.map((r) =>
          `${r.name} 1-cos ${r.deviation.toExponential(2)}, spread ${r.spread.toExponential(2)}, quantization ${r.quantization.toExponential(2)}`).join('; ')}`
          + `; first differences: ${origins.map((d, k) => `sample ${k}: ${d ? `${d.quantizer} (${d.differing} of ${d.size}${d.tie ? ', a tie' : `: ${d.why.join('; ')}`})` : 'none'}`).join('; ')}`);
      }
      return { outputs: rows, ties: origins };
    });
    await step(result, 'sweep', async () => {
      const nodes = await activationNodes(calibrated, sweepNodes);
      const json = path.join(workDir, 'sweep.json');
      fs.rmSync(json, { force: true });
      await cliOk(['get-sensitivity-of-nodes', calibrated, entry.data, '-n', 'activation', '-d', '1', '-m', "['cosine-similarity','mse']",
        '-i', JSON.stringify(nodes).replaceAll('"', "'"), '--json', json, '--workers', String(workers), '--quiet']);
      const rows = JSON.parse(fs.readFileSync(json, 'utf8')).sensitivity.activation;
      const names = Object.keys(rows);
      const missing = nodes.filter((n) => !names.includes(n));
      if (missing.length) throw new Error(`no sensitivity row for ${missing.join(', ')}`);
      return { nodes: nodes.length };
    });
  }
  result.pass = floatOk && calOk && !result.quant?.error && !result.sweep?.error;
  return result;
}
