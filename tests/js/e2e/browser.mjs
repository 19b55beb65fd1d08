// Shared by the Chromium tests: the page under test opened from file:// in headless Debian chromium
// (no server, no network; any request that is not file:, data: or blob: is recorded), the dock
// panels, and the CLI's --json for the same analysis (the page and the CLI must agree).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { expect } from 'vitest';
import { REPO_ROOT } from '../helpers.mjs';
import { cli } from '../cli_fixture.mjs';

// PTQ_WEB_PAGE: another build of the page (e.g. one made with a private wasm build or outDir).
export const PAGE = process.env.PTQ_WEB_PAGE || path.join(REPO_ROOT, 'dist/ptqscope.html');
export const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
  '--disable-sync', '--no-first-run', '--disable-quic'];

// -> { context, page, offline: [urls], pageErrors: [messages] }, the page ready (body[data-ready]).
export async function openApp({ viewport = { width: 1400, height: 900 }, acceptDownloads = false } = {}) {
  if (!fs.existsSync(PAGE)) throw new Error(`${PAGE} is missing: build the web app first (scripts/build.sh web)`);
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'ptq-e2e-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium', headless: true, args: CHROMIUM_ARGS, acceptDownloads, viewport,
  });
  const page = context.pages()[0] ?? await context.newPage();
  const offline = [];
  const pageErrors = [];
  page.on('request', (r) => { if (!/^(file|data|blob):/.test(r.url())) offline.push(r.url()); });
  page.on('pageerror', (e) => pageErrors.push(e.message));
  await page.goto(pathToFileURL(PAGE).href);
  await page.waitForSelector('body[data-ready="true"]');
  return { context, page, offline, pageErrors };
}

// A dock tab toggles its panel: click it only when that panel is not already shown.
export async function openPanel(page, id) {
  await page.evaluate((pid) => {
    const tab = document.querySelector(`.dock-tab[data-panel="${pid}"]`);
    if (!tab.classList.contains('active') || document.querySelector('#dock').classList.contains('collapsed')) tab.click();
  }, id);
  await page.waitForSelector(`.dock-panel[data-panel="${id}"]:not([hidden])`);
}

// `ptqscope <command> <model> <data> ...options --json out --quiet` -> the result document.
export async function cliJson(command, model, data, options) {
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ptq-e2e-cli-')), 'result.json');
  const r = await cli([command, model, data, ...options, '--json', out, '--quiet']);
  if (r.code !== 0) throw new Error(`ptqscope ${command} ${options.join(' ')} failed: ${r.stderr}`);
  return JSON.parse(fs.readFileSync(out, 'utf8'));
}

// The rows of the analysis panel's sensitivity table: [{item, cells: {column: text}}], in table order.
export function sensitivityRows(page) {
  return page.$$eval('.ptq-analysis-output table.sensitivity-table', (tables) => tables.flatMap((table) => {
    const columns = [...table.querySelectorAll('thead th')].map((th) => th.dataset.column);
    return [...table.querySelectorAll('tbody tr')].map((tr) => ({
      item: tr.dataset.item,
      cells: Object.fromEntries([...tr.children].map((td, i) => [columns[i], td.textContent])),
    }));
  }));
}

// Screenshots the tests take of what a person sees: always into tests/artifacts/screenshots/ (for
// review), and with PTQ_UPDATE_SCREENSHOTS=1 also into docs/images/ (the pictures the README and
// docs show, so they stay current). -> the artifact's path.
export async function screenshot(page, name) {
  const dir = path.join(REPO_ROOT, 'tests/artifacts/screenshots');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}.png`);
  await page.screenshot({ path: file });
  if (process.env.PTQ_UPDATE_SCREENSHOTS === '1') fs.copyFileSync(file, path.join(REPO_ROOT, 'docs/images', `${name}.png`));
  return file;
}

// A JS expression (for page.evaluate or CDP Runtime.evaluate) listing the elements under `root`
// that stick out of its right edge where a person would see them: an element clipped by a scrolling
// or hidden-overflow ancestor that itself ends inside `root` is not counted, nor those matching
// `ignore` (a handle meant to straddle the edge). -> ['tag.class text', ...]
export const overflowRightExpression = (root, ignore = null) => `(() => {
  const root = document.querySelector(${JSON.stringify(root)});
  const ignore = ${JSON.stringify(ignore)};
  const limit = root.getBoundingClientRect().right + 1;
  const clipped = (el) => {
    for (let a = el.parentElement; a && a !== root; a = a.parentElement) {
      if (getComputedStyle(a).overflowX !== 'visible' && a.getBoundingClientRect().right <= limit) return true;
    }
    return false;
  };
  return [...root.querySelectorAll('*')].filter((el) => {
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && r.right > limit && !clipped(el) && !(ignore && el.matches(ignore));
  }).map((el) => el.tagName.toLowerCase() + '.' + [...el.classList].join('.') + ' ' + (el.textContent || '').trim().slice(0, 40));
})()`;

// runLoop's configShown for the page: the calibration node's badge, brought into view, reads the
// state in effect ('int16', 'float'), is marked changed and says so in its tooltip.
export const badgeShows = (page) => async (name, text) => {
  await page.evaluate((n) => window.ptqscope.state.set('focus', n), name);
  const badge = page.locator(`#graph g.badge[data-calibration="${name}"]`).first();
  await expect.poll(() => badge.locator('text').textContent()).toBe(text);
  expect(await badge.getAttribute('class')).toContain('badge-changed');
  expect(await badge.locator('title').textContent()).toContain(`in effect (what-if): ${text === 'float' ? 'float (switched off)' : text}`);
};
