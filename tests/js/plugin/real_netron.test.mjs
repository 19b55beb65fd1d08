// Optional integration test in the REAL Netron 9.2.1 web app (its unbuilt `source/` folder): the
// tarball is found through PTQ_NETRON_TARBALL or at ../shared/netron/netron-9.2.1-source.tar.xz from
// the repository root, and the test is skipped (with that message) when it is absent. The tarball is
// extracted into a temporary folder, the plugin built and installed with scripts/plugin-install.mjs,
// the folder served on 127.0.0.1 by a small Node static server and driven by playwright-core and
// /usr/bin/chromium. Netron replaces window.eval (page.evaluate fails), so the page is read through
// locators, DOM attributes and CDP Runtime.evaluate; a consent cookie skips Netron's banner.
// Checks: the dock beside Netron's graph (resize by dragging, collapse), then the whole
// diagnosis-to-fix loop (tests/js/e2e/loop.mjs) on the calibrated PP-OCR classifier, the YOLO-like
// detector, a torch Q/DQ model and a QOperator model (docs/behaviour.md §1.11, §1.12) opened through
// Netron's own file dialog; Run all in the dock on the last two, its results those of the CLI's runall;
// the cause hints, their cure applied, a threshold-first fix exported and the calibration methods on
// the planted clipping fault (tests/js/e2e/explain_loop.mjs).
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { build } from 'vite';
import { chromium } from 'playwright-core';
import { install } from '../../../scripts/plugin-install.mjs';
import { REPO_ROOT, fixture } from '../helpers.mjs';
import { runAll, runLoop } from '../e2e/loop.mjs';
import { runExplainLoop } from '../e2e/explain_loop.mjs';
import { screenshot, overflowRightExpression } from '../e2e/browser.mjs';
import { NETRON_AVAILABLE as AVAILABLE, NETRON_MISSING, consentCookie, extractNetron, serveFolder as serve } from './netron_site.mjs';

const TITLE = AVAILABLE ? 'plugin in the real Netron 9.2.1' : `plugin in the real Netron 9.2.1 — skipped: ${NETRON_MISSING}`;
// [fixture, runLoop options]: the calibrated PP-OCR classifier and YOLO-like detector, a torch Q/DQ
// model and a QOperator model (exported as their own model with the fix applied, qdq-onnx; the search
// on these small models ends within a click's latency, so it is not cancelled first); the detector's
// and the Q/DQ model's fix checked with onnxruntime from the dock (its files beside the plugin's
// worker, under Netron's CSP).
const FIXTURES = [
  ['ppocr_cls_calibrated', {}],
  ['yolov8n_like_calibrated', { onnxruntime: 'check' }],
  ['qdq_resnet_tiny', { exportAs: 'qdq-onnx', cancelFix: false, onnxruntime: 'check' }],
  ['qop_mixed', { exportAs: 'qdq-onnx', cancelFix: false }],
];

let tmp;
let server;
let context;
let page;
let cdp;
const problems = [];

// A value of the page's main world, through CDP (window.eval is stubbed by Netron).
async function read(expression) {
  const { result, exceptionDetails } = await cdp.send('Runtime.evaluate', { expression, returnByValue: true, awaitPromise: true });
  if (exceptionDetails) throw new Error(`${expression}: ${exceptionDetails.exception?.description ?? exceptionDetails.text}`);
  return result.value;
}

async function box(selector) {
  const b = await page.locator(selector).first().boundingBox();
  if (!b) throw new Error(`${selector} is not visible`);
  return b;
}

describe.skipIf(!AVAILABLE)(TITLE, () => {
  beforeAll(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ptq-real-netron-'));
    const dist = path.join(tmp, 'dist');
    await build({ configFile: path.join(REPO_ROOT, 'plugin/vite.config.mjs'), logLevel: 'error', build: { outDir: dist } });
    const site = extractNetron(tmp);
    install(site, { dist, quiet: true });
    server = await serve(site);
    const base = `http://127.0.0.1:${server.address().port}/`;
    context = await chromium.launchPersistentContext(fs.mkdtempSync(path.join(os.tmpdir(), 'ptq-real-netron-profile-')), {
      executablePath: '/usr/bin/chromium', headless: true, viewport: { width: 1400, height: 900 }, acceptDownloads: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
    });
    await context.addCookies([consentCookie(base)]);
    page = context.pages()[0] ?? await context.newPage();
    page.setDefaultTimeout(30_000);
    page.on('pageerror', (e) => problems.push(String(e)));
    page.on('console', (m) => {
      // Netron's own offline lookups fail here (no network): only the plugin's messages count.
      if (m.type() === 'error' && /ptqscope|ptq-/.test(m.text())) problems.push(m.text());
    });
    cdp = await context.newCDPSession(page);
    await page.goto(`${base}index.html`);
    await page.locator('#ptqscope-panel').waitFor();
  }, 180_000);

  afterAll(async () => {
    await context?.close();
    await new Promise((r) => (server ? server.close(r) : r()));
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('starts after Netron (no banner) and docks beside the graph: drag to resize, collapse, expand', async () => {
    expect(await page.locator('#ptqscope-banner').count()).toBe(0);
    expect(await read('typeof window.__ptqscope__.state')).toBe('object');
    const entry = fixture(FIXTURES[0][0]);
    await page.setInputFiles('#open-file-dialog', entry.model);
    await page.locator('body.default #nodes > g.node').first().waitFor();
    await page.locator('#ptqscope-panel[data-graph="loaded"]').waitFor();

    const dock = await box('#ptqscope-panel');
    expect(dock.x).toBe(0);
    expect(dock.height).toBe(900);
    // Netron's graph pane starts where the dock ends and ends at the window's edge: nothing of it is
    // under the dock or beyond the window.
    const graphPane = async () => {
      const t = await box('#target');
      return { left: t.x, right: t.x + t.width };
    };
    expect(await graphPane()).toEqual({ left: dock.width, right: 1400 });
    // Drag the dock's edge to x = 600.
    const edge = await box('#ptqscope-panel .ptq-resize');
    await page.mouse.move(edge.x + edge.width / 2, 300);
    await page.mouse.down();
    await page.mouse.move(600, 300, { steps: 5 });
    await page.mouse.up();
    expect(await page.locator('#ptqscope-panel').getAttribute('data-width')).toBe('600');
    expect(await graphPane()).toEqual({ left: 600, right: 1400 });
    // Collapse to a strip (the graph grows back to the window's width) and expand.
    await page.locator('#ptqscope-panel .ptq-toggle').click();
    expect(await page.locator('#ptqscope-panel').getAttribute('data-collapsed')).toBe('true');
    const strip = (await box('#ptqscope-panel')).width;
    expect(strip).toBeLessThan(40);
    expect(await graphPane()).toEqual({ left: strip, right: 1400 });
    await page.locator('#ptqscope-panel .ptq-toggle').click();
    expect(await graphPane()).toEqual({ left: 600, right: 1400 });
    // Netron's own sidebar (a node's properties) takes its share on the right; the graph keeps the rest.
    await page.locator('#nodes > g.node').first().locator('g.node-item').first().click();
    await page.locator('#sidebar[style*="opacity: 1"]').waitFor();
    // Netron's rule for its graph with the sidebar open, max(40vw, 100vw - 42em) at 12 px per em; its
    // sidebar slides in (0.1 s) to end where that pane ends (its 1 px border over the pane's last pixel).
    const netronGraphRight = Math.max(0.4 * 1400, 1400 - 42 * 12);
    expect(await graphPane()).toEqual({ left: 600, right: netronGraphRight });
    await expect.poll(async () => (await box('#sidebar')).x).toBe(netronGraphRight - 1);
    await page.locator('#sidebar-closebutton').click();
    await expect.poll(graphPane).toEqual({ left: 600, right: 1400 });
    expect(problems).toEqual([]);
  });

  // The heat-coloured node boxes that lie wholly inside the window and right of the dock.
  async function colouredInView(width, height) {
    const left = (await box('#ptqscope-panel')).width;
    const boxes = await Promise.all((await page.locator('#nodes > g.node[data-ptq-heat]').all()).map((n) => n.boundingBox()));
    return boxes.filter((b) => b && b.x >= left && b.x + b.width <= width && b.y >= 0 && b.y + b.height <= height).length;
  }

  // The heat legend lies over Netron's graph pane, right of the dock and inside the window, on the
  // node sweep's cosine scale (fixed reference: its ends 0.999999 and 0.9).
  async function legendBesideDock(width, height) {
    const legend = await box('#ptqscope-legend');
    expect(legend.x).toBeGreaterThanOrEqual((await box('#ptqscope-panel')).width);
    expect(legend.x + legend.width).toBeLessThanOrEqual(width);
    expect(legend.y + legend.height).toBeLessThanOrEqual(height);
    expect(await page.locator('#ptqscope-legend svg.heat-legend').getAttribute('data-scale')).toBe('fixed');
    expect(await page.locator('#ptqscope-legend .tick-label').first().textContent()).toBe('0.999999');
  }

  it('data picked right after the model is held until the model is read; the coloured graph is in view beside the dock at 1400 and 1920 px', async () => {
    const entry = fixture('yolov8n_like_calibrated');
    const inputs = fs.readdirSync(entry.data);
    const samples = fs.readdirSync(path.join(entry.data, inputs[0])).length;
    await page.setInputFiles('#open-file-dialog', entry.model);
    // At once, while the plugin is still reading the model: accepted, never refused.
    await page.setInputFiles('#ptqscope-panel .ptq-data-input', entry.data);
    await page.locator('#ptqscope-panel .ptq-data-status', { hasText: `${samples} calibration samples (${path.basename(entry.data)}: ${inputs.join(', ')})` }).waitFor({ timeout: 120_000 });
    expect(await page.locator('#ptqscope-panel .ptq-error:not([hidden])').count()).toBe(0);
    // Netron shows the tall model's first nodes in the middle of the pane it has beside the dock.
    await page.locator('body.default #nodes > g.node').first().waitFor();
    const scope = page.locator('#ptqscope-panel');
    await scope.locator('.ptq-analysis-tabs button[data-analysis="sensitivity"]').click();
    await scope.locator('form.ptq-analysis-form[data-analysis="sensitivity"] select[name="node_type"]').selectOption('node');
    await scope.locator('.ptq-run').click();
    await scope.locator('.ptq-progress-text', { hasText: 'Sensitivity: done in' }).waitFor({ timeout: 300_000 });
    await page.locator('#nodes > g.node[data-ptq-heat]').first().waitFor();
    expect(await colouredInView(1400, 900)).toBeGreaterThanOrEqual(3);
    // Nothing in the dock sticks out of it (buttons, fields, tables, charts).
    expect(await read(overflowRightExpression('#ptqscope-panel', '.ptq-resize'))).toEqual([]);
    await legendBesideDock(1400, 900);
    await screenshot(page, 'plugin-1400');
    await page.setViewportSize({ width: 1920, height: 1080 });
    await expect.poll(async () => (await box('#target')).x + (await box('#target')).width).toBe(1920);
    expect(await colouredInView(1920, 1080)).toBeGreaterThanOrEqual(3);
    await legendBesideDock(1920, 1080);
    await screenshot(page, 'plugin-1920');
    await page.setViewportSize({ width: 1400, height: 900 });
    expect(problems).toEqual([]);
  }, 600_000);

  // Opens the fixture's model through Netron's file dialog (unless shown) and its data in the dock.
  async function open(entry) {
    const modelName = path.basename(entry.model);
    if (!await page.locator('#ptqscope-panel .ptq-model', { hasText: modelName }).count()) {
      await page.setInputFiles('#open-file-dialog', entry.model);
      // The model line changes in the same update that clears the previous graph (data-graph "none").
      await page.locator('#ptqscope-panel .ptq-model', { hasText: modelName }).waitFor();
      await page.locator('#ptqscope-panel[data-graph="loaded"]').waitFor({ timeout: 120_000 });
    }
    await page.setInputFiles('#ptqscope-panel .ptq-data-input', entry.data);
    const inputs = fs.readdirSync(entry.data);
    const samples = fs.readdirSync(path.join(entry.data, inputs[0])).length;
    await page.locator('#ptqscope-panel .ptq-data-status', { hasText: `${samples} calibration samples (${path.basename(entry.data)}: ${inputs.join(', ')})` }).waitFor();
  }

  it.each(FIXTURES)('%s: sweep, what-if, node errors, fix, export, compare in the dock', async (name, options) => {
    const entry = fixture(name);
    await open(entry);
    const scope = page.locator('#ptqscope-panel');
    await runLoop(page, {
      scope,
      entry,
      show: async () => {},
      sweepDone: async () => {
        await page.locator('#ptqscope-panel .ptq-progress-text', { hasText: 'Sensitivity: done in' }).waitFor({ timeout: 300_000 });
      },
      // Netron's node of that calibration node (a Q/DQ model's: its QuantizeLinear) is outlined and
      // labelled with the state in effect.
      configShown: async (name, text) => {
        const label = page.locator(`#nodes > g.node[data-ptq-config="${text}"] > g.ptq-config-label`, { hasText: name }).first();
        await label.waitFor();
        expect(await label.locator('text').textContent()).toBe(text);
      },
      ...options,
    });
    // Netron's nodes are coloured by the comparison's change (the heat view follows it).
    expect(await read("window.__ptqscope__.state.get('heat')?.legend?.view")).toBe('compare');
    expect(await page.locator('#nodes > g.node[data-ptq-heat]').count()).toBeGreaterThan(0);
    // Long node names in the dock's tables wrap instead of overflowing the dock.
    const overflow = await read("(() => { const td = document.querySelector('#ptqscope-panel .ptq-compare-rows td.ptq-name'); return td.scrollWidth - td.clientWidth; })()");
    expect(overflow).toBeLessThanOrEqual(1);
    expect(await page.locator('#ptqscope-panel .ptq-error:not([hidden])').count()).toBe(0);
    expect(problems).toEqual([]);
  }, 900_000);

  it.each(['qdq_resnet_tiny', 'qop_mixed'])('%s: Run all in the dock, as the CLI computes it', async (name) => {
    const entry = fixture(name);
    await open(entry);
    await runAll(page, {
      scope: page.locator('#ptqscope-panel'),
      entry,
      show: async () => {},
      runDone: async () => {
        await page.locator('#ptqscope-panel .ptq-progress-text', { hasText: 'Run all: done in' }).waitFor({ timeout: 300_000 });
      },
    });
    // Netron's nodes are coloured by Run all's sweep (the heat is applied after the run's last event),
    // not by the comparison drawn on the model opened before.
    await page.locator('#nodes > g.node[data-ptq-heat]').first().waitFor();
    expect(await read("window.__ptqscope__.state.get('heat')?.legend?.view")).not.toBe('compare');
    expect(await page.locator('#ptqscope-panel .ptq-error:not([hidden])').count()).toBe(0);
    expect(problems).toEqual([]);
  }, 900_000);

  it('planted_clipping: why (hints, histogram, heat layer on Netron\'s nodes), apply, fix with threshold first, export reopened, calibration methods', async () => {
    const entry = fixture('planted_clipping');
    await open(entry);
    await runExplainLoop(page, {
      scope: page.locator('#ptqscope-panel'),
      show: async () => {},
      entry,
      readState: (key) => read(`window.__ptqscope__.state.get(${JSON.stringify(key)})`),
      heatedCount: () => page.locator('#nodes > g.node[data-ptq-heat]').count(),
      // The dock's Selected node section names the quantizer Netron shows selected.
      selectionShown: (name) => page.locator('#ptqscope-panel .ptq-node-title', { hasText: name }).waitFor(),
      // Netron's node of that quantizer labelled "thr", as for the other states in effect.
      thresholdShown: async (name) => {
        const label = page.locator('#nodes > g.node[data-ptq-config="thr"] > g.ptq-config-label', { hasText: name }).first();
        await label.waitFor();
        expect(await label.locator('text').textContent()).toBe('thr');
      },
      // The Why tab's picture is docs/images/plugin-why.png (PTQ_UPDATE_SCREENSHOTS=1).
      shot: (name) => (name === 'why' ? screenshot(page, 'plugin-why') : screenshot(page, `plugin-${name}`)),
    });
    // The dock still leaves Netron's graph pane whole beside it.
    const dock = await box('#ptqscope-panel');
    expect((await box('#target')).x).toBeGreaterThanOrEqual(dock.x + dock.width - 1);
    expect(await page.locator('#ptqscope-panel .ptq-error:not([hidden])').count()).toBe(0);
    expect(problems).toEqual([]);
  }, 900_000);
});
