// A Q/DQ model in the page (Chromium, dist/ptqscope.html from file://), on the onnxruntime-layout
// fixture (activation Q -> DQ pairs, int8 weights behind DequantizeLinear; docs/behaviour.md §1.11):
// opened, each quantizer drawn as a badge; an activation sweep colours the badges; "Show Q/DQ as
// nodes" draws the file's QuantizeLinear / DequantizeLinear nodes under their own names, each
// coloured with its quantizer's heat; a click on a QuantizeLinear selects its quantizer and the
// what-if's "→ float" on it gives the numbers the core computes for that configuration in Node.
import path from 'node:path';
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { fixture, openSession } from '../helpers.mjs';
import { openApp, openPanel } from './browser.mjs';

let app;
let session;
let graph;
const entry = fixture('qdq_detector_int');

beforeAll(async () => {
  app = await openApp();
  ({ session } = await openSession(entry));
  graph = JSON.parse(session.graphJson());
});

afterAll(async () => {
  session?.delete();
  await app?.context.close();
});

const quantizers = () => graph.nodes.filter((n) => n.calibration?.qdq_nodes?.length);

describe('a Q/DQ model in the page', () => {
  it('badges, Q/DQ nodes with their quantizer\'s heat, and a what-if on one quantizer', async () => {
    const { page } = app;
    await page.setInputFiles('#open-model', entry.model);
    await page.waitForFunction((name) => document.querySelector('#model-info').textContent.startsWith(`${name} · `)
      && document.querySelector('#graph').dataset.state === 'ready', path.basename(entry.model));
    // Folded: one badge per quantizer, no Q/DQ box.
    const badges = await page.$$eval('#graph .badge', (bs) => [...new Set(bs.map((b) => b.dataset.calibration))].sort());
    expect(badges).toEqual(quantizers().map((n) => n.name).sort());
    expect(await page.locator('#graph .node[data-stands]').count()).toBe(0);
    expect((await page.textContent('.calibration-toggle')).trim()).toBe('Show Q/DQ as nodes');

    await page.setInputFiles('#open-data-folder', entry.data);
    await page.waitForFunction(() => /calibration samples?\b/.test(document.querySelector('#model-info').textContent));

    // An activation sweep: the heat view follows it and colours the badges.
    await openPanel(page, 'analyses');
    await page.locator('.ptq-analysis-tabs button[data-analysis="sensitivity"]').click();
    await page.locator('form.ptq-analysis-form[data-analysis="sensitivity"] select[name="node_type"]').selectOption('activation');
    await page.locator('.ptq-run').click();
    await page.waitForFunction(() => /^Sensitivity: done in /.test(document.querySelector('.ptq-progress-text')?.textContent ?? ''), null, { timeout: 300_000 });
    await page.waitForFunction(() => window.ptqscope.state.get('heat')?.values?.has('input'));
    const heatOf = (name) => page.evaluate((n) => window.ptqscope.state.get('heat').values.get(n)?.color ?? null, name);
    const inputColor = await heatOf('input');
    expect(inputColor).toBeTruthy();
    await page.waitForFunction((c) => document.querySelector('#graph .badge[data-calibration="input"] rect')?.style.fill === c, inputColor);

    // The toggle: the file's Q/DQ nodes, each standing for its quantizer.
    await page.click('.calibration-toggle input');
    await page.waitForFunction(() => document.querySelector('#graph').dataset.state === 'ready' && document.querySelector('#graph .node[data-stands]'));
    expect(await page.locator('#graph .badge').count()).toBe(0);
    const expected = quantizers().flatMap((n) => n.calibration.qdq_nodes.map((q) => [q, n.name])).sort();
    // Every Q/DQ node is in the view model (the drawing culls what is off-screen).
    const drawnModel = await page.evaluate(() => [...document.querySelectorAll('#graph .node[data-stands]')].map((g) => [g.dataset.name, g.dataset.stands]));
    for (const pair of drawnModel) expect(expected).toContainEqual(pair);
    const q = '/q_in/QuantizeLinear';
    expect(expected).toContainEqual([q, 'input']);
    await page.evaluate((name) => window.ptqscope.state.set('focus', name), 'input');
    const qBox = `#graph .node[data-name="${q}"]`;
    await page.waitForSelector(qBox);
    expect(await page.$eval(qBox, (g) => g.querySelector('.node-title').textContent)).toBe('QuantizeLinear');
    // Heat: the quantizer's colour on its QuantizeLinear and DequantizeLinear boxes.
    for (const name of quantizers().find((n) => n.name === 'input').calibration.qdq_nodes) {
      const sel = `#graph .node[data-name="${name}"]`;
      await page.waitForSelector(sel);
      expect(await page.$eval(sel, (g) => g.querySelector('.node-body').style.fill), name).toBe(inputColor);
      expect(await page.$eval(sel, (g) => g.classList.contains('heated')), name).toBe(true);
    }

    // A click on the QuantizeLinear selects its quantizer; the what-if switches that quantizer off.
    // (Dispatched: the focus transition may still be moving the box, and its text is hidden at low zoom.)
    await page.$eval(`${qBox} .node-body`, (r) => r.dispatchEvent(new MouseEvent('click', { bubbles: true })));
    await page.waitForFunction(() => window.ptqscope.state.get('selection') === 'input');
    await openPanel(page, 'whatif');
    const whatif = page.locator('.ptq-whatif');
    await expect.poll(() => whatif.locator('.ptq-whatif-targets').textContent()).toBe('input');
    await whatif.locator('.ptq-whatif-action[data-action="float"]').click();
    await page.locator('.ptq-whatif[data-runs="1"][data-busy="false"]').waitFor({ timeout: 120_000 });
    const rows = whatif.locator('.ptq-whatif-table[data-output="mean over outputs"] tbody tr');
    const after = {};
    for (let i = 0; i < await rows.count(); i++) {
      after[await rows.nth(i).getAttribute('data-metric')] = await rows.nth(i).locator('td').nth(1).getAttribute('data-value');
    }
    const config = { schema: 'ptqscope.config', version: 1, intents: [{ node: 'input', action: 'float' }] };
    // Every sample, as the page judges (the catalogue's interactive default).
    const ref = JSON.parse(session.analyze(JSON.stringify({ analysis: 'what_if', options: { data_num: 0 }, config })));
    expect(Object.keys(after).length).toBeGreaterThan(0);
    for (const [m, v] of Object.entries(ref.what_if.mean)) expect(after[m], m).toBe(String(v));
    // The selected quantizer's boxes are marked selected.
    expect(await page.$eval(qBox, (g) => g.classList.contains('selected'))).toBe(true);

    expect(await page.isHidden('#error-banner')).toBe(true);
    expect(app.pageErrors).toEqual([]);
    expect(app.offline).toEqual([]);
  }, 600_000);
});
