// (c) Fake-quant conformance: every calibrated fixture (HzCalibration nodes, made by ptq_calibrate)
// run by our wasm executor as stored (calibration nodes ON) vs onnxruntime-node running the same graph
// with each HzCalibration rewritten as QuantizeLinear -> DequantizeLinear (quant/hz_to_qdq.h, the
// manifest's `qdq_model`).
//
// Our executor on the QDQ model (our QuantizeLinear/DequantizeLinear kernels) must equal our executor
// on the calibrated model bit for bit: that pins the rewrite's semantics exactly. Against
// onnxruntime, both sides compute round_half_even(x / s) in float32, so differences come only from
// float summation order in Conv/Gemm/..., which can move a value across a rounding boundary of the
// next quantizer (a one-step "flip"); flips propagate and accumulate with depth (the fixtures are
// random-weight networks with a quantizer on nearly every activation). Hence:
//  - the first quantized layer (first node fed by calibration nodes, before any further
//    quantization) within relError 1e-5 (helpers.mjs: max|a-b| / max|b|);
//  - the next LAYERS-1 layers: at most FLIP_FRACTION of the elements off by more than 1e-4 of the
//    tensor's largest magnitude (measured: <= 0.24 %);
//  - graph outputs within OUTPUT_LIMITS[model], set at ~2-5x the values measured on the first two
//    samples (noted beside each). For the detection heads the max error is dominated by a few
//    saturated elements (PP-OCR's sigmoid map: 0 vs 1 for 0.7 % of pixels), so they bound the
//    fraction of elements off by more than 10 % of the output's range instead.
// onnxruntime runs with graph optimisations disabled: its QDQ fusions (QLinearConv...) would compute
// in integers with a different requantisation, which is not the model's ONNX semantics.
// PTQ_REPORT=1 prints the per-layer numbers.
import fs from 'node:fs';
import path from 'node:path';
import * as ort from 'onnxruntime-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES, loadManifest, loadPtqModule, readCalibrationFolder, relError, samplesOf } from './helpers.mjs';

const TIGHT = 1e-5;
const FLIP_FRACTION = 0.01;
const LAYERS = 4; // first quantized layers compared element-wise
const MAX_SAMPLES = 2;
const OUTPUT_LIMITS = {
  digits_cnn_calibrated: { relError: TIGHT }, // measured 1.6e-7
  digits_cnn_int16_calibrated: { relError: TIGHT }, // int16 activation + per-axis int16 weights (opset 21 QDQ)
  blazeface_128_calibrated: { relError: 1e-3 }, // 2.6e-7 (no flips on these samples)
  shufflenet_v2_x1_0_calibrated: { relError: 1e-3 }, // 5.1e-7 (no flips on these samples)
  resnet18_calibrated: { relError: 0.05 }, // 2.0e-2
  mobilenet_v2_calibrated: { relError: 0.15 }, // 5.0e-2
  mobilenet_v3_small_calibrated: { relError: 0.25 }, // 9.3e-2
  yolov8n_like_calibrated: { relError: 0.6 }, // 0.29 (box_p4)
  ppocr_det_calibrated: { offBy10Percent: 0.03 }, // 0.73 % of the probability map (relError 0.95)
};

// ---- protobuf: add graph outputs to a ModelProto without a protobuf library -------------------
function readVarint(buf, pos) {
  let value = 0;
  let mul = 1;
  for (;;) {
    const b = buf[pos++];
    value += (b & 0x7f) * mul;
    if (b < 0x80) return [value, pos];
    mul *= 128;
  }
}
function varint(n) {
  const out = [];
  while (n >= 0x80) {
    out.push((n % 128) | 0x80);
    n = Math.floor(n / 128);
  }
  out.push(n);
  return Uint8Array.from(out);
}
function field(number, bytes) {
  return Buffer.concat([varint(number * 8 + 2), varint(bytes.length), bytes]);
}
// ValueInfoProto { name = 1; type = 2 { tensor_type = 1 { elem_type = 1 (FLOAT) } } }
function floatOutput(name) {
  const tensorType = Buffer.concat([varint(1 * 8 + 0), varint(1)]);
  return field(12, Buffer.concat([field(1, Buffer.from(name, 'utf8')), field(2, field(1, tensorType))]));
}
// Rewrites ModelProto.graph (field 7) with extra GraphProto.output (field 12) entries appended.
function withExtraOutputs(model, names) {
  const parts = [];
  let pos = 0;
  while (pos < model.length) {
    const start = pos;
    const [tag, p1] = readVarint(model, pos);
    const wire = tag % 8;
    let end;
    if (wire === 0) end = readVarint(model, p1)[1];
    else if (wire === 1) end = p1 + 8;
    else if (wire === 5) end = p1 + 4;
    else if (wire === 2) {
      const [len, p2] = readVarint(model, p1);
      end = p2 + len;
      if (Math.floor(tag / 8) === 7) {
        const graph = Buffer.concat([model.subarray(p2, end), ...names.map(floatOutput)]);
        parts.push(field(7, graph));
        pos = end;
        continue;
      }
    } else throw new Error(`unexpected wire type ${wire} in ModelProto`);
    parts.push(model.subarray(start, end));
    pos = end;
  }
  return Buffer.concat(parts);
}

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

const entries = loadManifest().filter((m) => m.kind === 'calibrated');

describe.each(entries.map((e) => [e.name, e]))('%s', (name, entry) => {
  if (!entry.qdq_model) {
    it.skip(`no QDQ rewrite: ${entry.qdq_error}`, () => {});
    return;
  }
  let ptq;
  let session;
  let qdqSession;
  let reference;
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
    reference = await ort.InferenceSession.create(qdq, {
      intraOpNumThreads: 1, graphOptimizationLevel: 'disabled', logSeverityLevel: 3,
    });
  });
  afterAll(async () => {
    session?.delete();
    qdqSession?.delete();
    await reference?.release();
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

  it('matches onnxruntime on the QDQ rewrite: first layers tightly, outputs within tolerance', async () => {
    expect(layers.length).toBeGreaterThan(0);
    const inputNames = reference.inputNames;
    const inputs = Object.fromEntries(inputNames.map((n) => [n, samplesOf(entry, n)]));
    const count = Math.min(MAX_SAMPLES, sampleCount);
    const limit = OUTPUT_LIMITS[name];
    expect(limit, `no OUTPUT_LIMITS entry for ${name}: measure it (PTQ_REPORT=1) and add one`).toBeDefined();
    for (let k = 0; k < count; k++) {
      const feeds = Object.fromEntries(inputNames.map((n) => [n, new ort.Tensor(inputs[n][k].dtype, inputs[n][k].data, inputs[n][k].dims)]));
      const expected = await reference.run(feeds);
      session.run(k, 'stored');
      const actual = {};
      for (let i = 0; i < session.outputCount(); i++) {
        const o = session.output(i);
        actual[o.name] = { ...o, data: o.data.slice() };
      }
      const report = [];
      layers.forEach((l, index) => {
        const a = actual[l.tensor].data;
        const b = expected[l.tensor].data;
        const where = `${name} sample ${k} layer ${index} ${l.node} (${l.tensor})`;
        const rel = relError(a, b);
        const flips = mismatchFraction(a, b, 1e-4);
        report.push(`${l.node}: relError ${rel.toExponential(2)}, flips ${(flips * 100).toFixed(3)}%`);
        if (index === 0) expect(rel, where).toBeLessThanOrEqual(TIGHT);
        else expect(flips, where).toBeLessThanOrEqual(FLIP_FRACTION);
      });
      for (const out of reference.outputNames) {
        if (layers.some((l) => l.tensor === out)) continue;
        const rel = relError(actual[out].data, expected[out].data);
        const off = mismatchFraction(actual[out].data, expected[out].data, 0.1);
        report.push(`output ${out}: relError ${rel.toExponential(2)}, off by >10%: ${(off * 100).toFixed(3)}%`);
        const where = `${name} sample ${k} output ${out}`;
        expect(actual[out].dims, where).toEqual(Array.from(expected[out].dims));
        if (limit.relError !== undefined) expect(rel, where).toBeLessThanOrEqual(limit.relError);
        if (limit.offBy10Percent !== undefined) expect(off, where).toBeLessThanOrEqual(limit.offBy10Percent);
      }
      if (process.env.PTQ_REPORT) console.log(`${name} sample ${k}\n  ${report.join('\n  ')}`);
    }
  });
});
