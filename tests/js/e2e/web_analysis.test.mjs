// End to end in Chromium: dist/ptqscope.html opened from file:// (no server, no network), the
// embedded example, a sensitivity sweep (activation) in the page's worker pool, the heatmap on the
// graph, the table against the CLI's --json on the same inputs, the JSON export, and Run all drawing
// every chart type.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../helpers.mjs';
import { openApp, openPanel as openDockPanel, cliJson } from './browser.mjs';

const EXAMPLE = path.join(REPO_ROOT, 'build/web-example');
const ARTIFACTS = path.join(REPO_ROOT, 'build/test-results/e2e-web-analysis');

let context;
let page;
let offline = []; // any request that is not file:, data: or blob:
let pageErrors = [];

// The same analysis from the command line (`ptqscope get-sensitivity-of-nodes ... --json`) on the
// example's files: the page and the CLI must agree.
function cliRun([command, ...options]) {
  const model = fs.readdirSync(EXAMPLE).find((f) => f.endsWith('.onnx'));
  return cliJson(command, path.join(EXAMPLE, model), path.join(EXAMPLE, 'calibration_data'), options);
}
const openPanel = (id) => openDockPanel(page, id);

beforeAll(async () => {
  if (!fs.existsSync(EXAMPLE)) throw new Error(`${EXAMPLE} is missing: build the web app first (scripts/build.sh web)`);
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  ({ context, page, offline, pageErrors } = await openApp({ acceptDownloads: true }));
});

afterAll(async () => {
  await context?.close();
});

describe('web analyses from file://', () => {
  it('opens the example, runs activation sensitivity, colours the graph, fills the table, exports JSON', async () => {
    await page.click('#open-example');
    await page.waitForFunction(() => /calibration samples?\b/.test(document.querySelector('#model-info')?.textContent ?? ''));

    await openPanel('analyses');
    const form = page.locator('form.ptq-analysis-form[data-analysis="sensitivity"]');
    await form.locator('select[name="node_type"]').selectOption('activation');
    await form.locator('input[name="metrics"][value="mse"]').check();
    await page.click('.ptq-run');
    await page.waitForFunction(() => /done in/.test(document.querySelector('.ptq-progress-text')?.textContent ?? ''));

    // The page judges every sample by default; the CLI keeps the original's one unless told (-d 0: all).
    const reference = await cliRun(['get-sensitivity-of-nodes', '-n', 'activation', '-m', "['cosine-similarity','mse']", '-d', '0']);
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

  it('Run all (§8.4) draws every chart type: accumulated error, histograms, box plots, sensitivity analysis', async () => {
    await openPanel('analyses');
    await page.click('.ptq-analysis-tabs button[data-analysis="runall"]');
    // The previous run's "done in" must not count as this one's.
    await page.evaluate(() => { document.querySelector('.ptq-progress-text').textContent = ''; });
    await page.click('.ptq-run');
    await page.waitForFunction(() => /done in/.test(document.querySelector('.ptq-progress-text')?.textContent ?? ''), null, { timeout: 240_000 });
    expect(await page.textContent('.ptq-analysis-output')).toMatch(/sensitivity, distribution, channelwise, acc_error, sensitivity_analysis/);
    // Each analysis' tab shows what Run all computed for it.
    const marks = async (tab, selector) => {
      await page.click(`.ptq-analysis-tabs button[data-analysis="${tab}"]`);
      return page.locator(`.ptq-analysis-output ${selector}`).count();
    };
    expect(await marks('acc_error', 'svg path.curve')).toBeGreaterThan(0); // accumulated-error curves
    expect(await marks('distribution', 'svg path.bars')).toBeGreaterThan(0); // histograms
    expect(await marks('distribution', 'svg line.threshold')).toBeGreaterThan(0); // activation threshold (red dashed)
    expect(await marks('channelwise', 'svg path.boxes')).toBeGreaterThan(0); // per-channel box plots
    expect(await marks('channelwise', 'svg path.medians')).toBeGreaterThan(0);
    expect(await marks('sensitivity_analysis', 'svg path.cumulative, svg path.cumulative-isolated')).toBeGreaterThan(0);
    expect(await marks('sensitivity', 'table.sensitivity-table')).toBeGreaterThan(0);
    await page.screenshot({ path: path.join(ARTIFACTS, 'runall.png'), fullPage: true });
    expect(await page.isHidden('#error-banner')).toBe(true);
    expect(pageErrors).toEqual([]);
    expect(offline).toEqual([]);
  });
});
