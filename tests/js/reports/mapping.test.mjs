// Placing report rows on a model's nodes (web/pipeline/reports/mapping.mjs, §12.2): on the calibrated
// digits CNN (HzCalibration nodes) and its Q/DQ twin (calibration nodes named after their tensors), each rule, the rows placed on no node with their reasons, the
// result-shaped document, the heat layer (direction from the format) and the compare view.
import { describe, it, expect, beforeAll } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT, FIXTURES, loadPtqModule, fixture, readCalibrationFolder } from '../helpers.mjs';
import { netronAttachment } from '../../../web/app/export/netron.mjs';
import { readReport } from '../../../web/pipeline/reports/index.mjs';
import { mapReport, modulePath } from '../../../web/pipeline/reports/mapping.mjs';
import { reportDocument } from '../../../web/pipeline/reports/document.mjs';
import { buildHeat } from '../../../web/app/heatmap/mapping.mjs';
import { resolveSettings } from '../../../web/app/heatmap/controller.mjs';
import { heatScale } from '../../../web/charts/heat_scale.mjs';
import { commonSources, compareDocuments, measureMismatch } from '../../../web/app/compare/compare.mjs';

const DIR = path.join(REPO_ROOT, 'tests/fixtures/reports');
const read = (name) => readReport(name, fs.readFileSync(path.join(DIR, name)));
let hz;
let qdq;

async function graphOf(file) {
  const ptq = await loadPtqModule();
  const s = new ptq.Session();
  try {
    s.loadModel(fs.readFileSync(path.join(FIXTURES, 'calibrated', file)));
    return JSON.parse(s.graphJson());
  } finally {
    s.delete();
  }
}

beforeAll(async () => {
  hz = await graphOf('digits_cnn_calibrated_model.onnx');
  qdq = await graphOf('digits_cnn_qdq_model.onnx');
});

const placed = (m) => Object.fromEntries(m.rows.map((r) => [r.layer, [r.node, r.rule]]));

describe('rules on the calibrated digits CNN', () => {
  it('rknn: tensors to producers, renamed copies, graph input to its calibration node; unmatched listed', () => {
    const m = mapReport(read('error_analysis.txt'), hz);
    expect(placed(m)).toMatchObject({
      input: ['input_HzCalibration', 'exact'],
      input_int8: ['input_HzCalibration', 'renamed'],
      '/features/features.2/Relu_output_0': ['/features/features.2/Relu', 'exact'],
      '/Flatten_output_0_int8': ['/Flatten', 'renamed'],
      logits_conv: ['/fc/Gemm', 'renamed'],
      logits__float16: ['/fc/Gemm', 'renamed'],
      logits: ['/fc/Gemm', 'exact'],
    });
    expect(m.unmatched).toEqual([{ layer: '/head/Softmax_output_0', line: 26, reason: expect.stringMatching(/no node or tensor of that name \(also tried \/head\/Softmax\)/) }]);
    // Three rows on /fc/Gemm: the exact one shows.
    expect(m.nodes['/fc/Gemm']['simulator entire cos']).toBe(0.98802);
    expect(m.rows.find((r) => r.layer === 'logits').used).toBe(true);
    expect(m.rows.find((r) => r.layer === 'logits_conv').used).toBe(false);
    // Graph order.
    const graphOrder = hz.nodes.map((n) => n.name);
    expect(m.order).toEqual([...m.order].sort((a, b) => graphOrder.indexOf(a) - graphOrder.indexOf(b)));
    expect(m.matched).toBe(m.rows.length - 1);
  });

  it('Horizon: node names, truncated names by suffix, nodes the optimizer removed listed', () => {
    const m = mapReport(read('hb_mapper_makertbin.log'), hz);
    expect(placed(m)['...atures/features.9/Relu']).toEqual(['/features/features.9/Relu', 'truncated']);
    expect(m.unmatched.map((u) => u.layer)).toEqual(['/features/features.1/BatchNormalization']);
  });

  it('AIMET torch module names to the scopes of the exported model', () => {
    const m = mapReport(read('per_layer_quant_enabled.json'), hz);
    expect(placed(m)).toMatchObject({ 'features.0': ['/features/features.0/Conv', 'module'], fc: ['/fc/Gemm', 'module'] });
    expect(m.unmatched.map((u) => u.layer)).toEqual(['features.12']);
    expect(modulePath('/layer1/layer1.0/conv1/Conv')).toBe('layer1.0.conv1');
    expect(modulePath('/model.0/conv/Conv')).toBe('model.0.conv');
  });

  it('onnxruntime: Q/DQ suffixes, weights with _quantized to their calibration nodes', () => {
    const m = mapReport(read('qdq_loss_debug.json'), hz);
    expect(placed(m)).toMatchObject({
      '/features/features.9/Relu_output_0_DequantizeLinear_Output': ['/features/features.9/Relu', 'renamed'],
      'onnx::Conv_38_quantized': ['onnx::Conv_38_HzCalibration', 'renamed'],
      'fc.weight_quantized': ['fc.weight_HzCalibration', 'renamed'],
    });
    expect(m.unmatched.map((u) => u.layer)).toEqual(['/features/features.4/Dropout_output_0']);
  });

  it('Netron: node, value and tensor items; whole-model items are not placed', () => {
    const m = mapReport(read('digits.metrics.json'), hz);
    expect(placed(m)).toMatchObject({ logits: ['/fc/Gemm', 'exact'], 'fc.weight': ['fc.weight_HzCalibration', 'exact'] });
    expect(m.unmatched).toEqual([
      { layer: '(model) output cosine', line: 7, reason: 'about the whole model, not a node' },
      { layer: '/features/features.4/Dropout', line: 14, reason: 'no node or tensor of that name' },
    ]);
  });
});

describe('the Q/DQ twin (calibration nodes named after their tensors)', () => {
  it('a tensor-keyed report goes to the producer, not to the calibration node of the same name', () => {
    const m = mapReport(read('error_analysis.txt'), qdq);
    expect(qdq.nodes.some((n) => n.name === '/features/features.2/Relu_output_0' && n.calibration)).toBe(true);
    expect(placed(m)['/features/features.2/Relu_output_0']).toEqual(['/features/features.2/Relu', 'exact']);
    expect(placed(m).input[0]).toBe('input'); // the graph input's calibration node
  });
});

describe('synthetic graphs', () => {
  const graph = {
    nodes: [
      { name: '/backbone/stage2/very_long_block_name/cv1/conv/Conv', op_type: 'Conv', inputs: ['x'], outputs: ['a'] },
      { name: '/backbone/stage3/very_long_block_name/cv1/conv/Conv', op_type: 'Conv', inputs: ['a'], outputs: ['b'] },
    ],
    values: { x: { producer: null, consumers: ['/backbone/stage2/very_long_block_name/cv1/conv/Conv'] }, a: { producer: '/backbone/stage2/very_long_block_name/cv1/conv/Conv' }, b: { producer: '/backbone/stage3/very_long_block_name/cv1/conv/Conv' } },
  };
  const report = (layer) => ({ keys: 'node', rows: [{ layer, values: { v: 1 }, line: 1 }] });

  it('an ambiguous truncated name is not placed, and says why', () => {
    const m = mapReport(report('...very_long_block_name/cv1/conv/Conv'), graph);
    expect(m.unmatched[0].reason).toMatch(/truncated name that 2 nodes end with/);
  });

  it('a graph input without a calibration node is not placed, and says so', () => {
    const m = mapReport({ keys: 'tensor', rows: [{ layer: 'x', values: { v: 1 }, line: 3 }] }, graph);
    expect(m.unmatched).toEqual([{ layer: 'x', line: 3, reason: 'x is a graph input (no node produces it)' }]);
  });

  it('no graph: every row unmatched, nothing thrown', () => {
    const m = mapReport(report('a'), null);
    expect(m.matched).toBe(0);
    expect(m.unmatched).toHaveLength(1);
  });
});

describe('ptqscope\'s own Netron attachment reads back', () => {
  it('every node value of the export is the result\'s, on the same node, with the core\'s direction', async () => {
    const ptq = await loadPtqModule();
    const s = new ptq.Session();
    let result;
    try {
      const { model, data } = fixture('digits_cnn_calibrated');
      s.loadModel(fs.readFileSync(model));
      s.loadCalibrationData(readCalibrationFolder(data));
      result = JSON.parse(s.analyze(JSON.stringify({ analysis: 'sensitivity', options: { node_type: 'node', metrics: ['cosine-similarity', 'mse'], data_num: 1 } })));
    } finally {
      s.delete();
    }
    const text = JSON.stringify(netronAttachment(result, hz), null, 1);
    const r = readReport('digits.attachment.json', text);
    expect(r.format).toBe('netron');
    expect(r.problems).toEqual([]);
    const m = mapReport(r, hz);
    expect(m.unmatched).toEqual([]);
    const rows = result.sensitivity.node;
    for (const [node, row] of Object.entries(rows)) {
      expect(m.nodes[node]['node sensitivity cosine-similarity'], node).toBe(Number(row['cosine-similarity']));
      expect(m.nodes[node]['node sensitivity mse'], node).toBe(Number(row.mse));
      expect(m.nodes[node]['node sensitivity rank']).toBe(result.sensitivity_order.node.indexOf(node) + 1);
    }
    const better = Object.fromEntries(r.metrics.map((x) => [x.name, x.better]));
    expect(better).toMatchObject({ 'node sensitivity cosine-similarity': 'higher', 'node sensitivity mse': 'lower', 'node sensitivity rank': 'higher' });
  });
});

describe('document, heat layer and compare', () => {
  it('the document: report metrics per node, cosine as node_errors (accumulated / own)', () => {
    const r = read('error_analysis.txt');
    const doc = reportDocument(r, hz);
    expect(doc.schema).toBe('ptqscope.report');
    expect(doc.node_errors.metric).toBe('cosine-similarity');
    expect(doc.node_errors.nodes['/features/features.7/Conv']).toEqual({ accumulated: 0.99455, own: 0.99871 });
    expect(doc.report.nodes['/features/features.7/Conv']['runtime single_sim cos']).toBe('nan');
    expect(doc.report.unmatched).toHaveLength(1);
    expect(reportDocument(read('qdq_loss_debug.json'), hz).node_errors).toBeUndefined();
  });

  it('the heat layer takes the direction the format declares', () => {
    const doc = reportDocument(read('error_analysis.txt'), hz);
    const context = { report: doc };
    expect(resolveSettings(null, { view: 'report', metric: 'simulator entire euc' }, context)).toMatchObject({ view: 'report', metric: 'simulator entire euc' });
    const euc = buildHeat(null, hz, { view: 'report', metric: 'simulator entire euc' }, heatScale, context);
    expect(euc.legend.direction).toBe('higher is worse');
    // The largest Euclidean distance (3.9102 on /features/features.7/Conv) is the hottest.
    const worst = [...euc.values.entries()].sort((a, b) => b[1].value - a[1].value)[0];
    expect(worst[0]).toBe('/features/features.7/Conv');
    expect(worst[1].color).toBe(heatScale('x', [0, 1], { better: 'lower' }).color(1));
    const cos = buildHeat(null, hz, { view: 'report', metric: 'simulator entire cos' }, heatScale, context);
    expect(cos.legend.direction).toBe('lower is worse');
    // The calibration node of the input is drawn on its consumer too.
    expect(cos.values.has('/features/features.0/Conv')).toBe(true);
    const aimet = reportDocument(read('per_layer_quant_enabled.json'), hz);
    expect(buildHeat(null, hz, { view: 'report' }, heatScale, { report: aimet }).legend.direction).toBe('lower is worse');
  });

  it('compare: two generations of the rknn report, and the report against node_errors', () => {
    const a = reportDocument(read('error_analysis_v1.5.txt'), hz);
    const b = reportDocument(read('error_analysis.txt'), hz);
    const sources = commonSources(a, b).map((s) => s.id);
    expect(sources).toEqual(expect.arrayContaining(['report:rknn', 'node_errors:accumulated', 'node_errors:own']));
    const cmp = compareDocuments(a, b, { source: 'report:rknn', metric: 'simulator single cos' });
    expect(cmp.direction).toBe('lower is worse');
    const relu5 = cmp.rows.find((r) => r.name === '/features/features.5/Relu');
    expect(relu5).toMatchObject({ a: 0.999497, b: 0.9995 });
    expect(relu5.delta).toBeCloseTo(0.9995 - 0.999497, 12);
    expect(relu5.worse).toBeLessThan(0); // higher cosine in B: better
    const ne = compareDocuments(a, b, { source: 'node_errors:accumulated', metric: 'cosine-similarity' });
    expect(ne.rows.length).toBeGreaterThan(3);
  });

  it('compare: the Horizon log pairs with node errors measured as the converter does, not at node outputs', async () => {
    const log = reportDocument(read('hb_mapper_makertbin.log'), hz);
    expect(log.node_errors).toMatchObject({ metric: 'cosine-similarity', measure: 'converter', source: 'horizon' });
    const ptq = await loadPtqModule();
    const s = new ptq.Session();
    try {
      const entry = fixture('digits_cnn_calibrated');
      s.loadModel(fs.readFileSync(entry.model));
      s.loadCalibrationData(readCalibrationFolder(entry.data));
      const ours = (measure) => JSON.parse(s.analyze(JSON.stringify({ analysis: 'node_errors', options: { measure } })));
      const converter = ours('converter');
      expect(converter.node_errors.measure).toBe('converter');
      expect(commonSources(log, converter).map((x) => x.id)).toEqual(['node_errors:converter:accumulated', 'node_errors:converter:own']);
      const cmp = compareDocuments(log, converter, { source: 'node_errors:converter:accumulated' });
      expect(cmp.rows.map((r) => r.name)).toContain('/features/features.7/Conv');
      // At node outputs: another table, and the compare view says why nothing pairs.
      const output = ours('output');
      expect(output.node_errors.measure).toBe('output');
      expect(commonSources(log, output)).toEqual([]);
      expect(measureMismatch(log, output)).toMatch(/A's node errors are measured as the Horizon converter log measures them .* and B's at node outputs/);
      expect(measureMismatch(converter, log)).toBeNull();
    } finally {
      s.delete();
    }
  });
});
