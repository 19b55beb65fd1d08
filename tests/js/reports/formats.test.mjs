// The toolchain report readers (web/pipeline/reports/): each sample of tests/fixtures/reports (written
// for these tests from the formats' documentation and sources, with bad rows and names the model does
// not have) parses to the rows and values its text holds, bad rows are reported with their line, and
// no input makes a reader throw: random bytes, every truncation of the samples, wrong formats forced.
import { describe, it, expect } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../helpers.mjs';
import { REPORT_FORMATS, ReportError, detectFormat, readReport } from '../../../web/pipeline/reports/index.mjs';
import { parseJsonLenient, parseNumber } from '../../../web/pipeline/reports/common.mjs';

const DIR = path.join(REPO_ROOT, 'tests/fixtures/reports');
const sample = (name) => fs.readFileSync(path.join(DIR, name), 'utf8');
const read = (name) => readReport(name, sample(name));
const row = (report, layer) => report.rows.find((r) => r.layer === layer);
// The 1-based line of the first line of `name` containing `text`.
const lineOf = (name, text) => sample(name).split('\n').findIndex((l) => l.includes(text)) + 1;

describe('format detection', () => {
  it('detects every sample as its format', () => {
    const expected = {
      'error_analysis.txt': 'rknn', 'error_analysis_v1.5.txt': 'rknn', 'hb_mapper_makertbin.log': 'horizon',
      'qdq_loss_debug.json': 'ort-qdq', 'per_layer_quant_enabled.json': 'aimet', 'per_layer_mse_loss.json': 'aimet',
      'digits.metrics.json': 'netron',
    };
    expect(fs.readdirSync(DIR).sort()).toEqual(Object.keys(expected).sort());
    for (const [file, id] of Object.entries(expected)) expect(detectFormat(file, sample(file))?.id, file).toBe(id);
  });

  it('names the file when it is no report, and an unknown forced format', () => {
    expect(() => readReport('notes.txt', 'hello\nworld\n')).toThrow(ReportError);
    expect(() => readReport('notes.txt', 'hello')).toThrow(/notes\.txt: not a report ptqscope reads/);
    expect(() => readReport('x.json', '{}', { format: 'tflite' })).toThrow(/x\.json: unknown report format 'tflite'/);
    expect(detectFormat('bin.txt', 'simulator_error\n[Conv] a\u0000')).toBeNull();
  });
});

describe('rknn-toolkit2 error_analysis.txt', () => {
  it('2.x (cos | euc cells, runtime columns): values, fused rows, input rows', () => {
    const r = read('error_analysis.txt');
    expect(r.format).toBe('rknn');
    expect(r.metrics.map((m) => [m.name, m.better])).toEqual([
      ['simulator entire cos', 'higher'], ['simulator entire euc', 'lower'], ['simulator single cos', 'higher'], ['simulator single euc', 'lower'],
      ['runtime entire cos', 'higher'], ['runtime entire euc', 'lower'], ['runtime single_sim cos', 'higher'], ['runtime single_sim euc', 'lower'],
    ]);
    expect(r.metrics[0]).toMatchObject({ core: 'cosine-similarity', kind: 'accumulated' });
    expect(r.metrics[2]).toMatchObject({ core: 'cosine-similarity', kind: 'own' });
    expect(r.rows).toHaveLength(15);
    expect(row(r, '/features/features.7/Conv_output_0')).toMatchObject({
      line: lineOf('error_analysis.txt', '[Conv] /features/features.7/Conv_output_0    0.99455'),
      info: { op: 'Conv' },
      values: {
        'simulator entire cos': 0.99455, 'simulator entire euc': 3.9102, 'simulator single cos': 0.99871, 'simulator single euc': 1.9011,
        'runtime entire cos': 0.99431, 'runtime entire euc': 3.9915, 'runtime single_sim euc': 0,
      },
    });
    expect(row(r, '/features/features.7/Conv_output_0').values['runtime single_sim cos']).toBeNaN();
    expect(row(r, '/features/features.0/Conv_output_0').values).toEqual({}); // fused into the next row
    expect(row(r, 'input').values).toEqual({ 'simulator entire cos': 1, 'simulator entire euc': 0, 'simulator single cos': 1, 'simulator single euc': 0 });
    expect(r.problems).toEqual([
      { line: 27, reason: expect.stringMatching(/unreadable metric cells.*\/features\/features\.3\/Conv_output_0/) },
      { line: 28, reason: expect.stringMatching(/^not a table row/) },
    ]);
  });

  it('1.5.x (one cosine per cell, 6 decimals)', () => {
    const r = read('error_analysis_v1.5.txt');
    expect(r.metrics.map((m) => m.name)).toEqual(['simulator entire cos', 'simulator single cos']);
    expect(row(r, '/features/features.5/Relu_output_0').values).toEqual({ 'simulator entire cos': 0.999021, 'simulator single cos': 0.999497 });
    expect(row(r, '/features/features.10/MaxPool_output_0').values['simulator entire cos']).toBeNaN();
    expect(r.rows.map((x) => x.layer)).not.toContain('...');
    expect(r.problems).toEqual([{ line: lineOf('error_analysis_v1.5.txt', 'features.11'), reason: expect.stringMatching(/unreadable metric cells/) }]);
  });

  it('a file without the table header is one problem, not an exception', () => {
    const r = readReport('error_analysis.txt', '[Conv] a 0.9 | 1\n');
    expect(r.rows).toEqual([]);
    expect(r.problems).toEqual([{ line: 1, reason: expect.stringMatching(/layer_name/) }]);
  });
});

describe('Horizon converter log', () => {
  // A table as HMCT prints it: a title line, '=' rule, header, '-' rule, the rows.
  const logTable = (title, width, header, rows) => [title, '='.repeat(width), header, '-'.repeat(width), ...rows, ''].join('\n');

  it('cuts cells at the header offsets; -- is empty; truncated names kept as printed', () => {
    const r = read('hb_mapper_makertbin.log');
    // No distance columns in its node table: the cosine alone, measured as the converter does (§12.3).
    expect(r.metrics).toEqual([{ name: 'cosine similarity', core: 'cosine-similarity', kind: 'accumulated', measure: 'converter', better: 'higher' }]);
    expect(r.rows.map((x) => x.layer)).toEqual([
      '/features/features.0/Conv', '/features/features.2/Relu', '/features/features.3/Conv', '/features/features.1/BatchNormalization',
      '/features/features.6/MaxPool', '/features/features.7/Conv', '/features/features.10/MaxPool', '/Flatten', '...atures/features.9/Relu',
    ]);
    expect(row(r, '/features/features.7/Conv')).toMatchObject({
      values: { 'cosine similarity': 0.994552 },
      info: { ON: 'BPU', Subgraph: 'id(0)', Type: 'HzSQuantizedConv', DataType: 'int16', threshold: 3.10265 },
      line: lineOf('hb_mapper_makertbin.log', '/features/features.7/Conv'),
    });
    expect(row(r, '/features/features.2/Relu').info).toEqual({ ON: 'BPU', Subgraph: 'id(0)' });
    expect(row(r, '/Flatten').values).toEqual({});
    expect(row(r, '...atures/features.9/Relu').truncated).toBe(true);
    // The model-output table is not node rows.
    expect(r.rows.map((x) => x.layer)).not.toContain('logits');
    expect(r.problems).toEqual([{ line: lineOf('hb_mapper_makertbin.log', '/fc/Gemm'), reason: 'Cosine Similarity of /fc/Gemm is not a number: "0.98x02"' }]);
  });

  it('the PTQ-path table (no ON / Subgraph columns)', () => {
    const text = logTable('The main quantized node information:', 60, 'Node                    Type  Cosine Similarity  Threshold  DataType', [
      '/model.0/conv/Conv      Conv  0.999871           1.0        int8',
      '/model.22/dfl/Softmax   Softmax  0.987410        9.8802     int8']);
    const r = readReport('hb_compile.log', text);
    expect(r.rows[0]).toMatchObject({ layer: '/model.0/conv/Conv', values: { 'cosine similarity': 0.999871 }, info: { Type: 'Conv', DataType: 'int8', threshold: 1 }, line: 5 });
    // A cell that overflows its column is read as the text between the offsets: never a wrong number.
    expect(r.rows).toHaveLength(1);
    expect(r.problems).toEqual([{ line: 6, reason: expect.stringMatching(/\/model\.22\/dfl\/Softmax is not a number/) }]);
  });

  it('distance columns (a table keyed by Node with them, as old logs print the output table): heat layers', () => {
    const text = logTable('2021-04-20 17:06:20,339 INFO The quantify model output:', 71, 'Node  Cosine Similarity  L1 Distance  L2 Distance  Chebyshev Distance  ', [
      'ip2   0.999989           7.732184     2.969808     16.220459           ',
      'ip3   0.98               --           x1           0.5']);
    const r = readReport('hb_mapper_makertbin.log', text);
    // L1 = mean |a - b| (the core's mre), Chebyshev = max |a - b| (chebyshev); L2 is its own metric (the mse
    // in hmct, sqrt(sum of squares) / n in horizon_nn).
    expect(r.metrics).toEqual([
      { name: 'cosine similarity', core: 'cosine-similarity', kind: 'accumulated', measure: 'converter', better: 'higher' },
      { name: 'l1 distance', core: 'mre', better: 'lower' },
      { name: 'l2 distance', better: 'lower' },
      { name: 'chebyshev distance', core: 'chebyshev', better: 'lower' },
    ]);
    expect(r.rows).toEqual([{ layer: 'ip2', line: 5, info: {}, truncated: false,
      values: { 'cosine similarity': 0.999989, 'l1 distance': 7.732184, 'l2 distance': 2.969808, 'chebyshev distance': 16.220459 } }]);
    expect(r.problems).toEqual([{ line: 6, reason: 'L2 Distance of ip3 is not a number: "x1"' }]);
  });
});

describe('onnxruntime qdq_loss_debug JSON', () => {
  it('activations and weights, NaN / Infinity as json.dump writes them, bad entries with lines', () => {
    const r = read('qdq_loss_debug.json');
    expect(r.metrics).toEqual([
      { name: 'qdq_err (dB)', better: 'higher' }, { name: 'xmodel_err (dB)', better: 'higher' }, { name: 'weight error (dB)', better: 'higher' },
    ]);
    expect(row(r, '/features/features.6/MaxPool_output_0')).toMatchObject({ values: { 'qdq_err (dB)': 40.02, 'xmodel_err (dB)': 33.84 }, line: 5 });
    expect(row(r, 'logits').values['qdq_err (dB)']).toBeNaN();
    expect(row(r, 'onnx::Conv_44').values['weight error (dB)']).toBe(Infinity);
    expect(row(r, 'onnx::Conv_38_quantized')).toMatchObject({ values: { 'weight error (dB)': 41.27 }, info: { weight: true } });
    expect(r.problems).toEqual([
      { line: lineOf('qdq_loss_debug.json', '/fc/Gemm_output_0'), reason: '/fc/Gemm_output_0: qdq_err is not a number ("n/a")' },
      { line: lineOf('qdq_loss_debug.json', '/features/features.5/Relu_output_0'), reason: expect.stringMatching(/got a list/) },
      { line: lineOf('qdq_loss_debug.json', 'fc.bias'), reason: 'fc.bias: the weight error is not a number ("not computed")' },
    ]);
  });

  it('weights alone are detected by the "weights" key', () => {
    const r = readReport('w.json', '{"weights": {"fc.weight_quantized": 36.0}}');
    expect(r.format).toBe('ort-qdq');
    expect(r.rows).toEqual([{ layer: 'fc.weight_quantized', values: { 'weight error (dB)': 36 }, line: 1, info: { weight: true } }]);
  });

  it('the flat activation dict alone', () => {
    const r = readReport('errs.json', '{"a": {"qdq_err": 3.5}, "b": {"xmodel_err": -Infinity}}');
    expect(r.format).toBe('ort-qdq');
    expect(r.rows).toEqual([
      { layer: 'a', values: { 'qdq_err (dB)': 3.5 }, line: 1 },
      { layer: 'b', values: { 'xmodel_err (dB)': -Infinity }, line: 1 },
    ]);
    expect(r.metrics.map((m) => m.name)).toEqual(['qdq_err (dB)', 'xmodel_err (dB)']);
  });
});

describe('AIMET QuantAnalyzer per-layer JSON', () => {
  it('the metric follows the file name; directions as declared', () => {
    const en = read('per_layer_quant_enabled.json');
    expect(en.metrics).toEqual([{ name: 'eval score, only this layer quantized', better: 'higher' }]);
    expect(en.rows.map((x) => [x.layer, x.values['eval score, only this layer quantized'], x.line])).toEqual([
      ['features.0', 97.91, 2], ['features.3', 97.64, 3], ['features.7', 96.83, 4], ['fc', 94.17, 5], ['features.12', 97.9, 6],
    ]);
    expect(en.problems).toEqual([{ line: 7, reason: 'head.cls: not a number (null)' }]);
    const mse = read('per_layer_mse_loss.json');
    expect(mse.metrics).toEqual([{ name: 'AIMET mse loss', better: 'lower' }]);
    expect(mse.problems).toEqual([{ line: 7, reason: '/fc/Gemm_1: not a number ("diverged")' }]);
    const dis = readReport('out/per_layer_quant_disabled.json', '{"conv1": 71.2}');
    expect(dis.metrics).toEqual([{ name: 'eval score, all but this layer quantized', better: 'lower' }]);
  });
});

describe('Netron metrics attachment', () => {
  it('node / value / tensor items, model items listed, bad items with lines; directions', () => {
    const r = read('digits.metrics.json');
    expect(r.metrics).toEqual([{ name: 'cosine', better: 'higher' }, { name: 'mse', core: 'mse', better: 'lower' }]);
    expect(row(r, '/features/features.7/Conv')).toMatchObject({ values: { cosine: 0.99455, mse: 0.0044 }, info: { kind: 'node' }, line: 10 });
    expect(row(r, 'logits')).toMatchObject({ values: { cosine: 0.98802 }, info: { kind: 'value' } });
    expect(row(r, 'fc.weight')).toMatchObject({ values: { mse: 0.00002 }, info: { kind: 'tensor' } });
    expect(row(r, '(model) output cosine').info.whole).toBe(true);
    expect(r.problems).toEqual([
      { line: 15, reason: '/fc/Gemm: mse is not a number ("high")' },
      { line: 16, reason: 'metrics item 10 (mse): unknown kind "layer"' },
      { line: 17, reason: 'metrics item 11 (cosine): no "target"' },
    ]);
  });

  it('the older generation (signature "metrics", *.metrics.json)', () => {
    const r = readReport('m.metrics.json', '{"signature": "metrics", "metrics": [{"kind": "node", "target": "Conv_0\\nextra", "name": "sqnr", "value": 12.5}]}');
    expect(r.format).toBe('netron');
    expect(r.rows).toEqual([{ layer: 'Conv_0', values: { sqnr: 12.5 }, line: 1, info: { kind: 'node' } }]);
    expect(r.metrics).toEqual([{ name: 'sqnr', core: 'sqnr', better: 'higher' }]);
  });
});

describe('never throws', () => {
  // A deterministic pseudo-random byte source (xorshift32).
  function bytes(seed, n) {
    let x = seed >>> 0 || 1;
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i++) {
      x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0;
      out[i] = x & 0xff;
    }
    return out;
  }

  it('random bytes through every reader (forced), and through detection', () => {
    for (let seed = 1; seed <= 40; seed++) {
      const input = bytes(seed, 64 + seed * 37);
      for (const f of REPORT_FORMATS) {
        const r = readReport(`x.${seed}`, input, { format: f.id });
        expect(Array.isArray(r.rows) && Array.isArray(r.problems)).toBe(true);
      }
      try {
        readReport('per_layer_mse_loss.json', input);
      } catch (err) {
        expect(err).toBeInstanceOf(ReportError);
      }
    }
  });

  it('every truncation of every sample, under its own reader and the others', () => {
    for (const file of fs.readdirSync(DIR)) {
      const text = sample(file);
      const step = Math.max(1, Math.floor(text.length / 60));
      for (let n = 0; n <= text.length; n += step) {
        for (const f of REPORT_FORMATS) {
          const r = readReport(file, text.slice(0, n), { format: f.id });
          for (const p of r.problems) expect(p.line === null || Number.isInteger(p.line)).toBe(true);
          for (const x of r.rows) expect(typeof x.layer).toBe('string');
        }
      }
    }
  });

  it('JSON that is valid but of the wrong shape', () => {
    for (const text of ['[]', 'null', '3', '"x"', '{"metrics": 3}', '{"activations": [1], "weights": 2}', '{"a": {"qdq_err": {}}}']) {
      for (const f of REPORT_FORMATS) {
        const r = readReport('per_layer_quant_enabled.json', text, { format: f.id });
        expect(r.rows.every((x) => typeof x.layer === 'string')).toBe(true);
      }
    }
  });
});

describe('large inputs stay linear', () => {
  it('20000 rows of each text format, a 2 MB line, 20000 JSON entries: each read in seconds', () => {
    const rk = ['layer_name  simulator_error', '  entire  single', '  cos  euc  cos  euc', '-----'];
    const hz = ['Node        Type  Cosine Similarity  Threshold  DataType', '----'];
    const js = {};
    for (let i = 0; i < 20000; i++) {
      rk.push(`[Conv] /m/conv_${i}_output_0    0.99${i % 10} | 1.5    0.999 | 0.2`);
      hz.push(`/m/conv_${i}`.padEnd(12) + 'Conv  0.999000           1.0        int8');
      js[`/m/conv_${i}_output_0`] = { qdq_err: i, xmodel_err: i / 2 };
    }
    rk.push(`[Conv] x${' '.repeat(2_000_000)}0.9 | 1`);
    const t0 = Date.now();
    const a = readReport('error_analysis.txt', rk.join('\n'));
    const b = readReport('hb.log', hz.join('\n'));
    const c = readReport('errs.json', JSON.stringify(js, null, 1));
    const d = readReport('big.metrics.json', JSON.stringify({ signature: 'netron:attachment', metrics: Object.keys(js).map((k, i) => ({ kind: 'value', target: k, name: 'sqnr', value: i })) }, null, 1));
    expect(Date.now() - t0).toBeLessThan(20_000);
    expect([a.rows.length, b.rows.length, c.rows.length, d.rows.length]).toEqual([20000, 20000, 20000, 20000]);
    expect(a.problems).toEqual([{ line: 20005, reason: 'a line of 2000015 characters: not a table row' }]);
    expect(c.rows[19999].line).toBe(1 + 19999 * 4 + 1);
    expect(d.rows[19999].line).toBe(4 + 19999 * 6);
  });
});

describe('helpers', () => {
  it('number cells and Python JSON', () => {
    expect(parseNumber('0.99455')).toBe(0.99455);
    expect(parseNumber('1e-3')).toBe(0.001);
    expect(parseNumber('nan')).toBeNaN();
    expect(parseNumber('-inf')).toBe(-Infinity);
    expect(parseNumber('0.98x')).toBeNull();
    expect(parseNumber('')).toBeNull();
    expect(parseJsonLenient('{"NaN": NaN, "s": "Infinity", "v": [-Infinity, Infinity]}').value).toEqual({ NaN: 'nan', s: 'Infinity', v: ['-inf', 'inf'] });
    expect(parseJsonLenient('{"a": NaNx}').error).toBeTruthy();
  });
});
