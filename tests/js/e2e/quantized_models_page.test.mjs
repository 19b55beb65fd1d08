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
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { fixture } from '../helpers.mjs';
import { cli } from '../cli_fixture.mjs';
import { openApp, openPanel } from './browser.mjs';
import { runLoop } from './loop.mjs';

const FIXTURES = ['qdq_resnet_tiny', 'qop_mixed'];
const SECTIONS = ['sensitivity', 'distribution', 'channelwise', 'acc_error', 'sensitivity_analysis'];

let app;
let tmp;

beforeAll(async () => {
  app = await openApp({ acceptDownloads: true });
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ptq-e2e-quantized-'));
});

afterAll(async () => {
  await app?.context.close();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

async function open(page, entry) {
  // The page still shows the previous fixture: wait for this model's name before giving it data.
  await page.setInputFiles('#open-model', entry.model);
  await page.waitForFunction((name) => document.querySelector('#model-info').textContent.startsWith(`${name} · `)
    && document.querySelector('#graph').dataset.state === 'ready', path.basename(entry.model));
  await page.setInputFiles('#open-data-folder', entry.data);
  await page.waitForFunction(() => /calibration samples/.test(document.querySelector('#model-info').textContent));
}

// Run all in the analyses panel -> the results document the Export panel saves.
async function runAll(page) {
  await openPanel(page, 'analyses');
  await page.click('.ptq-analysis-tabs button[data-analysis="runall"]');
  await page.evaluate(() => { document.querySelector('.ptq-progress-text').textContent = ''; });
  await page.click('.ptq-run');
  await page.waitForFunction(() => /^Run all: done in /.test(document.querySelector('.ptq-progress-text')?.textContent ?? ''), null, { timeout: 300_000 });
  expect(await page.textContent('.ptq-analysis-output')).toMatch(/sensitivity, distribution, channelwise, acc_error, sensitivity_analysis/);
  const marks = async (tab, selector) => {
    await page.click(`.ptq-analysis-tabs button[data-analysis="${tab}"]`);
    return page.locator(`.ptq-analysis-output ${selector}`).count();
  };
  expect(await marks('sensitivity', 'table.sensitivity-table')).toBeGreaterThan(0);
  expect(await marks('distribution', 'svg path.bars')).toBeGreaterThan(0);
  expect(await marks('channelwise', 'svg path.boxes')).toBeGreaterThan(0);
  expect(await marks('acc_error', 'svg path.curve')).toBeGreaterThan(0);
  expect(await marks('sensitivity_analysis', 'svg path.cumulative, svg path.cumulative-isolated')).toBeGreaterThan(0);
  await openPanel(page, 'export');
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('button[data-export="json"]')]);
  return JSON.parse(fs.readFileSync(await download.path(), 'utf8'));
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
    });

    const ours = await runAll(page);
    const out = path.join(tmp, name);
    const r = await cli(['runall', entry.model, entry.data, '-s', out, '--workers', '1', '--quiet']);
    expect(r.code, r.stderr).toBe(0);
    const theirs = JSON.parse(fs.readFileSync(path.join(out, 'results.json'), 'utf8'));
    // The page's document also holds the loop's node sweep: every entry of the CLI's is in it, equal.
    for (const section of SECTIONS) {
      expect(theirs[section], section).toBeDefined();
      expect(ours[section], section).toMatchObject(theirs[section]);
    }
    expect(await page.isHidden('#error-banner'), await page.textContent('#error-banner')).toBe(true);
    expect(app.pageErrors).toEqual([]);
    expect(app.offline).toEqual([]);
  }, 900_000);
});
