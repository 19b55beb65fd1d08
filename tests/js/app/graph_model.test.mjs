// The graph view model: badge collapsing of HzCalibration nodes, initializer rows, edges with
// shapes, search, and the dagre layout (the code the layout worker runs), on a hand-written graph in
// the graphJson shape and on the graphJson of real fixtures from the wasm core.
import { describe, it, expect, beforeAll } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT, fixture, loadPtqModule } from '../helpers.mjs';
import { buildViewModel, viewNodeFor, formatDims } from '../../../web/app/graph/model.mjs';
import { searchGraph } from '../../../web/app/graph/search.mjs';
import { layoutGraph, layeredLayout } from '../../../web/app/graph/layout_core.mjs';
import { bigGraph } from './big_graph.mjs';
import { categoryOf } from '../../../web/app/graph/categories.mjs';
import { onnxNodes } from '../onnx_nodes.mjs';

const cal = (name, input, output, kind, extra = {}) => ({
  name, op_type: 'HzCalibration', domain: 'horizon', inputs: [input], outputs: [output], attributes: {},
  calibration: { kind, qtype: 'int8', switch: 'ON', axis: kind === 'weight' ? 0 : 1, thresholds: [1], scales: [1 / 127], consumers: [], tensor: input, ...extra },
});
const node = (name, op, inputs, outputs, attributes = {}) => ({ name, op_type: op, domain: '', inputs, outputs, attributes, calibration: null });
const val = (dims, producer = null, consumers = [], initializer = false) => ({ dtype: 'float32', dims, initializer, producer, consumers });

// images -> Conv(x_cal, w_cal, b) -> Relu -> MaxPool -> {cal -> Conv2 (int16, switch OFF), Add}; like
// the Netron capture's horizon_calibrated_tiny.
const TINY = {
  schema: 'ptqscope.graph', version: 1,
  inputs: [{ name: 'images', dtype: 'float32', dims: [1, 3, 8, 8] }],
  outputs: [{ name: 'out', dtype: 'float32', dims: [1, 4, 4, 4] }],
  nodes: [
    cal('images_HzCalibration', 'images', 'images_cal', 'feature'),
    cal('w1_HzCalibration', 'w1', 'w1_cal', 'weight'),
    node('conv1', 'Conv', ['images_cal', 'w1_cal', 'b1'], ['c1'], { kernel_shape: [3, 3], pads: [1, 1, 1, 1], group: 1 }),
    node('relu1', 'Relu', ['c1'], ['r1']),
    node('pool', 'MaxPool', ['r1'], ['p'], { kernel_shape: [2, 2], strides: [2, 2] }),
    cal('p_HzCalibration', 'p', 'p_cal', 'feature', { qtype: 'int16', switch: 'OFF' }),
    cal('w2_HzCalibration', 'w2', 'w2_cal', 'weight'),
    node('conv2', 'Conv', ['p_cal', 'w2_cal', ''], ['c2']),
    node('add', 'Add', ['p', 'c2'], ['out']),
  ],
  values: {
    images: val([1, 3, 8, 8], null, ['images_HzCalibration']), images_cal: val([1, 3, 8, 8], 'images_HzCalibration', ['conv1']),
    w1: val([4, 3, 3, 3], null, ['w1_HzCalibration'], true), w1_cal: val([4, 3, 3, 3], 'w1_HzCalibration', ['conv1']),
    b1: val([4], null, ['conv1'], true), c1: val([1, 4, 8, 8], 'conv1', ['relu1']), r1: val([1, 4, 8, 8], 'relu1', ['pool']),
    p: val([1, 4, 4, 4], 'pool', ['p_HzCalibration', 'add']), p_cal: val([1, 4, 4, 4], 'p_HzCalibration', ['conv2']),
    w2: val([4, 4, 3, 3], null, ['w2_HzCalibration'], true), w2_cal: val([4, 4, 3, 3], 'w2_HzCalibration', ['conv2']),
    c2: val([1, 4, -1, 'W'], 'conv2', ['add']), out: val([1, 4, 4, 4], 'add', []),
  },
};

const edge = (m, from, to) => m.edges.find((e) => e.from === from && e.to === to);

describe('view model from graphJson (hand-written tiny calibrated graph)', () => {
  it('collapses HzCalibration nodes into badges on the edges and weight rows they quantize', () => {
    const m = buildViewModel(TINY);
    expect(m.nodes.map((n) => n.id)).toEqual(['input:images', 'conv1', 'relu1', 'pool', 'conv2', 'add', 'output:out']);
    expect(m.stats).toMatchObject({ nodes: 9, calibration: 4, shown: 7, badges: 4 });
    // Feature calibration: a badge on the edge from the producer (here the graph input) to the consumer.
    const e1 = edge(m, 'input:images', 'conv1');
    expect(e1.tensor).toBe('images');
    expect(e1.badges.map((b) => [b.node, b.text, b.kind])).toEqual([['images_HzCalibration', 'int8', 'feature']]);
    // The pooled tensor goes quantized (int16, switched off) to conv2 and unquantized to add.
    expect(edge(m, 'pool', 'conv2').badges.map((b) => [b.text, b.on])).toEqual([['int16 off', false]]);
    expect(edge(m, 'pool', 'add').badges).toEqual([]);
    // Weight calibration: a badge on the initializer row of the Conv; the bias has none.
    const conv1 = m.byName.get('conv1');
    expect(conv1.rows.filter((r) => r.kind === 'initializer').map((r) => [r.name, r.value, r.badge?.node ?? null]))
      .toEqual([['W', '⟨4×3×3×3⟩', 'w1_HzCalibration'], ['B', '⟨4⟩', null]]);
    expect(conv1.rows.filter((r) => r.kind === 'attribute').map((r) => `${r.name}=${r.value}`)).toEqual(['kernel_shape=3, 3', 'pads=1, 1, 1, 1']);
    expect(m.calibrationOf.get('conv1')).toEqual(['images_HzCalibration', 'w1_HzCalibration']);
    // The node a calibration badge sits on (for focus and selection).
    expect(viewNodeFor(m, TINY, 'p_HzCalibration').id).toBe('conv2');
    expect(viewNodeFor(m, TINY, 'w1_HzCalibration').id).toBe('conv1');
  });

  it('keeps them as nodes when toggled', () => {
    const m = buildViewModel(TINY, { showCalibration: true });
    expect(m.nodes.length).toBe(2 + TINY.nodes.length);
    expect(m.stats.badges).toBe(0);
    expect(edge(m, 'pool', 'p_HzCalibration')).toBeTruthy();
    expect(edge(m, 'p_HzCalibration', 'conv2').tensor).toBe('p_cal');
    expect(m.byName.get('w1_HzCalibration').rows[0]).toMatchObject({ kind: 'initializer', value: '⟨4×3×3×3⟩' });
  });

  it('folds Constant nodes into rows of their consumers, showing small values', () => {
    const g = {
      inputs: [{ name: 'x', dtype: 'float32', dims: [1, 4] }], outputs: [{ name: 'y', dtype: 'float32', dims: [1, 4] }],
      nodes: [node('c0', 'Constant', [], ['lo']), node('c1', 'Constant', [], ['hi']), node('clip', 'Clip', ['x', 'lo', 'hi'], ['y'])],
      values: {
        x: val([1, 4], null, ['clip']), y: val([1, 4], 'clip', []),
        lo: { ...val([], 'c0', ['clip']), constant: true, values: [0] }, hi: { ...val([], 'c1', ['clip']), constant: true, values: [6] },
      },
    };
    const m = buildViewModel(g);
    expect(m.nodes.map((n) => n.id)).toEqual(['input:x', 'clip', 'output:y']);
    expect(m.byName.get('clip').rows.map((r) => `${r.name}=${r.value}`)).toEqual(['min=0', 'max=6']);
    expect(m.edges.map((e) => `${e.from}>${e.to}`)).toEqual(['input:x>clip', 'clip>output:y']);
  });

  it('labels edges with shapes (unknown and symbolic dims kept readable) and categories like Netron', () => {
    const m = buildViewModel(TINY);
    expect(edge(m, 'conv2', 'add').label).toBe('1×4×?×W');
    expect(formatDims(null)).toBe('?');
    expect(m.byName.get('conv1').category).toBe('layer');
    expect(m.byName.get('relu1').category).toBe('activation');
    expect(m.byName.get('pool').category).toBe('pool');
    expect(categoryOf('Add')).toBe('');
  });

  it('searches nodes, tensors and op types', () => {
    expect(searchGraph(TINY, 'conv2')[0]).toMatchObject({ kind: 'node', node: 'conv2' });
    expect(searchGraph(TINY, 'maxpool')[0]).toMatchObject({ kind: 'op', node: 'pool' });
    expect(searchGraph(TINY, 'p_cal')[0]).toMatchObject({ kind: 'tensor', node: 'p_HzCalibration' });
    expect(searchGraph(TINY, 'w2')[0]).toMatchObject({ kind: 'tensor', tensor: 'w2', node: 'w2_HzCalibration' }); // exact tensor first
    expect(searchGraph(TINY, 'w2_Hz')[0]).toMatchObject({ kind: 'node', node: 'w2_HzCalibration' });
    expect(searchGraph(TINY, '   ')).toEqual([]);
    // A node found by its name, its op type and its output tensor is listed once, by its best match.
    const convs = searchGraph(TINY, 'conv');
    expect(convs.map((m) => m.node)).toEqual([...new Set(convs.map((m) => m.node))]);
    expect(convs.filter((m) => m.node === 'conv1')).toEqual([expect.objectContaining({ kind: 'op', text: 'conv1' })]);
  });

  it('lays out top to bottom without overlaps', () => {
    const m = buildViewModel(TINY);
    const l = layoutGraph({ nodes: m.nodes, edges: m.edges });
    const y = (id) => l.nodes[id].y;
    expect(y('input:images')).toBeLessThan(y('conv1'));
    expect(y('conv1')).toBeLessThan(y('relu1'));
    expect(y('conv2')).toBeLessThan(y('add'));
    expect(l.edges.every((pts) => pts && pts.length >= 2)).toBe(true);
    const boxes = m.nodes.map((n) => ({ ...l.nodes[n.id], w: n.width, h: n.height }));
    for (let i = 0; i < boxes.length; i++) {
      for (let j = i + 1; j < boxes.length; j++) {
        const a = boxes[i];
        const b = boxes[j];
        const overlap = Math.abs(a.x - b.x) < (a.w + b.w) / 2 && Math.abs(a.y - b.y) < (a.h + b.h) / 2;
        expect(overlap).toBe(false);
      }
    }
  });
});

describe('large graphs', () => {
  it('3,300 boxes, 3,300 levels deep: the layered layout (no recursion), ranks in data-flow order', () => {
    const m = buildViewModel(bigGraph(1100));
    expect(m.stats).toMatchObject({ nodes: 5500, calibration: 2200, shown: 3302, badges: 2200 });
    const l = layoutGraph({ nodes: m.nodes, edges: m.edges });
    expect(l.engine).toBe('layered');
    expect(Object.keys(l.nodes).length).toBe(3302);
    expect(m.edges.filter((e) => !(l.nodes[e.from].y < l.nodes[e.to].y))).toEqual([]);
  });

  it('the layered layout keeps boxes of one rank apart', () => {
    const m = buildViewModel(TINY);
    const l = layeredLayout({ nodes: m.nodes, edges: m.edges });
    const sameRank = m.nodes.filter((n) => Math.abs(l.nodes[n.id].y - l.nodes.add.y) < 1);
    expect(sameRank.map((n) => n.id)).toEqual(['add']);
    expect(l.nodes['input:images'].y).toBeLessThan(l.nodes.conv1.y);
  });
});

// Real graphJson from the wasm core (Session.graphJson, docs/graph-schema.md).
describe('view model from the core\'s graphJson of real fixtures', () => {
  let ptq;
  let hasGraphJson = false;
  beforeAll(async () => {
    ptq = await loadPtqModule();
    const s = new ptq.Session();
    hasGraphJson = typeof s.graphJson === 'function';
    s.delete();
  });
  const graphOf = (file) => {
    const s = new ptq.Session();
    try {
      s.loadModel(new Uint8Array(fs.readFileSync(file)));
      return JSON.parse(s.graphJson());
    } finally {
      s.delete();
    }
  };

  it('float digits CNN: every node shown, edges connect producers to consumers', (ctx) => {
    if (!hasGraphJson) ctx.skip();
    const g = graphOf(fixture('digits_cnn').model);
    const m = buildViewModel(g);
    expect(m.stats.calibration).toBe(0);
    expect(m.nodes.filter((n) => n.kind === 'node').length).toBe(g.nodes.length);
    for (const e of m.edges) expect(m.byName.has(e.from) && m.byName.has(e.to)).toBe(true);
    expect(m.edges.find((e) => e.to === 'output:logits').label).toBe('1×10');
  });

  it('calibrated digits CNN (the example): one badge per calibration node, none left as nodes', (ctx) => {
    const file = path.join(REPO_ROOT, 'build/web-example/digits_cnn_calibrated_model.onnx');
    if (!hasGraphJson) ctx.skip();
    const g = graphOf(file);
    const calis = g.nodes.filter((n) => n.op_type === 'HzCalibration');
    expect(calis.length).toBeGreaterThan(0);
    const m = buildViewModel(g);
    expect(m.stats.badges).toBe(calis.length);
    expect(m.nodes.some((n) => n.opType === 'HzCalibration')).toBe(false);
    expect(m.stats.shown).toBe(g.nodes.length - calis.length + g.inputs.length + g.outputs.length);
    const weights = calis.filter((c) => c.calibration.kind === 'weight').map((c) => c.name);
    const onRows = m.nodes.flatMap((n) => n.rows.filter((r) => r.badge).map((r) => r.badge.node));
    expect(onRows.sort()).toEqual(weights.sort());
  });

  it('Netron capture model (horizon_calibrated_tiny.onnx): badges match its HzCalibration nodes', (ctx) => {
    const file = path.join(REPO_ROOT, 'tests/fixtures/netron-dom/horizon_calibrated_tiny.onnx');
    if (!hasGraphJson) ctx.skip();
    const g = graphOf(file);
    const m = buildViewModel(g);
    expect(m.stats.calibration).toBe(6);
    expect(m.stats.badges).toBe(6);
    // MaxPool's output reaches conv2 through a calibration node and the Add directly.
    const pool = g.nodes.find((n) => n.op_type === 'MaxPool').name;
    const fromPool = m.edges.filter((e) => e.from === pool);
    expect(fromPool.map((e) => e.badges.length).sort()).toEqual([0, 1]);
  });
});

// A Q/DQ model's quantizers (behaviour.md §1.11): x -> Q -> DQ read by two consumers (the second
// DequantizeLinear became an Identity of the calibration node's output under its own name), and a
// weight stored as integers behind one DequantizeLinear.
describe('view model of a Q/DQ model', () => {
  const qcal = (name, input, output, kind, qdq) => ({ ...cal(name, input, output, kind), calibration: { ...cal(name, input, output, kind).calibration, qdq_nodes: qdq, zero_points: [0] } });
  const QDQ = {
    schema: 'ptqscope.graph', version: 1,
    inputs: [{ name: 'x', dtype: 'float32', dims: [1, 3, 8, 8] }],
    outputs: [{ name: 'a', dtype: 'float32', dims: [1, 4, 8, 8] }, { name: 'b', dtype: 'float32', dims: [1, 3, 8, 8] }],
    nodes: [
      qcal('x', 'x', 'x_dq', 'feature', ['x_q', 'x_dq_a', 'x_dq_b']),
      node('x_dq_b', 'Identity', ['x_dq'], ['x_dq2']),
      qcal('w_quantized', 'w_quantized_dequantized', 'w_dq', 'weight', ['w_dq_node']),
      node('conv', 'Conv', ['x_dq', 'w_dq'], ['a']),
      node('relu', 'Relu', ['x_dq2'], ['b']),
    ],
    values: {
      x: val([1, 3, 8, 8], null, ['x']), x_dq: val([1, 3, 8, 8], 'x', ['conv', 'x_dq_b']), x_dq2: val([1, 3, 8, 8], 'x_dq_b', ['relu']),
      w_quantized_dequantized: val([4, 3, 1, 1], null, ['w_quantized'], true), w_dq: val([4, 3, 1, 1], 'w_quantized', ['conv']),
      a: val([1, 4, 8, 8], 'conv'), b: val([1, 3, 8, 8], 'relu'),
    },
  };

  it('folds every quantizer into a badge', () => {
    const m = buildViewModel(QDQ);
    expect(m.qdq).toBe(true);
    expect(m.stats.badges).toBe(2);
    expect(m.nodes.some((v) => v.stands)).toBe(false);
  });

  it('shown as nodes: the file\'s QuantizeLinear / DequantizeLinear nodes, each standing for its quantizer', () => {
    const m = buildViewModel(QDQ, { showCalibration: true });
    const qdq = m.nodes.filter((v) => v.stands).map((v) => [v.id, v.opType, v.stands]);
    expect(qdq).toEqual([
      ['x_q', 'QuantizeLinear', 'x'], ['x_dq_a', 'DequantizeLinear', 'x'], ['x_dq_b', 'DequantizeLinear', 'x'],
      ['w_dq_node', 'DequantizeLinear', 'w_quantized'],
    ]);
    // No HzCalibration box, no Identity box for the second DequantizeLinear.
    expect(m.nodes.filter((v) => v.kind === 'node').map((v) => v.opType).sort()).toEqual(['Conv', 'DequantizeLinear', 'DequantizeLinear', 'DequantizeLinear', 'QuantizeLinear', 'Relu']);
    const edges = m.edges.map((e) => `${e.from}->${e.to}`).sort();
    expect(edges).toEqual(['conv->output:a', 'input:x->x_q', 'relu->output:b', 'w_dq_node->conv', 'x_dq_a->conv', 'x_dq_b->relu', 'x_q->x_dq_a', 'x_q->x_dq_b'].sort());
    // The weight stored as integers is a row of its DequantizeLinear; scale and zero point are rows.
    expect(m.byName.get('w_dq_node').rows.map((r) => r.name)).toEqual(['x', 'scale', 'zero_point']);
    // The calibration node's name finds its first drawn node (selection, focus).
    expect(viewNodeFor(m, QDQ, 'x').id).toBe('x_q');
    expect(viewNodeFor(m, QDQ, 'w_quantized').id).toBe('w_dq_node');
  });
});

// The core's graphJson of the QOperator fixtures (§1.12) shown as nodes: exactly the file's nodes and
// the file's edges, read from the file itself (tests/js/onnx_nodes.mjs).
describe('view model of a QOperator model, shown as nodes', () => {
  let ptq;
  beforeAll(async () => {
    ptq = await loadPtqModule();
  });
  for (const name of ['qop_cnn', 'qop_mixed', 'qop_dynamic']) {
    it(`${name}: the file's nodes under their names and op types, connected by the file's tensors`, () => {
      const entry = fixture(name);
      const s = new ptq.Session();
      let graph;
      try {
        s.loadModel(new Uint8Array(fs.readFileSync(entry.model)));
        graph = JSON.parse(s.graphJson());
      } finally {
        s.delete();
      }
      const file = onnxNodes(entry.model);
      const m = buildViewModel(graph, { showCalibration: true });
      expect(m.nodes.filter((v) => v.kind === 'node').map((v) => [v.id, v.opType]).sort()).toEqual(file.map((n) => [n.name, n.op_type]).sort());
      const producer = new Map(entry.inputs.map((i) => [i.name, `input:${i.name}`]));
      for (const n of file) for (const t of n.outputs) producer.set(t, n.name);
      const expected = new Set();
      for (const n of file) for (const t of n.inputs) if (producer.has(t)) expected.add(`${producer.get(t)}->${n.name}:${t}`);
      for (const o of entry.outputs) expected.add(`${producer.get(o.name)}->output:${o.name}:${o.name}`);
      expect(new Set(m.edges.map((e) => `${e.from}->${e.to}:${e.tensor}`))).toEqual(expected);
      // Folded, the float operators keep the file's names.
      const folded = buildViewModel(graph);
      for (const q of entry.qoperator_nodes) expect(folded.byName.get(q.name)?.opType, q.name).toBe(q.float_op);
    });
  }
});
