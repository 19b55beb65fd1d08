// (c) Fake-quant conformance: every calibrated fixture (HzCalibration nodes, made by ptq_calibrate)
// run by our wasm executor as stored (calibration nodes ON) vs onnxruntime running the same graph
// with each HzCalibration rewritten as QuantizeLinear -> DequantizeLinear (quant/hz_to_qdq.h, the
// manifest's `qdq_model`).
//
// Our executor on the QDQ model (our QuantizeLinear/DequantizeLinear kernels) must equal our executor
// on the calibrated model bit for bit: that pins the rewrite's semantics exactly. Against
// onnxruntime, every engine computes round_half_even(x / s) in float32, so differences come only from
// float summation order in Conv/Gemm/..., which can move a value across a rounding boundary of the
// next quantizer (a one-step "flip"); flips propagate and accumulate with depth. How far two valid
// evaluations drift apart that way is measured, not assumed: onnxruntime's own spread is the largest
// distance between any two of its evaluations of the QDQ model: onnxruntime-node and
// onnxruntime-web (wasm backend), each with graph optimisations off and at level 'basic' (constant
// folding, QDQ propagation: float semantics kept), and onnxruntime-node fully optimised (level 'all')
// with its QDQ fusions switched off (session option disable_quant_qdq: the quantizers stay as they
// are; the convolutions run by its NCHWc kernels, another summation order); per fixture, over the
// compared samples, for each of the first LAYERS quantized layers and the graph outputs, by relError (helpers.mjs:
// max|a-b| / max|b|) and by the fraction of elements off by more than 1e-4 and by more than 10 % of
// the tensor's largest magnitude (the evaluations: tie_origin.mjs ONNXRUNTIME_REFERENCE and
// ONNXRUNTIME_EVALUATIONS). Ours against the reference (onnxruntime-node, optimisations off)
// must stay within that spread: for the graph outputs on all three measures, for the first layers
// on the fractions of elements off (how many rounding decisions differ; a layer's relError is the
// size of the one step that flipped, which depends only on which element it was). relErrors are
// compared above FLOAT_NOISE: below it two evaluations differ only by float rounding (a flip moves a
// value by a whole quantization step, at least 1/32767 of the range even in int16).
// A graph output beyond that spread (no factor is allowed) passes only if the difference provably
// starts at a rounding tie (tie_origin.mjs): on every compared sample, the first quantizer where ours
// parts from onnxruntime differs only in elements one level apart whose inputs in the two runs lie on
// either side of a rounding boundary and no further apart than onnxruntime's own float spread at that
// quantizer's input (the largest difference there between the reference and the same four other
// evaluations, tie_origin's ONNXRUNTIME_EVALUATIONS, among those with every earlier quantizer output
// identical to the reference's).
// onnxruntime's evaluations all round such an element alike where they happen to compute it alike, so
// their output spread cannot show it; one flipped element at an early layer of a random-weight network
// then spreads to the outputs.
// With its QDQ optimisations on, level 'extended' and above are not a valid evaluation here: their
// QDQ fusions (QLinearConv...) compute in integers with another requantisation, which is not the
// model's ONNX semantics.
// PTQ_REPORT=1 prints the per-fixture spread and our distance.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES, loadManifest, loadPtqModule, readCalibrationFolder, relError } from './helpers.mjs';
import { divergences, feedsOf, ONNXRUNTIME_EVALUATIONS, ONNXRUNTIME_REFERENCE, withExtraOutputs } from './tie_origin.mjs';

const LAYERS = 4; // first quantized layers compared element-wise
const FLOAT_NOISE = 2 ** -20; // 8 float32 ulps of the tensor's largest magnitude
const MAX_SAMPLES = 2;

// The first `count` quantized layers: outputs of normal nodes fed by a calibration node, graph order.
function quantizedLayers(graph, count) {
  const calibrated = new Set(graph.nodes.filter((n) => n.calibration).flatMap((n) => n.outputs));
  const outputs = new Set(graph.outputs.map((o) => o.name));
  const layers = [];
  for (const n of graph.nodes) {
    if (n.calibration || !n.inputs.some((i) => calibrated.has(i))) continue;
    const out = n.outputs[0];
    if (out && !outputs.has(out) && graph.values[out]?.dtype === 'float32') layers.push({ node: n.name, tensor: out });
    if (layers.length === count) break;
  }
  return layers;
}

// Fraction of elements differing by more than `tol` of the reference's largest magnitude.
function mismatchFraction(a, b, tol) {
  let ref = 1e-6;
  for (let i = 0; i < b.length; i++) ref = Math.max(ref, Math.abs(b[i]));
  let bad = 0;
  for (let i = 0; i < b.length; i++) if (!(Math.abs(a[i] - b[i]) <= tol * ref)) bad++;
  return bad / b.length;
}

// The distances of one evaluation from the reference, per compared tensor (worst over the samples).
function distance(a, b) {
  return { relError: relError(a, b), flips: mismatchFraction(a, b, 1e-4), off10: mismatchFraction(a, b, 0.1) };
}
const KEYS = ['relError', 'flips', 'off10'];
function worse(into, d) {
  for (const k of KEYS) into[k] = Math.max(into[k] ?? 0, d[k]);
  return into;
}
const fmt = (d) => `relError ${d.relError.toExponential(2)}, flips ${(d.flips * 100).toFixed(3)}%, off>10% ${(d.off10 * 100).toFixed(3)}%`;

const entries = loadManifest().filter((m) => m.kind === 'calibrated');

describe.each(entries.map((e) => [e.name, e]))('%s', (name, entry) => {
  if (!entry.qdq_model) {
    it.skip(`no QDQ rewrite: ${entry.qdq_error}`, () => {});
    return;
  }
  let ptq;
  let session;
  let qdqSession;
  let engines; // onnxruntime's evaluations of the QDQ model (tie_origin.mjs), the reference first
  let layers;
  let sampleCount;
  beforeAll(async () => {
    ptq = await loadPtqModule();
    const bytes = fs.readFileSync(entry.model);
    const probe = new ptq.Session();
    probe.loadModel(bytes);
    layers = quantizedLayers(JSON.parse(probe.graphJson()), LAYERS);
    probe.delete();
    const extra = layers.map((l) => l.tensor);
    session = new ptq.Session();
    session.loadModel(withExtraOutputs(bytes, extra));
    sampleCount = session.loadCalibrationData(readCalibrationFolder(entry.data)).sampleCount;
    const qdqBytes = fs.readFileSync(path.join(FIXTURES, entry.qdq_model));
    qdqSession = new ptq.Session();
    qdqSession.loadModel(qdqBytes);
    qdqSession.loadCalibrationData(readCalibrationFolder(entry.data));
    const qdq = withExtraOutputs(qdqBytes, extra);
    engines = [];
    for (const open of [ONNXRUNTIME_REFERENCE, ...ONNXRUNTIME_EVALUATIONS]) engines.push(await open(qdq));
  });
  afterAll(async () => {
    session?.delete();
    qdqSession?.delete();
    for (const e of engines ?? []) await e.release();
  });

  it('runs bit-identically to its QDQ rewrite in our executor', () => {
    for (let k = 0; k < Math.min(MAX_SAMPLES, sampleCount); k++) {
      session.run(k, 'stored');
      const ours = {};
      for (let i = 0; i < session.outputCount(); i++) {
        const o = session.output(i);
        ours[o.name] = o.data.slice();
      }
      qdqSession.run(k, 'stored');
      expect(qdqSession.outputCount()).toBeGreaterThan(0);
      for (let i = 0; i < qdqSession.outputCount(); i++) {
        const o = qdqSession.output(i);
        const a = new Uint8Array(ours[o.name].buffer, ours[o.name].byteOffset, ours[o.name].byteLength);
        const b = new Uint8Array(o.data.buffer, o.data.byteOffset, o.data.byteLength);
        expect(Buffer.compare(Buffer.from(a), Buffer.from(b)), `${name} sample ${k} output ${o.name}`).toBe(0);
      }
    }
  });

  it("matches onnxruntime-node within onnxruntime's own spread (node / web backend, optimised or not)", async () => {
    expect(layers.length).toBeGreaterThan(0);
    const count = Math.min(MAX_SAMPLES, sampleCount);
    const feeds = feedsOf(entry.data).slice(0, count);
    const tensors = [...layers.map((l) => l.tensor), ...engines[0].outputNames.filter((o) => !layers.some((l) => l.tensor === o))];
    const spread = Object.fromEntries(tensors.map((t) => [t, {}]));
    const ours = Object.fromEntries(tensors.map((t) => [t, {}]));
    for (let k = 0; k < count; k++) {
      const evaluations = [];
      for (const engine of engines) evaluations.push(await engine.runTensors(feeds[k]));
      const [expected] = evaluations;
      session.run(k, 'stored');
      const actual = {};
      for (let i = 0; i < session.outputCount(); i++) {
        const o = session.output(i);
        actual[o.name] = { ...o, data: o.data.slice() };
      }
      for (const t of tensors) {
        expect(actual[t].dims, `${name} sample ${k} ${t}`).toEqual(Array.from(expected[t].dims));
        worse(ours[t], distance(actual[t].data, expected[t].data));
        for (let i = 0; i < evaluations.length; i++) {
          for (let j = i + 1; j < evaluations.length; j++) worse(spread[t], distance(evaluations[j][t].data, evaluations[i][t].data));
        }
      }
    }
    const report = tensors.map((t) => `${t}: onnxruntime spread ${fmt(spread[t])}; ours ${fmt(ours[t])}`);
    if (process.env.PTQ_REPORT) console.log(`${name} (${count} samples)\n  ${report.join('\n  ')}`);
    const beyond = [];
    for (const t of tensors) {
      const isLayer = layers.some((l) => l.tensor === t);
      for (const key of KEYS) {
        if (isLayer && key === 'relError') continue;
        const limit = spread[t][key] + (key === 'relError' ? FLOAT_NOISE : 0);
        const where = `${name} ${t} ${key}: ours ${fmt(ours[t])}; onnxruntime's spread ${fmt(spread[t])}`;
        if (isLayer) expect(ours[t][key], where).toBeLessThanOrEqual(limit);
        else if (!(ours[t][key] <= limit)) beyond.push(where);
      }
    }
    if (!beyond.length) return;
    // An output beyond the spread: only a rounding tie at the first difference may explain it.
    const origins = await divergences(fs.readFileSync(entry.model), fs.readFileSync(path.join(FIXTURES, entry.qdq_model)), entry.data, { count });
    const firstDiffs = origins.map((d, k) => `sample ${k}: ${d ? `${d.quantizer} ${d.differing} of ${d.size}, inputs up to ${d.gap.toExponential(2)} apart, onnxruntime's float spread there ${d.spread?.toExponential(2)}${d.tie ? ' (tie)' : `: ${d.why.join('; ')}`}` : 'no quantizer differs'}`);
    if (process.env.PTQ_REPORT) console.log(`${name}: beyond onnxruntime's spread:\n  ${beyond.join('\n  ')}\n  first differences: ${firstDiffs.join('; ')}`);
    expect(origins.every((d) => d?.tie), `${beyond.join('\n')}\nfirst differences: ${firstDiffs.join('; ')}`).toBe(true);
  });
});
