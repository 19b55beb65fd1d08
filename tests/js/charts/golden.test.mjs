// Golden SVGs, one or two per chart (Observable Plot's practice): the CLI writes exactly this text.
// A missing or different golden fails; the text produced is written to
// tests/artifacts/golden/<case>.svg for review. `PTQ_UPDATE_GOLDEN=1 npx vitest run
// tests/js/charts/golden.test.mjs` writes the goldens instead (review the diff and commit them).
import { describe, it, expect } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createDocument } from '../../../web/charts/node_dom.mjs';
import { renderToString } from '../../../web/charts/svg.mjs';
import * as charts from '../../../web/charts/index.mjs';

const DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'golden');
const ARTIFACTS = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../artifacts/golden');
const UPDATE = process.env.PTQ_UPDATE_GOLDEN === '1';
const X = ['conv1', 'relu1', 'conv2', 'add', 'pool', 'fc'];

const CASES = {
  acc_error_gaps: [charts.renderAccError, { prefix: 'weight_activation_quantized_separately', metric: 'cosine-similarity', average_mode: false,
    curves: [{ name: 'weight_activation_calibrated', x: X, y: [1, 0.998, 'inf', 0.99, 'nan', 0.97] },
      { name: 'only_activation_calibrated', x: X, y: [1, 0.999, 0.995, 0.993, 0.99, 0.985] },
      { name: 'only_weight_calibrated', x: X, y: [1, 1, 0.999, 0.999, 0.998, 0.997] }] }],
  histogram_node_output: [charts.renderHistogram, { title: 'Conv_2 output:317 distribution\ncosine-similarity:0.99812', threshold: null, max_abs: 1.9,
    histograms: [
      { label: 'Before calibration', color: '#99ffbb', edges: [-2, -1, 0, 1, 2], counts: [2, 6, 7, 1], zeros_excluded: 3, non_finite: 0 },
      { label: 'After calibration', color: '#FA8072', edges: [-2, -1, 0, 1, 2], counts: [1, 7, 6, 2], zeros_excluded: 4, non_finite: 0 },
      { label: 'Quantization error distribution', color: '#33A1C9', edges: [-0.1, 0, 0.1], counts: [9, 10], zeros_excluded: 0, non_finite: 0 }] }],
  histogram_activation_logy: [charts.renderHistogram, { title: 'input_HzCalibration activation distribution', threshold: 2.5, max_abs: 2.75,
    histograms: [{ label: 'Input data distribution', color: '#99ffbb', edges: [0, 0.5, 1, 1.5, 2, 2.5, 3], counts: [900, 120, 40, 0, 3, 1], zeros_excluded: 0, non_finite: 0 }] }, { logY: true }],
  boxplot_channels: [charts.renderBoxplot, { name: 'conv1.weight_HzCalibration', channels: [
    { count: 5, mean: 4, q1: 2, median: 3, q3: 4, whisker_low: 1, whisker_high: 4, outlier_count: 1, outliers: [10] },
    { count: 4, mean: 0.5, q1: -1, median: 0, q3: 1.5, whisker_low: -2, whisker_high: 3, outlier_count: 0, outliers: [] },
    { count: 3, mean: 'nan', q1: 'nan', median: 'nan', q3: 'nan', whisker_low: 'nan', whisker_high: 'nan', outlier_count: 0, outliers: [] }] }],
  sensitivity_analysis: [charts.renderSensitivityAnalysis, { x: ['none', 'Conv_2', 'Conv_5'], cumulative: [0.991, 0.995, 0.999], per_node: [0.993, 0.998], qtype: 'float32' }],
  stat_info_weight: [charts.renderStatInfo, { nodes: ['a', 'b', 'c'], thresholds: [0.5, 0.4, 0.9], scales: [0.0039, 0.0031, 0.007], max_vals: [0.5, 0.4, 0.9], min_nz_vals: [1e-4, 2e-5, 3e-4] }, { tensorType: 'weight' }],
  heat_legend_mse: [charts.renderHeatLegend, charts.heatScale('mse', [1e-4, 0.02, 'nan']).legend],
  // The example's node sweep on cosine's fixed scale: pale, with the values shown marked near its best end.
  heat_legend_cosine_fixed: [charts.renderHeatLegend, charts.heatScale('cosine-similarity', [0.999987, 0.99999, 0.999993, 0.9999945]).legend],
  // 1024 bins of sparse weights (a few hundred values): drawn as bars of 8 bins, not hairlines.
  histogram_sparse_weights: [charts.renderHistogram, { title: 'w_HzCalibration weight distribution', threshold: null, max_abs: 0.5,
    histograms: [{ label: 'Before calibration', color: '#99ffbb', edges: Array.from({ length: 1025 }, (_, i) => -0.5 + i / 1024),
      counts: Array.from({ length: 1024 }, (_, i) => (i % 5 === 0 ? Math.round(6 * Math.exp(-(((i - 512) / 160) ** 2))) : 0)), zeros_excluded: 0, non_finite: 0 }] }],
  // A quantizer clipping a third of its data (the "Why" view): 24 bins over [0, 3], range [0, 1] uint8.
  hint_histogram_clipping: [charts.renderHintHistogram, { name: 'relu_out_HzCalibration', qtype: 'uint8', asymmetric: false, per_channel: false,
    thresholds: [1], scales: [1 / 255], range: [0, 1], min: 0, max: 3, p99_99: 2.9, clipped: 0.33, levels_used: 0.9, zero_rounded: 0.02,
    bins: Array.from({ length: 24 }, (_, i) => ({ x0: i / 8, x1: (i + 1) / 8, count: i === 0 ? 4000 : Math.round(300 * Math.exp(-i / 6)) })) }],
};

describe('golden SVGs', () => {
  const document = createDocument();
  for (const [name, [render, data, options]] of Object.entries(CASES)) {
    it(name, () => {
      const text = renderToString(render, data, options || {}, document);
      const file = path.join(DIR, `${name}.svg`);
      if (UPDATE) fs.writeFileSync(file, text);
      const golden = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : null;
      const produced = path.join(ARTIFACTS, `${name}.svg`);
      if (golden !== text) {
        fs.mkdirSync(ARTIFACTS, { recursive: true });
        fs.writeFileSync(produced, text);
      }
      expect(golden, `${file} is missing: review ${produced}, then write it with PTQ_UPDATE_GOLDEN=1`).not.toBeNull();
      expect(text === golden, `${name}.svg differs: review ${produced}`).toBe(true);
    });
  }
});
