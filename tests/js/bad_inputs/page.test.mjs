// The catalogue's page subset in Chromium (dist/ptqscope.html from file://): a bad model or
// calibration folder opened on the page (or a model that loads but cannot run, when an analysis runs
// on it) shows the error banner naming the same culprit as the CLI,
// raises no page error, and the page stays usable (the example opens and an analysis runs after).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixture } from '../helpers.mjs';
import { openApp, openPanel } from '../e2e/browser.mjs';
import { generateCatalogue } from './generate.mjs';
import { writeWarningModel } from './warnings.mjs';

const { model, data } = fixture('digits_cnn_calibrated');
const floatModel = fixture('digits_cnn').model;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ptqscope-bad-page-'));
const cases = generateCatalogue(tmp, { model, data, floatModel }).filter((c) => c.page);

let context;
let page;
let pageErrors = [];

// The sensitivity analysis of activations, started from the analyses panel.
async function runSensitivity() {
  await openPanel(page, 'analyses');
  const form = page.locator('form.ptq-analysis-form[data-analysis="sensitivity"]');
  await form.locator('select[name="node_type"]').selectOption('activation');
  await page.click('.ptq-run');
}

const exampleLoaded = () => page.waitForFunction(() => /calibration samples?\b/.test(document.querySelector('#model-info')?.textContent ?? ''));

beforeAll(async () => {
  ({ context, page, pageErrors } = await openApp());
  await page.click('#open-example');
  await exampleLoaded();
});

afterAll(async () => {
  await context?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe('bad inputs on the page', () => {
  it('the subset covers models and calibration folders', () => {
    expect(cases.filter((c) => c.page.model).length).toBeGreaterThanOrEqual(3);
    expect(cases.filter((c) => c.page.data).length).toBeGreaterThanOrEqual(3);
  });

  for (const c of cases) {
    const culprit = c.page.culprit ?? c.culprit;
    it(`${c.id}: the banner names ${culprit}`, async () => {
      if (c.page.run) {
        await page.setInputFiles('#open-model', c.page.model);
        // The data belongs to this model: wait until the page shows it, not the example still loaded.
        await page.waitForFunction((name) => (document.querySelector('#model-info')?.textContent ?? '').startsWith(name), path.basename(c.page.model));
        await page.evaluate(() => { window.ptqscope.state.set('samples', null); });
        await page.setInputFiles('#open-data-folder', c.page.data);
        await exampleLoaded();
        await runSensitivity();
      } else if (c.page.model) await page.setInputFiles('#open-model', c.page.model);
      else await page.setInputFiles('#open-data-folder', c.page.data);
      await page.waitForSelector('#error-banner:not([hidden])');
      const shown = await page.textContent('#error-banner .error-text');
      await page.click('#error-banner .error-close');
      expect(shown).toContain(culprit);
      if (c.says) expect(shown).toMatch(c.says);
      expect(await page.isHidden('#error-banner')).toBe(true);
      expect(pageErrors).toEqual([]);
      if (c.page.run) {
        // The case's model opened: back to the example's model and data for the cases after it.
        await page.setInputFiles('#open-model', model);
        await page.evaluate(() => { window.ptqscope.state.set('samples', null); });
        await page.setInputFiles('#open-data-folder', data);
        await exampleLoaded();
      }
    });
  }

  it('a model read with warnings opens and its banner shows every warning', async () => {
    const warned = writeWarningModel(tmp, model);
    await page.setInputFiles('#open-model', warned.file);
    await page.waitForSelector('#error-banner:not([hidden])');
    const shown = await page.textContent('#error-banner .error-text');
    for (const w of warned.warnings) expect(shown).toContain(`warned_model.onnx: warning: ${w}`);
    // Loaded, not refused: the header names the model and the data can be opened for it.
    await page.waitForFunction(() => /warned_model\.onnx/.test(document.querySelector('#model-info')?.textContent ?? ''));
    await page.setInputFiles('#open-data-folder', data);
    await exampleLoaded();
    expect(await page.isHidden('#error-banner')).toBe(true);
    expect(pageErrors).toEqual([]);
  });

  it('stays usable: a good model and folder open and an analysis runs', async () => {
    await page.setInputFiles('#open-model', model);
    await page.evaluate(() => { window.ptqscope.state.set('samples', null); });
    await page.setInputFiles('#open-data-folder', data);
    await exampleLoaded();
    await page.waitForSelector('#graph[data-state="ready"]');
    await runSensitivity();
    await page.waitForFunction(() => /done in/.test(document.querySelector('.ptq-progress-text')?.textContent ?? ''));
    expect(await page.locator('.ptq-analysis-output table.sensitivity-table tbody tr').count()).toBeGreaterThan(0);
    expect(await page.isHidden('#error-banner')).toBe(true);
    expect(pageErrors).toEqual([]);
  });
});
