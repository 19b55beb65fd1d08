// End to end in Chromium: a click on one channel of a box plot in the page (dist/ptqscope.html from
// file://, the embedded example) runs that channel's histogram on the page's worker pool (the app
// registers its runner with setChannelRunner) and draws it under the box plot.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { openApp, openPanel } from './browser.mjs';

const CHANNEL = 1; // 0-based; the second box from the left

let context;
let page;
let offline = [];
let pageErrors = [];

beforeAll(async () => {
  ({ context, page, offline, pageErrors } = await openApp());
});

afterAll(async () => {
  await context?.close();
});

// The first weight calibration node of the loaded graph (its boxes are the output channels).
const weightCalibrationNode = () => page.evaluate(() =>
  window.ptqscope.state.get('graph').nodes.find((n) => n.calibration?.kind === 'weight')?.name);

const results = () => page.evaluate(() => window.ptqscope.state.get('results'));

describe('box plot channel click -> histogram of that channel', () => {
  it('draws the clicked channel\'s histogram from the core, with every element of the channel counted', async () => {
    await page.click('#open-example');
    await page.waitForFunction(() => /calibration samples?\b/.test(document.querySelector('#model-info')?.textContent ?? ''));
    const name = await weightCalibrationNode();
    expect(name).toBeTruthy();

    await openPanel(page, 'analyses');
    await page.click('.ptq-analysis-tabs button[data-analysis="channelwise"]');
    await page.fill('form.ptq-analysis-form[data-analysis="channelwise"] [name="nodes_list"]', name);
    await page.click('.ptq-run');
    await page.waitForFunction(() => /done in/.test(document.querySelector('.ptq-progress-text')?.textContent ?? ''));
    const boxes = (await results()).channelwise[name];
    expect(boxes.channels.length).toBeGreaterThan(CHANNEL);
    expect(boxes.channel_histograms).toBeUndefined();

    // Click the middle of the channel's slot on the plot's pointer overlay.
    const figure = page.locator(`.ptq-analysis-output figure[data-kind="channelwise"][data-name="${name}"]`);
    const overlay = figure.locator('svg rect.overlay');
    const box = await overlay.boundingBox();
    await overlay.click({ position: { x: (box.width * (CHANNEL + 0.5)) / boxes.channels.length, y: box.height / 2 } });

    const histogram = figure.locator(`.ptq-channel-histogram[data-channel="${CHANNEL}"] svg.histogram`);
    await histogram.waitFor({ timeout: 60_000 });
    const title = await histogram.locator('.title tspan').first().textContent();
    expect(title).toBe(`${name} channel ${CHANNEL + 1} of ${boxes.channels.length} (index ${CHANNEL})`);
    expect(await figure.locator('.ptq-channel-status').textContent()).toBe('');

    // The core's answer, folded into the page's results: one histogram of that channel whose bins,
    // with the zeros and non-finite values left out of them, hold each element of the channel once.
    const entry = (await results()).channelwise[name];
    expect(entry.channels).toEqual(boxes.channels);
    expect(entry.channel_histograms).toHaveLength(1);
    const [h] = entry.channel_histograms;
    expect(h.channel).toBe(CHANNEL);
    const binned = h.histogram.counts.reduce((a, b) => a + b, 0);
    expect(binned).toBeGreaterThan(0);
    expect(binned + h.histogram.zeros_excluded + h.histogram.non_finite).toBe(boxes.channels[CHANNEL].count);
    expect(h.count).toBe(boxes.channels[CHANNEL].count);
    // The drawn bars are those counts, summed f adjacent bins at a time (bars at least 3 px wide):
    // one outline per run of adjacent non-empty bars.
    const f = Number(await histogram.locator('path.bars').getAttribute('data-bins-per-bar'));
    const bars = Array.from({ length: Math.ceil(h.histogram.counts.length / f) }, (_, k) => h.histogram.counts.slice(k * f, k * f + f).reduce((a, b) => a + b, 0));
    const runs = bars.filter((c, i, all) => c > 0 && !(all[i - 1] > 0)).length;
    const d = await histogram.locator('path.bars').getAttribute('d');
    expect((d.match(/M/g) ?? []).length).toBe(runs);

    expect(await page.isHidden('#error-banner')).toBe(true);
    expect(pageErrors).toEqual([]);
    expect(offline).toEqual([]);
  }, 120_000);
});
