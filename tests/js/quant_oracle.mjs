// The onnxruntime oracle of the quantized-model tests (Q/DQ §1.11, QOperator §1.12): element
// fractions, the §4 metrics in float64 (an independent formula, not the core's float32 pairwise sums)
// and their §3.3 aggregation; the agreement of an exported model with ptqscope's run of its configuration.
import { relError, runCopy } from './helpers.mjs';

// The outputs of an onnxruntime session, in its output order.
export async function ortRun(session, inputs) {
  const out = await session.run(inputs);
  return session.outputNames.map((n) => out[n].data);
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
