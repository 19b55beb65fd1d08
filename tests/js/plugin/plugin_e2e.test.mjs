// End to end in headless Chromium: the plugin bundle built with plugin/vite.config.mjs, installed by
// scripts/plugin-install.mjs into a Netron-like web folder made from the recording (fake_netron.mjs,
// with Netron's CSP `script-src 'self'`), served over http. Opens the recorded model through the
// page's file input, loads generated calibration data through the panel, runs a sensitivity and an
// accumulated-error analysis in the web app's analyses panel (wasm in the plugin's worker) and checks
// the colours, the chart SVGs, the exported results JSON, the colours' survival across a re-render,
// the selected node's results, and a toolchain report opened in its section colouring the nodes. Waits on DOM state only (no sleeps). (No real Netron build can be
// had from npm or Debian: docs/plugin.md.)
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { build } from 'vite';
import { chromium } from 'playwright-core';
import { rgb } from 'd3';
import { install } from '../../../scripts/plugin-install.mjs';
import { heatScale } from '../../../web/charts/heat_scale.mjs';
import { loadPtqModule } from '../../../web/cli/lib/wasm.mjs';
import { pageHtml, NETRON_LIKE_CSS } from './fake_netron.mjs';
import { unzipSync } from 'fflate';
import { parseHTML } from 'linkedom';
import { FIXTURES, MODEL_NAME, calibrationFolder, modelBytes, unzipText } from './helpers.mjs';
import { fixture } from '../helpers.mjs';
import { expectCheckOf, runCheck } from '../e2e/onnxruntime_check.mjs';
import { serveFolder as serve } from './netron_site.mjs';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const ARTIFACTS = path.join(ROOT, 'build/test-results/plugin-e2e');

let tmp;
let server;
let base;
let context;
let page;
let ref; // reference(), computed once the page ran the sensitivity sweep
const problems = []; // console errors, page errors, CSP violations

// The panel's requests straight through the wasm API: the sensitivity form's defaults, then the
// accumulated error of its top-k (k = 5: every activation item of the tiny model, most sensitive first).
async function reference() {
  const ptq = await loadPtqModule();
  const session = new ptq.Session();
  try {
    session.loadModel(modelBytes());
    session.loadCalibrationData(calibrationFolder().map((f) => ({ path: f.path.replace(/^calibration_data\//, ''), bytes: f.bytes })));
    const analyze = (analysis, options) => JSON.parse(session.analyze(JSON.stringify({ analysis, options })));
    const sensitivity = analyze('sensitivity', { node_type: 'activation', metrics: ['cosine-similarity'], data_num: 0, sample_selection: 'last' });
    const accError = analyze('acc_error', {
      quantize_node: sensitivity.sensitivity_order.activation.slice(0, 5), non_quantize_node: null, metric: 'cosine-similarity', average_mode: false,
    });
    return { sensitivity, accError };
  } finally {
    session.delete();
  }
}

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ptq-plugin-e2e-'));
  const dist = path.join(tmp, 'dist');
  const site = path.join(tmp, 'netron');
  await build({ configFile: path.join(ROOT, 'plugin/vite.config.mjs'), logLevel: 'error', build: { outDir: dist } });

  // The Netron-like folder: recorded renders, our fake __view__ and its boot module, then the plugin.
  fs.mkdirSync(site);
  fs.copyFileSync(path.join(FIXTURES, 'horizon_calibrated_tiny.target.html'), path.join(site, 'default.html'));
  fs.copyFileSync(path.join(FIXTURES, 'horizon_calibrated_tiny.names.target.html'), path.join(site, 'names.html'));
  fs.copyFileSync(path.join(import.meta.dirname, 'fake_netron.mjs'), path.join(site, 'fake_netron.mjs'));
  fs.writeFileSync(path.join(site, 'netron-like.css'), NETRON_LIKE_CSS);
  fs.writeFileSync(path.join(site, 'favicon.ico'), ''); // Chromium asks for it; a 404 is a console error
  fs.writeFileSync(path.join(site, 'boot.mjs'), [
    "import { installFakeNetron } from './fake_netron.mjs';",
    'const text = (f) => fetch(f).then((r) => r.text());',
    "const [def, names] = await Promise.all([text('default.html'), text('names.html')]);",
    'installFakeNetron(window, { default: def, names });',
  ].join('\n'));
  fs.writeFileSync(path.join(site, 'index.html'), pageHtml({ scripts: ['boot.mjs'] }));
  install(site, { dist, quiet: true });

  const data = path.join(tmp, 'calibration_data');
  for (const f of calibrationFolder()) {
    const p = path.join(tmp, f.path);
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, f.bytes);
  }
  expect(fs.readdirSync(path.join(data, 'images'))).toHaveLength(3);

  server = await serve(site);
  base = `http://127.0.0.1:${server.address().port}/`;
  context = await chromium.launchPersistentContext(fs.mkdtempSync(path.join(os.tmpdir(), 'profile-')), {
    executablePath: '/usr/bin/chromium',
    headless: true,
    viewport: { width: 1280, height: 800 },
    acceptDownloads: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
  });
  page = context.pages()[0] ?? await context.newPage();
  page.setDefaultTimeout(20_000);
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(String(e)));
}, 120_000);

afterAll(async () => {
  await context?.close();
  await new Promise((r) => (server ? server.close(r) : r()));
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

// Waits for `selector`, failing at once with the panel's error line when the plugin reports one.
async function waitOrPanelError(selector) {
  const error = page.locator('#ptqscope-panel .ptq-error:not([hidden])');
  await Promise.race([page.locator(selector).first().waitFor(), error.waitFor()]);
  if (await error.count()) throw new Error(`plugin error: ${await error.textContent()}`);
}

describe('plugin in Chromium on a Netron page built from the recording', () => {
  it('installs with one script tag and starts after Netron', async () => {
    await page.goto(base);
    await page.locator('#ptqscope-panel').waitFor();
    expect(await page.locator('#ptqscope-banner').count()).toBe(0);
    expect(await page.locator('script[src="ptqscope-plugin.js"]').count()).toBe(1);
  });

  it('captures the opened model, computes its graph in the worker despite the CSP, colours nodes by a real sensitivity run', async () => {
    await page.setInputFiles('#open-file-dialog', path.join(FIXTURES, MODEL_NAME));
    await page.locator('body.default #nodes > g.node').first().waitFor();
    await waitOrPanelError('#ptqscope-panel[data-graph="loaded"]');
    await page.setInputFiles('#ptqscope-panel .ptq-data-input', path.join(tmp, 'calibration_data'));
    await page.locator('#ptqscope-panel .ptq-data-status', { hasText: '3 calibration samples (calibration_data: images)' }).waitFor();
    // The web app's sensitivity form: activation, then its defaults (cosine-similarity, every sample, data_num 0).
    await page.locator('#ptqscope-panel .ptq-analysis-tabs button[data-analysis="sensitivity"]').click();
    await page.locator('#ptqscope-panel form[data-analysis="sensitivity"] select[name="node_type"]').selectOption('activation');
    await page.locator('#ptqscope-panel .ptq-run').click();
    await waitOrPanelError('#ptqscope-panel[data-run="done"]');
    await page.locator('#ptqscope-panel .ptq-progress-text', { hasText: 'Sensitivity: done in' }).waitFor();

    ref = await reference();
    const rows = ref.sensitivity.sensitivity.activation;
    const tableOrder = await page.$$eval('#ptqscope-panel .ptq-analysis-output table.sensitivity-table tbody tr', (trs) => trs.map((tr) => tr.dataset.item));
    expect(tableOrder).toEqual(ref.sensitivity.sensitivity_order.activation);
    const scale = heatScale('cosine-similarity', Object.values(rows).map((r) => r['cosine-similarity']));
    const fillOf = (name) => page.locator(`[id="node-name-${name}"] > g.node-item > path`).first()
      .evaluate((p) => getComputedStyle(p).fill);
    for (const [item, row] of Object.entries(rows)) {
      expect(await fillOf(item), item).toBe(rgb(scale.color(row['cosine-similarity'])).toString());
    }
    // An uncoloured node keeps Netron's stylesheet colour.
    expect(await fillOf('backbone.conv1.weight_HzCalibration')).not.toBe(rgb(scale.color(0)).toString());
    const colored = await page.locator('#nodes > g.node[data-ptq-heat]').count();
    expect(colored).toBeGreaterThanOrEqual(Object.keys(rows).length);
    expect(await page.locator('#ptqscope-panel .ptq-heat-legend svg.heat-legend').count()).toBe(1);
    expect(problems).toEqual([]);
  });

  it('accumulated error of the top-k in the app\'s panel: curves drawn by the chart module, colours kept, JSON export', async () => {
    const colored = await page.locator('#nodes > g.node[data-ptq-heat]').count();
    await page.locator('#ptqscope-panel .ptq-analysis-tabs button[data-analysis="acc_error"]').click();
    const form = page.locator('#ptqscope-panel form.ptq-analysis-form[data-analysis="acc_error"]');
    await form.locator('.ptq-field:has([name="quantize_node"]) .ptq-use-topk').click();
    expect(await form.locator('[name="quantize_node"]').inputValue()).toBe(ref.sensitivity.sensitivity_order.activation.join(', '));
    await page.locator('#ptqscope-panel').evaluate((p) => { p.dataset.run = 'idle'; });
    await page.locator('#ptqscope-panel .ptq-run').click();
    await waitOrPanelError('#ptqscope-panel[data-run="done"]');
    await waitOrPanelError('#ptqscope-panel .ptq-analysis-output figure[data-kind="acc_error"] svg path.curve');
    const figures = page.locator('#ptqscope-panel .ptq-analysis-output figure[data-kind="acc_error"]');
    expect(await figures.count()).toBe(ref.accError.acc_error_figures.length);
    const curves = ref.accError.acc_error_figures.reduce((n, f) => n + f.curves.length, 0);
    expect(await page.locator('#ptqscope-panel .ptq-analysis-output figure[data-kind="acc_error"] svg path.curve').count()).toBe(curves);
    // The heatmap still shows the sensitivity sweep.
    expect(await page.locator('#nodes > g.node[data-ptq-heat]').count()).toBe(colored);

    // The export panel's results JSON: the CLI's schema with both analyses, as computed by the core.
    const [download] = await Promise.all([page.waitForEvent('download'), page.locator('#ptqscope-panel .ptq-export button[data-export="json"]').click()]);
    expect(download.suggestedFilename()).toBe('horizon_calibrated_tiny.ptqscope.json');
    const saved = JSON.parse(fs.readFileSync(await download.path(), 'utf8'));
    expect(saved.schema).toBe('ptqscope.result');
    expect(saved.sensitivity).toEqual(ref.sensitivity.sensitivity);
    expect(saved.sensitivity_order).toEqual(ref.sensitivity.sensitivity_order);
    expect(saved.acc_error).toEqual(ref.accError.acc_error);
    expect(saved.acc_error_figures).toEqual(ref.accError.acc_error_figures);
    // The charts as SVG files (.zip) from the same panel.
    const [svgZip] = await Promise.all([page.waitForEvent('download'), page.locator('#ptqscope-panel .ptq-export button[data-export="svg"]').click()]);
    const files = unzipText(fs.readFileSync(await svgZip.path()));
    const accFiles = Object.keys(files).filter((n) => n.startsWith('accumulate_error/'));
    expect(accFiles).toHaveLength(ref.accError.acc_error_figures.length);
    for (const name of accFiles) expect(files[name]).toMatch(/^<\?xml[^>]*>\n<svg[^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"[^]*class="curve/);
    expect(problems).toEqual([]);
  });

  it('Run all in the plugin: every chart type, progress, and the PNG / HTML report exports', async () => {
    await page.locator('#ptqscope-panel .ptq-analysis-tabs button[data-analysis="runall"]').click();
    await page.locator('#ptqscope-panel').evaluate((p) => { p.dataset.run = 'idle'; });
    await page.locator('#ptqscope-panel .ptq-run').click();
    await waitOrPanelError('#ptqscope-panel[data-run="done"]');
    await page.locator('#ptqscope-panel .ptq-progress-text', { hasText: 'Run all: done in' }).waitFor();
    expect(await page.textContent('#ptqscope-panel .ptq-analysis-output')).toMatch(/sensitivity, distribution, channelwise, acc_error, sensitivity_analysis/);
    const marks = async (tab, selector) => {
      await page.locator(`#ptqscope-panel .ptq-analysis-tabs button[data-analysis="${tab}"]`).click();
      return page.locator(`#ptqscope-panel .ptq-analysis-output ${selector}`).count();
    };
    expect(await marks('distribution', 'svg path.bars')).toBeGreaterThan(0);
    expect(await marks('channelwise', 'svg path.boxes')).toBeGreaterThan(0);
    expect(await marks('sensitivity_analysis', 'svg path.cumulative, svg path.cumulative-isolated')).toBeGreaterThan(0);
    expect(await marks('acc_error', 'svg path.curve')).toBeGreaterThan(0);
    // A click on a box plot channel: its histogram from the plugin's runner (setChannelRunner).
    await page.locator('#ptqscope-panel .ptq-analysis-tabs button[data-analysis="channelwise"]').click();
    const boxplot = page.locator('#ptqscope-panel .ptq-analysis-output figure[data-kind="channelwise"]').first();
    const name = await boxplot.getAttribute('data-name');
    const channels = await page.evaluate((n) => window.__ptqscope__.state.get('results').channelwise[n].channels.length, name);
    expect(channels).toBeGreaterThan(1);
    const overlay = boxplot.locator('svg rect.overlay');
    const { width, height } = await overlay.boundingBox();
    await overlay.click({ position: { x: (width * 1.5) / channels, y: height / 2 } });
    const channelHistogram = boxplot.locator('.ptq-channel-histogram[data-channel="1"] svg.histogram');
    await channelHistogram.waitFor();
    expect(await channelHistogram.locator('.title tspan').first().textContent()).toBe(`${name} channel 2 of ${channels} (index 1)`);
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: path.join(ARTIFACTS, 'plugin-runall.png') });

    const save = async (id) => {
      // The PNG zip converts every chart of the Run all (dozens) in the page: more than the 20 s default on a loaded CI host.
      const [d] = await Promise.all([page.waitForEvent('download', { timeout: 90_000 }), page.locator(`#ptqscope-panel .ptq-export button[data-export="${id}"]`).click()]);
      return fs.readFileSync(await d.path());
    };
    const pngs = Object.entries(unzipSync(await save('png')));
    expect(pngs.length).toBeGreaterThan(3);
    for (const [name, bytes] of pngs) expect([...bytes.slice(1, 4)].map((c) => String.fromCharCode(c)).join(''), name).toBe('PNG');
    // No file name a Windows zip tool refuses.
    for (const [name] of pngs) expect(name.split('/').pop(), name).not.toMatch(/[<>:"\\|?*]/);
    const report = (await save('report')).toString('utf8');
    expect(report).toMatch(/^<!DOCTYPE html>/i);
    // The file opened in Netron names the results, and the report shows Netron's model coloured as
    // the dock colours it: the same nodes in the same colours.
    expect(report).toContain(`<tr><td>model</td><td>${MODEL_NAME}</td></tr>`);
    const heat = await page.evaluate(() => {
      const normal = new Set(window.__ptqscope__.state.get('graph').nodes.filter((n) => !n.calibration).map((n) => n.name));
      return Object.fromEntries([...window.__ptqscope__.state.get('heat').values].filter(([k]) => normal.has(k)).map(([k, v]) => [k, v.color]));
    });
    const { document: reportDoc } = parseHTML(report);
    const coloured = Object.fromEntries([...reportDoc.querySelectorAll('#graph svg.ptq-graph-picture g.node.heated')]
      .map((g) => [g.getAttribute('data-name'), /fill:\s*([^;]+)/.exec(g.querySelector('.node-body').getAttribute('style'))[1]]));
    expect(Object.keys(heat).length).toBeGreaterThan(0);
    expect(Object.keys(coloured).sort()).toEqual(Object.keys(heat).sort());
    for (const [n, c] of Object.entries(coloured)) expect(c.replace(/\s/g, ''), n).toBe(heat[n].replace(/\s/g, ''));
    expect(problems).toEqual([]);
  });

  it('re-applies the colours when Netron re-renders, and shows the clicked node\'s results', async () => {
    const colored = await page.locator('#nodes > g.node[data-ptq-heat]').count();
    // Netron's "Show Names": new svg#canvas, every node element replaced.
    await page.locator('#nodes').evaluate((g) => { g.dataset.old = '1'; });
    await page.evaluate(() => window.__view__.toggle('names'));
    await page.locator('body.default #nodes:not([data-old])').waitFor();
    await page.locator('#nodes > g.node[data-ptq-heat]').nth(colored - 1).waitFor();
    expect(await page.locator('#nodes > g.node[data-ptq-heat]').count()).toBe(colored);

    await page.locator('[id="node-name-/backbone/pool/MaxPool_output_0_HzCalibration"] > g.node-item').first().click();
    await page.locator('#ptqscope-panel .ptq-node-title', { hasText: '/backbone/pool/MaxPool_output_0_HzCalibration' }).waitFor();
    await page.locator('#ptqscope-panel .ptq-node [data-section="analysis-results"] h4').first().waitFor();
    // Its distribution chart (web/charts/histogram.mjs) from a per-node run.
    await page.locator('#ptqscope-panel .ptq-node-actions [data-analysis="distribution"]').click();
    // The Run all of the previous test already drew a distribution figure: wait for this run's end
    // (the click sets data-run to 'running' at once), then for its figure.
    await waitOrPanelError('#ptqscope-panel[data-run="done"]');
    await waitOrPanelError('#ptqscope-panel .ptq-node figure[data-kind="distribution"] svg');
    // A row of the app's sensitivity table selects its item here and scrolls Netron's graph to it.
    await page.locator('#ptqscope-panel .ptq-analysis-tabs button[data-analysis="sensitivity"]').click();
    await page.locator('#ptqscope-panel .ptq-analysis-output tr[data-item="/head/Flatten_output_0_HzCalibration"]').click();
    await page.locator('#ptqscope-panel .ptq-node-title', { hasText: '/head/Flatten_output_0_HzCalibration' }).waitFor();
    // Ctrl+click picks a node for the analyses' node lists; the plugin outlines it in Netron's graph.
    await page.locator('[id="node-name-/head/fc/Gemm"] > g.node-item').first().click({ modifiers: ['Control'] });
    await page.locator('[id="node-name-/head/fc/Gemm"][data-ptq-picked]').waitFor();
    expect(await page.locator('[id="node-name-/head/fc/Gemm"] > path.node-border').evaluate((p) => getComputedStyle(p).stroke)).toBe('rgb(46, 107, 210)');
    expect(await page.locator('#ptqscope-panel .ptq-use-picked').first().textContent()).toBe('← picked (1)');
    expect(problems).toEqual([]);
  });

  it('a toolchain report opened in its section colours Netron\'s nodes by the report', async () => {
    // A Horizon converter log for the recorded model (rows: node names; one the model does not have).
    const row = (node, cos) => `${node.padEnd(22)}BPU  id(0)     HzSQuantizedConv  ${cos.padEnd(19)}1.0        int8`;
    const log = [`${'Node'.padEnd(22)}ON   Subgraph  Type              Cosine Similarity  Threshold  DataType`, '-'.repeat(90),
      row('/backbone/conv1/Conv', '0.999702'), row('Conv_0', '0.998113'), row('/head/fc/Gemm', '0.990415'), row('/backbone/gone', '0.996'), ''].join('\n');
    await page.setInputFiles('#ptqscope-panel .ptq-report-file', { name: 'hb_mapper_makertbin.log', mimeType: 'text/plain', buffer: Buffer.from(log) });
    await waitOrPanelError('#ptqscope-panel .ptq-report-unmatched li');
    expect(await page.locator('#ptqscope-panel .ptq-report-unmatched li').textContent()).toContain('/backbone/gone');
    await page.locator('#ptqscope-panel .ptq-heat-summary', { hasText: 'report (horizon)' }).waitFor();
    const scale = heatScale('cosine-similarity', [0.999702, 0.998113, 0.990415], { scale: 'range' }); // the report's own metric: its range
    const fillOf = (name) => page.locator(`[id="node-name-${name}"] > g.node-item > path`).first().evaluate((p) => getComputedStyle(p).fill);
    await page.locator('#nodes > g.node[data-ptq-heat]').nth(2).waitFor();
    expect(await fillOf('/backbone/conv1/Conv')).toBe(rgb(scale.color(0.999702)).toString());
    expect(await fillOf('Conv_0')).toBe(rgb(scale.color(0.998113)).toString());
    expect(await fillOf('/head/fc/Gemm')).toBe(rgb(scale.color(0.990415)).toString());
    expect(await page.locator('#nodes > g.node[data-ptq-heat]').count()).toBe(3);
    expect(problems).toEqual([]);
  });

  it('the panel\'s Relations setting reads the graph again in the worker under the rules picked', async () => {
    const select = page.locator('#ptqscope-panel select.ptq-relations');
    expect(await select.locator('option').allTextContents()).toEqual(['horizon_nn', 'hmct']);
    expect(await select.inputValue()).toBe('horizon_nn');
    await select.selectOption('hmct');
    await page.waitForFunction(() => window.__ptqscope__.state.get('graph')?.relations === 'hmct');
    // The results of the former rules are dropped with the rest of the model's state.
    expect(await page.evaluate(() => window.__ptqscope__.state.get('results'))).toBeNull();
    await select.selectOption('horizon_nn');
    await page.waitForFunction(() => { const g = window.__ptqscope__.state.get('graph'); return g && !('relations' in g); });
    expect(problems).toEqual([]);
  });

  it('Check with onnxruntime in the dock: onnxruntime-web loads beside the worker under Netron\'s CSP; a model it cannot run is said so, a Q/DQ model\'s numbers are shown', async () => {
    const dock = page.locator('#ptqscope-panel');
    const whatif = dock.locator('.ptq-whatif');
    // -> the configuration after `node` was set to float in the what-if section.
    const toFloat = async (node) => {
      const runs = Number(await whatif.getAttribute('data-runs'));
      await page.evaluate((n) => window.__ptqscope__.state.set('selection', n), node);
      await whatif.locator('.ptq-whatif-action[data-action="float"]').click();
      await dock.locator(`.ptq-whatif[data-runs="${runs + 1}"][data-busy="false"]`).waitFor({ timeout: 120_000 });
      return page.evaluate(() => window.__ptqscope__.state.get('whatIf').document);
    };
    // The recorded model keeps Horizon's preprocessing node, which onnxruntime does not run.
    await toFloat('/backbone/conv1/Conv');
    await whatif.locator('.ptq-ort-check').click();
    await dock.locator('.ptq-whatif .ptq-ort[data-state="error"]').waitFor({ timeout: 120_000 });
    expect(await whatif.locator('.ptq-ort-verdict').textContent()).toMatch(/^The check could not run: onnxruntime cannot run the float model ptqscope exported \(qdq-onnx\): .*horizon:HzPreprocess/);

    const entry = fixture('qdq_detector_16bit');
    await page.setInputFiles('#open-file-dialog', entry.model);
    await dock.locator('.ptq-model', { hasText: path.basename(entry.model) }).waitFor();
    await page.locator('#ptqscope-panel[data-graph="loaded"]').waitFor({ timeout: 60_000 });
    await page.setInputFiles('#ptqscope-panel .ptq-data-input', entry.data);
    await dock.locator('.ptq-data-status', { hasText: '6 calibration samples' }).waitFor();
    const config = await toFloat('/c1/Conv');
    await expectCheckOf(await runCheck(page, whatif), entry, config, { data_num: 0 });
    expect(problems).toEqual([]);
  }, 300_000);

  it('at 1400×900, ~200-character names (tf2onnx\'s) keep the numbers in the dock; the heat legend lies over the graph pane beside the dock', async () => {
    await page.setViewportSize({ width: 1400, height: 900 });
    // The Netron-like page draws its recording whatever the file; the dock works on the file opened.
    const entry = fixture('ppocr_cls_long_names');
    await page.setInputFiles('#open-file-dialog', entry.model);
    await page.locator('#ptqscope-panel .ptq-model', { hasText: path.basename(entry.model) }).waitFor();
    await waitOrPanelError('#ptqscope-panel[data-graph="loaded"]');
    await page.setInputFiles('#ptqscope-panel .ptq-data-input', entry.data);
    await page.locator('#ptqscope-panel .ptq-data-status', { hasText: '6 calibration samples (ppocr_cls_data: x)' }).waitFor();
    await page.locator('#ptqscope-panel .ptq-analysis-tabs button[data-analysis="sensitivity"]').click();
    await page.locator('#ptqscope-panel form[data-analysis="sensitivity"] select[name="node_type"]').selectOption('activation');
    await page.locator('#ptqscope-panel').evaluate((p) => { p.dataset.run = 'idle'; });
    await page.locator('#ptqscope-panel .ptq-run').click();
    await waitOrPanelError('#ptqscope-panel[data-run="done"]');

    const dock = await page.locator('#ptqscope-panel').boundingBox();
    const rows = page.locator('#ptqscope-panel .ptq-analysis-output table.sensitivity-table tbody tr');
    const item = await rows.first().getAttribute('data-item');
    expect(item.length).toBeGreaterThan(180);
    await rows.first().scrollIntoViewIfNeeded();
    for (let i = 0; i < 3; i++) {
      const cell = await rows.nth(i).locator('td.num').first().boundingBox();
      expect(cell.x + cell.width, `row ${i}`).toBeLessThanOrEqual(dock.x + dock.width);
      expect(cell.x).toBeGreaterThanOrEqual(dock.x);
    }
    const name = rows.first().locator('td.ptq-name-cell').first();
    expect([await name.getAttribute('title'), await name.textContent()]).toEqual([item, item]);
    expect(await name.locator('.ptq-mid-tail').textContent()).toMatch(/_HzCalibration$/);
    // A row's click shows the node's whole name in the Selected node section.
    await rows.first().click();
    await page.locator('#ptqscope-panel .ptq-node-title', { hasText: item }).waitFor();

    // The legend: over Netron's graph pane, right of the dock, inside the window, on cosine's fixed scale.
    const legend = page.locator('#ptqscope-legend');
    await legend.locator('svg.heat-legend[data-scale="fixed"]').waitFor();
    const b = await legend.boundingBox();
    expect(b.x).toBeGreaterThanOrEqual(dock.x + dock.width);
    expect(b.x + b.width).toBeLessThanOrEqual(1400);
    expect(b.y + b.height).toBeLessThanOrEqual(900);
    expect(await legend.locator('.tick-label').first().textContent()).toBe('0.999999');
    // Its scale choice colours by the range of the values instead.
    await legend.locator('select.ptq-heat-scale').selectOption('range');
    await legend.locator('svg.heat-legend[data-scale="range"]').waitFor();
    expect(await page.evaluate(() => window.__ptqscope__.state.get('heat').legend.scale)).toBe('range');
    // The dock's Run button keeps white text on its accent under the mouse.
    await page.locator('#ptqscope-panel .ptq-run').hover();
    const [color, background] = await page.locator('#ptqscope-panel .ptq-run').evaluate((r) => [getComputedStyle(r).color, getComputedStyle(r).backgroundColor]);
    expect(color).toBe('rgb(255, 255, 255)');
    expect(background).toBe('rgb(46, 107, 210)');
    await page.screenshot({ path: path.join(ARTIFACTS, 'plugin-long-names.png') });
    expect(problems).toEqual([]);
  });
});
