// End to end in headless Chromium: the plugin bundle built with plugin/vite.config.mjs, installed by
// scripts/plugin-install.mjs into a Netron-like web folder made from the recording (fake_netron.mjs,
// with Netron's CSP `script-src 'self'`), served over http. Opens the recorded model through the
// page's file input, loads generated calibration data through the panel, runs a sensitivity analysis
// (wasm in the plugin's worker) and checks the colours, their survival across a re-render, and the
// selected node's results. Waits on DOM state only (no sleeps).
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import { build } from 'vite';
import { chromium } from 'playwright-core';
import { rgb } from 'd3';
import { install } from '../../../scripts/plugin-install.mjs';
import { heatScale } from '../../../web/charts/heat_scale.mjs';
import { loadPtqModule } from '../../../web/cli/lib/wasm.mjs';
import { pageHtml, NETRON_LIKE_CSS } from './fake_netron.mjs';
import { FIXTURES, MODEL_NAME, calibrationFolder, modelBytes } from './helpers.mjs';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const MIME = { '.html': 'text/html', '.js': 'text/javascript', '.mjs': 'text/javascript', '.css': 'text/css', '.json': 'application/json' };

let tmp;
let server;
let base;
let context;
let page;
const problems = []; // console errors, page errors, CSP violations

function serve(dir) {
  return new Promise((resolve) => {
    const s = http.createServer((req, res) => {
      let file = path.join(dir, decodeURIComponent(new URL(req.url, 'http://x').pathname));
      if (file.endsWith(path.sep)) file = path.join(file, 'index.html');
      if (!file.startsWith(dir) || !fs.existsSync(file) || fs.statSync(file).isDirectory()) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'Content-Type': MIME[path.extname(file)] ?? 'application/octet-stream' });
      fs.createReadStream(file).pipe(res);
    });
    s.listen(0, '127.0.0.1', () => resolve(s));
  });
}

async function reference() {
  const ptq = await loadPtqModule();
  const session = new ptq.Session();
  try {
    session.loadModel(modelBytes());
    session.loadCalibrationData(calibrationFolder().map((f) => ({ path: f.path.replace(/^calibration_data\//, ''), bytes: f.bytes })));
    return JSON.parse(session.analyze(JSON.stringify({ analysis: 'sensitivity', options: { node_type: 'activation', metrics: ['cosine-similarity'], data_num: 1 } })));
  } finally {
    session.delete();
  }
}

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ptq-plugin-e2e-'));
  const dist = path.join(tmp, 'dist');
  const site = path.join(tmp, 'netron');
  await build({ configFile: path.join(ROOT, 'plugin/vite.config.mjs'), logLevel: 'error', build: { outDir: dist } });

  // The Netron-like folder: recorded renders, our fake __view__ and its boot module, then the plugin.
  fs.mkdirSync(site);
  fs.copyFileSync(path.join(FIXTURES, 'horizon_calibrated_tiny.target.html'), path.join(site, 'default.html'));
  fs.copyFileSync(path.join(FIXTURES, 'horizon_calibrated_tiny.names.target.html'), path.join(site, 'names.html'));
  fs.copyFileSync(path.join(import.meta.dirname, 'fake_netron.mjs'), path.join(site, 'fake_netron.mjs'));
  fs.writeFileSync(path.join(site, 'netron-like.css'), NETRON_LIKE_CSS);
  fs.writeFileSync(path.join(site, 'favicon.ico'), ''); // Chromium asks for it; a 404 is a console error
  fs.writeFileSync(path.join(site, 'boot.mjs'), [
    "import { installFakeNetron } from './fake_netron.mjs';",
    "const text = (f) => fetch(f).then((r) => r.text());",
    "const [def, names] = await Promise.all([text('default.html'), text('names.html')]);",
    'installFakeNetron(window, { default: def, names });',
  ].join('\n'));
  fs.writeFileSync(path.join(site, 'index.html'), pageHtml({ scripts: ['boot.mjs'] }));
  install(site, { dist, quiet: true });

  const data = path.join(tmp, 'calibration_data');
  for (const f of calibrationFolder()) {
    const p = path.join(tmp, f.path);
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, f.bytes);
  }
  expect(fs.readdirSync(path.join(data, 'images'))).toHaveLength(3);

  server = await serve(site);
  base = `http://127.0.0.1:${server.address().port}/`;
  context = await chromium.launchPersistentContext(fs.mkdtempSync(path.join(os.tmpdir(), 'profile-')), {
    executablePath: '/usr/bin/chromium',
    headless: true,
    viewport: { width: 1280, height: 800 },
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
  });
  page = context.pages()[0] ?? await context.newPage();
  page.setDefaultTimeout(20_000);
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(String(e)));
}, 120_000);

afterAll(async () => {
  await context?.close();
  await new Promise((r) => (server ? server.close(r) : r()));
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

// Waits for `selector`, failing at once with the panel's error line when the plugin reports one.
async function waitOrPanelError(selector) {
  const error = page.locator('#ptqscope-panel .ptq-error:not([hidden])');
  await Promise.race([page.locator(selector).first().waitFor(), error.waitFor()]);
  if (await error.count()) throw new Error(`plugin error: ${await error.textContent()}`);
}

describe('plugin in Chromium on a Netron page built from the recording', () => {
  it('installs with one script tag and starts after Netron', async () => {
    await page.goto(base);
    await page.locator('#ptqscope-panel').waitFor();
    expect(await page.locator('#ptqscope-banner').count()).toBe(0);
    expect(await page.locator('script[src="ptqscope-plugin.js"]').count()).toBe(1);
  });

  it('captures the opened model, computes its graph in the worker despite the CSP, colours nodes by a real sensitivity run', async () => {
    await page.setInputFiles('#open-file-dialog', path.join(FIXTURES, MODEL_NAME));
    await page.locator('body.default #nodes > g.node').first().waitFor();
    await waitOrPanelError('#ptqscope-panel[data-graph="loaded"]');
    await page.setInputFiles('#ptqscope-panel .ptq-data-input', path.join(tmp, 'calibration_data'));
    await page.locator('#ptqscope-panel .ptq-data-status', { hasText: '3 files (images)' }).waitFor();
    await page.locator('#ptqscope-panel .ptq-metric input[value="mse"]').uncheck();
    await page.locator('#ptqscope-panel .ptq-run').click();
    await waitOrPanelError('#ptqscope-panel[data-run="done"]');

    const ref = await reference();
    const rows = ref.sensitivity.activation;
    const scale = heatScale('cosine-similarity', Object.values(rows).map((r) => r['cosine-similarity']));
    const fillOf = (name) => page.locator(`[id="node-name-${name}"] > g.node-item > path`).first()
      .evaluate((p) => getComputedStyle(p).fill);
    for (const [item, row] of Object.entries(rows)) {
      expect(await fillOf(item), item).toBe(rgb(scale.color(row['cosine-similarity'])).toString());
    }
    // An uncoloured node keeps Netron's stylesheet colour.
    expect(await fillOf('backbone.conv1.weight_HzCalibration')).not.toBe(rgb(scale.color(0)).toString());
    const colored = await page.locator('#nodes > g.node[data-ptq-heat]').count();
    expect(colored).toBeGreaterThanOrEqual(Object.keys(rows).length);
    expect(await page.locator('#ptqscope-panel .ptq-legend svg.heat-legend').count()).toBe(1);
    expect(problems).toEqual([]);
  });

  it('re-applies the colours when Netron re-renders, and shows the clicked node\'s results', async () => {
    const colored = await page.locator('#nodes > g.node[data-ptq-heat]').count();
    // Netron's "Show Names": new svg#canvas, every node element replaced.
    await page.locator('#nodes').evaluate((g) => { g.dataset.old = '1'; });
    await page.evaluate(() => window.__view__.toggle('names'));
    await page.locator('body.default #nodes:not([data-old])').waitFor();
    await page.locator('#nodes > g.node[data-ptq-heat]').nth(colored - 1).waitFor();
    expect(await page.locator('#nodes > g.node[data-ptq-heat]').count()).toBe(colored);

    await page.locator('[id="node-name-/backbone/pool/MaxPool_output_0_HzCalibration"] > g.node-item').first().click();
    await page.locator('#ptqscope-panel .ptq-node-title', { hasText: '/backbone/pool/MaxPool_output_0_HzCalibration' }).waitFor();
    await page.locator('#ptqscope-panel .ptq-node [data-section="analysis-results"] h4').first().waitFor();
    // Its distribution chart (web/charts/histogram.mjs) from a per-node run.
    await page.locator('#ptqscope-panel .ptq-node-actions [data-analysis="distribution"]').click();
    await waitOrPanelError('#ptqscope-panel .ptq-node figure[data-kind="distribution"] svg');
    expect(await page.locator('#ptqscope-panel').getAttribute('data-run')).toBe('done');
    expect(problems).toEqual([]);
  });
});
