// "Check with onnxruntime" in Chromium, on the page served from dist/ by a plain static server under
// its own Content-Security-Policy (connect-src 'none'): onnxruntime-web is imported from the page's
// assets only when the button is pressed (the requests the server saw), never before and never from
// elsewhere. On a Q/DQ fixture (a what-if change, then the fix's configuration) and on the YOLO-like
// calibrated detector (a what-if change): the numbers shown against ptqscope's and onnxruntime's run
// in the test on the same exported models (onnxruntime_check.mjs). The single-file page, which does not
// carry onnxruntime-web, says so next to the disabled button.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixture } from '../helpers.mjs';
import { toNumber } from '../../../web/pipeline/result.mjs';
import { checkOptions } from '../../../web/pipeline/onnxruntime_check.mjs';
import { CHROMIUM_ARGS, PAGE, openApp, openPanel, screenshot } from './browser.mjs';
import { expectCheckOf, runCheck } from './onnxruntime_check.mjs';
import { serveFolder } from '../plugin/netron_site.mjs';

const ROOT = path.dirname(PAGE); // dist/

let server;
let origin;
let context;
let page;
const served = [];
const foreign = [];
const pageErrors = [];

beforeAll(async () => {
  server = await serveFolder(ROOT, { onRequest: (url) => served.push(url) });
  origin = `http://127.0.0.1:${server.address().port}`;
  context = await chromium.launchPersistentContext(fs.mkdtempSync(path.join(os.tmpdir(), 'ptq-ort-')), {
    executablePath: '/usr/bin/chromium', headless: true, args: CHROMIUM_ARGS, viewport: { width: 1400, height: 900 },
  });
  page = context.pages()[0] ?? await context.newPage();
  page.on('request', (r) => { if (!r.url().startsWith(origin) && !/^(data|blob):/.test(r.url())) foreign.push(r.url()); });
  page.on('pageerror', (e) => pageErrors.push(e.message));
  await page.goto(`${origin}/index.html`);
  await page.waitForSelector('body[data-ready="true"]');
}, 60_000);

afterAll(async () => {
  await context?.close();
  await new Promise((r) => (server ? server.close(r) : r()));
});

const onnxruntimeRequests = () => served.filter((u) => u.includes('onnxruntime'));

async function open(entry) {
  await page.setInputFiles('#open-model', entry.model);
  await page.waitForFunction((name) => document.querySelector('#model-info').textContent.startsWith(`${name} · `)
    && document.querySelector('#graph').dataset.state === 'ready', path.basename(entry.model));
  await page.setInputFiles('#open-data-folder', entry.data);
  await page.waitForFunction(() => /calibration samples?\b/.test(document.querySelector('#model-info').textContent));
}

// The first normal node fed by a calibration node (graph order) set to `action` in the what-if panel;
// -> the configuration document the page holds.
async function change(action) {
  const graph = await page.evaluate(() => window.ptqscope.state.get('graph'));
  const quantized = new Set(graph.nodes.filter((n) => n.calibration).flatMap((n) => n.outputs));
  const node = graph.nodes.find((n) => !n.calibration && n.inputs.some((i) => quantized.has(i))).name;
  await openPanel(page, 'whatif');
  await page.evaluate((n) => window.ptqscope.state.set('selection', n), node);
  const runs = Number(await page.getAttribute('.ptq-whatif', 'data-runs'));
  await page.click(`.ptq-whatif-action[data-action="${action}"]`);
  await page.waitForSelector(`.ptq-whatif[data-runs="${runs + 1}"][data-busy="false"]`, { timeout: 120_000 });
  return page.evaluate(() => window.ptqscope.state.get('whatIf').document);
}

describe('Check with onnxruntime on the served page (dist/index.html)', () => {
  it('the page loads no onnxruntime before the button is pressed', async () => {
    const csp = await page.getAttribute('meta[http-equiv="Content-Security-Policy"]', 'content');
    expect(csp).toContain("connect-src 'none'");
    expect(onnxruntimeRequests()).toEqual([]);
  });

  it('qdq_detector_16bit: a what-if change, then the fix found, checked by onnxruntime', async () => {
    const entry = fixture('qdq_detector_16bit');
    await open(entry);
    const config = await change('float');
    const whatif = page.locator('.ptq-whatif');
    expect(await whatif.locator('.ptq-ort-check').isEnabled()).toBe(true);
    const shown = await runCheck(page, whatif);
    // Loaded from the page's own assets, once the button was pressed; nothing else was asked for.
    expect(onnxruntimeRequests().sort()).toEqual(['/assets/onnxruntime-web/ort-wasm-simd-threaded.wasm.mjs', '/assets/onnxruntime-web/ort.wasm.bundle.min.mjs']);
    await expectCheckOf(shown, entry, config, { data_num: 0 });
    // ptqscope's column is the what-if panel's "after".
    for (const [metric, row] of Object.entries(shown.rows)) {
      const after = await whatif.locator(`.ptq-whatif-numbers .ptq-whatif-table[data-output="mean over outputs"] tr[data-metric="${metric}"] td`).nth(1).getAttribute('data-value');
      expect(toNumber(after), metric).toBe(Number(row.ptqscope));
    }
    await screenshot(page, 'onnxruntime-check-whatif');
    // Another change withdraws the check (it was for the previous configuration).
    await page.click('.ptq-whatif-undo');
    await page.waitForSelector('.ptq-whatif .ptq-ort[data-state="stale"]');

    // The fix panel checks the configuration the search found, on the samples it judged.
    await openPanel(page, 'fix');
    const fix = page.locator('.ptq-fix');
    expect(await fix.locator('.ptq-ort-check').isEnabled()).toBe(false);
    await fix.locator('input[name="bound"]').fill('0.9999999');
    await fix.locator('.ptq-fix-run').click();
    await page.waitForSelector('.ptq-fix:is([data-state="reached"], [data-state="not-reached"])', { timeout: 300_000 });
    const result = await page.evaluate(() => window.ptqscope.state.get('results'));
    expect(result.config.provenance.analysis).toBe('fix');
    const fixShown = await runCheck(page, fix);
    expect(fixShown.caption).toContain('6 of 6 samples'); // the samples the search judged: every one
    await expectCheckOf(fixShown, entry, result.config, checkOptions(result.options.fix));
    await screenshot(page, 'onnxruntime-check-fix');
  }, 600_000);

  it('yolov8n_like_calibrated: a what-if change checked by onnxruntime (the Horizon model in its Q/DQ form)', async () => {
    const entry = fixture('yolov8n_like_calibrated');
    await open(entry);
    const config = await change('float');
    const whatif = page.locator('.ptq-whatif');
    await expectCheckOf(await runCheck(page, whatif), entry, config, { data_num: 0 });
    // Six outputs: each has its table behind "Per output".
    await whatif.locator('.ptq-ort-outputs > summary').click();
    expect(await whatif.locator('.ptq-ort-outputs table.ptq-ort-table').count()).toBe(6);
    await screenshot(page, 'onnxruntime-check-yolo');
    expect(foreign).toEqual([]);
    expect(pageErrors).toEqual([]);
  }, 600_000);

  it('the single-file page does not carry onnxruntime-web and says so beside the button', async () => {
    const app = await openApp();
    try {
      const entry = fixture('qdq_detector_16bit');
      await app.page.setInputFiles('#open-model', entry.model);
      await app.page.waitForFunction(() => document.querySelector('#graph').dataset.state === 'ready');
      await openPanel(app.page, 'whatif');
      const check = app.page.locator('.ptq-whatif .ptq-ort');
      expect(await check.locator('.ptq-ort-check').isDisabled()).toBe(true);
      const status = check.locator('.ptq-ort-status');
      expect(await status.textContent()).toMatch(/^This single-file page does not carry onnxruntime-web .*dist\/index\.html/);
      expect(await status.isVisible()).toBe(true);
      expect(app.offline).toEqual([]);
    } finally {
      await app.context.close();
    }
  }, 120_000);
});
