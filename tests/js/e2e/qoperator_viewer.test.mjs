// A QOperator model in the page (Chromium, dist/ptqscope.html from file://), on the QOperator CNN
// fixture (QLinearConv, MaxPool on integers, com.microsoft QLinearAdd / QLinearGlobalAveragePool,
// QLinearMatMul; docs/behaviour.md §1.12): folded, the float operators with their quantizers as
// badges; "Show Q/DQ as nodes" draws the model as the file holds it (its QLinear* nodes under their
// names, no Q/DQ node the file does not have), each node standing for its output's quantizer (click,
// sidebar, an activation sweep's heat) and its weight's quantizer on its weight row; a what-if → int16 chosen on the
// QLinearAdd gives the numbers of the same what-if chosen on the quantizer's badge, and the core's.
import path from 'node:path';
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { fixture, openSession } from '../helpers.mjs';
import { onnxNodes } from '../onnx_nodes.mjs';
import { openApp, openPanel } from './browser.mjs';

let app;
let session;
const entry = fixture('qop_cnn');
const fileNodes = onnxNodes(entry.model);
// The quantizers of the fixture's manifest (named after the float model's tensors): the QLinearAdd's
// output and the first QLinearConv's weight.
const ADD = 'add2';
const ADD_OUT = 'add2_out';
const CONV = 'conv1';
const CONV_WEIGHT = 'conv1.weight_quantized';

beforeAll(async () => {
  app = await openApp();
  ({ session } = await openSession(entry));
});

afterAll(async () => {
  session?.delete();
  await app?.context.close();
});

const ready = (page) => page.waitForFunction(() => document.querySelector('#graph').dataset.state === 'ready');
const drawnNodes = (page) => page.$$eval('#graph .node.node-node', (gs) => gs.map((g) => [g.dataset.name, g.querySelector('.node-title').textContent]));
const click = (page, selector) => page.$eval(selector, (e) => e.dispatchEvent(new MouseEvent('click', { bubbles: true })));

// Presses the what-if's `action` on the selected node and returns the mean over outputs, metric -> value.
async function whatIf(page, action) {
  const whatif = page.locator('.ptq-whatif');
  const runs = Number(await whatif.getAttribute('data-runs'));
  await whatif.locator(`.ptq-whatif-action[data-action="${action}"]`).click();
  await page.waitForFunction((n) => {
    const el = document.querySelector('.ptq-whatif');
    return Number(el.dataset.runs) > n && el.dataset.busy === 'false';
  }, runs, { timeout: 120_000 });
  const rows = whatif.locator('.ptq-whatif-table[data-output="mean over outputs"] tbody tr');
  const after = {};
  for (let i = 0; i < await rows.count(); i++) after[await rows.nth(i).getAttribute('data-metric')] = await rows.nth(i).locator('td').nth(1).getAttribute('data-value');
  return after;
}

describe('a QOperator model in the page', () => {
  it('drawn as the file holds it, its nodes standing for their quantizers', async () => {
    const { page } = app;
    expect(entry.oracle.map((o) => o.quantizer)).toEqual(expect.arrayContaining([ADD_OUT, CONV_WEIGHT]));
    await page.setInputFiles('#open-model', entry.model);
    await page.waitForFunction((name) => document.querySelector('#model-info').textContent.startsWith(`${name} · `)
      && document.querySelector('#graph').dataset.state === 'ready', path.basename(entry.model));
    await page.setInputFiles('#open-data-folder', entry.data);
    await page.waitForFunction(() => /calibration samples?\b/.test(document.querySelector('#model-info').textContent));

    // Folded: the float operators under the file's names, the quantizers as badges.
    expect(await page.$eval(`#graph .node[data-name="${CONV}"] .node-title`, (t) => t.textContent)).toBe('Conv');
    expect(await page.locator(`#graph .badge[data-calibration="${ADD_OUT}"]`).count()).toBe(1);
    expect((await page.textContent('.calibration-toggle')).trim()).toBe('Show Q/DQ as nodes');

    // As nodes: exactly the file's nodes, under their names and operator types (every box is drawn).
    await page.click('.calibration-toggle input');
    await page.waitForFunction(() => document.querySelector('#graph').dataset.state === 'ready' && document.querySelector('#graph .node[data-stands]'));
    await page.waitForFunction(() => document.querySelector('#graph').dataset.nodes === document.querySelector('#graph').dataset.drawnNodes);
    expect((await drawnNodes(page)).sort()).toEqual(fileNodes.map((n) => [n.name, n.op_type]).sort());
    expect(fileNodes.filter((n) => /QuantizeLinear|DequantizeLinear/.test(n.op_type)).length).toBe(2);
    // The integer tensors between them are the file's.
    const edgeTensors = await page.$$eval('#graph .edge-hit title', (ts) => ts.map((t) => t.textContent.split('\n')[0]));
    expect(edgeTensors).toEqual(expect.arrayContaining(['conv1_out_quantized', 'pool1_out_quantized', 'add2_out_quantized']));
    // The weight's quantizer is the badge of the QLinearConv's weight row.
    expect(await page.locator(`#graph .node[data-name="${CONV}"] .badge[data-calibration="${CONV_WEIGHT}"]`).count()).toBe(1);

    // A click on the QLinearAdd selects its output's quantizer: the sidebar shows it, its heat colours the node.
    await click(page, `#graph .node[data-name="${ADD}"] .node-body`);
    await page.waitForFunction((n) => window.ptqscope.state.get('selection') === n, ADD_OUT);
    await expect.poll(() => page.textContent('#sidebar')).toContain(ADD_OUT);
    expect(await page.$eval(`#graph .node[data-name="${ADD}"]`, (g) => g.classList.contains('selected'))).toBe(true);
    // An activation sweep colours the QLinearAdd with its output quantizer's heat.
    await openPanel(page, 'analyses');
    await page.locator('.ptq-analysis-tabs button[data-analysis="sensitivity"]').click();
    await page.locator('form.ptq-analysis-form[data-analysis="sensitivity"] select[name="node_type"]').selectOption('activation');
    await page.locator('.ptq-run').click();
    await page.waitForFunction(() => /^Sensitivity: done in /.test(document.querySelector('.ptq-progress-text')?.textContent ?? ''), null, { timeout: 300_000 });
    await page.waitForFunction((n) => window.ptqscope.state.get('heat')?.values?.has(n), ADD_OUT);
    const addColor = await page.evaluate((n) => window.ptqscope.state.get('heat').values.get(n).color, ADD_OUT);
    await page.waitForFunction(([n, c]) => document.querySelector(`#graph .node[data-name="${n}"] .node-body`).style.fill === c, [ADD, addColor]);

    // What-if → int16 from the QLinearAdd, then from the quantizer's badge (folded view): the core's numbers.
    await openPanel(page, 'whatif');
    const whatif = page.locator('.ptq-whatif');
    await expect.poll(() => whatif.locator('.ptq-whatif-targets').textContent()).toBe(ADD_OUT);
    const fromNode = await whatIf(page, 'int16');
    await whatif.locator('.ptq-whatif-undo').click();
    await page.waitForFunction(() => document.querySelector('.ptq-whatif').dataset.busy === 'false' && document.querySelector('.ptq-whatif-undo').disabled);
    await page.click('.calibration-toggle input');
    await ready(page);
    await page.waitForSelector(`#graph .badge[data-calibration="${ADD_OUT}"]`);
    await page.evaluate(() => window.ptqscope.state.set('selection', null));
    await click(page, `#graph .badge[data-calibration="${ADD_OUT}"]`);
    await page.waitForFunction((n) => window.ptqscope.state.get('selection') === n, ADD_OUT);
    await expect.poll(() => whatif.locator('.ptq-whatif-targets').textContent()).toBe(ADD_OUT);
    const fromBadge = await whatIf(page, 'int16');
    const config = { schema: 'ptqscope.config', version: 1, intents: [{ node: ADD_OUT, action: 'int16' }] };
    // Every sample, as the page judges (the catalogue's interactive default).
    const ref = JSON.parse(session.analyze(JSON.stringify({ analysis: 'what_if', options: { data_num: 0 }, config })));
    expect(Object.keys(fromNode).length).toBeGreaterThan(0);
    expect(fromNode).toEqual(fromBadge);
    for (const [m, v] of Object.entries(ref.what_if.mean)) expect(fromNode[m], m).toBe(String(v));

    expect(await page.isHidden('#error-banner'), await page.textContent('#error-banner')).toBe(true);
    expect(app.pageErrors).toEqual([]);
    expect(app.offline).toEqual([]);
  }, 600_000);
});
