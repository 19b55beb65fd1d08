// End to end in Chromium (dist/ptqscope.html from file://): from diagnosis to fix on the calibrated
// PP-OCR classifier (after a Run all) and the YOLO-like detector (six outputs): node sweep → what-if
// toggles with undo → own / accumulated errors along a path → fix search cancelled, then run with its
// path chart and applied to what-if → toolchain export → comparison of the errors before and after
// (tests/js/e2e/loop.mjs; every number against the wasm core run in Node on the same files); and on the
// planted clipping fault: explain → a hint selected and applied → fix with threshold first for the
// calibrated model → its export reopened → calibration methods compared (tests/js/e2e/explain_loop.mjs).
// One browser for the file.
import path from 'node:path';
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { fixture } from '../helpers.mjs';
import { openApp, openPanel, badgeShows, screenshot } from './browser.mjs';
import { runAll, runLoop } from './loop.mjs';
import { runExplainLoop } from './explain_loop.mjs';

const FIXTURES = ['ppocr_cls_calibrated', 'yolov8n_like_calibrated'];

let app;

beforeAll(async () => {
  app = await openApp({ acceptDownloads: true });
});

afterAll(async () => {
  await app?.context.close();
});

describe('diagnosis to fix in the page (file://)', () => {
  it.each(FIXTURES)('%s: sweep, what-if, node errors, fix, export, compare', async (name) => {
    const { page } = app;
    const entry = fixture(name);
    // The page still shows the previous fixture: wait for this model's name before giving it data.
    await page.setInputFiles('#open-model', entry.model);
    await page.waitForFunction((name) => document.querySelector('#model-info').textContent.startsWith(`${name} · `)
      && document.querySelector('#graph').dataset.state === 'ready', path.basename(entry.model));
    await page.setInputFiles('#open-data-folder', entry.data);
    await page.waitForFunction(() => /calibration samples?\b/.test(document.querySelector('#model-info').textContent));
    const scope = page.locator('body');
    const show = (id) => openPanel(page, id);
    // On the classifier, Run all first: the loop's node sweep must still be the table it reads (the
    // latest sweep's table comes first), not the weight and activation tables Run all left.
    if (name === 'ppocr_cls_calibrated') {
      await runAll(page, {
        scope,
        entry,
        show,
        runDone: () => page.waitForFunction(() => /^Run all: done in /.test(document.querySelector('.ptq-progress-text').textContent), null, { timeout: 300_000 }),
      });
    }
    await runLoop(page, {
      scope,
      entry,
      show,
      sweepDone: () => page.waitForFunction(() => /^Sensitivity: done in /.test(document.querySelector('.ptq-progress-text').textContent), null, { timeout: 300_000 }),
      configShown: badgeShows(page),
      onnxruntime: 'unavailable', // the single-file page carries none (onnxruntime_check_page.test.mjs runs it)
    });
    // The heat follows the comparison: the graph's nodes are coloured by the change B − A.
    expect(await page.evaluate(() => window.ptqscope.state.get('heat')?.legend?.view)).toBe('compare');
    expect(await page.isHidden('#error-banner')).toBe(true);
    expect(app.pageErrors).toEqual([]);
    expect(app.offline).toEqual([]);
  }, 600_000);

  it('planted_clipping: why (hints, histogram, heat layer), apply, fix with threshold first, export reopened, calibration methods', async () => {
    const { page } = app;
    const entry = fixture('planted_clipping');
    await page.setInputFiles('#open-model', entry.model);
    await page.waitForFunction((name) => document.querySelector('#model-info').textContent.startsWith(`${name} · `)
      && document.querySelector('#graph').dataset.state === 'ready', path.basename(entry.model));
    await page.setInputFiles('#open-data-folder', entry.data);
    await page.waitForFunction(() => /calibration samples?\b/.test(document.querySelector('#model-info').textContent));
    await runExplainLoop(page, {
      scope: page.locator('body'),
      show: (id) => openPanel(page, id),
      entry,
      readState: (key) => page.evaluate((k) => window.ptqscope.state.get(k), key),
      // The graph draws the nodes in view only: the heat's coloured nodes are counted in the store.
      heatedCount: () => page.evaluate(() => window.ptqscope.state.get('heat')?.values.size ?? 0),
      // The sidebar shows the selected quantizer.
      selectionShown: async (name) => {
        await expect.poll(() => page.evaluate(() => window.ptqscope.state.get('selection'))).toBe(name);
        await expect.poll(() => page.locator('#sidebar .node-name .sidebar-value').first().textContent()).toBe(name);
      },
      // The quantizer's badge reads "thr", outlined as changed, its tooltip giving the new threshold.
      thresholdShown: async (name) => {
        await page.evaluate((n) => window.ptqscope.state.set('focus', n), name);
        const badge = page.locator(`#graph g.badge[data-calibration="${name}"]`).first();
        await expect.poll(() => badge.locator('text').textContent()).toBe('thr');
        expect(await badge.getAttribute('class')).toContain('badge-changed');
        expect(await badge.locator('title').textContent()).toMatch(/in effect \(what-if\): uint8; threshold changed: \d/);
      },
      // The Why tab's picture is docs/images/page-why.png (PTQ_UPDATE_SCREENSHOTS=1).
      shot: (name) => (name === 'why' ? screenshot(page, 'page-why') : screenshot(page, `page-${name}`)),
    });
    expect(await page.isHidden('#error-banner')).toBe(true);
    expect(app.pageErrors).toEqual([]);
    expect(app.offline).toEqual([]);
  }, 600_000);
});
