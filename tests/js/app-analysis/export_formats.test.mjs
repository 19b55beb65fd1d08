// Export shapes: Model Explorer node data, Netron metrics attachment, CSV of each table,
// the results JSON — on a real result of the calibrated digits example.
import { describe, it, expect, beforeAll } from 'vitest';
import { openDigits, analyzeWithEvents } from './fixture.mjs';
import { modelExplorerNodeData } from '../../../web/app/export/model_explorer.mjs';
import { netronAttachment } from '../../../web/app/export/netron.mjs';
import { resultCsvFiles } from '../../../web/app/export/csv.mjs';
import { resultDocument } from '../../../web/app/export/index.mjs';
import { combineResults } from '../../../web/app/analysis/results.mjs';
import { nodeValues, toNumber } from '../../../web/app/heatmap/mapping.mjs';

let graph;
let result;

beforeAll(async () => {
  const d = await openDigits();
  graph = d.graph;
  const metrics = ['cosine-similarity', 'mse'];
  const act = analyzeWithEvents(d.session, { analysis: 'sensitivity', options: { node_type: 'activation', metrics } }).result;
  const loo = analyzeWithEvents(d.session, { analysis: 'leave_one_out', options: { node_type: 'node', metrics } }).result;
  result = combineResults(act, loo);
  d.session.delete();
});

// Parses RFC 4180 text (quoted fields may hold commas).
function parseCsv(text) {
  const rows = [];
  for (const line of text.split('\r\n').filter(Boolean)) {
    const cells = [];
    let m;
    const re = /("(?:[^"]|"")*"|[^,]*)(,|$)/g;
    while ((m = re.exec(line)) && m[0] !== '') {
      cells.push(m[1].startsWith('"') ? m[1].slice(1, -1).replace(/""/g, '"') : m[1]);
      if (m[2] === '') break;
    }
    rows.push(cells);
  }
  return rows;
}

describe('Model Explorer node data', () => {
  // Model Explorer's ONNX adapter (model-explorer-onnx) ids a node by its ONNX node name: every key
  // must be a node of the file, carrying the value the heatmap gives that node.
  it('is one graph\'s {results, gradient} keyed by ONNX node names with numeric values', () => {
    const data = modelExplorerNodeData(result, graph, { view: 'activation', metric: 'cosine-similarity' });
    expect(Object.keys(data).sort()).toEqual(['gradient', 'results']);
    const byName = new Map(graph.nodes.map((n) => [n.name, n]));
    const keys = Object.keys(data.results);
    const values = nodeValues(result, graph, { view: 'activation', metric: 'cosine-similarity' });
    expect(keys.sort()).toEqual([...values.keys()].filter((k) => Number.isFinite(values.get(k).value)).sort());
    for (const key of keys) {
      expect(byName.has(key), key).toBe(true);
      expect(Object.keys(data.results[key])).toEqual(['value']);
      expect(typeof data.results[key].value).toBe('number');
      expect(data.results[key].value).toBe(values.get(key).value);
    }
    // An activation item sits on its HzCalibration node (a node of the file) and on its consumers.
    const cal = graph.nodes.find((n) => n.calibration && n.calibration.kind !== 'weight' && n.name in data.results);
    expect(cal).toBeTruthy();
    for (const c of cal.calibration.consumers) expect(c in data.results, c).toBe(true);
  });

  it('has a gradient from stop 0 to 1 whose low end is hot for cosine and cold for mse', () => {
    const cos = modelExplorerNodeData(result, graph, { view: 'activation', metric: 'cosine-similarity' }).gradient;
    const mse = modelExplorerNodeData(result, graph, { view: 'activation', metric: 'mse' }).gradient;
    for (const g of [cos, mse]) {
      expect(g[0].stop).toBe(0);
      expect(g.at(-1).stop).toBe(1);
      for (let i = 1; i < g.length; i++) expect(g[i].stop).toBeGreaterThan(g[i - 1].stop);
      for (const s of g) expect(s.bgColor).toMatch(/^#[0-9a-f]{6}$/);
    }
    expect(cos[0].bgColor).toBe(mse.at(-1).bgColor);
    expect(cos.at(-1).bgColor).toBe(mse[0].bgColor);
  });

  it('node view keys the normal nodes themselves', () => {
    const data = modelExplorerNodeData(result, graph, { view: 'leave_one_out' });
    expect(Object.keys(data.results).sort()).toEqual(Object.keys(result.leave_one_out.node).sort());
  });
});

describe('Netron attachment', () => {
  it('has the signature and node metrics whose targets are graph nodes, unique per (target, name)', () => {
    const att = netronAttachment(result, graph);
    expect(att.signature).toBe('netron:attachment');
    expect(Array.isArray(att.metadata)).toBe(true);
    const names = new Set(graph.nodes.map((n) => n.name));
    const seen = new Set();
    for (const m of att.metrics) {
      expect(m.kind).toBe('node');
      expect(names.has(m.target)).toBe(true);
      expect(m.target).not.toContain('\n');
      const key = `${m.target}|${m.name}`;
      expect(seen.has(key)).toBe(false);
      seen.add(key);
    }
    for (const m of att.metadata) if (m.kind === 'model') expect(m.target).toBe('');
    const [first] = result.sensitivity_order.activation;
    expect(att.metrics).toContainEqual({ kind: 'node', target: first, name: 'activation sensitivity rank', value: 1 });
    expect(att.metrics).toContainEqual({
      kind: 'node', target: first, name: 'activation sensitivity cosine-similarity',
      value: result.sensitivity.activation[first]['cosine-similarity'],
    });
  });
});

describe('CSV and JSON', () => {
  it('writes one CSV per table with a header and one line per item in ranking order', () => {
    const files = resultCsvFiles(result);
    expect(files.map((f) => f.name).sort()).toEqual(['leave_one_out_node.csv', 'sensitivity_activation.csv']);
    const act = parseCsv(files.find((f) => f.name === 'sensitivity_activation.csv').text);
    expect(act[0]).toEqual(['Node', 'node', 'threshold', 'qtype', 'cosine-similarity', 'mse']);
    expect(act.slice(1).map((r) => r[0])).toEqual(result.sensitivity_order.activation);
    for (const r of act.slice(1)) {
      const row = result.sensitivity.activation[r[0]];
      expect(r[1]).toBe(row.node);
      expect(toNumber(r[4])).toBeCloseTo(toNumber(row['cosine-similarity']), 6);
    }
  });

  it('exports the result JSON in the CLI schema', () => {
    const doc = JSON.parse(JSON.stringify(resultDocument({ ...result, partial: true })));
    expect(doc.schema).toBe('ptqscope.result');
    expect(doc.version).toBe(1);
    expect(doc.partial).toBeUndefined();
    expect(doc.sensitivity.activation).toEqual(result.sensitivity.activation);
  });
});
