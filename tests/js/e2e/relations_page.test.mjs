// End to end in Chromium (dist/ptqscope.html from file://) on the ReLU6 fixture: the analyses panel's
// "Relations" setting (the core's relation rules, behaviour.md §1.9) reads the model again under the
// rules picked, and the node sensitivity table then lists the nodes the command line lists with the
// same --relations; the what-if panel measures node errors as the Horizon converter log does.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, fixture } from '../helpers.mjs';
import { openApp, openPanel, cliJson, sensitivityRows } from './browser.mjs';

const ARTIFACTS = path.join(REPO_ROOT, 'build/test-results/e2e-relations');
const entry = fixture('relu6_calibrated');
let app;
let reference;

beforeAll(async () => {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  // The page judges every sample (the catalogue's interactive default), so the CLI reference does too.
  const node = (rules) => cliJson('get-sensitivity-of-nodes', entry.model, entry.data, ['--relations', rules, '-d', '0', '--workers', '1']);
  let hmct;
  [app, reference, hmct] = await Promise.all([openApp(), node('horizon_nn'), node('hmct')]);
  reference = { horizon_nn: reference, hmct };
});

afterAll(async () => {
  await app?.context.close();
});

// Runs the node sensitivity sweep of the open model and returns the table's items.
async function nodeSweep(page) {
  await page.click('.ptq-analysis-tabs button[data-analysis="sensitivity"]');
  await page.locator('form.ptq-analysis-form[data-analysis="sensitivity"] select[name="node_type"]').selectOption('node');
  await page.click('.ptq-run');
  await page.waitForFunction(() => /done in/.test(document.querySelector('.ptq-progress-text')?.textContent ?? ''), null, { timeout: 120_000 });
  return (await sensitivityRows(page)).map((r) => r.item);
}

describe('relation rules on the page', () => {
  it('the Relations setting shows the core\'s rules; hmct adds the node after a ReLU6 to the sweep', async () => {
    const { page } = app;
    await page.setInputFiles('#open-model', entry.model);
    await page.waitForSelector('#graph[data-state="ready"]');
    await page.setInputFiles('#open-data-folder', entry.data);
    await page.waitForFunction(() => /calibration samples/.test(document.querySelector('#model-info').textContent));
    await openPanel(page, 'analyses');

    // What a person sees: the setting inside the window, the default picked, both rules offered.
    const select = page.locator('select.ptq-relations');
    const box = await select.boundingBox();
    const viewport = page.viewportSize();
    expect(box && box.x >= 0 && box.y >= 0 && box.x + box.width <= viewport.width && box.y + box.height <= viewport.height).toBe(true);
    expect(await page.textContent('label.ptq-relations-label')).toContain('Relations');
    expect(await select.inputValue()).toBe('horizon_nn');
    expect(await select.locator('option').allTextContents()).toEqual(['horizon_nn', 'hmct']);

    const older = await nodeSweep(page);
    expect(older).toEqual(reference.horizon_nn.sensitivity_order.node);
    expect(older).not.toContain('GlobalAveragePool_4');

    await select.selectOption('hmct');
    // The model is read again: the graph's relations follow the rules, the former results are gone.
    await page.waitForFunction(() => window.ptqscope.state.get('graph')?.relations === 'hmct');
    expect(await page.evaluate(() => window.ptqscope.state.get('results'))).toBeNull();
    const newer = await nodeSweep(page);
    expect(newer).toEqual(reference.hmct.sensitivity_order.node);
    expect(newer).toContain('GlobalAveragePool_4');
    const results = await page.evaluate(() => window.ptqscope.state.get('results'));
    expect(results.relations).toBe('hmct');
    await page.screenshot({ path: path.join(ARTIFACTS, 'hmct-node-sensitivity.png') });
    expect(app.pageErrors).toEqual([]);
    expect(app.offline).toEqual([]);
  });

  it('node errors measured as the Horizon converter log', async () => {
    const { page } = app;
    await openPanel(page, 'whatif');
    const measure = page.locator('select.ptq-node-errors-measure');
    expect(await measure.isVisible()).toBe(true);
    expect(await measure.locator('option').allTextContents()).toEqual(['at node outputs', 'as the Horizon converter log']);
    await measure.selectOption('converter');
    await page.click('.ptq-node-errors-run');
    await page.waitForFunction(() => window.ptqscope.state.get('results')?.node_errors?.measure === 'converter', null, { timeout: 120_000 });
    const ne = await page.evaluate(() => window.ptqscope.state.get('results').node_errors);
    const cli = await cliJson('node-errors', entry.model, entry.data, ['--relations', 'hmct', '--measure', 'converter', '-d', '0', '--workers', '1']);
    expect(ne.order).toEqual(cli.node_errors.order);
    expect(ne.nodes).toEqual(cli.node_errors.nodes);
    await page.screenshot({ path: path.join(ARTIFACTS, 'node-errors-converter.png') });
    expect(app.pageErrors).toEqual([]);
    expect(app.offline).toEqual([]);
  });
});
