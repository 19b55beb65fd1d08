// The pure parts of the what-if, path and compare views, on hand-made documents whose expected
// values are worked out by hand in the test: the configuration document built from undoable changes,
// paths through a small graph and the first node whose accumulated error crosses X, and the matching
// of two result documents by node name (deltas, ordering, unmatched names, metric direction).
import { describe, expect, it } from 'vitest';
import { ACTIONS, createWhatIf, checkDocument, changeText } from '../../../web/app/whatif/config.mjs';
import { QTYPES, THRESHOLD_METHODS } from '../../../web/pipeline/catalog.mjs';
import { findPath, pathSeries, firstCrossing, crosses } from '../../../web/app/whatif/path.mjs';
import { sourcesOf, commonSources, compareDocuments, compareFigure } from '../../../web/app/compare/compare.mjs';
import { buildHeat } from '../../../web/app/heatmap/mapping.mjs';
import { heatScale } from '../../../web/charts/heat_scale.mjs';

// input -> in_cal -> Conv_1 -> Relu_2 -> (Add_4 via Conv_3 branch and direct) -> out
const cal = (name, consumers) => ({ name, op_type: 'HzCalibration', domain: 'horizon', inputs: [], outputs: [`${name}_o`], calibration: { kind: 'feature', consumers }, input_calibrations: [] });
const GRAPH = {
  inputs: [{ name: 'input' }],
  outputs: [{ name: 'out' }],
  nodes: [
    { ...cal('in_cal', ['Conv_1']), inputs: ['input'], outputs: ['x1'] },
    { name: 'w_cal', op_type: 'HzCalibration', inputs: ['w'], outputs: ['w1'], calibration: { kind: 'weight', consumers: ['Conv_1'] }, input_calibrations: [] },
    { name: 'Conv_1', op_type: 'Conv', inputs: ['x1', 'w1'], outputs: ['c1'], input_calibrations: ['in_cal', 'w_cal'] },
    { name: 'Relu_2', op_type: 'Relu', inputs: ['c1'], outputs: ['r2'], input_calibrations: [] },
    { ...cal('c3_cal', ['Conv_3']), inputs: ['w3'], outputs: ['w3q'] },
    { name: 'Conv_3', op_type: 'Conv', inputs: ['r2', 'w3q'], outputs: ['c3'], input_calibrations: ['c3_cal'] },
    { name: 'Add_4', op_type: 'Add', inputs: ['r2', 'c3'], outputs: ['out'], input_calibrations: [] },
  ],
  values: {
    input: { producer: null, consumers: ['in_cal'] },
    w: { producer: null, consumers: ['w_cal'], initializer: true },
    x1: { producer: 'in_cal', consumers: ['Conv_1'] },
    w1: { producer: 'w_cal', consumers: ['Conv_1'] },
    c1: { producer: 'Conv_1', consumers: ['Relu_2'] },
    r2: { producer: 'Relu_2', consumers: ['Conv_3', 'Add_4'] },
    c3: { producer: 'Conv_3', consumers: ['Add_4'] },
    out: { producer: 'Add_4', consumers: [] },
  },
};

describe('what-if configuration document', () => {
  it('changes become intents (normal nodes) and overrides (calibration nodes), one undo step each', () => {
    const w = createWhatIf({ graph: GRAPH, modelName: 'm.onnx' });
    expect(w.document()).toEqual({ schema: 'ptqscope.config', version: 1, model: 'm.onnx', base: 'stored', intents: [] });
    w.add(['Conv_1'], 'int16');
    w.add(['w_cal', 'Conv_3'], 'float');
    expect(w.document().intents).toEqual([{ node: 'Conv_1', action: 'int16' }, { node: 'Conv_3', action: 'float' }]);
    expect(w.document().calibrations).toEqual({ w_cal: { on: false } });
    // A later intent on Conv_1 drops the explicit override of its weight calibration: the latest change wins.
    w.add(['Conv_1'], 'int8');
    expect(w.document().intents).toEqual([{ node: 'Conv_3', action: 'float' }, { node: 'Conv_1', action: 'int8' }]);
    expect(w.document().calibrations).toBeUndefined();
    w.undo();
    expect(w.document().calibrations).toEqual({ w_cal: { on: false } });
    expect(w.changes).toHaveLength(2);
    w.reset('all_off');
    expect(w.document()).toMatchObject({ base: 'all_off', intents: [] });
    expect(w.canUndo).toBe(false);
  });

  it('rejects unknown nodes and actions by name, and documents that are not configurations', () => {
    const w = createWhatIf({ graph: GRAPH });
    expect(() => w.add(['Conv_9'], 'float')).toThrow('what-if: Conv_9 is not a node of the model');
    expect(() => w.add(['Conv_1'], 'int4x')).toThrow("unknown action 'int4x'");
    expect(() => w.add([], 'float')).toThrow('select a node');
    expect(() => w.add(['Relu_2'], 'float')).toThrow('what-if: Relu_2 has no calibrated inputs (nothing to switch)');
    expect(() => checkDocument({ schema: 'ptqscope.result' }, 'fix.json')).toThrow('fix.json: "schema" is "ptqscope.result", expected "ptqscope.config"');
    const opened = { schema: 'ptqscope.config', version: 1, base: 'stored', intents: [{ node: 'Conv_1', action: 'int16' }], calibrations: { in_cal: { on: true, qtype: 'int16' }, w_cal: { on: true, qtype: 'int16' } } };
    w.open(opened);
    // Opening then changing Conv_1 removes the file's overrides of Conv_1's calibration nodes.
    w.add(['Conv_1'], 'float');
    expect(w.document().intents).toEqual([{ node: 'Conv_1', action: 'float' }]);
    expect(w.document().calibrations).toBeUndefined();
  });
});

describe('threshold changes and qtypes', () => {
  it('a threshold change is an intent on the node (a method of the core\'s or values), undoable, replaced by a later one', () => {
    const w = createWhatIf({ graph: GRAPH });
    // The qtype buttons are float and the core's qtypes.
    expect(ACTIONS).toEqual(['float', ...QTYPES.map((q) => q.name)]);
    expect(ACTIONS).toContain('uint8');
    w.add(['Conv_1'], 'threshold', { method: 'percentile', percentile: 99.9 });
    w.add(['in_cal'], 'uint8');
    expect(w.document().intents).toEqual([{ node: 'Conv_1', action: 'threshold', method: 'percentile', percentile: 99.9 }]);
    expect(w.document().calibrations).toEqual({ in_cal: { on: true, qtype: 'uint8' } });
    // The same node again: the later threshold replaces the earlier; the qtype override stays.
    w.add(['Conv_1'], 'threshold', { value: [0.5] });
    expect(w.document().intents).toEqual([{ node: 'Conv_1', action: 'threshold', value: [0.5] }]);
    expect(changeText(w.changes.at(-1))).toBe('Conv_1 → threshold 0.5');
    w.undo();
    expect(w.document().intents).toEqual([{ node: 'Conv_1', action: 'threshold', method: 'percentile', percentile: 99.9 }]);
    // A qtype intent on the node keeps its threshold intent (they are different changes).
    w.add(['Conv_1'], 'int16');
    expect(w.document().intents.map((i) => i.action)).toEqual(['threshold', 'int16']);
  });

  it('rejects a method the core does not describe, a bad percentile, values that are not numbers, and nodes without activation quantizers', () => {
    // Conv_3's calibration node as a weight's (the graph above calls it a feature).
    const graph = { ...GRAPH, nodes: GRAPH.nodes.map((n) => (n.name === 'c3_cal' ? { ...n, calibration: { kind: 'weight', consumers: ['Conv_3'] } } : n)) };
    const w = createWhatIf({ graph });
    expect(() => w.add(['Conv_1'], 'threshold', { method: 'entropy' })).toThrow(`threshold method 'entropy' is not one of ${THRESHOLD_METHODS.map((m) => m.name).join(', ')}`);
    expect(() => w.add(['Conv_1'], 'threshold', { method: 'percentile', percentile: 120 })).toThrow('the percentile must lie in (0, 100]');
    expect(() => w.add(['Conv_1'], 'threshold', { value: ['x'] })).toThrow("threshold values must be numbers (got 'x')");
    // Conv_3 reads only a weight's calibration node: its thresholds are set on that node's own name.
    expect(() => w.add(['Conv_3'], 'threshold', { method: 'max' })).toThrow('Conv_3 reads no activation through a calibration node');
    expect(w.changes).toHaveLength(0);
  });

  it('a hint\'s suggestion is one change marked (hint), shown with its text', () => {
    const w = createWhatIf({ graph: GRAPH });
    w.applyIntent({ node: 'in_cal', action: 'threshold', value: [0.4037673], method: 'max', per_channel: false, text: 'threshold 0.4038 (max)' }, 'hint');
    // The measured values, not the method: the document reproduces the hint's effect exactly.
    expect(w.document().intents).toEqual([{ node: 'in_cal', action: 'threshold', value: [0.4037673] }]);
    expect(changeText(w.changes[0])).toBe('in_cal → threshold 0.4038 (max) (hint)');
    w.applyIntent({ node: 'Conv_1', action: 'float', text: 'look upstream: Conv_1 (in float)' }, 'hint');
    expect(w.document().intents.at(-1)).toEqual({ node: 'Conv_1', action: 'float' });
    expect(w.changes).toHaveLength(2);
  });
});

describe('a fix applied to the what-if view', () => {
  // A fix's document as the core writes it: base, one intent per node raised, the resolved map (here
  // w_cal as stored: the fix left it, which Conv_1's intent alone would not say).
  const fix = {
    schema: 'ptqscope.config', version: 1, base: 'stored', round: 'half_to_even',
    intents: [{ node: 'Conv_1', action: 'int16' }, { node: 'Conv_3', action: 'float' }],
    calibrations: { in_cal: { on: true, qtype: 'int16' }, w_cal: { on: true, qtype: 'int8' }, c3_cal: { on: false, qtype: 'int8' } },
    provenance: { analysis: 'fix', target: 'cosine-similarity>=0.99', met: true },
  };

  it('becomes one undoable change per node, each carrying the fix\'s states of its calibration nodes', () => {
    const w = createWhatIf({ graph: GRAPH, modelName: 'm.onnx' });
    w.applyFix(fix);
    expect(w.changes.map((c) => [c.targets, c.action, c.source])).toEqual([[['Conv_1'], 'int16', 'fix'], [['Conv_3'], 'float', 'fix']]);
    expect(w.startDocument()).toEqual({ schema: 'ptqscope.config', version: 1, model: 'm.onnx', base: 'stored', round: 'half_to_even', intents: [] });
    // The exact states of the fix (w_cal kept at int8 although Conv_1's intent says int16), and its
    // provenance while the changes are exactly the fix's.
    expect(w.document()).toEqual({
      schema: 'ptqscope.config', version: 1, model: 'm.onnx', base: 'stored', round: 'half_to_even', intents: fix.intents,
      calibrations: fix.calibrations, provenance: fix.provenance,
    });
    w.undo();
    expect(w.document()).toEqual({
      schema: 'ptqscope.config', version: 1, model: 'm.onnx', base: 'stored', round: 'half_to_even', intents: [fix.intents[0]],
      calibrations: { in_cal: fix.calibrations.in_cal, w_cal: fix.calibrations.w_cal },
    });
  });
});

describe('paths and the first crossing', () => {
  it('shortest path from the input to the output, routed through chosen nodes, calibration nodes left out', () => {
    expect(findPath(GRAPH, {})).toEqual(['Conv_1', 'Relu_2', 'Add_4']);
    expect(findPath(GRAPH, { through: ['Conv_3'] })).toEqual(['Conv_1', 'Relu_2', 'Conv_3', 'Add_4']);
    expect(() => findPath(GRAPH, { input: 'nope' })).toThrow("'nope' is not an input of the model");
  });

  it('own / accumulated along the path; the first crossing follows the metric direction', () => {
    const ne = { metric: 'cosine-similarity', nodes: { Conv_1: { own: 0.9999, accumulated: 0.9999 }, Relu_2: { own: 1, accumulated: 0.9995 }, Conv_3: { own: 0.998, accumulated: 0.997 }, Add_4: { own: 1, accumulated: 0.998 } } };
    const s = pathSeries(ne, ['Conv_1', 'Relu_2', 'Conv_3', 'Add_4']);
    expect(s.accumulated).toEqual([0.9999, 0.9995, 0.997, 0.998]);
    expect(firstCrossing(s, 0.999)).toEqual({ node: 'Conv_3', index: 2, value: 0.997 });
    expect(firstCrossing(s, 0.99)).toBeNull();
    expect(crosses('mse', 0.2, 0.1)).toBe(true);
    expect(crosses('mse', 0.05, 0.1)).toBe(false);
    expect(crosses('cosine-similarity', 'nan', 0.1)).toBe(false);
  });
});

describe('comparing two results', () => {
  const A = {
    schema: 'ptqscope.result',
    sensitivity: { node: { Conv_1: { 'cosine-similarity': 0.99, mse: 0.1 }, Relu_2: { 'cosine-similarity': 0.95, mse: 0.4 }, Conv_3: { 'cosine-similarity': 0.999, mse: 0.01 } } },
    sensitivity_order: { node: ['Relu_2', 'Conv_1', 'Conv_3'] },
    node_errors: { metric: 'cosine-similarity', order: ['Conv_1', 'Relu_2'], nodes: { Conv_1: { own: 0.99, accumulated: 0.99 }, Relu_2: { own: 1, accumulated: 0.98 } } },
  };
  const B = {
    schema: 'ptqscope.result',
    sensitivity: { node: { Conv_1: { 'cosine-similarity': 0.99, mse: 0.1 }, Relu_2: { 'cosine-similarity': 0.995, mse: 0.05 }, Add_4: { 'cosine-similarity': 0.97, mse: 0.2 } } },
    sensitivity_order: { node: ['Add_4', 'Conv_1', 'Relu_2'] },
    what_if: { metric: 'cosine-similarity', nodes: { Conv_1: 1 } },
  };

  it('lists the tables both documents hold', () => {
    expect(sourcesOf(A).map((s) => s.id)).toEqual(['sensitivity:node', 'node_errors:accumulated', 'node_errors:own']);
    expect(commonSources(A, B)).toEqual([{ id: 'sensitivity:node', label: 'sensitivity (node)', metrics: ['cosine-similarity', 'mse'] }]);
  });

  it('matches by name, sorts by |B − A|, lists the unmatched names, signs "worse" by the metric', () => {
    const cos = compareDocuments(A, B, { source: 'sensitivity:node', metric: 'cosine-similarity' });
    // Relu_2: 0.995 - 0.95 = 0.045 (better), Conv_1: 0 (same)
    expect(cos.rows.map((r) => r.name)).toEqual(['Relu_2', 'Conv_1']);
    expect(cos.rows[0].delta).toBeCloseTo(0.045, 12);
    expect(cos.rows[0].worse).toBeCloseTo(-0.045, 12);
    expect(cos.rows[1]).toMatchObject({ delta: 0, worse: 0 });
    expect(cos.onlyA).toEqual(['Conv_3']);
    expect(cos.onlyB).toEqual(['Add_4']);
    expect(cos.direction).toBe('lower is worse');
    const mse = compareDocuments(A, B, { source: 'sensitivity:node', metric: 'mse' });
    expect(mse.rows[0].name).toBe('Relu_2');
    expect(mse.rows[0].worse).toBeCloseTo(-0.35, 12); // 0.05 - 0.4, lower mse is better
    expect(() => compareDocuments(A, B, { source: 'node_errors:own' })).toThrow("result B has no 'node_errors:own' table");
  });

  it("one figure with both curves along A's order (B's extra names appended, gaps as NaN)", () => {
    const cmp = compareDocuments(A, B, { source: 'sensitivity:node', metric: 'cosine-similarity' });
    const fig = compareFigure(A, B, cmp, { nameA: 'a.json', nameB: 'b.json' });
    expect(fig.curves[0]).toEqual({ name: 'a.json', x: ['Relu_2', 'Conv_1', 'Conv_3', 'Add_4'], y: [0.95, 0.99, 0.999, 'nan'] });
    expect(fig.curves[1].y).toEqual([0.995, 0.99, 'nan', 0.97]);
  });

  it('the delta is a heat layer: the worse change is the hot end', () => {
    const cmp = compareDocuments(A, { ...B, sensitivity: { node: { ...B.sensitivity.node, Conv_1: { 'cosine-similarity': 0.9, mse: 1 } } } }, { source: 'sensitivity:node', metric: 'cosine-similarity' });
    const heat = buildHeat(null, GRAPH, { view: 'compare' }, heatScale, { compare: cmp });
    // Conv_1 dropped by 0.09 (worse), Relu_2 rose by 0.045 (better).
    expect(heat.values.get('Conv_1').value).toBeCloseTo(-0.09, 12);
    expect(heat.legend.direction).toBe('lower is worse');
    expect(heat.values.get('Conv_1').color).toBe(heatScale('cosine-similarity', [-0.09, 0.045], { scale: 'range' }).color(-0.09)); // changes: their range
    expect(heat.legend.title).toBe('change B − A (sensitivity:node): cosine-similarity');
  });

  it('node_errors and what_if are heat layers of the result', () => {
    const heat = buildHeat(A, GRAPH, { view: 'accumulated' }, heatScale);
    expect([...heat.values.keys()].sort()).toEqual(['Conv_1', 'Relu_2']);
    expect(heat.values.get('Relu_2').value).toBe(0.98);
    const own = buildHeat(A, GRAPH, { view: 'own' }, heatScale);
    expect(own.values.get('Relu_2').value).toBe(1);
    expect(buildHeat(B, GRAPH, { view: 'what_if' }, heatScale).values.get('Conv_1').value).toBe(1);
  });
});
