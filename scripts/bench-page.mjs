// The page's worker pool measured in Chromium (bench-seed, bench-race): dist/ptqscope.html opened from
// file://, the model and calibration folder opened on its own inputs, a sweep run from the Analyses
// panel; wall time from Run to "done", the heaps the header reports. The page's pool has
// navigator.hardwareConcurrency - 1 workers (at most 4): the page is told of `workers` + 1 cores.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS, PAGE, openPanel } from '../tests/js/e2e/browser.mjs';

const SWEEP_TIMEOUT = 4 * 3600_000;

export async function openPage(workers) {
  if (!fs.existsSync(PAGE)) throw new Error(`${PAGE} is missing: build the web app first (scripts/build.sh web)`);
  const context = await chromium.launchPersistentContext(fs.mkdtempSync(path.join(os.tmpdir(), 'ptq-bench-page-')), {
    executablePath: '/usr/bin/chromium', headless: true, args: CHROMIUM_ARGS, viewport: { width: 1400, height: 900 },
  });
  await context.addInitScript(`Object.defineProperty(navigator, 'hardwareConcurrency', { get: () => ${workers + 1} })`);
  return context;
}

// One sweep of `nodeType` over `samples` samples: {wall (ms, Run to done), items, heaps, workers}.
// `interested`: only these items, picked on the graph with "Only the nodes picked on the graph" ticked,
// as a person restricts the page's sweep.
export async function runPage(context, model, data, samples, nodeType = 'activation', interested = null) {
  const page = await context.newPage();
  try {
    await page.goto(pathToFileURL(PAGE).href);
    await page.waitForSelector('body[data-ready="true"]');
    await page.setInputFiles('#open-model', model);
    await page.waitForSelector('#graph[data-state="ready"]', { timeout: 600_000 });
    await page.setInputFiles('#open-data-folder', data);
    await page.waitForFunction((n) => new RegExp(`${n} calibration samples`).test(document.querySelector('#model-info').textContent), samples, { timeout: 600_000 });
    await openPanel(page, 'analyses');
    const form = page.locator('form.ptq-analysis-form[data-analysis="sensitivity"]');
    await form.locator('select[name="node_type"]').selectOption(nodeType);
    await form.locator('input[name="data_num"]').fill(String(samples));
    if (interested) {
      await pickOnGraph(page, interested);
      await form.locator('input[name="use_picked"]').check();
    }
    const t0 = performance.now();
    await page.click('.ptq-run');
    await page.waitForFunction(() => /: (done|failed|cancelled)/.test(document.querySelector('.ptq-progress-text').textContent), null, { timeout: SWEEP_TIMEOUT, polling: 500 });
    const wall = performance.now() - t0;
    const status = await page.textContent('.ptq-progress-text');
    if (!/: done in /.test(status)) throw new Error(`the page's sweep did not finish: ${status}; ${await page.textContent('#error-banner')}`);
    await page.waitForFunction(() => document.querySelector('#model-info').dataset.heapAnalysis);
    const header = await page.textContent('#model-info');
    const heap = Number(await page.getAttribute('#model-info', 'data-heap-analysis'));
    const workers = Number(/per analysis worker \((\d+)\)/.exec(header)?.[1]);
    const items = await page.$$eval('.ptq-analysis-output table.sensitivity-table tbody tr', (rows) => rows.length);
    return { wall, items, heaps: [heap], workers };
  } finally {
    await page.close();
  }
}

// The graph's multi-selection set to `names`, as ctrl-clicks on their nodes or badges leave it (the
// graph draws only what is in view, so the state is set directly); the form's count must say so.
async function pickOnGraph(page, names) {
  await page.evaluate((list) => window.ptqscope.state.set('picked', new Set(list)), names);
  const text = await page.textContent('form.ptq-analysis-form[data-analysis="sensitivity"]');
  if (!text.includes(`picked (${names.length})`)) throw new Error(`the sensitivity form does not show ${names.length} picked nodes`);
}
