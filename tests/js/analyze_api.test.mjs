// Session.analyze / listItems / graphJson and ptq.mergeResults through the wasm module
// (docs/wasm-api.md), on the calibrated digits model.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { calibratedDigits } from './cli_fixture.mjs';
import { loadPtqModule, readCalibrationFolder } from './helpers.mjs';

let ptq;
let session;

beforeAll(async () => {
  const { model, data } = calibratedDigits();
  ptq = await loadPtqModule();
  session = new ptq.Session();
  session.loadModel(fs.readFileSync(model));
  session.loadCalibrationData(readCalibrationFolder(data));
});

afterAll(() => session?.delete());

const analyze = (request, onEvent) => JSON.parse(onEvent ? session.analyze(JSON.stringify(request), onEvent)
  : session.analyze(JSON.stringify(request)));
const withoutTimings = ({ timings_ms: _t, ...rest }) => rest;

describe('Session.analyze', () => {
  const request = { analysis: 'sensitivity', options: { node_type: 'activation', metrics: ['cosine-similarity', 'mse'] } };

  it('a sweep split into two item ranges merges into the whole sweep', () => {
    const names = JSON.parse(session.listItems(JSON.stringify(request)));
    expect(names.length).toBeGreaterThan(3);
    const full = analyze(request);
    const cut = Math.floor(names.length / 2);
    const first = analyze({ ...request, items: { begin: 0, end: cut } });
    const second = analyze({ ...request, items: { begin: cut, end: names.length } });
    expect(Object.keys(first.sensitivity.activation)).toHaveLength(cut);
    const merged = JSON.parse(ptq.mergeResults(JSON.stringify([second, first])));
    expect(withoutTimings(merged)).toEqual(withoutTimings(full));
    expect(merged.timings_ms.sensitivity).toBeCloseTo(first.timings_ms.sensitivity + second.timings_ms.sensitivity, 6);
    // The ranking: most sensitive (lowest cosine) first.
    const cos = full.sensitivity_order.activation.map((k) => full.sensitivity.activation[k]['cosine-similarity']);
    expect([...cos].sort((a, b) => a - b)).toEqual(cos);
    expect([...full.sensitivity_order.activation].sort()).toEqual([...names].sort());
  });

  it('emits one event per item, in run order, with the row of the result', () => {
    const events = [];
    const result = analyze({ ...request, items: { begin: 1, end: 4 } }, (e) => events.push(JSON.parse(e)));
    const names = JSON.parse(session.listItems(JSON.stringify(request)));
    expect(events.map((e) => e.item)).toEqual(names.slice(1, 4));
    expect(events.map((e) => e.index)).toEqual([1, 2, 3]);
    expect(events.map((e) => e.done)).toEqual([1, 2, 3]);
    for (const e of events) {
      expect(e).toMatchObject({ type: 'item', analysis: 'sensitivity', section: 'activation', total: 3 });
      expect(e.row).toEqual(result.sensitivity.activation[e.item]);
    }
  });

  it('throws JS Errors carrying the C++ message', () => {
    const error = (fn) => { try { fn(); } catch (e) { return e; } return null; };
    let e = error(() => session.analyze(JSON.stringify({ analysis: 'sensitivity', options: { metric: 'mse' } })));
    expect(e).toBeInstanceOf(Error);
    expect(e.name).toBe('PtqError');
    expect(e.message).toMatch(/^options\.metric: unknown option of analysis 'sensitivity'/);
    e = error(() => session.analyze('{"analysis": "nope"}'));
    expect(e.message).toMatch(/^request\.analysis: unknown analysis 'nope'/);
    e = error(() => session.analyze('{'));
    expect(e.message).toBe('request: invalid JSON at offset 1: expected a string key');
    e = error(() => ptq.mergeResults('[]'));
    expect(e.message).toBe('mergeResults: expected a non-empty array of result documents');
    // The session stays usable after an error.
    expect(analyze({ ...request, items: { begin: 0, end: 1 } }).sweep.items).toHaveLength(1);
  });

  it('rethrows an exception of onEvent after the analysis, without further events', () => {
    let calls = 0;
    const boom = new Error('listener failed');
    expect(() => session.analyze(JSON.stringify({ ...request, items: { begin: 0, end: 3 } }), () => { calls += 1; throw boom; }))
      .toThrow(boom);
    expect(calls).toBe(1);
  });

  it('runs every other analysis into its schema section', () => {
    const cali = JSON.parse(session.listItems(JSON.stringify(request)));
    const acc = analyze({ analysis: 'acc_error', options: { quantize_node: ['weight', 'activation'] } });
    expect(acc.acc_error_figures[0].curves).toEqual(['weight_activation_calibrated', 'only_activation_calibrated', 'only_weight_calibrated']);
    const curve = acc.acc_error.weight_activation_calibrated;
    expect(curve.y).toHaveLength(curve.x.length);
    const dist = analyze({ analysis: 'distribution', options: { nodes_list: [cali[0]], bins: 32 } });
    expect(dist.distribution[cali[0]].histograms[0].counts).toHaveLength(32);
    const cw = analyze({ analysis: 'channelwise', options: { nodes_list: [cali[1]] } });
    expect(cw.channelwise[cali[1]].channels.length).toBeGreaterThan(0);
    const stat = analyze({ analysis: 'stat_info' });
    expect(stat.stat_info_order.length).toBeGreaterThan(cali.length);
    const sa = analyze({ analysis: 'sensitivity_analysis', options: { sensitive_nodes: [cali[0]] } });
    expect(sa.sensitivity_analysis.x).toEqual(['none', cali[0]]);
  });
});

describe('Session.graphJson', () => {
  it('describes the loaded model', () => {
    const graph = JSON.parse(session.graphJson());
    expect(graph.schema).toBe('ptqscope.graph');
    expect(graph.nodes.length).toBeGreaterThan(0);
  });
});

// --- one channel's histogram (channelwise `channels`) ------------------------------------------------

// Minimal protobuf walk: the float32 initializers of a ModelProto (graph = 7, initializer = 5;
// TensorProto dims = 1, data_type = 2, float_data = 4, name = 8, raw_data = 9), read here without the
// core so the check is independent of it.
function initializers(file) {
  const bytes = new Uint8Array(file);  // a copy: Buffer#slice would share Node's pool
  let pos = 0;
  const varint = () => {
    let v = 0;
    for (let shift = 1; ; shift *= 128) {
      const b = bytes[pos++];
      v += (b & 0x7f) * shift;
      if (b < 0x80) return v;
    }
  };
  const fields = (end, onField) => {
    while (pos < end) {
      const tag = varint();
      const [field, wire] = [Math.floor(tag / 8), tag % 8];
      if (wire === 2) {
        const len = varint();
        const start = pos;
        pos += len;
        onField(field, wire, start, start + len);
      } else if (wire === 0) onField(field, wire, varint());
      else pos += wire === 5 ? 4 : 8;
    }
  };
  const floats = (start, end) => new Float32Array(bytes.slice(start, end).buffer);
  const out = new Map();
  fields(bytes.length, (f, w, start, end) => {
    if (f !== 7 || w !== 2) return;
    const saved = pos;
    pos = start;
    fields(end, (g, gw, s, e) => {
      if (g !== 5 || gw !== 2) return;
      const t = { dims: [], dtype: 0, name: '', data: null };
      const back = pos;
      pos = s;
      fields(e, (k, kw, a, b) => {
        if (k === 1 && kw === 0) t.dims.push(a);
        else if (k === 1) { const p = pos; pos = a; while (pos < b) t.dims.push(varint()); pos = p; }
        else if (k === 2) t.dtype = a;
        else if (k === 8) t.name = new TextDecoder().decode(bytes.slice(a, b));
        else if (k === 4 || k === 9) t.data = floats(a, b);
      });
      pos = back;
      if (t.dtype === 1) out.set(t.name, t);
    });
    pos = saved;
  });
  return out;
}

// The values of channel c along `axis` (channel axis moved to the front, memory order otherwise).
function channelValues(data, dims, axis, c) {
  const outer = dims.slice(0, axis).reduce((a, b) => a * b, 1);
  const inner = dims.slice(axis + 1).reduce((a, b) => a * b, 1);
  const out = [];
  for (let o = 0; o < outer; o++) out.push(...data.subarray((o * dims[axis] + c) * inner, (o * dims[axis] + c + 1) * inner));
  return out;
}

// numpy.histogram(x[x != 0], bins) as plot_distribution asks for it: float32 linspace edges, half-open
// bins found by bisection over those edges, the last bin closed.
function referenceHistogram(values, bins) {
  const kept = values.filter((v) => v !== 0 && Number.isFinite(v));
  let [lo, hi] = [Math.min(...kept), Math.max(...kept)];
  if (lo === hi) [lo, hi] = [lo - 0.5, hi + 0.5];
  const step = (hi - lo) / bins;
  const edges = Array.from({ length: bins + 1 }, (_, i) => Math.fround(i * step + lo));
  edges[bins] = Math.fround(hi);
  const counts = new Array(bins).fill(0);
  for (const v of kept) {
    let [a, b] = [0, bins - 1];
    while (a < b) { const m = (a + b + 1) >> 1; if (edges[m] <= v) a = m; else b = m - 1; }
    counts[a]++;
  }
  return { edges, counts, zeros: values.filter((v) => v === 0).length };
}

describe('channelwise channel histograms', () => {
  const sumOf = (counts) => counts.reduce((a, b) => a + b, 0);

  it('a weight channel equals a histogram computed from the raw initializer', () => {
    const graph = JSON.parse(session.graphJson());
    const node = graph.nodes.find((n) => n.calibration?.kind === 'weight' && graph.values[n.inputs[0]]?.initializer);
    const weight = initializers(fs.readFileSync(calibratedDigits().model)).get(node.inputs[0]);
    const axis = node.calibration.axis;
    const channels = weight.dims[axis];
    const k = Math.min(1, channels - 1);
    const doc = analyze({ analysis: 'channelwise', options: { nodes_list: [node.name], channels: [k] } });
    const item = doc.channelwise[node.name];
    expect(item.channels).toHaveLength(channels);
    const [h] = item.channel_histograms;
    const values = channelValues(weight.data, weight.dims, axis, k);
    expect(h.channel).toBe(k);
    expect(h.count).toBe(values.length);
    expect(h.count).toBe(item.channels[k].count);
    expect(sumOf(h.histogram.counts)).toBe(h.count - h.histogram.zeros_excluded - h.histogram.non_finite);
    const ref = referenceHistogram(values, 1024);
    expect(h.histogram.edges.map(Math.fround)).toEqual(ref.edges);
    expect(h.histogram.counts).toEqual(ref.counts);
    expect(h.histogram.zeros_excluded).toBe(ref.zeros);
    expect(Math.fround(h.min)).toBe(Math.fround(Math.min(...values)));
    expect(Math.fround(h.max)).toBe(Math.fround(Math.max(...values)));
    const { thresholds } = node.calibration;
    expect(Math.fround(h.threshold)).toBe(Math.fround(thresholds.length === 1 ? thresholds[0] : thresholds[k]));
    // The default result has no histograms.
    expect(analyze({ analysis: 'channelwise', options: { nodes_list: [node.name] } }).channelwise[node.name].channel_histograms)
      .toBeUndefined();
  });

  it('an activation channel counts every element but the left-out zeros and non-finite values', () => {
    const graph = JSON.parse(session.graphJson());
    const node = graph.nodes.find((n) => n.calibration?.kind === 'feature' && graph.values[n.inputs[0]]?.producer);
    const doc = analyze({ analysis: 'channelwise', options: { nodes_list: [node.name], channels: [0, 2], bins: 64 } });
    const item = doc.channelwise[node.name];
    const perChannel = item.shape.reduce((a, b) => a * b, 1) / item.shape[item.axis];
    expect(item.channel_histograms.map((h) => h.channel)).toEqual([0, 2]);
    for (const h of item.channel_histograms) {
      expect(h.count).toBe(perChannel);
      expect(h.histogram.counts).toHaveLength(64);
      expect(sumOf(h.histogram.counts)).toBe(h.count - h.histogram.zeros_excluded - h.histogram.non_finite);
      expect(h.histogram.label).toBe(`channel ${h.channel + 1}`);
    }
    const channels = item.shape[item.axis];
    expect(() => analyze({ analysis: 'channelwise', options: { nodes_list: [node.name], channels: [channels] } }))
      .toThrow(`options.channels: channel ${channels} is out of range for '${node.name}' (axis ${item.axis} of data shape`);
  });
});
