// End to end in Chromium: dist/ptqscope.html opened from file:// (no server, no network), the
// embedded example, a sensitivity sweep (activation) in the page's worker pool, the heatmap on the
// graph, the table against the wasm core run in Node on the same inputs, and the JSON export.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { REPO_ROOT, loadPtqModule } from '../helpers.mjs';
import { readCalibrationFolder } from '../../../web/cli/lib/files.mjs';

// PTQ_WEB_PAGE: another build of the page (e.g. one made with a private wasm build).
const PAGE = process.env.PTQ_WEB_PAGE || path.join(REPO_ROOT, 'dist/ptqscope.html');
const EXAMPLE = path.join(REPO_ROOT, 'build/web-example');
const ARTIFACTS = path.join(REPO_ROOT, 'build/test-results/e2e-web-analysis');
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
  '--disable-sync', '--no-first-run', '--disable-quic'];

let context;
let page;
const offline = []; // any request that is not file:, data: or blob:
const pageErrors = [];

// The same request the page sends, run by the wasm core in Node on the example's files.
async function referenceRun(request) {
  const model = fs.readdirSync(EXAMPLE).find((f) => f.endsWith('.onnx'));
  const ptq = await loadPtqModule();
  const session = new ptq.Session();
  try {
    session.loadModel(new Uint8Array(fs.readFileSync(path.join(EXAMPLE, model))));
    session.loadCalibrationData(readCalibrationFolder(path.join(EXAMPLE, 'calibration_data')));
    return JSON.parse(session.analyze(JSON.stringify(request)));
  } finally {
    session.delete();
  }
}

// A dock tab toggles its panel: click it only when that panel is not already shown.
async function openPanel(id) {
  await page.evaluate((pid) => {
    const tab = document.querySelector(`.dock-tab[data-panel="${pid}"]`);
    if (!tab.classList.contains('active') || document.querySelector('#dock').classList.contains('collapsed')) tab.click();
  }, id);
  await page.waitForSelector(`.dock-panel[data-panel="${id}"]:not([hidden])`);
}

beforeAll(async () => {
  if (!fs.existsSync(PAGE) || !fs.existsSync(EXAMPLE)) {
    throw new Error(`${PAGE} or ${EXAMPLE} is missing: build the web app first (scripts/build.sh web)`);
  }
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'ptq-e2e-'));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium', headless: true, args: CHROMIUM_ARGS, acceptDownloads: true,
    viewport: { width: 1400, height: 900 },
  });
  page = context.pages()[0] ?? await context.newPage();
  page.on('request', (r) => { if (!/^(file|data|blob):/.test(r.url())) offline.push(r.url()); });
  page.on('pageerror', (e) => pageErrors.push(e.message));
  await page.goto(pathToFileURL(PAGE).href);
  await page.waitForSelector('body[data-ready="true"]');
});

afterAll(async () => {
  await context?.close();
});

describe('web analyses from file://', () => {
  it('opens the example, runs activation sensitivity, colours the graph, fills the table, exports JSON', async () => {
    await page.click('#open-example');
    await page.waitForFunction(() => /calibration samples/.test(document.querySelector('#model-info')?.textContent ?? ''));

    await openPanel('analyses');
    const form = page.locator('form.ptq-analysis-form[data-analysis="sensitivity"]');
    await form.locator('select[name="node_type"]').selectOption('activation');
    await form.locator('input[name="metrics"][value="mse"]').check();
    await page.click('.ptq-run');
    await page.waitForFunction(() => /done in/.test(document.querySelector('.ptq-progress-text')?.textContent ?? ''));

    const request = { analysis: 'sensitivity', options: { node_type: 'activation', metrics: ['cosine-similarity', 'mse'], data_num: 1, sample_selection: 'last', output_node: null, interested_nodes: null } };
    const reference = await referenceRun(request);
    const order = reference.sensitivity_order.activation;

    // The table: same items in the same (most sensitive first) order, same cosine values.
    const rows = await page.$$eval('.ptq-analysis-output table.sensitivity-table tbody tr', (trs) =>
      trs.map((tr) => [tr.dataset.item, ...[...tr.children].map((td) => td.textContent)]));
    expect(rows.map((r) => r[0])).toEqual(order);
    const header = await page.$$eval('.ptq-analysis-output table.sensitivity-table thead th', (ths) => ths.map((th) => th.dataset.column));
    const cosCol = header.indexOf('cosine-similarity') + 1;
    rows.slice(0, 3).forEach((r) => expect(Number(r[cosCol])).toBeCloseTo(Number(reference.sensitivity.activation[r[0]]['cosine-similarity']), 5));

    // The heatmap: consumers of the activation calibration nodes are filled.
    const heated = await page.$$eval('#graph .heated', (gs) => gs.map((g) => g.querySelector('.node-body')?.style.fill).filter(Boolean));
    expect(heated.length).toBeGreaterThan(0);
    await openPanel('heatmap');
    await expect.poll(() => page.textContent('.ptq-heat-legend')).toMatch(/lower is worse/);
    await page.screenshot({ path: path.join(ARTIFACTS, 'sensitivity-heatmap.png') });

    // Export the results JSON: the CLI's schema with the same table.
    await openPanel('export');
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('button[data-export="json"]')]);
    const saved = JSON.parse(fs.readFileSync(await download.path(), 'utf8'));
    expect(saved.schema).toBe('ptqscope.result');
    expect(saved.sensitivity_order.activation).toEqual(order);
    expect(saved.sensitivity.activation).toEqual(reference.sensitivity.activation);

    expect(await page.isHidden('#error-banner')).toBe(true);
    expect(pageErrors).toEqual([]);
    expect(offline).toEqual([]);
  });
});
