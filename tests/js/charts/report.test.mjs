import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildReport, REPORT_CSP } from '../../../web/report/report.mjs';
import { combineDocuments } from '../../../web/pipeline/result.mjs';
import { createDocument } from '../../../web/charts/node_dom.mjs';
import { reportGraph } from '../../../web/app/graph/picture.mjs';
import { buildHeat } from '../../../web/app/heatmap/mapping.mjs';
import { heatScale } from '../../../web/charts/heat_scale.mjs';
import { fixture, openSession } from '../helpers.mjs';
import { screenshot } from '../e2e/browser.mjs';

const X = ['t0', 't1', 't2'];
const result = {
  schema: 'ptqscope.result', version: 1,
  model: { file: 'calibrated_model.onnx', node_count: 3, opsets: { 'ai.onnx': 13 },
    inputs: [{ name: 'input', dtype: 'float32', dims: [1, 1, 8, 8] }], outputs: [{ name: 'logits', dtype: 'float32', dims: [1, 10] }],
    calibration_nodes: [{ name: 'a', kind: 'feature' }, { name: 'w', kind: 'weight' }] },
  samples: ['9.npy'], calibration_samples: 10,
  sensitivity: { activation: {
    a_HzCalibration: { node: 'Conv_2', threshold: 3.1, qtype: 'int8', 'cosine-similarity': 0.995, mse: 0.001 },
    b_HzCalibration: { node: 'Conv_3', threshold: 2, qtype: 'int8', 'cosine-similarity': 0.9, mse: 0.01 },
    '<c>': { node: 'Conv_4', threshold: null, qtype: 'int8', 'cosine-similarity': 'nan', mse: 'nan' } } },
  sensitivity_order: { activation: ['b_HzCalibration', 'a_HzCalibration', '<c>'] },
  acc_error: { w: { label: 'w', x: X, y: [1, 'inf', 0.9] }, o: { label: 'o', x: X, y: [1, 0.99, 0.98] } },
  acc_error_sample: '9.npy', acc_error_messages: ['Only quantizing weights without quantizing activation !'],
  acc_error_figures: [{ prefix: 'weight_quantized', metric: 'cosine-similarity', average_mode: false, file_name: 'weight_quantized_cosine-similarity.png', curves: ['w', 'o'] }],
  distribution: { a_HzCalibration: { name: 'a_HzCalibration', kind: 'activation', title: 'a_HzCalibration activation distribution',
    file_name: 'activation_a_HzCalibration.png', threshold: 1, max_abs: 1.2, cosine: null,
    histograms: [{ label: 'Input data distribution', color: '#99ffbb', edges: [0, 0.5, 1.2], counts: [4, 2], zeros_excluded: 0, non_finite: 0 }] } },
  distribution_order: ['a_HzCalibration'],
  channelwise: { a_HzCalibration: { kind: 'activation', shape: [1, 2, 2], axis: 1, file_name: 'a_HzCalibration_boxplot.png', figure_width: 1, rotate_labels: false,
    channels: [{ count: 2, mean: 1, q1: 0.5, median: 1, q3: 1.5, whisker_low: 0, whisker_high: 2, outlier_count: 0, outliers: [] }] } },
  channelwise_order: ['a_HzCalibration'],
  sensitivity_analysis: { x: ['none', 'Conv_3'], cumulative: [0.9, 0.99], per_node: [0.91], qtype: 'float32', ranked: true,
    ranking: { Conv_3: { 'cosine-similarity': 0.91 } }, ranking_order: ['Conv_3'], file_name: 'partial_quantization.png' },
  stat_info: { w: { tensor_type: 'weight', granularity: 'per-channel', cells: ['weight', 'per-channel', '0.5,...', '0.003937,...', '0.5,...', '1.000000e-03,...'] } },
  stat_info_order: ['w'],
  stat_info_curves: { weight: { nodes: ['w'], thresholds: [0.5], scales: [0.0039], max_vals: [0.5], min_nz_vals: [0.001] } },
  timings_ms: { sensitivity: 12.5 },
};

describe('buildReport', () => {
  const html = buildReport(result, { title: 'Digits <PTQ> report', document: createDocument() });

  it('is one self-contained document: CSP without network, no external reference', () => {
    expect(html.startsWith('<!doctype html>')).toBe(true);
    expect(html).toContain(`<meta http-equiv="Content-Security-Policy" content="${REPORT_CSP}">`);
    expect(REPORT_CSP).toMatch(/default-src 'none'/);
    expect(html).not.toMatch(/\b(src|href)="(?!#)/);
    const urls = html.match(/https?:\/\/[^"'\s)]+/g) || [];
    expect(new Set(urls)).toEqual(new Set(['http://www.w3.org/2000/svg']));
    expect(html).toContain('<title>Digits &lt;PTQ&gt; report</title>');
  });

  it('has every section with its charts and tables', () => {
    for (const id of ['summary', 'sensitivity', 'distribution', 'channelwise', 'acc_error', 'sensitivity_analysis', 'stat_info']) {
      expect(html).toContain(`<section id="${id}">`);
    }
    const svgs = html.match(/<svg[^>]*class="ptq-chart ([\w-]+)"/g).map((s) => /class="ptq-chart ([\w-]+)"/.exec(s)[1]);
    expect(svgs.sort()).toEqual(['acc-error', 'boxplot', 'histogram', 'sensitivity-analysis', 'stat-info']);
    expect(html).not.toContain('<?xml');
    const activation = html.slice(html.indexOf('<section id="sensitivity">'), html.indexOf('</section>', html.indexOf('<section id="sensitivity">')));
    expect([...activation.matchAll(/<tr data-item="([^"]*)"/g)].map((m) => m[1])).toEqual(['b_HzCalibration', 'a_HzCalibration', '&lt;c&gt;']);
    const name = (n) => `<span class="ptq-mid" title="${n}"><span class="ptq-mid-head">${n}</span></span>`;
    expect(html).toContain(`<li><b>${name('b_HzCalibration')}</b> (${name('Conv_3')}): cosine-similarity 0.9</li>`);
    // What each section was computed on, of how many samples the data holds.
    expect(activation).toContain('<p class="samples">computed on 1 of 10 samples (9.npy)</p>');
    expect(html).toContain('<tr><td>samples used</td><td>node sensitivity: 1 of 10 samples (9.npy)<br>accumulated error: 1 of 10 samples (9.npy)</td></tr>');
    expect(html).not.toContain('<section id="graph">'); // no picture given
    expect(html).toContain('<td>1.000000e-03,...</td>');
    expect(html).toContain('<li>Only quantizing weights without quantizing activation !</li>');
  });

  it('is deterministic and checks its input', () => {
    expect(buildReport(result, { title: 'Digits <PTQ> report', document: createDocument() })).toBe(html);
    expect(() => buildReport({}, { document: createDocument() })).toThrow(/not a ptqscope result/);
    expect(() => buildReport(result, { document: null })).toThrow(/no DOM document/);
    expect(buildReport({ schema: 'ptqscope.result', version: 1 }, { document: createDocument() })).toContain('no analysis sections');
  });
});

describe('combineDocuments', () => {
  it('keeps the options and timings of every analysis', () => {
    const a = { schema: 'ptqscope.result', version: 1, options: { sensitivity: { node_type: 'weight' } }, timings_ms: { sensitivity: 5 }, sensitivity: { weight: {} }, cancelled: false };
    const b = { schema: 'ptqscope.result', version: 1, options: { acc_error: { metric: 'mse' } }, timings_ms: { acc_error: 7 }, acc_error: {}, cancelled: true };
    const c = combineDocuments([a, b]);
    expect(c.options).toEqual({ sensitivity: { node_type: 'weight' }, acc_error: { metric: 'mse' } });
    expect(c.timings_ms).toEqual({ sensitivity: 5, acc_error: 7 });
    expect(c.cancelled).toBe(true);
    expect(Object.keys(c)).toEqual(expect.arrayContaining(['sensitivity', 'acc_error']));
    const html = buildReport([a, b], { document: createDocument() });
    expect(html).toContain('sensitivity 5 ms, acc_error 7 ms');
  });
});

// The report in Debian's Chromium from file://: no request leaves the page, headers sort, legends toggle.
const CHROMIUM = '/usr/bin/chromium';
describe.skipIf(!fs.existsSync(CHROMIUM))('report.html in Chromium', () => {
  let context;
  let page;
  let graph;
  let heat;
  const requests = [];
  const errors = [];
  const LONG = `StatefulPartitionedCall/model/${'block_13_expand_BN/FusedBatchNormV3/'.repeat(5)}Conv2D;model/block_13_expand_relu/Relu6_HzCalibration`;
  beforeAll(async () => {
    const { chromium } = await import('playwright-core');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ptq-report-'));
    const file = path.join(dir, 'report.html');
    // With a tf2onnx-long name in the sensitivity table, and the picture of the calibrated digits CNN's
    // graph coloured by its node sweep.
    const { session } = await openSession(fixture('digits_cnn_calibrated'));
    graph = JSON.parse(session.graphJson());
    const sweep = JSON.parse(session.analyze(JSON.stringify({ analysis: 'sensitivity', options: { node_type: 'node', data_num: 2 } })));
    session.delete();
    heat = buildHeat(sweep, graph, { view: 'node' }, heatScale);
    const withLong = { ...result, sensitivity: { activation: { ...result.sensitivity.activation, [LONG]: { node: LONG, threshold: 1, qtype: 'int8', 'cosine-similarity': 0.5, mse: 0.5 } } },
      sensitivity_order: { activation: [LONG, ...result.sensitivity_order.activation] } };
    const doc = createDocument();
    fs.writeFileSync(file, buildReport(withLong, { title: 'r', document: doc, graph: reportGraph({ graph, heat, document: doc }) }));
    context = await chromium.launchPersistentContext(fs.mkdtempSync(path.join(os.tmpdir(), 'profile-')), {
      executablePath: CHROMIUM, headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
    });
    page = await context.newPage({ viewport: { width: 1400, height: 900 } });
    page.on('request', (r) => requests.push(r.url()));
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
    await page.goto(`file://${file}`);
  }, 60_000);
  afterAll(async () => { await context?.close(); });

  it('loads with no request but itself and no error', () => {
    expect(requests.filter((u) => !u.startsWith('file://'))).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('a ~200-character name is shortened in the middle: its metrics stay in the window, the name whole in its tooltip', async () => {
    expect(LONG.length).toBeGreaterThan(200);
    const row = page.locator(`#sensitivity tr[data-item="${LONG}"]`);
    await row.scrollIntoViewIfNeeded();
    for (const column of ['cosine-similarity', 'mse']) {
      const index = await page.$$eval('#sensitivity thead th', (ths, c) => ths.findIndex((th) => th.dataset.column === c), column);
      const box = await row.locator('td').nth(index).boundingBox();
      expect(box.x + box.width, column).toBeLessThanOrEqual(1400);
    }
    const cell = row.locator('td.ptq-name-cell').first();
    expect(await cell.getAttribute('title')).toBe(LONG);
    expect((await cell.boundingBox()).width).toBeLessThan(500);
    // Its start cut on screen (an ellipsis: the head's text wider than its box), its end kept.
    const head = cell.locator('.ptq-mid-head');
    expect((await head.textContent()) + (await cell.locator('.ptq-mid-tail').textContent())).toBe(LONG);
    expect(await head.evaluate((e) => e.scrollWidth > e.clientWidth)).toBe(true);
  });

  it('shows the graph as the page draws it, its nodes in the colours of the heat view', async () => {
    await page.locator('#graph svg.ptq-graph-picture').scrollIntoViewIfNeeded();
    const fills = await page.$$eval('#graph svg.ptq-graph-picture g.node.heated', (gs) => Object.fromEntries(gs.map((g) => [g.dataset.name, getComputedStyle(g.querySelector('.node-body')).fill])));
    const expected = Object.fromEntries([...heat.values].filter(([name]) => graph.nodes.some((n) => n.name === name && n.op_type !== 'HzCalibration')).map(([name, h]) => [name, h.color]));
    expect(Object.keys(fills).sort()).toEqual(Object.keys(expected).sort());
    for (const [name, color] of Object.entries(expected)) expect(fills[name].replace(/\s/g, ''), name).toBe(color.replace(/\s/g, ''));
    // The marks' look travels with the picture: a convolution's header in the page's layer colour.
    expect(await page.$eval('#graph g.node-cat-layer .node-header', (h) => getComputedStyle(h).fill)).toBe('rgb(51, 85, 136)');
    expect(await page.textContent('#graph')).toContain('coloured by node sensitivity: cosine-similarity (lower is worse)');
    await page.locator('#graph').evaluate((section) => section.scrollIntoView());
    await screenshot(page, 'report-graph');
  });

  it('sorts a table by a clicked metric header, worse first, then flips', async () => {
    const items = () => page.$$eval('#sensitivity tbody tr', (rows) => rows.map((r) => r.getAttribute('data-item')).filter((i) => i.length < 100));
    await page.click('#sensitivity th[data-column="mse"]');
    expect(await items()).toEqual(['b_HzCalibration', 'a_HzCalibration', '<c>']);
    await page.click('#sensitivity th[data-column="mse"]');
    expect(await items()).toEqual(['a_HzCalibration', 'b_HzCalibration', '<c>']);
    await page.click('#sensitivity th[data-column="Node"]');
    expect(await items()).toEqual(['<c>', 'a_HzCalibration', 'b_HzCalibration']);
  });

  it('toggles a chart series from its legend entry', async () => {
    const display = () => page.$eval('#acc_error path.curve[data-series="w"]', (e) => getComputedStyle(e).display);
    expect(await display()).not.toBe('none');
    await page.click('#acc_error .legend-item[data-series="w"]');
    expect(await display()).toBe('none');
    await page.click('#acc_error .legend-item[data-series="w"]');
    expect(await display()).not.toBe('none');
  });
});
