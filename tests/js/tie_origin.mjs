// Where a quantized run of ours first parts from onnxruntime's, and whether that is a rounding tie.
// Two valid float32 evaluations of a quantized network round the same value differently only where it
// lies within their float noise of a rounding boundary; from there the one-step difference propagates
// and can grow without bound in a random-weight network. So a difference in the outputs is legitimate
// when, on every sample, the first activation quantizer whose outputs differ (graph order; every
// earlier quantizer output identical, so both engines quantized the same function of the same inputs)
// differs only at ties. A tie: outputs one quantization level apart, inputs that are distinct values on
// either side of (or on) the rounding boundary between the two levels, and no further apart, and no
// further from the boundary, than onnxruntime's own float spread at that quantizer's input: the largest
// difference, over the tensor, between onnxruntime's reference evaluation and another valid one (other
// kernels, another summation order) that has every earlier quantizer output identical to the
// reference's, so that its difference is float rounding alone. Where no such evaluation is left (each
// parted from the reference at an earlier quantizer) the spread is not measured and nothing is a tie.
// Anything else (a difference of more than one level, inputs further apart than onnxruntime's runs
// are, the same input quantized differently, outputs differing with no quantizer differing) is not
// explained by rounding.
import fs from 'node:fs';
import path from 'node:path';
import * as ort from 'onnxruntime-node';
import * as ortWeb from 'onnxruntime-web';
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
// The fields of a protobuf message in buf[pos, end): {number, wire, from, start, end} (from: the tag's
// first byte; start, end: the value's bytes).
function* fieldsOf(buf, pos, end) {
  while (pos < end) {
    const [tag, p1] = readVarint(buf, pos);
    const wire = tag % 8;
    let start = p1;
    let stop;
    if (wire === 0) stop = readVarint(buf, p1)[1];
    else if (wire === 1) stop = p1 + 8;
    else if (wire === 5) stop = p1 + 4;
    else if (wire === 2) {
      const [len, p2] = readVarint(buf, p1);
      start = p2;
      stop = p2 + len;
    } else throw new Error(`unexpected wire type ${wire}`);
    yield { number: Math.floor(tag / 8), wire, from: pos, start, end: stop };
    pos = stop;
  }
}
// Rewrites ModelProto.graph (field 7) with extra GraphProto.output (field 12) entries appended:
// outputs [[name, elemType]].
export function withTypedOutputs(model, outputs) {
  const parts = [];
  for (const f of fieldsOf(model, 0, model.length)) {
    if (f.number === 7 && f.wire === 2) {
      parts.push(field(7, Buffer.concat([model.subarray(f.start, f.end), ...outputs.map(([name, type]) => typedOutput(name, type))])));
    } else parts.push(model.subarray(f.from, f.end));
  }
  return Buffer.concat(parts);
}
// A copy of a ModelProto whose float32 initializer `name` (TensorProto raw_data) is changed by
// edit(values), in place: an error injected into a model for the tracer's negative cases.
export function withInitializerEdited(model, name, edit) {
  const out = Buffer.from(model);
  for (const graph of fieldsOf(out, 0, out.length)) {
    if (graph.number !== 7) continue;
    for (const init of fieldsOf(out, graph.start, graph.end)) {
      if (init.number !== 5) continue;
      const f = Object.fromEntries([...fieldsOf(out, init.start, init.end)].map((x) => [x.number, x]));
      if (!f[8] || out.toString('utf8', f[8].start, f[8].end) !== name) continue;
      if (!f[9] || readVarint(out, f[2].start)[0] !== ELEM.float) throw new Error(`initializer ${name}: not float32 raw_data`);
      const values = new Float32Array(out.buffer.slice(out.byteOffset + f[9].start, out.byteOffset + f[9].end));
      edit(values);
      Buffer.from(values.buffer).copy(out, f[9].start);
      return out;
    }
  }
  throw new Error(`no initializer ${name}`);
}
// A copy of a Q/DQ ModelProto with its QuantizeLinear -> DequantizeLinear pairs removed except those whose
// DequantizeLinear output is in `keep`: each removed pair becomes Identity(pair input) -> pair output, so the
// consumers read the pair's input unchanged and every tensor name stays (tie tracing names them). A pair:
// a DequantizeLinear whose first input is a QuantizeLinear's output. Edited on the wire format (GraphProto
// node 1; NodeProto input 1, output 2, name 3, op_type 4), independently of the core's reader and export.
export function withQdqPairsKept(model, keep) {
  const text = (buf, f) => buf.toString('utf8', f.start, f.end);
  const out = [];
  for (const g of fieldsOf(model, 0, model.length)) {
    if (g.number !== 7 || g.wire !== 2) {
      out.push(model.subarray(g.from, g.end));
      continue;
    }
    const nodes = [];
    for (const f of fieldsOf(model, g.start, g.end)) {
      if (f.number !== 1 || f.wire !== 2) continue;
      const parts = [...fieldsOf(model, f.start, f.end)];
      const strings = (n) => parts.filter((p) => p.number === n && p.wire === 2).map((p) => text(model, p));
      nodes.push({ from: f.from, op: strings(4)[0], name: strings(3)[0] ?? '', inputs: strings(1), outputs: strings(2) });
    }
    const quantize = new Map(nodes.filter((n) => n.op === 'QuantizeLinear').map((n) => [n.outputs[0], n]));
    const drop = new Set();
    const identities = new Map(); // DequantizeLinear node start -> its Identity replacement
    for (const n of nodes) {
      const q = n.op === 'DequantizeLinear' ? quantize.get(n.inputs[0]) : undefined;
      if (!q || keep.has(n.outputs[0])) continue;
      drop.add(q.from);
      identities.set(n.from, Buffer.concat([field(1, Buffer.from(q.inputs[0], 'utf8')), field(2, Buffer.from(n.outputs[0], 'utf8')),
        field(3, Buffer.from(`${n.name}_removed`, 'utf8')), field(4, Buffer.from('Identity', 'utf8'))]));
    }
    const graph = [];
    for (const f of fieldsOf(model, g.start, g.end)) {
      if (f.number === 1 && f.wire === 2 && drop.has(f.from)) continue;
      graph.push(identities.has(f.from) ? field(1, identities.get(f.from)) : model.subarray(f.from, f.end));
    }
    out.push(field(7, Buffer.concat(graph)));
  }
  return Buffer.concat(out);
}
// Extra float outputs.
export const withExtraOutputs = (model, names) => withTypedOutputs(model, names.map((n) => [n, ELEM.float]));

// The main graph's activation quantizers in graph order, from Session.graphJson(): {name, input, output,
// scales} (scales: the quantization step, one per channel or one for the tensor).
export function activationQuantizers(graph) {
  return graph.nodes.filter((n) => n.calibration?.kind === 'feature' && n.inputs[0] && n.outputs[0])
    .map((n) => ({ name: n.name, input: n.inputs[0], output: n.outputs[0], scales: n.calibration.scales }));
}

const maxAbsDiff = (a, b) => a.reduce((m, v, i) => Math.max(m, Math.abs(v - b[i])), 0);

// onnxruntime's float spread, as firstDivergence's `spreadAt`: at quantizer q's input, the largest
// |other - reference| over the tensor, over the other evaluations still identical to the reference at
// every quantizer before q; null when there is none. others: [{values, parted}] (values: tensor name ->
// data, like `theirs`; parted: false, or the quantizer where that evaluation first differed from the
// reference, kept across calls as the quantizers are traced in order). Each call marks the evaluations
// whose output of q differs as parted, so q must be every quantizer in graph order.
export function onnxruntimeSpread(theirs, others) {
  return (q) => {
    const live = others.filter((o) => !o.parted);
    const spread = live.length ? Math.max(...live.map((o) => maxAbsDiff(o.values[q.input], theirs[q.input]))) : null;
    for (const o of live) if (maxAbsDiff(o.values[q.output], theirs[q.output]) !== 0) o.parted = q.name;
    return spread;
  };
}

// The quantization level a dequantized value stands for at step s (levels are integers apart).
const levelOf = (v, s) => Math.round(v / s);

// One sample: ours / theirs map every quantizer's input and output tensor name to its values;
// spreadAt(q): the float spread two valid evaluations show at q's input (called on every quantizer in
// order), or null where it is not measured. -> null when no quantizer output differs, else {quantizer,
// differing, size, gap (the largest input difference among the differing elements), spread, tie, why}.
export function firstDivergence(quantizers, ours, theirs, spreadAt) {
  for (const q of quantizers) {
    const spread = spreadAt(q);
    const a = ours[q.output];
    const b = theirs[q.output];
    const differing = [];
    for (let i = 0; i < b.length; i++) if (a[i] !== b[i]) differing.push(i);
    if (!differing.length) continue;
    const xa = ours[q.input];
    const xb = theirs[q.input];
    // One level: the step of a per-tensor quantizer; a per-channel one's differs by channel, so there a
    // difference is only checked to be one level at the step of one of its channels.
    const steps = q.scales?.length ? q.scales : [];
    const oneLevel = (u, v) => steps.some((s) => Math.abs(levelOf(u, s) - levelOf(v, s)) === 1);
    const why = [];
    if (spread === null) {
      why.push('no float spread measured at its input (every other evaluation parted from the reference at an earlier quantizer)');
    }
    for (const i of spread === null ? [] : differing) {
      const boundary = (a[i] + b[i]) / 2; // dequantization is affine: the boundary between two neighbouring levels
      const [lo, hi] = xa[i] <= xb[i] ? [xa[i], xb[i]] : [xb[i], xa[i]];
      if (!oneLevel(a[i], b[i])) why.push(`element ${i}: outputs ${a[i]} / ${b[i]} are not one level apart`);
      // The same input quantized two ways is a rounding rule apart, not float noise.
      else if (xa[i] === xb[i]) why.push(`element ${i}: the same input ${xa[i]} quantized to ${a[i]} / ${b[i]}`);
      else if (hi - lo > spread) why.push(`element ${i}: inputs ${xa[i]} / ${xb[i]} differ by more than onnxruntime's float spread (${spread.toExponential(2)})`);
      else if (!(lo <= boundary && boundary <= hi) && Math.min(Math.abs(lo - boundary), Math.abs(hi - boundary)) > spread) {
        why.push(`element ${i}: inputs ${xa[i]} / ${xb[i]} are not within onnxruntime's float spread of the rounding boundary ${boundary}`);
      }
      if (why.length >= 3) break;
    }
    // The largest distance between the two runs' inputs among the differing elements.
    const gap = differing.reduce((m, i) => Math.max(m, Math.abs(xa[i] - xb[i])), 0);
    return { quantizer: q.name, differing: differing.length, size: b.length, gap, spread, tie: !why.length, why };
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

// onnxruntime's valid evaluations of a Q/DQ model beside the reference (onnxruntime-node, optimisations
// off: ONNXRUNTIME_REFERENCE), the ones divergences() measures onnxruntime's float spread with by default,
// each opened as bytes -> {run(feeds of onnxruntime-node tensors) -> {name: data}, runTensors (-> {name: {data,
// dims}}), outputNames, release}: onnxruntime-node at level
// 'basic' and at 'all' with its QDQ fusions off (the quantizers stay as they are; its convolutions run by
// other kernels, in another summation order), onnxruntime-web (wasm backend, other kernels again) with
// optimisations off and at 'basic'. Levels with the QDQ fusions on compute in integers with another
// requantisation, not the model's ONNX semantics.
const asData = (r) => Object.fromEntries(Object.entries(r).map(([n, t]) => [n, t.data]));
const evaluation = (s, toFeeds) => ({
  run: async (feeds) => asData(await s.run(toFeeds(feeds))),
  runTensors: async (feeds) => s.run(toFeeds(feeds)),
  outputNames: s.outputNames,
  release: () => s.release(),
});
const nodeAt = (level, extra) => async (bytes) => {
  const s = await ort.InferenceSession.create(bytes, { intraOpNumThreads: 1, graphOptimizationLevel: level, logSeverityLevel: 3, ...(extra ? { extra } : {}) });
  return evaluation(s, (feeds) => feeds);
};
const webAt = (level) => async (bytes) => {
  ortWeb.env.wasm.numThreads = 1;
  ortWeb.env.logLevel = 'error';
  const s = await ortWeb.InferenceSession.create(bytes, { executionProviders: ['wasm'], graphOptimizationLevel: level, logSeverityLevel: 3 });
  return evaluation(s, (feeds) => Object.fromEntries(Object.entries(feeds).map(([n, t]) => [n, new ortWeb.Tensor(t.type, t.data, t.dims)])));
};
export const ONNXRUNTIME_REFERENCE = nodeAt('disabled');
export const ONNXRUNTIME_EVALUATIONS = [nodeAt('basic'), nodeAt('all', { session: { disable_quant_qdq: '1' } }), webAt('disabled'), webAt('basic')];

// Ours (the calibrated model, calibration nodes as stored) against onnxruntime-node on its Q/DQ twin
// (optimisations off), on the first `count` samples of dataDir: the first divergence of each sample,
// judged by onnxruntime's float spread between that reference and the evaluations `others` makes
// (each: Q/DQ model bytes -> {run(feeds of onnxruntime-node tensors) -> {name: data}, release}).
// oursData: the calibration_data folder ours reads instead of dataDir (an error injected into our run).
// config: our run's configuration (Session.run's second argument); traced: the names of the quantizers
// traced (null: every activation quantizer), those ON in both runs when the others are switched off
// (an OFF quantizer's output is its input: float noise there is no rounding decision).
// Traced in chunks of quantizers (traceChunks, at most `bytes` each), every model run again per chunk with that chunk's tensors
// as outputs, so memory stays bounded; a sample is settled at the first chunk where a quantizer differs.
export async function divergences(calibratedBytes, qdqBytes, dataDir, { count = Infinity, bytes = TRACE_BYTES, others = ONNXRUNTIME_EVALUATIONS, oursData = dataDir, config = 'stored', traced = null } = {}) {
  const ptq = await loadPtqModule();
  const session = new ptq.Session();
  try {
    session.loadModel(calibratedBytes);
    const graph = JSON.parse(session.graphJson());
    const outputs = new Set(graph.outputs.map((o) => o.name));
    const feeds = feedsOf(dataDir).slice(0, count);
    const found = feeds.map(() => null);
    // Per sample, per other evaluation: where it parted from the reference (onnxruntimeSpread).
    const parted = feeds.map(() => others.map(() => ({ parted: false })));
    const open = new Set(feeds.keys());
    const quantizers = activationQuantizers(graph).filter((q) => !traced || traced.includes(q.name));
    for (const chunk of traceChunks(quantizers, graph.values, bytes)) {
      if (!open.size) break;
      const extra = tensorsOf(chunk).filter((t) => !outputs.has(t));
      session.loadModel(withExtraOutputs(calibratedBytes, extra));
      session.loadCalibrationData(readCalibrationFolder(oursData));
      const qdq = withExtraOutputs(qdqBytes, extra);
      const reference = await ort.InferenceSession.create(qdq, { intraOpNumThreads: 1, graphOptimizationLevel: 'disabled', logSeverityLevel: 3 });
      const evaluations = [];
      try {
        for (const make of others) evaluations.push(await make(qdq));
        for (const k of open) {
          session.run(k, config);
          const ours = {};
          for (let i = 0; i < session.outputCount(); i++) {
            const o = session.output(i);
            ours[o.name] = o.data.slice();
          }
          const r = await reference.run(feeds[k]);
          const theirs = Object.fromEntries(Object.entries(r).map(([n, t]) => [n, t.data]));
          for (let j = 0; j < evaluations.length; j++) parted[k][j].values = await evaluations[j].run(feeds[k]);
          found[k] = firstDivergence(chunk, ours, theirs, onnxruntimeSpread(theirs, parted[k]));
          for (const p of parted[k]) delete p.values; // only this chunk's tensors
          if (found[k]) open.delete(k);
        }
      } finally {
        await reference.release?.();
        for (const e of evaluations) await e.release?.();
      }
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

// The float noise a dynamic quantizer's tie is judged by: 1e-5 of the input's largest magnitude, a fixed
// bound (onnxruntime's own spread is not measured on this path: one forward of the model it serves
// takes tens of seconds).
const DYNAMIC_TIE_NOISE = 1e-5;
const maxAbs = (a) => a.reduce((m, v) => Math.max(m, Math.abs(v)), 0);

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
      { x: b.x, y: dequantized(b) }, () => DYNAMIC_TIE_NOISE * Math.max(maxAbs(ours[name]), maxAbs(b.x), 1e-30));
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
