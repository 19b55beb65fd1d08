// The onnxruntime oracle of the quantized-model tests (Q/DQ §1.11, QOperator §1.12): element
// fractions, the §4 metrics in float64 (an independent formula, not the core's float32 pairwise sums)
// and their §3.3 aggregation; the agreement of an exported model with ptqscope's run of its configuration.
import { relError, runCopy } from './helpers.mjs';

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
// model (each evaluation of the item is then one engine's pair of runs).
export async function oracleItem(openers, file, feeds, float) {
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
    metrics.push({ mse: aggregate(pairs, mse), cos: aggregate(pairs, cosine) });
  }
  const [expected, ...others] = metrics;
  return {
    ...expected,
    spreadMse: Math.max(0, ...others.map((m) => Math.abs(m.mse - expected.mse))),
    spreadCos: Math.max(0, ...others.map((m) => Math.abs(m.cos - expected.cos))),
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
