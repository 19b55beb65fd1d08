// End to end in Chromium (dist/ptqscope.html from file://): a model with an op the core does not run
// (tests/js/unsupported_op_model.mjs) opens: the banner names the op and what can still be done, the
// graph marks the node, the analyses that run the model are disabled with the reason, and the
// calibration statistics of the weight calibration node come out as the CLI computes them.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApp, openPanel, cliJson } from './browser.mjs';
import { UNSUPPORTED, writeUnsupportedOpModel } from '../unsupported_op_model.mjs';

let app;
let tmp;
let files;
let reference;

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ptqscope-unsupported-page-'));
  files = writeUnsupportedOpModel(tmp);
  [app, reference] = await Promise.all([
    openApp(),
    cliJson('get-calibration-nodes-stat-info', files.model, files.data, ['-n', 'w_HzCalibration', '--workers', '1']),
  ]);
});

afterAll(async () => {
  await app?.context.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe('a model with an unsupported op on the page', () => {
  it('opens: the banner lists the op and what still works, the graph marks the node', async () => {
    const { page } = app;
    await page.setInputFiles('#open-model', files.model);
    await page.waitForSelector('#graph[data-state="ready"]');
    await page.waitForSelector('#error-banner:not([hidden])');
    const banner = await page.textContent('#error-banner .error-text');
    expect(banner).toContain(`fancy.onnx: the model uses 1 node(s) with unsupported ops: ${UNSUPPORTED}`);
    expect(banner).toContain('It opens without running: the graph (the unsupported nodes are marked), and distribution, stat_info on weight calibration nodes');
    await page.click('#error-banner .error-close');
    expect(await page.$$eval('#graph g.node.node-unsupported', (gs) => gs.map((g) => g.dataset.name))).toEqual(['fancy']);
    expect(await page.$$eval('#graph g.node:not(.node-unsupported)', (gs) => gs.map((g) => g.dataset.name))).toContain('conv');
  });

  it('the analyses that run the model are disabled with the reason; stat_info runs on the weight node', async () => {
    const { page } = app;
    await page.setInputFiles('#open-data-folder', files.data);
    await page.waitForFunction(() => /calibration samples?\b/.test(document.querySelector('#model-info').textContent));
    await openPanel(page, 'analyses');
    await page.click('.ptq-analysis-tabs button[data-analysis="sensitivity"]');
    expect(await page.isDisabled('.ptq-run')).toBe(true);
    expect(await page.textContent('.ptq-limited')).toContain('Not available: this analysis runs the model, which uses ops ptqscope does not support (FancyOp)');
    expect(await page.getAttribute('.ptq-analysis-tabs button[data-analysis="runall"]', 'class')).toContain('ptq-tab-blocked');

    await page.click('.ptq-analysis-tabs button[data-analysis="stat_info"]');
    expect(await page.isDisabled('.ptq-run')).toBe(false);
    expect(await page.textContent('.ptq-limited')).toContain('weight calibration nodes only');
    await page.locator('form.ptq-analysis-form[data-analysis="stat_info"] [name="nodes_list"]').fill('w_HzCalibration');
    await page.click('.ptq-run');
    await page.waitForFunction(() => /: done in /.test(document.querySelector('.ptq-progress-text').textContent), null, { timeout: 120_000 });
    const results = await page.evaluate(() => window.ptqscope.state.get('results'));
    expect(results.stat_info).toEqual(reference.stat_info);
    expect(await page.isHidden('#error-banner')).toBe(true);
    expect(app.pageErrors).toEqual([]);
    expect(app.offline).toEqual([]);
  });
});
