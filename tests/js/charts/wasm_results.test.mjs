// The chart modules on results computed by the real wasm core (Session.analyze) for the calibrated
// digits CNN. Expected SVG facts are derived from the result data itself (number of curves, runs of
// finite values, non-empty bins, channels), never from the chart code. Skipped while the wasm build
// has no `analyze` or no calibrated digits model exists.
import { describe, it, expect, beforeAll } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT, FIXTURES, readCalibrationFolder } from '../helpers.mjs';
import { renderAccError, accErrorFigures, averagedFigure } from '../../../web/charts/acc_error.mjs';
import { renderHistogram } from '../../../web/charts/histogram.mjs';
import { renderBoxplot } from '../../../web/charts/boxplot.mjs';
import { renderSensitivityAnalysis } from '../../../web/charts/sensitivity_analysis.mjs';
import { sensitivityTable, toCsv } from '../../../web/charts/sensitivity_table.mjs';
import { heatScale } from '../../../web/charts/heat_scale.mjs';
import { toNumber } from '../../../web/charts/format.mjs';
import { buildReport } from '../../../web/report/report.mjs';
import { createDocument } from '../../../web/charts/node_dom.mjs';
import { renderIn, texts, tickPositions, segments } from './util.mjs';

// PTQ_WASM: another build of the module (e.g. a developer's own build directory).
const WASM = process.env.PTQ_WASM || path.join(REPO_ROOT, 'build/wasm/ptqscope.mjs');

function calibratedDigits() {
  const data = path.join(FIXTURES, 'digits/calibration_data');
  const manifest = path.join(FIXTURES, 'manifest.json');
  if (fs.existsSync(manifest)) {
    const m = JSON.parse(fs.readFileSync(manifest, 'utf8')).models.find((e) => e.name === 'digits_cnn_calibrated');
    if (m) return { model: path.join(FIXTURES, m.model), data: path.join(FIXTURES, m.data) };
  }
  const example = path.join(REPO_ROOT, 'build/web-example');
  const onnx = fs.existsSync(example) && fs.readdirSync(example).find((f) => f.endsWith('.onnx'));
  if (onnx) return { model: path.join(example, onnx), data: path.join(example, 'calibration_data') };
  const cached = path.join(REPO_ROOT, '.cache/app-analysis/digits_calibrated.onnx');
  return fs.existsSync(cached) ? { model: cached, data } : null;
}

const fixture = calibratedDigits();
// The embind names live in the (base64) wasm, so ask the module itself.
const ptq = fixture && fs.existsSync(WASM) ? await (await import(WASM)).default() : null;
const wasmHasAnalyze = !!ptq && typeof ptq.Session.prototype.analyze === 'function';

// Maximal runs of finite values: [length, ...].
function finiteRuns(values) {
  const runs = [];
  let n = 0;
  for (const v of values) {
    if (Number.isFinite(toNumber(v))) n++;
    else if (n) { runs.push(n); n = 0; }
  }
  if (n) runs.push(n);
  return runs;
}

describe.skipIf(!fixture || !wasmHasAnalyze)('charts on wasm analysis results (calibrated digits)', () => {
  let session;
  let graph;
  const results = {};
  const analyze = (analysis, options = {}) => JSON.parse(session.analyze(JSON.stringify({ analysis, options })));

  beforeAll(async () => {
    session = new ptq.Session();
    session.loadModel(new Uint8Array(fs.readFileSync(fixture.model)));
    session.loadCalibrationData(readCalibrationFolder(fixture.data));
    graph = JSON.parse(session.graphJson());
    results.sensitivity = analyze('sensitivity', { node_type: 'activation', metrics: ['cosine-similarity', 'mse'] });
    results.acc = analyze('acc_error', { quantize_node: ['weight', 'activation'] });
    results.accAverage = analyze('acc_error', { quantize_node: ['weight', 'activation'], average_mode: true });
    const cali = graph.nodes.filter((n) => n.calibration);
    const act = cali.find((n) => n.calibration.kind === 'feature').name;
    const wt = cali.find((n) => n.calibration.kind === 'weight').name;
    results.distribution = analyze('distribution', { nodes_list: [act, wt] });
    results.channelwise = analyze('channelwise', { nodes_list: [act, wt] });
    results.sa = analyze('sensitivity_analysis', { pick_threshold: 1.0 });
  }, 300_000);

  it('acc_error: one line per curve, split exactly at the non-finite values', () => {
    const figs = accErrorFigures(results.acc);
    expect(figs.length).toBe(1);
    const { svg } = renderIn(renderAccError, figs[0]);
    const curves = figs[0].curves;
    expect(texts(svg, '.legend-item text')).toEqual(curves.map((c) => c.label));
    expect(texts(svg, '.axis-label-y')).toEqual([results.acc.acc_error_figures[0].metric]);
    for (const c of curves) {
      const runs = finiteRuns(c.y);
      const d = svg.querySelector(`path.curve[data-series="${c.name}"]`).getAttribute('d');
      expect(segments(d)).toBe(runs.filter((r) => r > 1).length);
    }
    const xt = tickPositions(svg, 'axis-x');
    expect(Math.max(...Object.keys(xt).map(Number))).toBeLessThanOrEqual(curves[0].x.length - 1);
  });

  it('acc_error: averagedFigure of the raw curves equals the average_mode of the core', () => {
    const raw = averagedFigure(accErrorFigures(results.acc)[0]);
    const core = accErrorFigures(results.accAverage)[0];
    expect(raw.file_name).toBe(core.file_name);
    // the core writes float32 values with their shortest digits: compare as float32
    expect(raw.curves.map((c) => c.y)).toEqual(core.curves.map((c) => c.y.map((v) => Math.fround(toNumber(v)))));
  });

  it('distribution: one step per non-empty bin, threshold line only for the activation node', () => {
    for (const key of results.distribution.distribution_order) {
      const plot = results.distribution.distribution[key];
      const { svg } = renderIn(renderHistogram, plot);
      const bars = [...svg.querySelectorAll('path.bars')];
      expect(bars.length).toBe(plot.histograms.length);
      plot.histograms.forEach((h, i) => {
        expect(bars[i].getAttribute('fill')).toBe(h.color);
        // bars of f adjacent bins (at least MIN_BAR_PX wide): one outline per run of adjacent
        // non-empty bars, one step per non-empty bar
        const f = Number(bars[i].getAttribute('data-bins-per-bar'));
        const summed = Array.from({ length: Math.ceil(h.counts.length / f) }, (_, k) => h.counts.slice(k * f, k * f + f).reduce((a, b) => a + b, 0));
        const runs = summed.filter((c, k) => c > 0 && !(summed[k - 1] > 0)).length;
        expect((bars[i].getAttribute('d').match(/Z/g) || []).length).toBe(runs);
        expect((bars[i].getAttribute('d').match(/H/g) || []).length).toBe(summed.filter((c) => c > 0).length);
      });
      expect(svg.querySelector('line.threshold') !== null).toBe(plot.kind === 'activation' && Number.isFinite(toNumber(plot.threshold)));
      expect(texts(svg, '.title tspan')).toEqual(plot.title.split('\n'));
    }
  });

  it('channelwise: one box per channel with finite quartiles', () => {
    for (const key of results.channelwise.channelwise_order) {
      const plot = results.channelwise.channelwise[key];
      const { svg } = renderIn(renderBoxplot, { name: key, ...plot });
      const valid = plot.channels.filter((c) => Number.isFinite(toNumber(c.q1))).length;
      expect((svg.querySelector('path.boxes').getAttribute('d').match(/Z/g) || []).length).toBe(valid);
      expect(texts(svg, '.axis-x .tick text')[0]).toBe('1');
    }
  });

  it('sensitivity: table in the core order, CSV with one line per item, the worst item is hottest', () => {
    const type = 'activation';
    const t = sensitivityTable(results.sensitivity.sensitivity[type], results.sensitivity.sensitivity_order[type]);
    expect(t.rows.map((r) => r.item)).toEqual(results.sensitivity.sensitivity_order[type]);
    expect(toCsv(t).split('\r\n').length).toBe(t.rows.length + 2);
    const values = t.rows.map((r) => r.cells['cosine-similarity']);
    const scale = heatScale('cosine-similarity', values, { scale: 'range' });
    const finite = values.map(toNumber).filter(Number.isFinite);
    if (finite.length > 1 && Math.min(...finite) < Math.max(...finite)) {
      const worst = t.rows.find((r) => toNumber(r.cells['cosine-similarity']) === Math.min(...finite));
      expect(scale.worseness(worst.cells['cosine-similarity'])).toBe(1);
    }
  });

  it('sensitivity_analysis: one tick per x and a marker per node', () => {
    const sa = results.sa.sensitivity_analysis;
    const { svg } = renderIn(renderSensitivityAnalysis, sa);
    expect(texts(svg, '.axis-x .tick text').length).toBe(sa.x.length);
    const marks = svg.querySelector('path.per-node').getAttribute('d');
    expect((marks.match(/M/g) || []).length).toBe(2 * sa.per_node.filter((v) => Number.isFinite(toNumber(v))).length);
  });

  it('report: every section of the merged documents', () => {
    const merged = Object.assign({}, results.sensitivity, results.acc, results.distribution, results.channelwise, results.sa);
    const html = buildReport(merged, { title: 'digits', document: createDocument() });
    for (const id of ['sensitivity', 'distribution', 'channelwise', 'acc_error', 'sensitivity_analysis']) expect(html).toContain(`<section id="${id}">`);
  });
});
