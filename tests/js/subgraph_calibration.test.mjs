// Calibration nodes inside a Loop body and both branches of an If (§1.13), on the command line, against
// onnxruntime-node running the same model with each calibration node written as QuantizeLinear ->
// DequantizeLinear (int8, scale threshold / 127, zero point 0: the same fake quantization) or left out.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as ort from 'onnxruntime-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli } from './cli_fixture.mjs';
import { decodeNpy, loadPtqModule } from './helpers.mjs';
import { buildModel } from './onnx_builder.mjs';
import { aggregate, cosine } from './quant_oracle.mjs';
import { encodeNpy } from '../../web/cli/lib/npy.mjs';
import { bodiesOf, buildViewModel } from '../../web/app/graph/model.mjs';

const INT64 = 7;
const BOOL = 9;
const INT8 = 3;

// Each calibration node: its key, its node name in its own graph, the qualified name (§1.13), its threshold.
const QUANTIZERS = {
  mainX: { node: 'x_HzCalibration', item: 'x_HzCalibration', threshold: 1.27 },
  acc: { node: 'acc_HzCalibration', item: 'loop/body/acc_HzCalibration', threshold: 2.54 },
  bodyX: { node: 'x_HzCalibration', item: 'loop/body/x_HzCalibration', threshold: 0.635 },
  thenY: { node: 'y_HzCalibration', item: 'if/then_branch/y_HzCalibration', threshold: 5.08 },
  elseY: { node: 'y_HzCalibration', item: 'if/else_branch/y_HzCalibration', threshold: 5.08 },
};

// The nodes and initializers of quantizer `key` from `input` to `output` in form 'hz' (HzCalibration),
// 'qdq' (QuantizeLinear -> DequantizeLinear) or 'none' (Identity).
function quantizer(form, key, input, output) {
  const { node, threshold } = QUANTIZERS[key];
  if (form === 'hz') {
    return { nodes: [{ name: node, op: 'HzCalibration', domain: 'horizon', inputs: [input], outputs: [output], attrs: [{ name: 'thresholds', floats: [threshold] }] }], initializers: [] };
  }
  if (form === 'none') return { nodes: [{ name: node, op: 'Identity', inputs: [input], outputs: [output] }], initializers: [] };
  const scale = `${key}_scale`;
  const zp = `${key}_zp`;
  return {
    nodes: [{ name: `${key}_q`, op: 'QuantizeLinear', inputs: [input, scale, zp], outputs: [`${key}_int8`] },
      { name: `${key}_dq`, op: 'DequantizeLinear', inputs: [`${key}_int8`, scale, zp], outputs: [output] }],
    initializers: [{ name: scale, dims: [], floats: [Math.fround(threshold) / 127] }, { name: zp, dims: [], dataType: INT8, raw: Int8Array.of(0) }],
  };
}

// A graph whose first nodes are quantizer `key`'s.
function withQuantizer(q, graph) {
  return { ...graph, nodes: [...q.nodes, ...graph.nodes], initializers: [...q.initializers, ...(graph.initializers ?? [])] };
}

// x [4] -> x_HzCalibration -> x_cal; loop (3 iterations from y0 = 0): y = acc(y) + x_HzCalibration(x)
// (the outer x); if sum(x) > 0: y_HzCalibration(y) * x_cal, else -y_HzCalibration(y).
// formOf(key) says how each calibration node is written.
function model(formOf) {
  const q = (key, input, output) => quantizer(formOf(key), key, input, output);
  const accQ = q('acc', 'y_in', 'y_in_q');
  const body = withQuantizer(accQ, withQuantizer(q('bodyX', 'x', 'xb'), {
    name: 'body',
    nodes: [{ name: 'add', op: 'Add', inputs: ['y_in_q', 'xb'], outputs: ['y_out'] },
      { name: 'keep_going', op: 'Identity', inputs: ['cond_in'], outputs: ['cond_out'] }],
    inputs: [{ name: 'i', elemType: INT64, dims: [] }, { name: 'cond_in', elemType: BOOL, dims: [] }, { name: 'y_in', dims: [4] }],
    outputs: [{ name: 'cond_out', elemType: BOOL, dims: [] }, { name: 'y_out', dims: [4] }],
  }));
  const thenBranch = withQuantizer(q('thenY', 'y', 'yt'), {
    name: 'then', nodes: [{ name: 'then_mul', op: 'Mul', inputs: ['yt', 'x_cal'], outputs: ['t'] }], inputs: [], outputs: [{ name: 't', dims: [4] }],
  });
  const elseBranch = withQuantizer(q('elseY', 'y', 'ye'), {
    name: 'else', nodes: [{ name: 'else_neg', op: 'Neg', inputs: ['ye'], outputs: ['e'] }], inputs: [], outputs: [{ name: 'e', dims: [4] }],
  });
  const main = withQuantizer(q('mainX', 'x', 'x_cal'), {
    nodes: [{ name: 'loop', op: 'Loop', inputs: ['M', '', 'y0'], outputs: ['y'], attrs: [{ name: 'body', g: body }] },
      { name: 'sum', op: 'ReduceSum', inputs: ['x'], outputs: ['s'], attrs: [{ name: 'keepdims', i: 0 }] },
      { name: 'positive', op: 'Greater', inputs: ['s', 'zero'], outputs: ['c'] },
      { name: 'if', op: 'If', inputs: ['c'], outputs: ['out'], attrs: [{ name: 'then_branch', g: thenBranch }, { name: 'else_branch', g: elseBranch }] }],
    inputs: [{ name: 'x', dims: [4] }],
    outputs: [{ name: 'out', dims: [4] }],
    initializers: [{ name: 'M', dims: [], int64s: [3] }, { name: 'y0', dims: [4], floats: [0, 0, 0, 0] }, { name: 'zero', dims: [], floats: [0] }],
  });
  const hz = Object.keys(QUANTIZERS).some((k) => formOf(k) === 'hz');
  return buildModel({ ...main, opsets: hz ? [['', 17], ['horizon', 1]] : [['', 17]] });
}

// Sample 0 sums to more than 0 (the then-branch), sample 1 to less (the else-branch).
const SAMPLES = [[0.3127, -0.0411, 0.5993, 0.0077], [-0.4521, 0.2219, -0.6183, 0.0356]].map((v) => Float32Array.from(v));

let tmp;
let modelPath;
let data;
beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ptqscope-subgraph-cal-'));
  modelPath = path.join(tmp, 'loop_if_calibrated.onnx');
  fs.writeFileSync(modelPath, model(() => 'hz'));
  data = path.join(tmp, 'calibration_data');
  fs.mkdirSync(path.join(data, 'x'), { recursive: true });
  SAMPLES.forEach((s, k) => fs.writeFileSync(path.join(data, 'x', `${k}.npy`), encodeNpy('float32', [4], s)));
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

// onnxruntime-node's output per sample for the model with the quantizers in `on` as Q/DQ pairs.
async function ortOutputs(on) {
  const session = await ort.InferenceSession.create(model((k) => (on.includes(k) ? 'qdq' : 'none')), { intraOpNumThreads: 1, graphOptimizationLevel: 'disabled', logSeverityLevel: 3 });
  const out = [];
  for (const s of SAMPLES) out.push((await session.run({ x: new ort.Tensor('float32', s, [4]) })).out.data);
  return out;
}

// get-sensitivity-of-nodes -n `nodeType` over both samples: its rows by item.
async function sensitivityRows(nodeType) {
  const json = path.join(tmp, `${nodeType}.json`);
  const r = await cli(['get-sensitivity-of-nodes', modelPath, data, '-n', nodeType, '-d', '2', '--quiet', '--workers', '1', '--json', json]);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return JSON.parse(fs.readFileSync(json, 'utf8')).sensitivity[nodeType];
}

describe('calibration nodes inside a Loop body and If branches on the command line', () => {
  for (const [quant, on] of [['on', Object.keys(QUANTIZERS)], ['off', []]]) {
    it(`run --quant ${quant} gives onnxruntime's outputs`, async () => {
      const out = path.join(tmp, `run-${quant}`);
      const r = await cli(['run', modelPath, data, '--quant', quant, '--out', out, '--quiet']);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      const expected = await ortOutputs(on);
      SAMPLES.forEach((_, k) => {
        const ours = decodeNpy(fs.readFileSync(path.join(out, `sample_${k}`, '0.npy'))).data;
        for (let i = 0; i < 4; i++) expect(Math.abs(ours[i] - expected[k][i]), `sample ${k} element ${i}`).toBeLessThanOrEqual(1e-6);
      });
    });
  }

  it('get-sensitivity-of-nodes -n activation ranks every calibration node, inside subgraphs by qualified name', async () => {
    const rows = await sensitivityRows('activation');
    expect(Object.keys(rows).sort()).toEqual(Object.values(QUANTIZERS).map((q) => q.item).sort());
    const float = await ortOutputs([]);
    for (const [key, q] of Object.entries(QUANTIZERS)) {
      const variant = await ortOutputs([key]);
      const expected = aggregate(SAMPLES.map((_, k) => [[float[k], variant[k]]]), cosine);
      expect(Math.abs(rows[q.item]['cosine-similarity'] - expected), q.item).toBeLessThanOrEqual(1e-6);
    }
    // A branch node that only one sample reaches changes that sample alone: its cosine is below 1.
    expect(rows['if/else_branch/y_HzCalibration']['cosine-similarity']).toBeLessThan(1);
  });

  it('get-sensitivity-of-nodes -n node lists the subgraphs\' nodes with calibrated inputs', async () => {
    const rows = await sensitivityRows('node');
    expect(Object.keys(rows).sort()).toEqual(['if/else_branch/else_neg', 'if/then_branch/then_mul', 'loop/body/add']);
    // loop/body/add switches both quantizers of the body.
    const float = await ortOutputs([]);
    const both = await ortOutputs(['acc', 'bodyX']);
    const expected = aggregate(SAMPLES.map((_, k) => [[float[k], both[k]]]), cosine);
    expect(Math.abs(rows['loop/body/add']['cosine-similarity'] - expected)).toBeLessThanOrEqual(1e-6);
  });
});

describe('runall on calibration nodes inside If branches', () => {
  it('plots the top nodes that ran on the plotted sample and names the branch node that did not', async () => {
    const out = path.join(tmp, 'runall');
    const r = await cli(['runall', modelPath, data, '-s', out, '--workers', '1'], { cwd: tmp });
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(fs.readFileSync(path.join(out, 'results.json'), 'utf8'));
    // The two samples take different branches: the plotted one (the last) leaves out the other branch's node.
    const branches = [QUANTIZERS.thenY.item, QUANTIZERS.elseY.item];
    expect(doc.distribution_not_run).toHaveLength(1);
    expect(branches).toContain(doc.distribution_not_run[0]);
    expect(doc.channelwise_not_run).toEqual(doc.distribution_not_run);
    expect(doc.distribution_order).toEqual(expect.arrayContaining(branches.filter((b) => b !== doc.distribution_not_run[0])));
    expect(doc.distribution_order).not.toContain(doc.distribution_not_run[0]);
    const note = `distribution: not plotted, did not run on sample '${doc.distribution_sample}' (inside a branch the sample does not take): ${doc.distribution_not_run[0]}`;
    expect(r.stdout + r.stderr).toContain(note);
  });
});

describe('calibration nodes inside subgraphs in the graph document and the viewer', () => {
  let graph;
  beforeAll(async () => {
    const ptq = await loadPtqModule();
    const session = new ptq.Session();
    session.loadModel(fs.readFileSync(modelPath));
    graph = JSON.parse(session.graphJson());
    session.delete();
  });
  const subgraph = (node, attr) => bodiesOf(graph.nodes.find((n) => n.name === node)).find((b) => b.attr === attr).graph;
  const nodeIn = (g, name) => g.nodes.find((n) => n.name === name);

  it('a subgraph\'s calibration node carries its state, its qualified name and relations within its graph', () => {
    const body = subgraph('loop', 'body');
    expect(nodeIn(body, 'acc_HzCalibration').calibration).toMatchObject({ item: 'loop/body/acc_HzCalibration', qtype: 'int8', switch: 'ON', consumers: ['add'], tensor: 'y_in' });
    expect(nodeIn(body, 'add').input_calibrations).toEqual(['acc_HzCalibration', 'x_HzCalibration']);
    const elseBranch = subgraph('if', 'else_branch');
    expect(nodeIn(elseBranch, 'y_HzCalibration').calibration).toMatchObject({ item: 'if/else_branch/y_HzCalibration', consumers: ['else_neg'] });
    expect(nodeIn(graph, 'x_HzCalibration').calibration.item).toBe('x_HzCalibration');
  });

  it('the opened Loop body draws its calibration node as a badge named as the analyses name it', () => {
    const m = buildViewModel(subgraph('loop', 'body'));
    const intoAdd = m.edges.find((e) => e.from === 'input:y_in' && e.to === 'add');
    expect(intoAdd.badges.map((b) => [b.node, b.text])).toEqual([['loop/body/acc_HzCalibration', 'int8']]);
  });
});
