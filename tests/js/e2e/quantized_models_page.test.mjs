// Standard quantized ONNX models in the page (Chromium, dist/ptqscope.html from file://): a Q/DQ model
// exported by torch from fake-quantized modules (docs/behaviour.md §1.11) and a QOperator model
// (QLinear* operators, §1.12), each dropped on the page with its calibration data, then
//  - the diagnosis-to-fix loop (tests/js/e2e/loop.mjs): node sweep, what-if with undo, node errors,
//    the fix search run to its target, applied, exported as the model itself with the configuration
//    applied (qdq-onnx, the bytes the core writes), and the comparison before / after; every number
//    against the wasm core run in Node;
//  - Run all: every analysis (sensitivity, distribution, channel box plots, accumulated error,
//    sensitivity analysis) drawn, and the results the page exports equal to the CLI's `runall`
//    results.json on the same files (the core's numbers, which tests/js/qdq_import.test.mjs and
//    qoperator_import.test.mjs hold against onnxruntime).
// One browser for the file.
import path from 'node:path';
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { fixture } from '../helpers.mjs';
import { openApp, openPanel, badgeShows } from './browser.mjs';
import { runAll, runLoop } from './loop.mjs';

const FIXTURES = ['qdq_resnet_tiny', 'qop_mixed'];

let app;

beforeAll(async () => {
  app = await openApp({ acceptDownloads: true });
});

afterAll(async () => {
  await app?.context.close();
});

async function open(page, entry) {
  // The page still shows the previous fixture: wait for this model's name before giving it data.
  await page.setInputFiles('#open-model', entry.model);
  await page.waitForFunction((name) => document.querySelector('#model-info').textContent.startsWith(`${name} · `)
    && document.querySelector('#graph').dataset.state === 'ready', path.basename(entry.model));
  await page.setInputFiles('#open-data-folder', entry.data);
  await page.waitForFunction(() => /calibration samples?\b/.test(document.querySelector('#model-info').textContent));
}

describe('standard quantized models in the page (file://)', () => {
  it.each(FIXTURES)('%s: sweep, what-if, node errors, fix, qdq-onnx export, compare, then Run all as the CLI computes it', async (name) => {
    const { page } = app;
    const entry = fixture(name);
    await open(page, entry);

    await runLoop(page, {
      scope: page.locator('body'),
      entry,
      show: (id) => openPanel(page, id),
      sweepDone: () => page.waitForFunction(() => /^Sensitivity: done in /.test(document.querySelector('.ptq-progress-text').textContent), null, { timeout: 300_000 }),
      exportAs: 'qdq-onnx',
      cancelFix: false, // these small models' search ends within the click's latency (cancel: whatif_loop.test.mjs)
      configShown: badgeShows(page), // a quantizer's badge (the Q/DQ pair folded) reads its state in effect
    });

    await runAll(page, {
      scope: page.locator('body'),
      entry,
      show: (id) => openPanel(page, id),
      runDone: () => page.waitForFunction(() => /^Run all: done in /.test(document.querySelector('.ptq-progress-text').textContent), null, { timeout: 300_000 }),
    });
    expect(await page.isHidden('#error-banner'), await page.textContent('#error-banner')).toBe(true);
    expect(app.pageErrors).toEqual([]);
    expect(app.offline).toEqual([]);
  }, 900_000);
});
