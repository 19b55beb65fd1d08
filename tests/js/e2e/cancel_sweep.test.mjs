// End to end in Chromium (dist/ptqscope.html from file://): cancel a running sweep and start another.
// The sweep is the node sensitivity of the calibrated BlazeFace fixture on all 3 samples (64 items,
// a few seconds in the page's worker pool): Cancel is pressed as soon as the first item has finished
// (from inside the page, in the same task that sees it, so the sweep is surely still running), the
// rows finished so far stay (with the CLI's values), and the same sweep then runs again to the end
// with the CLI's table while the page stays usable.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { fixture } from '../helpers.mjs';
import { openApp, openPanel, cliJson, sensitivityRows } from './browser.mjs';

const FIXTURE = 'blazeface_128_calibrated';
const SAMPLES = 3;

let app;
let reference; // the CLI's result document for the same sweep
let entry;

beforeAll(async () => {
  entry = fixture(FIXTURE);
  [app, reference] = await Promise.all([
    openApp(),
    cliJson('get-sensitivity-of-nodes', entry.model, entry.data, ['-n', 'node', '-d', String(SAMPLES), '--workers', '1']),
  ]);
});

afterAll(async () => {
  await app?.context.close();
});

// Every row's cosine similarity is the CLI's.
function expectReferenceValues(rows) {
  for (const r of rows) {
    expect(Number(r.cells['cosine-similarity']), r.item).toBeCloseTo(Number(reference.sensitivity.node[r.item]['cosine-similarity']), 5);
  }
}
const progressText = () => app.page.textContent('.ptq-progress-text');

describe('cancel a running sweep and start another (file://)', () => {
  it('cancel keeps the finished rows; the next run completes with the CLI table', async () => {
    const { page } = app;
    const total = reference.sensitivity_order.node.length;
    expect(total).toBeGreaterThan(20); // long enough that a cancel after the first item lands mid-sweep

    await page.setInputFiles('#open-model', entry.model);
    await page.waitForSelector('#graph[data-state="ready"]');
    await page.setInputFiles('#open-data-folder', entry.data);
    await page.waitForFunction((n) => new RegExp(`${n} calibration samples`).test(document.querySelector('#model-info').textContent), SAMPLES);

    await openPanel(page, 'analyses');
    const form = page.locator('form.ptq-analysis-form[data-analysis="sensitivity"]');
    await form.locator('select[name="node_type"]').selectOption('node');
    await form.locator('input[name="data_num"]').fill(String(SAMPLES));
    await page.click('.ptq-run');

    // Press Cancel in the same task that shows the first finished item (a mutation observer runs
    // before the page handles its next worker message).
    const doneAtCancel = await page.evaluate(() => new Promise((resolve) => {
      const bar = document.querySelector('.ptq-progress');
      const check = () => {
        if (!bar.hasAttribute('value') || bar.value < 1) return;
        observer.disconnect();
        document.querySelector('.ptq-cancel').click();
        resolve(bar.value);
      };
      const observer = new MutationObserver(check);
      observer.observe(bar, { attributes: true });
      check();
    }));
    expect(doneAtCancel).toBeLessThan(total);

    await page.waitForFunction(() => /: cancelled in /.test(document.querySelector('.ptq-progress-text').textContent));
    expect(await page.isEnabled('.ptq-run')).toBe(true);
    expect(await page.isDisabled('.ptq-cancel')).toBe(true);
    await page.waitForSelector('.ptq-analysis-output table.sensitivity-table tbody tr');
    expect(await page.textContent('.ptq-analysis-output')).toContain('(cancelled: items finished so far)');
    const kept = await sensitivityRows(page);
    expect(kept.length).toBeGreaterThanOrEqual(doneAtCancel); // every item finished before the cancel
    expect(kept.length).toBeLessThan(total);
    expectReferenceValues(kept);
    expect(await page.isHidden('#error-banner')).toBe(true);

    // Another run in the (renewed) pool: the whole sweep, the CLI's order and values.
    await page.click('.ptq-run');
    await page.waitForFunction(() => /: done in /.test(document.querySelector('.ptq-progress-text').textContent), null, { timeout: 120_000 });
    const rows = await sensitivityRows(page);
    expect(rows.map((r) => r.item)).toEqual(reference.sensitivity_order.node);
    expectReferenceValues(rows);
    expect(await page.textContent('.ptq-analysis-output')).not.toContain('cancelled');
    expect(await progressText()).toMatch(/^Sensitivity: done in /);

    // Still usable: a click on a table row selects that node on the graph.
    const first = rows[0].item;
    await page.click(`.ptq-analysis-output table.sensitivity-table tbody tr[data-item="${first}"]`);
    await page.waitForFunction((n) => window.ptqscope.state.get('selection') === n, first);
    expect(await page.isHidden('#error-banner')).toBe(true);
    expect(app.pageErrors).toEqual([]);
    expect(app.offline).toEqual([]);
  });
});
