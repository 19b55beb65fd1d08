// Where a quantized run of ours first parts from onnxruntime's, and whether that is a rounding tie.
// Two valid float32 evaluations of a quantized network round the same value differently only where it
// lies within float noise of a rounding boundary; from there the one-step difference propagates and
// can grow without bound in a random-weight network. So a difference in the outputs is legitimate when,
// on every sample, the first activation quantizer whose outputs differ (graph order; every earlier
// quantizer output identical, so both engines quantized the same function of the same inputs) differs
// only in elements whose two inputs lie on either side of (or on) the rounding boundary between the two
// outputs, no further apart than float noise. Anything else (a difference of more than one step, inputs
// far apart, the same input quantized differently, outputs differing with no quantizer differing) is not
// explained by rounding.
import fs from 'node:fs';
import path from 'node:path';
import * as ort from 'onnxruntime-node';
import { decodeNpy, loadPtqModule, readCalibrationFolder } from './helpers.mjs';
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
// TensorProto.DataType of the outputs added here.
export const ELEM = { float: 1, uint8: 2 };
// ValueInfoProto { name = 1; type = 2 { tensor_type = 1 { elem_type = 1 } } }
function typedOutput(name, elemType) {
  const tensorType = Buffer.concat([varint(1 * 8 + 0), varint(elemType)]);
  return field(12, Buffer.concat([field(1, Buffer.from(name, 'utf8')), field(2, field(1, tensorType))]));
}
// Rewrites ModelProto.graph (field 7) with extra GraphProto.output (field 12) entries appended:
// outputs [[name, elemType]].
export function withTypedOutputs(model, outputs) {
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
        const graph = Buffer.concat([model.subarray(p2, end), ...outputs.map(([name, type]) => typedOutput(name, type))]);
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
// Extra float outputs.
export const withExtraOutputs = (model, names) => withTypedOutputs(model, names.map((n) => [n, ELEM.float]));

// The main graph's activation quantizers in graph order, from Session.graphJson(): {name, input, output,
// scales} (scales: the quantization step, one per channel or one for the tensor).
export function activationQuantizers(graph) {
  return graph.nodes.filter((n) => n.calibration?.kind === 'feature' && n.inputs[0] && n.outputs[0])
    .map((n) => ({ name: n.name, input: n.inputs[0], output: n.outputs[0], scales: n.calibration.scales }));
}

// Float noise between two evaluations of one tensor: relative to its largest magnitude.
export const TIE_NOISE = 1e-5;

const maxAbs = (a) => a.reduce((m, v) => Math.max(m, Math.abs(v)), 0);

// One sample: ours / theirs map every quantizer's input and output tensor name to its values.
// -> null when no quantizer output differs, else {quantizer, differing, size, tie, why}.
export function firstDivergence(quantizers, ours, theirs) {
  for (const q of quantizers) {
    const a = ours[q.output];
    const b = theirs[q.output];
    const differing = [];
    for (let i = 0; i < b.length; i++) if (a[i] !== b[i]) differing.push(i);
    if (!differing.length) continue;
    const xa = ours[q.input];
    const xb = theirs[q.input];
    const noise = TIE_NOISE * Math.max(maxAbs(xa), maxAbs(xb), 1e-30);
    // One level: the step of a per-tensor quantizer; a per-channel one's differs by channel, so there a
    // difference is only checked to be a step of one of its channels.
    const steps = q.scales?.length ? q.scales : [];
    const oneLevel = (d) => steps.some((s) => Math.abs(d - s) <= 1e-5 * s);
    const why = [];
    for (const i of differing) {
      const boundary = (a[i] + b[i]) / 2; // dequantization is affine: the boundary between two neighbouring levels
      const [lo, hi] = xa[i] <= xb[i] ? [xa[i], xb[i]] : [xb[i], xa[i]];
      const neighbours = oneLevel(Math.abs(a[i] - b[i]));
      if (!neighbours) why.push(`element ${i}: outputs ${a[i]} / ${b[i]} are not one level apart`);
      // The same input quantized two ways is a rounding rule apart, not float noise.
      else if (xa[i] === xb[i]) why.push(`element ${i}: the same input ${xa[i]} quantized to ${a[i]} / ${b[i]}`);
      else if (hi - lo > noise) why.push(`element ${i}: inputs ${xa[i]} / ${xb[i]} differ by more than float noise (${noise.toExponential(2)})`);
      else if (!(lo <= boundary && boundary <= hi) && Math.min(Math.abs(lo - boundary), Math.abs(hi - boundary)) > noise) {
        why.push(`element ${i}: inputs ${xa[i]} / ${xb[i]} are not near the rounding boundary ${boundary}`);
      }
      if (why.length >= 3) break;
    }
    return { quantizer: q.name, differing: differing.length, size: b.length, tie: !why.length, why };
  }
  return null;
}

// Every quantizer's input and output name, for withExtraOutputs.
export const tensorsOf = (quantizers) => [...new Set(quantizers.flatMap((q) => [q.input, q.output]))];

// The samples of a calibration_data folder as onnxruntime feeds, in file-name order.
export function feedsOf(dataDir) {
  const inputs = fs.readdirSync(dataDir).filter((d) => !d.startsWith('.')).sort();
  const files = fs.readdirSync(path.join(dataDir, inputs[0])).filter((f) => f.endsWith('.npy')).sort();
  return files.map((f) => Object.fromEntries(inputs.map((name) => {
    const a = decodeNpy(fs.readFileSync(path.join(dataDir, name, f)));
    return [name, new ort.Tensor(a.dtype, a.data, a.dims)];
  })));
}

// The bytes of the tensors traced at once: each traced tensor is a graph output, alive until the run ends.
export const TRACE_BYTES = 512 << 20;

// `quantizers` in graph order, cut into runs of consecutive ones whose input and output tensors together
// take at most `bytes` (from the graph's shapes; an unknown dimension counts as 1), at least one each.
export function traceChunks(quantizers, values, bytes = TRACE_BYTES) {
  const size = (name) => 4 * (values[name]?.dims ?? []).reduce((n, d) => n * (Number.isInteger(d) && d > 0 ? d : 1), 1);
  const chunks = [];
  let used = 0;
  for (const q of quantizers) {
    const b = size(q.input) + size(q.output);
    if (!chunks.length || used + b > bytes) {
      chunks.push([]);
      used = 0;
    }
    chunks[chunks.length - 1].push(q);
    used += b;
  }
  return chunks;
}

// Ours (the calibrated model, calibration nodes as stored) against onnxruntime-node on its Q/DQ twin
// (optimisations off), on the first `count` samples of dataDir: the first divergence of each sample.
// Traced in chunks of quantizers (traceChunks, at most `bytes` each), both models run again per chunk with that chunk's tensors
// as outputs, so memory stays bounded; a sample is settled at the first chunk where a quantizer differs.
export async function divergences(calibratedBytes, qdqBytes, dataDir, count = Infinity, bytes = TRACE_BYTES) {
  const ptq = await loadPtqModule();
  const session = new ptq.Session();
  try {
    session.loadModel(calibratedBytes);
    const graph = JSON.parse(session.graphJson());
    const outputs = new Set(graph.outputs.map((o) => o.name));
    const feeds = feedsOf(dataDir).slice(0, count);
    const found = feeds.map(() => null);
    const open = new Set(feeds.keys());
    for (const chunk of traceChunks(activationQuantizers(graph), graph.values, bytes)) {
      if (!open.size) break;
      const extra = tensorsOf(chunk).filter((t) => !outputs.has(t));
      session.loadModel(withExtraOutputs(calibratedBytes, extra));
      session.loadCalibrationData(readCalibrationFolder(dataDir));
      const reference = await ort.InferenceSession.create(withExtraOutputs(qdqBytes, extra),
        { intraOpNumThreads: 1, graphOptimizationLevel: 'disabled', logSeverityLevel: 3 });
      for (const k of open) {
        session.run(k, 'stored');
        const ours = {};
        for (let i = 0; i < session.outputCount(); i++) {
          const o = session.output(i);
          ours[o.name] = o.data.slice();
        }
        const r = await reference.run(feeds[k]);
        found[k] = firstDivergence(chunk, ours, Object.fromEntries(Object.entries(r).map(([n, t]) => [n, t.data])));
        if (found[k]) open.delete(k);
      }
      await reference.release?.();
    }
    return found;
  } finally {
    session.delete?.();
  }
}

// ---- dynamic quantizers (onnxruntime's dynamic quantization, §1.12) ----------------------------

const roundHalfEven = (v) => (Math.abs(v % 1) === 0.5 ? 2 * Math.round(v / 2) : Math.round(v));

// ONNX DynamicQuantizeLinear of x in float32 arithmetic, by its specification: scale =
// (max(0, max x) - min(0, min x)) / 255, zero point = saturate(round(-min / scale)), q =
// saturate(round(x / scale) + zero point), rounding half to even. -> {scale, zeroPoint, q}.
export function dynamicQuantizeLinear(x) {
  const f = Math.fround;
  let lo = 0;
  let hi = 0;
  for (const v of x) {
    lo = Math.min(lo, v);
    hi = Math.max(hi, v);
  }
  const scale = f(f(hi - lo) / 255);
  const saturate = (v) => Math.min(Math.max(v, 0), 255);
  const zeroPoint = scale > 0 ? saturate(roundHalfEven(-f(lo / scale))) : 0;
  const q = Uint8Array.from(x, (v) => (scale > 0 ? saturate(roundHalfEven(f(v / scale)) + zeroPoint) : 0));
  return { scale, zeroPoint, q };
}

const dequantized = ({ q, scale, zeroPoint }) => Float32Array.from(q, (v) => (v - zeroPoint) * scale);

// One sample's first dynamic quantizer (graph order) where ours and onnxruntime part. ours[name]: the
// quantizer's input in our run (our quantizer's output is not a tensor of the file: the formula above
// stands for it); theirs[name]: {x, q, scale, zeroPoint}, onnxruntime's DynamicQuantizeLinear input and
// outputs. A different scale or zero point (ranges apart) is not a tie; with the same ones the values
// are judged by firstDivergence. -> null or firstDivergence's record.
export function firstDynamicDivergence(names, ours, theirs) {
  for (const name of names) {
    const a = dynamicQuantizeLinear(ours[name]);
    const b = theirs[name];
    if (a.scale !== b.scale || a.zeroPoint !== b.zeroPoint) {
      const differing = a.q.reduce((n, v, i) => n + (v !== b.q[i]), 0);
      return { quantizer: name, differing, size: b.q.length, tie: false,
        why: [`scale / zero point ours ${a.scale} / ${a.zeroPoint}, onnxruntime ${b.scale} / ${b.zeroPoint}`] };
    }
    const d = firstDivergence([{ name, input: 'x', output: 'y', scales: [a.scale] }], { x: ours[name], y: dequantized(a) },
      { x: b.x, y: dequantized(b) });
    if (d) return d;
  }
  return null;
}

// Ours (the model as stored, or with the quantizers named in `off` switched OFF) against
// onnxruntime-node on `reference` (the same file by default, or an oracle model holding the other
// quantizers; optimisations off) on the first sample of dataDir: where they first part. chains, in graph
// order: [{activation, quantized: [values, scale, zero point]}], each compared DynamicQuantizeLinear's
// input and outputs (tensors of both files).
export async function dynamicDivergence(modelBytes, chains, dataDir, { reference = modelBytes, off = [] } = {}) {
  const [feed] = feedsOf(dataDir);
  const inputs = Object.fromEntries(Object.entries(feed).map(([n, t]) => [n, t.data]));
  const ptq = await loadPtqModule();
  const session = new ptq.Session();
  const ours = {};
  let extra;
  try {
    session.loadModel(modelBytes);
    const outputs = new Set(JSON.parse(session.graphJson()).outputs.map((o) => o.name));
    // Quantizer inputs that are neither a graph input (the feed holds them) nor already an output.
    extra = chains.map((c) => c.activation).filter((x) => !(x in inputs) && !outputs.has(x));
    const { calibrations } = session.loadModel(withExtraOutputs(modelBytes, extra));
    session.loadCalibrationData(readCalibrationFolder(dataDir));
    const names = calibrations.map((c) => c.name);
    session.run(0, off.length ? { on: names.map((n) => (off.includes(n) ? 0 : 1)), qtype: names.map(() => '') } : 'stored');
    for (let i = 0; i < session.outputCount(); i++) {
      const o = session.output(i);
      ours[o.name] = o.data.slice();
    }
  } finally {
    session.delete?.();
  }
  const quantizerOutputs = chains.flatMap(({ quantized: [q, scale, zp] }) => [[q, ELEM.uint8], [scale, ELEM.float], [zp, ELEM.uint8]]);
  const theirSession = await ort.InferenceSession.create(withTypedOutputs(reference, [...extra.map((x) => [x, ELEM.float]), ...quantizerOutputs]),
    { intraOpNumThreads: 1, graphOptimizationLevel: 'disabled', logSeverityLevel: 3 });
  const r = await theirSession.run(feed);
  await theirSession.release?.();
  const names = chains.map((c) => c.activation);
  const theirs = Object.fromEntries(chains.map(({ activation: x, quantized: [q, scale, zp] }) =>
    [x, { x: inputs[x] ?? r[x].data, q: r[q].data, scale: r[scale].data[0], zeroPoint: r[zp].data[0] }]));
  return firstDynamicDivergence(names, Object.fromEntries(names.map((x) => [x, inputs[x] ?? ours[x]])), theirs);
}
