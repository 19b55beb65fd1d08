// End to end in Chromium (dist/ptqscope.html from file://): a model saved with external data
// (scripts/fixtures/external_models.py) opened without its side file names the file to add and leaves
// the page usable; opened together with it, the graph shows, the calibration folder is checked by the
// engine worker that loaded the model (no new worker) and an activation sweep in the page's worker
// pool gives the CLI's table for the embedded model.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import path from 'node:path';
import { FIXTURES, fixture } from '../helpers.mjs';
import { openApp, openPanel, cliJson, sensitivityRows } from './browser.mjs';

const SAMPLES = 2;
let app;
let entry;
let reference;

beforeAll(async () => {
  entry = fixture('digits_cnn_calibrated_external');
  [app, reference] = await Promise.all([
    openApp(),
    cliJson('get-sensitivity-of-nodes', path.join(FIXTURES, entry.embedded_model), entry.data, ['-n', 'activation', '-d', String(SAMPLES), '--workers', '1']),
  ]);
});

afterAll(async () => {
  await app?.context.close();
});

describe('a model with external data on the page (file://)', () => {
  it('without its side file: the banner names the file to add', async () => {
    const { page } = app;
    await page.setInputFiles('#open-model', entry.model);
    await page.waitForSelector('#error-banner:not([hidden])');
    const banner = await page.textContent('#error-banner');
    expect(banner).toContain(path.basename(entry.model));
    expect(banner).toContain(`its tensors are stored in the external file '${entry.external_data}'`);
  });

  it('with it: graph, calibration data and an activation sweep with the CLI\'s values', async () => {
    const { page } = app;
    await page.setInputFiles('#open-model', [entry.model, path.join(path.dirname(entry.model), entry.external_data)]);
    await page.waitForSelector('#graph[data-state="ready"]');
    expect(await page.isHidden('#error-banner')).toBe(true);
    // The calibration check runs in the engine worker that loaded the model: no worker is started for
    // it (a fresh one would need the model and its external data sent again).
    const started = [];
    const onWorker = (w) => started.push(w.url());
    page.on('worker', onWorker);
    await page.setInputFiles('#open-data-folder', entry.data);
    await page.waitForFunction(() => /calibration samples?\b/.test(document.querySelector('#model-info').textContent));
    page.off('worker', onWorker);
    expect(started).toEqual([]);

    await openPanel(page, 'analyses');
    const form = page.locator('form.ptq-analysis-form[data-analysis="sensitivity"]');
    await form.locator('select[name="node_type"]').selectOption('activation');
    await form.locator('input[name="data_num"]').fill(String(SAMPLES));
    await page.click('.ptq-run');
    await page.waitForFunction(() => /: done in /.test(document.querySelector('.ptq-progress-text').textContent), null, { timeout: 120_000 });
    const rows = await sensitivityRows(page);
    expect(rows.map((r) => r.item)).toEqual(reference.sensitivity_order.activation);
    for (const r of rows) {
      expect(Number(r.cells['cosine-similarity']), r.item)
        .toBeCloseTo(Number(reference.sensitivity.activation[r.item]['cosine-similarity']), 5);
    }
    expect(await page.isHidden('#error-banner')).toBe(true);
    expect(app.pageErrors).toEqual([]);
    expect(app.offline).toEqual([]);
  });
});
