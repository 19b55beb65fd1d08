// The start of a session in Chromium (dist/ptqscope.html from file://), as a newcomer does it:
//  - calibration data opened before any model is kept (the start screen says so) and checked once the
//    model opens, in either order;
//  - a float model says, for as long as it is open, that it has nothing quantized to analyse: the
//    analyses are disabled with the reason beside Run (not an empty table marked "done"), and
//    "Calibrate" makes its calibrated model in the page with the data opened: the same bytes as
//    `ptqscope calibrate` writes; the page then analyses it with the same data.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { fixture } from '../helpers.mjs';
import { cli } from '../cli_fixture.mjs';
import { openApp, openPanel, screenshot } from './browser.mjs';

let app;
let tmp;
const float = fixture('digits_cnn');
const samples = fs.readdirSync(path.join(float.data, 'input')).length;

beforeAll(async () => {
  app = await openApp();
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ptq-start-'));
});

afterAll(async () => {
  await app?.context.close();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

const headerText = () => app.page.locator('#model-info').textContent();

describe('the start of a session', () => {
  it('data opened before the model is kept, then checked against the model', async () => {
    const { page } = app;
    await page.setInputFiles('#open-data-folder', float.data);
    const held = page.locator('#held-data');
    await held.waitFor();
    expect(await held.textContent()).toBe(`${path.basename(float.data)} (${samples} files) is kept: open its model to check and use it`);
    const box = await held.boundingBox();
    expect(box.x + box.width).toBeLessThanOrEqual(1400);
    expect(await page.isHidden('#error-banner')).toBe(true);
    await page.setInputFiles('#open-model', float.model);
    await expect.poll(headerText).toContain(`${samples} calibration samples (${path.basename(float.data)}: input)`);
    expect(await held.isHidden()).toBe(true);
  });

  it('a float model says why nothing can be analysed and is calibrated in the page', async () => {
    const { page } = app;
    await openPanel(page, 'analyses');
    const notice = page.locator('.ptq-float-model');
    await notice.waitFor();
    expect(await notice.locator('.ptq-float-model-text').textContent()).toMatch(/^digits_cnn\.onnx has no calibration nodes: it is a float model/);
    // Every analysis is disabled, with the reason beside Run.
    expect(await page.locator('.ptq-run').isDisabled()).toBe(true);
    expect(await page.locator('.ptq-limited').textContent()).toMatch(/a float model has no calibration nodes/);
    const b = await notice.boundingBox();
    expect(b.y + b.height).toBeLessThanOrEqual(900);
    // The analysis tabs are still there, below it.
    const tabs = await page.locator('.ptq-analysis-tabs').boundingBox();
    expect(tabs.y).toBeGreaterThanOrEqual(b.y + b.height);
    expect(tabs.y + tabs.height).toBeLessThanOrEqual(900);
    await screenshot(page, 'page-float-model');

    const calibrate = page.locator('.ptq-calibrate');
    expect(await calibrate.textContent()).toBe(`Calibrate with the ${samples} calibration samples`);
    await calibrate.click();
    await expect.poll(headerText, { timeout: 120_000 }).toMatch(/^digits_cnn_calibrated_model\.onnx · /);
    await expect.poll(headerText).toContain(`${samples} calibration samples`);
    expect(await notice.isHidden()).toBe(true);
    expect(await page.locator('.ptq-run').isDisabled()).toBe(false);

    // The bytes the page made are those of `ptqscope calibrate` on the same files (its defaults).
    const out = path.join(tmp, 'cli_calibrated.onnx');
    const r = await cli(['calibrate', float.model, float.data, '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    const pageDigest = await page.evaluate(async () => {
      const bytes = window.ptqscope.state.get('modelBytes');
      const hash = await window.crypto.subtle.digest('SHA-256', bytes);
      return [...new Uint8Array(hash)].map((x) => x.toString(16).padStart(2, '0')).join('');
    });
    expect(pageDigest).toBe(createHash('sha256').update(fs.readFileSync(out)).digest('hex'));

    // And the analyses run on it with the data kept.
    await page.click('.ptq-run');
    await page.waitForFunction(() => /^Sensitivity: done in /.test(document.querySelector('.ptq-progress-text')?.textContent ?? ''), null, { timeout: 120_000 });
    expect(await page.locator('.ptq-analysis-output table.sensitivity-table tbody tr').count()).toBeGreaterThan(0);
    expect(await page.isHidden('#error-banner')).toBe(true);
    expect(app.pageErrors).toEqual([]);
    expect(app.offline).toEqual([]);
  }, 300_000);
});
