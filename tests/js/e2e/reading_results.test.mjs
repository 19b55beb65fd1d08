// Reading the results in the page, in Chromium at 1400×900 (dist/ptqscope.html from file://), checked
// as a person sees them (boxes inside the window, the text shown, colours): primary buttons under the
// mouse, the header's sample count, search, a Run with an empty node list, the sensitivity table's
// headers and rows, the heat legend over the graph and its scales, Run all's summary, the dock
// resized by dragging and keys (kept after a reload, charts drawn to its size, histograms as bars),
// the progress line when another model opens, and ~200-character node names (tf2onnx's) beside their
// numbers. Last, the README's picture of the page.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { pathToFileURL } from 'node:url';
import { fixture } from '../helpers.mjs';
import { PAGE, openApp, openPanel, overflowRightExpression, screenshot } from './browser.mjs';
import { interpolateHeat, heatScale } from '../../../web/charts/heat_scale.mjs';

const WIDTH = 1400;
const HEIGHT = 900;

let app;
let page;

// WCAG contrast ratio of two CSS colours ('rgb(r, g, b)').
function contrast(a, b) {
  const lum = (c) => {
    const [r, g, bl] = c.match(/\d+(\.\d+)?/g).slice(0, 3).map(Number).map((v) => {
      const s = v / 255;
      return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * bl;
  };
  const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p);
  return (x + 0.05) / (y + 0.05);
}

// Hovers `selector` and returns the contrast of its text against its background as drawn.
async function hoveredContrast(selector) {
  await page.hover(selector);
  const [color, background] = await page.$eval(selector, (b) => [getComputedStyle(b).color, getComputedStyle(b).backgroundColor]);
  return contrast(color, background);
}

const box = async (selector) => {
  const b = await page.locator(selector).first().boundingBox();
  if (!b) throw new Error(`${selector} is not visible`);
  return b;
};
const inWindow = (b) => b.x >= 0 && b.y >= 0 && b.x + b.width <= WIDTH && b.y + b.height <= HEIGHT;
const progress = () => page.textContent('.ptq-progress-text');
const waitProgress = (pattern) => page.waitForFunction((p) => new RegExp(p).test(document.querySelector('.ptq-progress-text')?.textContent ?? ''),
  pattern, { timeout: 300_000 });
const selectTab = (id) => page.click(`.ptq-analysis-tabs button[data-analysis="${id}"]`);

async function runSweep(nodeType) {
  await openPanel(page, 'analyses');
  await selectTab('sensitivity');
  await page.locator('form.ptq-analysis-form[data-analysis="sensitivity"] select[name="node_type"]').selectOption(nodeType);
  await page.evaluate(() => { document.querySelector('.ptq-progress-text').textContent = ''; });
  await page.click('.ptq-run');
  await waitProgress('^Sensitivity: done in');
}

beforeAll(async () => {
  app = await openApp({ viewport: { width: WIDTH, height: HEIGHT } });
  page = app.page;
});

afterAll(async () => {
  await app?.context.close();
});

describe('reading the results in the page (1400×900)', () => {
  it('primary buttons keep readable text under the mouse; the header shows the sample count whole; search lists each node once', async () => {
    expect(await hoveredContrast('#open-example')).toBeGreaterThanOrEqual(4.5);
    await page.click('#open-example');
    await page.waitForFunction(() => /calibration samples/.test(document.querySelector('#model-info')?.textContent ?? '')
      && document.querySelector('#graph').dataset.state === 'ready');
    const data = page.locator('#model-info .info-data');
    expect(await data.textContent()).toMatch(/^\d+ calibration samples \(calibration_data: input\)$/);
    expect(await data.evaluate((s) => s.scrollWidth <= s.clientWidth)).toBe(true);
    expect(inWindow(await box('#model-info .info-data'))).toBe(true);

    await page.click('.graph-toolbar [data-act="search"]');
    await page.fill('.graph-search input', 'Conv');
    const matches = await page.$$eval('.graph-search-results li', (lis) => lis.map((li) => li.querySelector('.match-text').textContent));
    const convs = await page.evaluate(() => window.ptqscope.state.get('graph').nodes.filter((n) => n.op_type === 'Conv').map((n) => n.name));
    expect(convs.length).toBe(3);
    for (const name of convs) expect(matches.filter((m) => m === name), name).toHaveLength(1);
    expect(new Set(matches).size).toBe(matches.length);
    await page.keyboard.press('Escape');
  });

  it('Run with an empty node list says beside the button what is missing (no banner, no stale "done")', async () => {
    await openPanel(page, 'analyses');
    await selectTab('distribution');
    await page.click('.ptq-run');
    const note = page.locator('.ptq-run-note');
    await note.waitFor();
    expect(await note.textContent()).toMatch(/^nodes_list is empty: pick nodes on the graph .* or run a sensitivity sweep first/);
    const [run, shown] = [await box('.ptq-run'), await box('.ptq-run-note')];
    expect(inWindow(shown)).toBe(true);
    expect(Math.abs(shown.y - (run.y + run.height))).toBeLessThan(60); // right under the button
    expect(await page.isHidden('#error-banner')).toBe(true);
    expect(await progress()).not.toMatch(/done/);
  });

  it('an activation sweep: worded headers, every row, numbers beside the names; the legend over the graph on the fixed scale', async () => {
    await runSweep('activation');
    const heads = await page.$$eval('.ptq-analysis-output table.sensitivity-table thead th', (ths) => ths.map((th) => th.textContent));
    expect(heads).toEqual(['Calibration node', 'cosine-similarity', 'Consumers', 'threshold', 'qtype']);
    const top = page.locator('.ptq-analysis-output input.top-k');
    expect([await top.inputValue(), await top.getAttribute('placeholder')]).toEqual(['', 'all']);
    const results = await page.evaluate(() => window.ptqscope.state.get('results'));
    const rows = results.sensitivity.activation;
    expect(await page.locator('.ptq-analysis-output table.sensitivity-table tbody tr').count()).toBe(Object.keys(rows).length);

    // The legend over the graph, inside the graph's area: the fixed scale's ends and where the values lie.
    const legend = await box('#graph .graph-legend');
    const graph = await box('#graph');
    expect(legend.x).toBeGreaterThanOrEqual(graph.x);
    expect(legend.x + legend.width).toBeLessThanOrEqual(graph.x + graph.width);
    expect(legend.y + legend.height).toBeLessThanOrEqual(graph.y + graph.height);
    expect(await page.getAttribute('#graph .graph-legend svg.heat-legend', 'data-scale')).toBe('fixed');
    const ticks = await page.$$eval('#graph .graph-legend .tick-label', (ts) => ts.map((t) => t.textContent));
    expect(ticks.slice(0, 2)).toEqual(['0.999999', '0.9']);
    expect(await page.textContent('#graph .graph-legend .ptq-legend-title')).toBe('activation sensitivity: cosine-similarity (lower is worse)');
    const ramp = await page.$$eval('#graph .graph-legend .ramp rect', (rs) => rs.map((r) => getComputedStyle(r).fill));
    expect([ramp[0], ramp.at(-1)]).toEqual([interpolateHeat(0), interpolateHeat(1)]);
    expect(await page.textContent('#graph .graph-legend .ptq-legend-note')).toMatch(/^fixed scale \(1 − cosine on a log axis\)/);
    // The graph's colours are the fixed scale's: a cosine above 0.999 is in the pale half of the ramp.
    const cosines = Object.values(rows).map((r) => r['cosine-similarity']);
    const fixed = heatScale('cosine-similarity', cosines);
    const heat = await page.evaluate(() => [...window.ptqscope.state.get('heat').values].map(([name, v]) => [name, v.value, v.color]));
    expect(heat.length).toBeGreaterThan(0);
    for (const [name, value, color] of heat) expect(color, name).toBe(fixed.color(value));
    if (Math.min(...cosines) > 0.999) expect(Math.max(...cosines.map((c) => fixed.worseness(c)))).toBeLessThan(0.5);

    // The range scale: its ends are the best and worst values shown, printed as the table prints them.
    await page.selectOption('#graph .graph-legend select.ptq-heat-scale', 'range');
    await page.waitForSelector('#graph .graph-legend svg.heat-legend[data-scale="range"]');
    const cells = await page.$$eval('.ptq-analysis-output table.sensitivity-table tbody tr td.num:nth-child(2)', (tds) => tds.map((td) => td.textContent));
    expect(await page.textContent('#graph .graph-legend text.worst')).toBe(`worse ${cells[0]}`);
    expect(await page.textContent('#graph .graph-legend text.best')).toBe(`better ${cells.at(-1)}`);
    expect(cells[0]).not.toBe(cells.at(-1));
    await page.selectOption('#graph .graph-legend select.ptq-heat-scale', 'fixed');
    await page.waitForSelector('#graph .graph-legend svg.heat-legend[data-scale="fixed"]');
  });

  it('Run with an empty node list after a sweep takes its most sensitive items and says so; Run stays readable under the mouse', async () => {
    await selectTab('distribution');
    await page.fill('form.ptq-analysis-form[data-analysis="distribution"] [name="nodes_list"]', '');
    await page.evaluate(() => { document.querySelector('.ptq-progress-text').textContent = ''; });
    await page.click('.ptq-run');
    await waitProgress('^Distributions: done in');
    const order = await page.evaluate(() => window.ptqscope.state.get('results').sensitivity_order.activation);
    const k = Math.min(5, order.length);
    expect(await page.textContent('.ptq-run-note')).toBe(`nodes_list was empty: the ${k} most sensitive items of the activation sweep`);
    expect(await page.inputValue('form.ptq-analysis-form[data-analysis="distribution"] [name="nodes_list"]')).toBe(order.slice(0, k).join(', '));
    expect(await page.locator('.ptq-analysis-output figure[data-kind="distribution"]').count()).toBeGreaterThanOrEqual(k);
    expect(await hoveredContrast('.ptq-run')).toBeGreaterThanOrEqual(4.5);
  });

  it('Run all ends with a summary: the outputs as calibrated, the most sensitive items, and the next steps', async () => {
    await selectTab('runall');
    await page.evaluate(() => { document.querySelector('.ptq-progress-text').textContent = ''; });
    await page.click('.ptq-run');
    await waitProgress('^Run all: done in');
    const summary = page.locator('.ptq-runall-summary');
    const result = await page.evaluate(() => window.ptqscope.state.get('results'));
    const { what_if: wi } = result;
    const n = wi.samples.length;
    expect(await summary.locator('h4').first().textContent()).toBe(`Model outputs as calibrated, against the float model (${n} sample${n === 1 ? '' : 's'})`);
    // One row per output with its five metrics, as the core computed them.
    const cells = await summary.locator('.ptq-runall-outputs tbody tr[data-output="logits"] td.num').allTextContents();
    expect(cells).toHaveLength(5);
    expect(Number(cells[0])).toBeCloseTo(wi.outputs.logits['cosine-similarity'], 5);
    // The most sensitive items of each sweep Run all ran, in its order.
    for (const type of ['weight', 'activation']) {
      const shown = await summary.locator(`.ptq-runall-worst li[data-node-type="${type}"] .ptq-runall-node`).evaluateAll((bs) => bs.map((b) => b.dataset.item));
      expect(shown).toEqual(result.sensitivity_order[type].slice(0, 3));
    }
    expect(inWindow(await box('.ptq-runall-summary h4'))).toBe(true);
    expect(await summary.locator('.ptq-runall-step').allTextContents()).toEqual(expect.arrayContaining(['What-if on the most sensitive', 'Find a fix']));
    // "Find a fix" shows the Fix panel, whose primary button stays readable under the mouse.
    await summary.locator('.ptq-runall-step[data-step="fix"]').click();
    await page.waitForSelector('.dock-panel[data-panel="fix"]:not([hidden])');
    expect(await hoveredContrast('.ptq-fix-run')).toBeGreaterThanOrEqual(4.5);
  });

  it('the dock is resized by dragging its edge and by keys, kept after a reload; charts are drawn to its size, histograms as bars', async () => {
    await openPanel(page, 'analyses');
    await selectTab('distribution');
    const handle = await box('#dock .dock-resize');
    await page.mouse.move(WIDTH / 2, handle.y + handle.height / 2);
    await page.mouse.down();
    await page.mouse.move(WIDTH / 2, 300, { steps: 6 });
    await page.mouse.up();
    expect((await box('#dock')).height).toBeCloseTo(HEIGHT - 300, -1);
    await page.focus('#dock .dock-resize');
    await page.keyboard.press('ArrowUp');
    expect(Number(await page.getAttribute('#dock', 'data-height'))).toBe(HEIGHT - 300 + 20);
    // The histograms fill the output's visible height: one is seen whole, inside the window.
    const output = await box('.ptq-analysis-output');
    await page.waitForFunction((h) => Number(document.querySelector('.ptq-analysis-output figure svg')?.getAttribute('height')) > h, output.height - 60);
    const chart = await box('.ptq-analysis-output figure svg');
    expect(chart.height).toBeLessThanOrEqual(output.height);
    expect(chart.width).toBeLessThanOrEqual(output.width);
    expect(inWindow(chart)).toBe(true);
    // The example's weights (a few hundred values in 1024 bins): bars of several bins, not hairlines.
    const weight = page.locator('.ptq-analysis-output figure[data-kind="distribution"]', { hasText: 'weight distribution' }).first();
    expect(Number(await weight.locator('path.bars').first().getAttribute('data-bins-per-bar'))).toBeGreaterThan(1);
    expect(await weight.locator('text.note').last().textContent()).toMatch(/^bars of \d+ adjacent bins \(of 1024\), counts summed$/);
    await screenshot(page, 'page-dock-resized');
    // The height is kept for the next visit.
    await page.goto(pathToFileURL(PAGE).href);
    await page.waitForSelector('body[data-ready="true"]');
    expect(await page.evaluate(() => localStorage.getItem('ptqscope.dockHeight'))).toBe(String(HEIGHT - 300 + 20));
    await page.click('#open-example');
    await page.waitForFunction(() => /calibration samples/.test(document.querySelector('#model-info')?.textContent ?? ''));
    await openPanel(page, 'analyses');
    expect((await box('#dock')).height).toBeCloseTo(HEIGHT - 300 + 20, -1);
    // Back to the default for the tests after this one.
    await page.evaluate(() => localStorage.removeItem('ptqscope.dockHeight'));
    await page.goto(pathToFileURL(PAGE).href);
    await page.waitForSelector('body[data-ready="true"]');
  });

  it('~200-character node names: the numbers stay in view, names shortened in the middle, whole in the tooltip and the sidebar; the last model\'s progress line is gone', async () => {
    await page.click('#open-example');
    await page.waitForFunction(() => /calibration samples/.test(document.querySelector('#model-info')?.textContent ?? ''));
    await runSweep('node');
    expect(await progress()).toMatch(/^Sensitivity: done in/);
    const entry = fixture('ppocr_cls_long_names');
    await page.setInputFiles('#open-model', entry.model);
    await page.waitForFunction(() => /long_names/.test(document.querySelector('#model-info').textContent) && document.querySelector('#graph').dataset.state === 'ready');
    expect(await progress()).toBe('');
    await page.setInputFiles('#open-data-folder', entry.data);
    await page.waitForFunction(() => /calibration samples/.test(document.querySelector('#model-info').textContent));
    await runSweep('activation');

    const rows = page.locator('.ptq-analysis-output table.sensitivity-table tbody tr');
    const first = rows.first();
    const item = await first.getAttribute('data-item');
    expect(item.length).toBeGreaterThan(180);
    for (let i = 0; i < 5; i++) {
      const cell = await rows.nth(i).locator('td.num').first().boundingBox();
      expect(inWindow(cell), `row ${i}: ${JSON.stringify(cell)}`).toBe(true);
    }
    const name = first.locator('td.ptq-name-cell').first();
    expect(await name.getAttribute('title')).toBe(item);
    expect(await name.textContent()).toBe(item);
    expect(await name.locator('.ptq-mid-head').evaluate((h) => h.scrollWidth > h.clientWidth)).toBe(true); // cut with an ellipsis
    expect(await name.locator('.ptq-mid-tail').textContent()).toMatch(/_HzCalibration$/);
    expect((await name.boundingBox()).width).toBeLessThan(420);
    expect(await page.evaluate(overflowRightExpression('#dock'))).toEqual([]);
    await first.click();
    await page.waitForSelector('#sidebar:not([hidden])');
    const shown = page.locator('#sidebar .node-name .sidebar-value');
    expect(await shown.textContent()).toBe(item);
    const sidebar = await box('#sidebar');
    const value = await shown.boundingBox();
    expect(value.x + value.width).toBeLessThanOrEqual(sidebar.x + sidebar.width);
    await screenshot(page, 'page-long-names');
    expect(await page.isHidden('#error-banner')).toBe(true);
    expect(app.pageErrors).toEqual([]);
    expect(app.offline).toEqual([]);
  });
});

describe('the README\'s picture of the page', () => {
  it('the example after an activation sweep: the coloured graph with its legend and the sensitivity table', async () => {
    const small = await openApp({ viewport: { width: 1200, height: 760 } });
    try {
      page = small.page;
      await page.click('#open-example');
      await page.waitForFunction(() => /calibration samples/.test(document.querySelector('#model-info')?.textContent ?? '')
        && document.querySelector('#graph').dataset.state === 'ready');
      await runSweep('activation');
      await page.click('.graph-toolbar [data-act="fit"]');
      await page.mouse.move(0, 0);
      // Fit animates the view: wait until its transform stays the same from one frame to the next.
      const transformAfterTwoFrames = () => page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(
        () => resolve(document.querySelector('#graph .viewport').getAttribute('transform'))))));
      for (let before = null, now = await transformAfterTwoFrames(); now !== before; before = now, now = await transformAfterTwoFrames());
      // Run scrolled the dock to its button: back to its tabs.
      await page.evaluate(() => { document.querySelector('.dock-body').scrollTop = 0; });
      await page.waitForFunction(() => document.querySelectorAll('#graph .node.heated').length > 0);
      expect(await page.locator('#graph .graph-legend').isVisible()).toBe(true);
      expect(await page.locator('.ptq-analysis-output table.sensitivity-table').isVisible()).toBe(true);
      await screenshot(page, 'page-sensitivity');
    } finally {
      await small.context.close();
    }
  });
});
