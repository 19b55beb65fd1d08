// The chart modules in Debian's Chromium: bundled by Vite (as the web app is), rendered into a real
// DOM, driven with the real mouse. The browser's SVG must carry the same marks as linkedom's (the CLI's)
// and the canvas PNG export must work.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from '../helpers.mjs';
import { wasmModulePath } from '../../../web/cli/lib/wasm.mjs';
import { renderAccError } from '../../../web/charts/acc_error.mjs';
import { renderBoxplot } from '../../../web/charts/boxplot.mjs';
import { renderIn } from './util.mjs';

/* global PtqCharts -- the IIFE bundle the page loads (dist/charts.js) */

const CHROMIUM = '/usr/bin/chromium';
const X = Array.from({ length: 12 }, (_, i) => `t${i}`);
const figure = {
  prefix: 'activation_quantized', metric: 'mse', average_mode: false,
  curves: [
    { name: 'weight_activation_calibrated', x: X, y: X.map((_, i) => (i === 4 ? 'inf' : 0.001 * i)) },
    { name: 'only_activation_calibrated', x: X, y: X.map((_, i) => (i === 7 ? 'nan' : 0.0005 * i)) },
  ],
};
const box = { name: 'b', channels: Array.from({ length: 10 }, (_, c) => ({ count: 4, mean: c, q1: c - 1, median: c, q3: c + 1, whisker_low: c - 2, whisker_high: c + 2, outlier_count: 1, outliers: [c + 5] })) };

describe.skipIf(!fs.existsSync(CHROMIUM))('charts in Chromium', () => {
  let context;
  let page;
  const errors = [];
  beforeAll(async () => {
    const { build } = await import('vite');
    const { describePlugin } = await import('../../../web/pipeline/describe_vite.mjs');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ptq-charts-'));
    const entry = path.join(dir, 'entry.mjs');
    fs.writeFileSync(entry, `export * from ${JSON.stringify(path.join(REPO_ROOT, 'web/charts/index.mjs'))};\n`
      + `export { svgToPngBlob } from ${JSON.stringify(path.join(REPO_ROOT, 'web/charts/png_browser.mjs'))};\n`);
    await build({
      configFile: false, logLevel: 'silent', root: dir,
      // as the page's bundle: the core's self-description is inlined at build time (no top-level await)
      plugins: [describePlugin(wasmModulePath())],
      build: { outDir: path.join(dir, 'dist'), emptyOutDir: true, minify: false,
        lib: { entry, formats: ['iife'], name: 'PtqCharts', fileName: () => 'charts.js' } },
    });
    fs.writeFileSync(path.join(dir, 'index.html'), '<!doctype html><html><head><meta charset="utf-8"></head><body><div id="a"></div><div id="b"></div><script src="dist/charts.js"></script></body></html>');
    const { chromium } = await import('playwright-core');
    context = await chromium.launchPersistentContext(fs.mkdtempSync(path.join(os.tmpdir(), 'profile-')), {
      executablePath: CHROMIUM, headless: true, viewport: { width: 1000, height: 1400 },
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
    });
    page = await context.newPage();
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`file://${path.join(dir, 'index.html')}`);
    await page.evaluate(({ figure, box }) => {
      window.focused = [];
      window.channels = [];
      window.acc = PtqCharts.renderAccError(document.getElementById('a'), figure, { onFocus: (n, info) => window.focused.push([n, info.index]) });
      window.box = PtqCharts.renderBoxplot(document.getElementById('b'), box, { onChannel: (i) => window.channels.push(i) });
    }, { figure, box });
  }, 120_000);
  afterAll(async () => { await context?.close(); });

  it('draws the same marks as linkedom', async () => {
    const browserPaths = await page.$$eval('#a path.curve, #a path.isolated', (ps) => ps.map((p) => p.getAttribute('d')));
    const { svg } = renderIn(renderAccError, figure);
    expect(browserPaths).toEqual([...svg.querySelectorAll('path.curve, path.isolated')].map((p) => p.getAttribute('d')));
    const ticks = await page.$$eval('#a .axis-x .tick', (ts) => ts.map((t) => t.getAttribute('transform')));
    expect(ticks).toEqual([...svg.querySelectorAll('.axis-x .tick')].map((t) => t.getAttribute('transform')));
    const boxes = await page.$eval('#b path.boxes', (p) => p.getAttribute('d'));
    expect(boxes).toBe(renderIn(renderBoxplot, box).svg.querySelector('path.boxes').getAttribute('d'));
    expect(errors).toEqual([]);
  });

  it('draws every chart type identically (paths and texts) in Chromium and linkedom', async () => {
    const cases = {
      renderHistogram: [{ title: 'a\nb', threshold: 1, max_abs: 1.5, histograms: [{ label: 'h', color: '#99ffbb', edges: [0, 0.5, 1, 1.5, 2], counts: [1, 0, 4, 2], zeros_excluded: 1 }] }, { logY: true }],
      renderSensitivityAnalysis: [{ x: ['none', 'Conv_2', 'Conv_5'], cumulative: [0.99, 'nan', 0.999], per_node: [0.993, 0.998], qtype: 'int16' }],
      renderStatInfo: [{ nodes: ['a', 'b'], thresholds: [1, 2], scales: [0.01, 0.02], max_vals: [1, 2], min_nz_vals: [0, 1e-3] }, { tensorType: 'feature' }],
      renderHeatLegend: [{ title: 'sqnr', direction: 'lower is worse', domain: [3, 30] }],
      renderBoxplot: [box],
      renderAccError: [figure],
    };
    const marks = (root) => ({
      d: [...root.querySelectorAll('path')].map((p) => p.getAttribute('d')),
      text: [...root.querySelectorAll('text')].map((t) => t.textContent),
      size: [root.querySelector('svg').getAttribute('width'), root.querySelector('svg').getAttribute('height')],
    });
    const { createDocument } = await import('../../../web/charts/node_dom.mjs');
    const charts = await import('../../../web/charts/index.mjs');
    for (const [fn, [data, options]] of Object.entries(cases)) {
      const browser = await page.evaluate(({ fn, data, options }) => {
        const holder = document.createElement('div');
        document.body.appendChild(holder);
        PtqCharts[fn](holder, data, { ...options, interactive: false });
        const out = {
          d: [...holder.querySelectorAll('path')].map((p) => p.getAttribute('d')),
          text: [...holder.querySelectorAll('text')].map((t) => t.textContent),
          size: [holder.querySelector('svg').getAttribute('width'), holder.querySelector('svg').getAttribute('height')],
        };
        holder.remove();
        return out;
      }, { fn, data, options: options || {} });
      const doc = createDocument();
      const holder = doc.createElement('div');
      charts[fn](holder, data, { ...(options || {}), interactive: false });
      expect(browser, fn).toEqual(marks(holder));
    }
  });

  it('follows the mouse with the crosshair and focuses the clicked node', async () => {
    const rect = await page.$eval('#a rect.overlay', (r) => { const b = r.getBoundingClientRect(); return { x: b.x, y: b.y, w: b.width, h: b.height }; });
    const at = (i) => rect.x + (i * rect.w) / (X.length - 1);
    await page.mouse.move(at(6) + 3, rect.y + rect.h / 2);
    expect(await page.$eval('#a .crosshair-label tspan', (t) => t.textContent)).toBe('#6 t6');
    await page.mouse.click(at(9) - 3, rect.y + rect.h / 2);
    expect(await page.evaluate(() => window.focused)).toEqual([['t9', 9]]);
    await page.click('#a .legend-item[data-series="only_activation_calibrated"]');
    expect(await page.$eval('#a path.curve[data-series="only_activation_calibrated"]', (p) => getComputedStyle(p).display)).toBe('none');
  });

  it('reports the clicked box-plot channel', async () => {
    const rect = await page.$eval('#b rect.overlay', (r) => { const b = r.getBoundingClientRect(); return { x: b.x, y: b.y, h: b.height }; });
    const step = await page.evaluate(() => window.box.channelWidth);
    await page.mouse.click(rect.x + step * 3.5, rect.y + rect.h / 2);
    expect(await page.evaluate(() => window.channels)).toEqual([3]);
  });

  it('exports a PNG through the canvas', async () => {
    const png = await page.evaluate(async () => {
      const svg = document.querySelector('#a svg');
      const blob = await PtqCharts.svgToPngBlob(PtqCharts.serializeSvg(svg), { scale: 2 });
      const bytes = new Uint8Array(await blob.arrayBuffer());
      const view = new DataView(bytes.buffer);
      return { type: blob.type, sig: [...bytes.slice(0, 4)], w: view.getUint32(16), h: view.getUint32(20) };
    });
    expect(png).toEqual({ type: 'image/png', sig: [137, 80, 78, 71], w: 1600, h: 1200 });
  });
});
