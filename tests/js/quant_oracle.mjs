// The onnxruntime oracle of the quantized-model tests (Q/DQ §1.11, QOperator §1.12): element
// fractions, the §4 metrics in float64 (an independent formula, not the core's float32 pairwise sums)
// and their §3.3 aggregation; the agreement of an exported model with ptqscope's run of its configuration.
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { decodeNpy, FIXTURES, FLOAT64_FLOOR, FLOAT64_RATIO, relError, runCopy } from './helpers.mjs';

// The outputs of an onnxruntime session, in its output order.
export async function ortRun(session, inputs) {
  const out = await session.run(inputs);
  return session.outputNames.map((n) => out[n].data);
}

// How many of a loaded model's quantizers are activation and weight quantizers ({activation, weight},
// as a fixture's manifest entry states them).
export function quantizerKinds(summary) {
  const kinds = { activation: 0, weight: 0 };
  for (const c of summary.calibrations) kinds[c.kind === 'weight' ? 'weight' : 'activation']++;
  return kinds;
}

// Fraction of elements differing by more than `tol` of the reference's largest magnitude.
export function offFraction(a, b, tol) {
  let ref = 1e-6;
  for (let i = 0; i < b.length; i++) ref = Math.max(ref, Math.abs(b[i]));
  let bad = 0;
  for (let i = 0; i < b.length; i++) if (!(Math.abs(a[i] - b[i]) <= tol * ref)) bad++;
  return bad / b.length;
}

export function mse(a, b) {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += (a[i] - b[i]) ** 2;
  return s / a.length;
}

export function cosine(a, b) {
  let ab = 0;
  let aa = 0;
  let bb = 0;
  for (let i = 0; i < a.length; i++) {
    ab += a[i] * b[i];
    aa += a[i] * a[i];
    bb += b[i] * b[i];
  }
  return ab / (Math.max(Math.sqrt(aa), 1e-8) * Math.max(Math.sqrt(bb), 1e-8));
}

// §3.3: mean over samples per output, then mean over outputs. perSampleOutputs[k][o] = [reference, variant].
export function aggregate(perSampleOutputs, metric) {
  const outputs = perSampleOutputs[0].length;
  let total = 0;
  for (let o = 0; o < outputs; o++) total += perSampleOutputs.reduce((s, pair) => s + metric(pair[o][0], pair[o][1]), 0) / perSampleOutputs.length;
  return total / outputs;
}

// An exported model (qdq-onnx) against ptqscope's run of the same configuration on every feed:
// onnxruntime-node runs `bytes` with graph optimisation off and at 'basic' (its own spread). Returns
// the largest fraction of elements off by more than 1e-4 of the output's scale (ours vs onnxruntime
// off), onnxruntime's spread on the same measure, and the largest relative error.
export async function exportAgreement(ort, session, bytes, feeds, config) {
  const create = (level) => ort.InferenceSession.create(bytes, { intraOpNumThreads: 1, graphOptimizationLevel: level, logSeverityLevel: 3 });
  const exported = await create('disabled');
  const basic = await create('basic');
  let worst = 0;
  let spread = 0;
  let rel = 0;
  try {
    for (let k = 0; k < feeds.length; k++) {
      const ours = runCopy(session, k, config);
      const a = await ortRun(exported, feeds[k]);
      const b = await ortRun(basic, feeds[k]);
      ours.forEach((out, i) => {
        worst = Math.max(worst, offFraction(out.data, a[i], 1e-4));
        spread = Math.max(spread, offFraction(b[i], a[i], 1e-4));
        rel = Math.max(rel, relError(out.data, a[i]));
      });
    }
  } finally {
    await exported.release();
    await basic.release();
  }
  return { worst, spread, rel };
}

// Per output: the fraction of ptqscope's elements off onnxruntime's reference by more than 1e-4 of
// its scale, and onnxruntime's own spread on the same measure (the largest fraction among its other
// valid evaluations `others`, each a list of outputs). ours: [{name, data}], reference: [data].
export function offAgainstSpread(ours, reference, others) {
  return ours.map((o, i) => ({
    name: o.name,
    size: reference[i].length,
    off: offFraction(o.data, reference[i], 1e-4),
    spread: Math.max(...others.map((s) => offFraction(s[i], reference[i], 1e-4))),
  }));
}

// onnxruntime's sensitivity / leave-one-out item: the metrics (mse, cosine) of the oracle model
// `file` against the float outputs, once per session opener; the first opener's are the expectation,
// the distance of the others' (valid evaluations too) onnxruntime's own spread. `float`: the float
// model's outputs (float[k]: on feeds[k]), or its file, then run by each opener beside the oracle
// model (each evaluation of the item is then one engine's pair of runs). With the item's float64 change
// (float64Variants), each evaluation's metricsOf is returned too (`evaluations`, the first the expectation).
export async function oracleItem(openers, file, feeds, float, exactChange = null) {
  const metrics = [];
  for (const open of openers) {
    const variant = await open(file);
    const floatModel = typeof float === 'string' ? await open(float) : null;
    const pairs = [];
    for (let k = 0; k < feeds.length; k++) {
      const v = await ortRun(variant, feeds[k]);
      const f = floatModel ? await ortRun(floatModel, feeds[k]) : float[k];
      pairs.push(f.map((x, i) => [x, v[i]]));
    }
    await variant.release?.();
    await floatModel?.release?.();
    metrics.push(exactChange ? metricsOf(pairs, exactChange) : { mse: aggregate(pairs, mse), cos: aggregate(pairs, cosine) });
  }
  const [expected, ...others] = metrics;
  return {
    mse: expected.mse,
    cos: expected.cos,
    spreadMse: Math.max(0, ...others.map((m) => Math.abs(m.mse - expected.mse))),
    spreadCos: Math.max(0, ...others.map((m) => Math.abs(m.cos - expected.cos))),
    evaluations: metrics,
  };
}

// How far ptqscope's item may be from `oracle` (oracleItem): onnxruntime's own spread, or where no
// rounding decision flips (spread ~0) float32 rounding of the outputs, which still moves a metric of
// the small quantization error (1e-3 of the mse); the cosine is a float32 near 1 (§4) made of three
// float32 sums and a division, each rounded: it resolves a few ulps of 2^-24 (`cosineUlps`).
export function itemAllowance(oracle, cosineUlps) {
  return {
    mse: Math.max(oracle.spreadMse, 1e-3 * oracle.mse),
    cos: Math.max(oracle.spreadCos, 1e-3 * (1 - oracle.cos)) + cosineUlps * 2 ** -24,
  };
}

// A fixture's variants evaluated in float64 (scripts/fixtures/onnx_float64.py write_variants; the
// folder relative to the fixtures root): name -> its §4 metrics (float64, §3.3's aggregate) and its
// change of the outputs (variant run - float run) per sample and output; and the sample count. Read
// once per folder (a test file judges the same variants in several analyses).
const variantsRead = new Map();
export function float64Variants(relative) {
  if (!variantsRead.has(relative)) variantsRead.set(relative, readFloat64Variants(relative));
  return variantsRead.get(relative);
}
function readFloat64Variants(relative) {
  const folder = path.join(FIXTURES, relative);
  const file = JSON.parse(fs.readFileSync(path.join(folder, 'items.json'), 'utf8'));
  const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const of = (perSample, key) => mean(file.outputs.map((_, o) => mean(perSample.map((outputs) => outputs[o][key]))));
  const change = (i) => Array.from({ length: file.samples }, (_, k) => file.outputs.map((o) => decodeNpy(fs.readFileSync(path.join(folder, String(i), o, `${k}.npy`))).data));
  return {
    samples: file.samples,
    items: new Map(file.items.map((item, i) => [item.name, { mse: of(item.metrics, 'mse'), cos: of(item.metrics, 'cosine'), change: change(i) }])),
  };
}

// The error of an evaluation's change of the outputs (item run - float run) against the float64 change:
// per output, the root mean square over its elements and the samples. pairs[k][o] = [float, item].
export function changeErrors(pairs, exactChange) {
  return exactChange[0].map((_, o) => {
    let sum = 0;
    let n = 0;
    pairs.forEach((outputs, k) => {
      const [float, item] = outputs[o];
      const x = exactChange[k][o];
      for (let j = 0; j < x.length; j++) sum += (item[j] - float[j] - x[j]) ** 2;
      n += x.length;
    });
    return Math.sqrt(sum / n);
  });
}

// The float64 change is the variant's that the evaluations ran (a wrong file or variant would leave every
// run far from it, and comparisons with it meaningless): on every sample and output, the nearest
// evaluation's change error (metricsOf) relative to the change's root mean square; the largest of those,
// at most CHANGE_AGREEMENT. Float noise moves the smallest changes by up to 3.5 % (measured: the
// HardSigmoid item of the mobilenet_v3_small fixture, which moves few values); another variant's
// change is off by its whole size. An output the variant does not reach has no change and no error.
export const CHANGE_AGREEMENT = 0.1;
export function changeDisagreement(evaluations, exactChange) {
  let worst = 0;
  exactChange.forEach((outputs, k) => outputs.forEach((x, o) => {
    const size = Math.sqrt(x.reduce((a, v) => a + v * v, 0) / x.length);
    const nearest = Math.min(...evaluations.map((m) => m.samples[k].change[o]));
    worst = Math.max(worst, size ? nearest / size : nearest ? Infinity : 0);
  }));
  return worst;
}

// The float budget (helpers.mjs) on the outputs' change, per output: ours' error (changeErrors) at
// most FLOAT64_RATIO x onnxruntime's, or at most FLOAT64_FLOOR of the output's largest magnitude
// (`scales`), the level of rounding the outputs to float32. -> per output {ratio, relative, within}.
export function changeBudget(ours, theirs, scales) {
  return ours.map((c, o) => {
    const ratio = c === 0 ? 0 : c / theirs[o];
    const relative = c / scales[o];
    return { ratio, relative, within: ratio <= FLOAT64_RATIO || relative <= FLOAT64_FLOOR };
  });
}
export const describeBudget = (budget) => budget.map((b) => `${b.ratio.toFixed(2)}x (${b.relative.toExponential(1)} of the output)`).join(', ');

// §4 metrics (float64) of [reference, variant] output pairs per sample: aggregated (§3.3) and per sample;
// and the error of the outputs' change against the float64 change (changeErrors).
export const metricsOf = (pairs, exactChange) => ({
  mse: aggregate(pairs, mse),
  cos: aggregate(pairs, cosine),
  samples: pairs.map((p, k) => ({ mse: aggregate([p], mse), cos: aggregate([p], cosine), change: changeErrors([p], [exactChange[k]]) })),
});

// §4 in float32 (numpy's arithmetic on float32 arrays): every operation rounded to float32, sums in
// numpy's pairwise order (blocks of 128, eight accumulators).
const f32 = Math.fround;
function pairwise32(g, begin, n) {
  if (n < 8) {
    let res = 0;
    for (let i = 0; i < n; i++) res = f32(res + g(begin + i));
    return res;
  }
  if (n <= 128) {
    const r = [];
    for (let j = 0; j < 8; j++) r.push(g(begin + j));
    let i = 8;
    for (; i < n - (n % 8); i += 8) for (let j = 0; j < 8; j++) r[j] = f32(r[j] + g(begin + i + j));
    let res = f32(f32(f32(r[0] + r[1]) + f32(r[2] + r[3])) + f32(f32(r[4] + r[5]) + f32(r[6] + r[7])));
    for (; i < n; i++) res = f32(res + g(begin + i));
    return res;
  }
  let n2 = Math.floor(n / 2);
  n2 -= n2 % 8;
  return f32(pairwise32(g, begin, n2) + pairwise32(g, begin + n2, n - n2));
}
export function mse32(a, b) {
  return f32(pairwise32((i) => { const d = f32(a[i] - b[i]); return f32(d * d); }, 0, a.length) / a.length);
}
export function cosine32(a, b) {
  const norm = (x) => f32(Math.sqrt(pairwise32((i) => f32(x[i] * x[i]), 0, x.length)));
  const dot = pairwise32((i) => f32(a[i] * b[i]), 0, a.length);
  return f32(dot / f32(Math.max(norm(a), f32(1e-8)) * Math.max(norm(b), f32(1e-8))));
}
// §3.3 in float32: per output the mean over samples, then the mean over outputs (no NaN here).
export function aggregate32(perSampleOutputs, metric) {
  const perOutput = perSampleOutputs[0].map((_, o) => {
    const values = perSampleOutputs.map((pair) => metric(pair[o][0], pair[o][1]));
    return f32(pairwise32((i) => values[i], 0, values.length) / values.length);
  });
  return f32(pairwise32((i) => perOutput[i], 0, perOutput.length) / perOutput.length);
}

// A run configuration of `calibrations` (a loaded model's): §3.2's item of `quantizer` (sensitivity: it
// alone ON; leave-one-out: every quantizer but it), or with `analysis` null every quantizer OFF.
export function itemConfig(calibrations, quantizer, analysis) {
  const on = (c) => (analysis === 'sensitivity' ? c.name === quantizer : analysis === 'leave_one_out' && c.name !== quantizer);
  return { on: calibrations.map((c) => (on(c) ? 1 : 0)), qtype: calibrations.map(() => '') };
}

// Our float runs (every quantizer OFF) of the first `count` samples: per sample, the outputs' data.
export function ourFloatRuns(session, calibrations, count) {
  const off = itemConfig(calibrations, null, null);
  return Array.from({ length: count }, (_, k) => runCopy(session, k, off).map((o) => o.data));
}

// Our runs of an item (itemConfig) against `floats` (ourFloatRuns), as [[float, item] per output] per sample.
export function ourItemRuns(session, calibrations, quantizer, analysis, floats) {
  const config = itemConfig(calibrations, quantizer, analysis);
  return floats.map((float, k) => runCopy(session, k, config).map((out, i) => [float[i], out.data]));
}

// The largest magnitude of an output (the scale changeBudget's floor is relative to).
export const largestMagnitude = (x) => x.reduce((a, v) => Math.max(a, Math.abs(v)), 0);

// One oracle item judged with no allowance, from our runs (ourItemRuns), onnxruntime's evaluations
// (oracleItem with the item's float64 change) and that change: the float32 metrics the analysis must
// report (§4 of our outputs, bit for bit), how far the nearest evaluation's change lies from the
// float64 change (changeDisagreement), whether our float64 metrics are within onnxruntime's spread of
// its expectation, and where they are not, the float budget on the outputs' change against onnxruntime's
// reference (changeBudget, per output, each evaluation's worst sample).
export function judgeItem(runs, expected, change) {
  const ours = metricsOf(runs, change);
  const worst = (m) => m.samples.reduce((w, x) => x.change.map((c, i) => Math.max(c, w[i] ?? 0)), []);
  const scales = runs[0].map((_, i) => Math.max(...runs.map((outputs) => largestMagnitude(outputs[i][0]))));
  const withinSpread = Math.abs(ours.mse - expected.mse) <= expected.spreadMse && Math.abs(ours.cos - expected.cos) <= expected.spreadCos;
  return {
    mse32: aggregate32(runs, mse32),
    cos32: aggregate32(runs, cosine32),
    disagreement: changeDisagreement([ours, ...expected.evaluations], change),
    withinSpread,
    budget: withinSpread ? null : changeBudget(worst(ours), worst(expected.evaluations[0]), scales),
  };
}

// The analysis `row` of the item named `what` reports exactly §4 in float32 of our outputs (mse32 and
// cos32: aggregate32 of our runs).
export function expectReportedMetrics(what, row, mse32value, cos32value) {
  expect(Math.fround(row.mse), `${what}: reported mse vs §4 in float32 of our outputs`).toBe(mse32value);
  expect(Math.fround(row['cosine-similarity']), `${what}: reported cosine vs §4 in float32 of our outputs`).toBe(cos32value);
}

// The float64 change is the one the evaluations ran (changeDisagreement at most CHANGE_AGREEMENT).
export function expectChangeAgreement(what, disagreement) {
  expect(disagreement, `${what}: every evaluation's change is off the float64 change`).toBeLessThanOrEqual(CHANGE_AGREEMENT);
}

// judgeItem's verdict asserted for the analysis `row` of the item named `what`.
export function expectItemJudged(what, row, judged) {
  expectReportedMetrics(what, row, judged.mse32, judged.cos32);
  expectChangeAgreement(what, judged.disagreement);
  if (judged.withinSpread) return;
  if (process.env.PTQ_REPORT) console.log(`  ${what} beyond the spread: the outputs' change against float64, ours / onnxruntime's error: ${describeBudget(judged.budget)}`);
  expect(judged.budget.every((b) => b.within), `${what}: beyond onnxruntime's spread, the outputs' change against float64, ours / onnxruntime's error: ${describeBudget(judged.budget)}`).toBe(true);
}
