// The viewer in Chromium: dist/ptqscope.html from file:// (no server, no network), "Open example",
// the graph with one badge per calibration node, Ctrl+F search that centres and selects a node, a
// click that opens the sidebar, a badge click that shows the calibration parameters, the toggle that
// turns badges back into nodes, a broken model that shows the banner while the page stays usable, and
// viewport culling on a 20,102-box graph, and that graph far out (Fit) drawn by the overview canvas.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { REPO_ROOT, loadPtqModule } from '../helpers.mjs';
import { PAGE, openApp } from '../e2e/browser.mjs';
import { bigGraph } from './big_graph.mjs';

const EXAMPLE_MODEL = path.join(REPO_ROOT, 'build/web-example/digits_cnn_calibrated_model.onnx');
const EXAMPLE_DATA = path.join(REPO_ROOT, 'build/web-example/calibration_data');
const ARTIFACTS = path.join(REPO_ROOT, 'build/test-results/app-viewer');

let context;
let page;
let graph; // the example's graphJson, from the wasm core in Node
let requests = []; // any request that is not file:, data: or blob:
let pageErrors = [];

beforeAll(async () => {
  if (!fs.existsSync(EXAMPLE_MODEL)) throw new Error(`${EXAMPLE_MODEL} is missing: build the web app first (scripts/build.sh web)`);
  const ptq = await loadPtqModule();
  const session = new ptq.Session();
  session.loadModel(new Uint8Array(fs.readFileSync(EXAMPLE_MODEL)));
  graph = JSON.parse(session.graphJson());
  session.delete();
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  ({ context, page, offline: requests, pageErrors } = await openApp({ viewport: { width: 1280, height: 800 } }));
});

afterAll(async () => {
  await context?.close();
});

const calibrationNodes = () => graph.nodes.filter((n) => n.op_type === 'HzCalibration');
// Drawn as boxes: everything but calibration nodes (badges) and Constant nodes (folded into rows).
const normalNodes = () => graph.nodes.filter((n) => n.op_type !== 'HzCalibration' && n.op_type !== 'Constant');
const sidebarName = () => page.textContent('#sidebar .node-name .sidebar-value');

// Resolves once node `name` is in the middle of the graph view (after the zoom transition).
const waitCentred = (name) => page.waitForFunction((n) => {
  const svg = document.querySelector('#graph svg.graph-canvas').getBoundingClientRect();
  const box = document.querySelector(`#graph .node[data-name="${CSS.escape(n)}"]`)?.getBoundingClientRect();
  return box && Math.abs(box.x + box.width / 2 - (svg.x + svg.width / 2)) < 4 && Math.abs(box.y + box.height / 2 - (svg.y + svg.height / 2)) < 4;
}, name);

describe('viewer (Chromium, file://)', () => {
  it('opens the example and draws the graph with calibration badges', async () => {
    await page.click('#open-example');
    await page.waitForSelector('#graph[data-state="ready"]');
    await page.waitForFunction(() => /calibration samples?\b/.test(document.querySelector('#model-info').textContent));
    expect(await page.isHidden('#error-banner')).toBe(true);
    expect(await page.locator('#graph .node-node').count()).toBe(normalNodes().length);
    expect(await page.locator('#graph .node-input').count()).toBe(graph.inputs.length);
    const badges = await page.$$eval('#graph .badge', (bs) => [...new Set(bs.map((b) => b.dataset.calibration))].sort());
    expect(badges).toEqual(calibrationNodes().map((n) => n.name).sort());
    const conv = normalNodes().find((n) => n.op_type === 'Conv').name;
    expect(await page.getAttribute(`#graph .node[data-name="${conv}"]`, 'class')).toContain('node-cat-layer');
    await page.screenshot({ path: path.join(ARTIFACTS, 'example.png') });
  });

  it('Ctrl+F finds a node, centres and selects it', async () => {
    const target = normalNodes().filter((n) => n.op_type === 'Relu').at(-1).name;
    await page.locator('#graph svg.graph-canvas').click({ position: { x: 5, y: 5 } });
    await page.keyboard.press('Control+f');
    await page.waitForSelector('.graph-search input:focus');
    await page.keyboard.type(target);
    await page.waitForSelector('.graph-search-results li');
    await page.keyboard.press('Enter');
    await page.waitForSelector(`#graph .node.selected[data-name="${target}"]`);
    expect(await sidebarName()).toBe(target);
    await waitCentred(target);
    await page.keyboard.press('Escape');
    await page.waitForSelector('.graph-search', { state: 'hidden' });
  });

  it('a click on a node shows its properties; a badge shows the calibration parameters', async () => {
    const conv = normalNodes().find((n) => n.op_type === 'Conv');
    await page.evaluate((n) => window.ptqscope.state.set('focus', n), conv.name); // what a click in a chart does
    await waitCentred(conv.name);
    await page.locator(`#graph .node[data-name="${conv.name}"] .node-header`).click();
    await page.waitForFunction((name) => document.querySelector('#sidebar .node-name .sidebar-value')?.textContent === name, conv.name);
    const sections = await page.$$eval('#sidebar h3', (hs) => hs.map((h) => h.textContent));
    expect(sections).toEqual(expect.arrayContaining(['Node', 'Attributes', 'Inputs', 'Outputs', 'Quantized inputs']));
    expect(await page.textContent('#sidebar')).toContain(`${graph.values[conv.outputs[0]].dims.join('×')}`);

    const weight = calibrationNodes().find((n) => n.calibration.kind === 'weight');
    await page.locator(`#graph .badge[data-calibration="${weight.name}"]`).first().click();
    await page.waitForFunction((name) => document.querySelector('#sidebar .node-name .sidebar-value')?.textContent === name, weight.name);
    const text = await page.textContent('#sidebar');
    expect(text).toContain('Calibration');
    expect(text).toContain(`thresholds (${weight.calibration.thresholds.length})`);
    expect(text).toContain(weight.calibration.qtype);
    await page.screenshot({ path: path.join(ARTIFACTS, 'sidebar.png') });
  });

  it('shows calibration nodes as nodes on request (C)', async () => {
    await page.locator('#graph svg.graph-canvas').focus();
    await page.keyboard.press('c');
    await page.waitForFunction((n) => document.querySelectorAll('#graph .node-node').length === n, graph.nodes.filter((n) => n.op_type !== 'Constant').length);
    expect(await page.locator('#graph .badge').count()).toBe(0);
    await page.keyboard.press('c');
    await page.waitForFunction((n) => document.querySelectorAll('#graph .node-node').length === n, normalNodes().length);
  });

  it('a broken model shows the banner naming the file and the page stays usable', async () => {
    await page.setInputFiles('#open-model', { name: 'broken.onnx', mimeType: 'application/octet-stream', buffer: Buffer.from([8, 7, 0xff, 0xff, 0xff]) });
    await page.waitForSelector('#error-banner:not([hidden])');
    expect(await page.textContent('#error-banner .error-text')).toMatch(/^broken\.onnx: /);
    expect(await page.locator('#graph .node-node').count()).toBe(normalNodes().length); // the example is still there
    await page.click('#error-banner .error-close');
    expect(await page.isHidden('#error-banner')).toBe(true);
  });

  it('opens a dropped model with its calibration files, and a picked calibration_data folder', async () => {
    const files = [{ path: 'digits_cnn_calibrated_model.onnx', b64: fs.readFileSync(EXAMPLE_MODEL).toString('base64') },
      ...fs.readdirSync(path.join(EXAMPLE_DATA, 'input')).map((f) => ({
        path: `calibration_data/input/${f}`, b64: fs.readFileSync(path.join(EXAMPLE_DATA, 'input', f)).toString('base64'),
      }))];
    // Only File objects can be synthesized (no directory entries): webkitRelativePath carries the folder.
    const dt = await page.evaluateHandle((list) => {
      const t = new DataTransfer();
      for (const f of list) {
        const file = new File([Uint8Array.from(atob(f.b64), (c) => c.charCodeAt(0))], f.path.split('/').pop());
        Object.defineProperty(file, 'webkitRelativePath', { value: f.path.includes('/') ? f.path : '' });
        t.items.add(file);
      }
      return t;
    }, files);
    await page.evaluate(() => { window.ptqscope.state.set('samples', null); });
    await page.dispatchEvent('body', 'drop', { dataTransfer: dt });
    await page.waitForFunction((n) => new RegExp(`${n} calibration samples \\(calibration_data: `).test(document.querySelector('#model-info').textContent),
      files.length - 1);
    await page.waitForSelector('#graph[data-state="ready"]');
    expect(await page.isHidden('#error-banner')).toBe(true);

    await page.evaluate(() => { window.ptqscope.state.set('samples', null); });
    await page.setInputFiles('#open-data-folder', EXAMPLE_DATA);
    await page.waitForFunction(() => /calibration samples \(calibration_data: /.test(document.querySelector('#model-info').textContent));
  });

  it('a 20,102-box graph: only what is in view is in the DOM; focus, selection and heat reach off-screen nodes', async () => {
    const big = bigGraph(6700); // 3 boxes per block + input + output
    const boxes = 3 * 6700 + 2;
    const far = 'relu6000';
    // Heat and selection are set while `far` is not drawn: they must show once it scrolls into view.
    // As a JSON string: Playwright serializes a plain object of this size far more slowly.
    await page.evaluate(({ json, name }) => {
      const { state } = window.ptqscope;
      state.set('graph', JSON.parse(json));
      state.set('heat', { values: new Map([[name, { value: 0.5, color: 'rgb(200, 30, 30)', label: '0.5' }]]), legend: { title: 'test', direction: 'higher is worse', domain: [0, 1] } });
    }, { json: JSON.stringify(big), name: far });
    await page.waitForSelector(`#graph[data-state="ready"][data-nodes="${boxes}"]`, { timeout: 120_000 });
    expect(await page.getAttribute('#graph', 'data-layout')).toBe('layered');
    const drawn = () => page.locator('#graph .node').count();
    const first = await drawn();
    expect(first).toBeGreaterThan(0);
    expect(first).toBeLessThan(200); // the view's worth, not 20,102
    expect(await page.locator(`#graph .node[data-name="${far}"]`).count()).toBe(0);
    expect(await page.locator('#graph .node[data-name="conv0"]').count()).toBe(1); // the top is shown first

    await page.evaluate((name) => { window.ptqscope.state.set('selection', name); window.ptqscope.state.set('focus', name); }, far);
    await page.waitForSelector(`#graph .node.selected.heated[data-name="${far}"]`);
    await waitCentred(far);
    await page.screenshot({ path: path.join(ARTIFACTS, 'large-focus.png') });
    expect(await page.$eval(`#graph .node[data-name="${far}"] .node-body`, (r) => r.style.fill)).toBe('rgb(200, 30, 30)');
    await page.waitForFunction(() => !document.querySelector('#graph .node[data-name="conv0"]')); // left the view: removed
    expect(await drawn()).toBeLessThan(200);
    expect(await page.locator('#graph .badge').count()).toBeLessThan(200);
    await page.screenshot({ path: path.join(ARTIFACTS, 'large-near.png') });
    await page.evaluate(() => window.ptqscope.state.set('heat', null));
  });

  it('the 20,102-box graph far out: Fit shows all of it on the overview canvas with its heat colour; a click there selects; zooming in brings the SVG back', async () => {
    const far = 'relu6000';
    await page.evaluate((name) => {
      window.ptqscope.state.set('heat', { values: new Map([[name, { value: 0.5, color: 'rgb(200, 30, 30)', label: '0.5' }]]), legend: { title: 'test', direction: 'higher is worse', domain: [0, 1] } });
    }, far);
    await page.locator('#graph svg.graph-canvas').focus();
    await page.keyboard.press('f');
    // The whole layout inside the view once the transition ends: far below the zoom's old floor (2 %).
    const whole = () => page.evaluate(() => {
      const g = document.querySelector('#graph');
      const svg = g.querySelector('svg');
      const t = svg.__zoom;
      const [lw, lh] = [Number(g.dataset.layoutWidth), Number(g.dataset.layoutHeight)];
      return { k: t.k, inside: t.x >= -1 && t.y >= -1 && t.x + lw * t.k <= svg.clientWidth + 1 && t.y + lh * t.k <= svg.clientHeight + 1, y: t.y, height: lh * t.k };
    });
    await expect.poll(async () => (await whole()).inside, { timeout: 10_000 }).toBe(true);
    const view = await whole();
    expect(view.k).toBeLessThan(0.02);
    await page.waitForSelector('#graph[data-overview="on"] canvas.graph-overview:not([hidden])');
    await page.waitForFunction(() => document.querySelectorAll('#graph .node').length === 0); // no SVG boxes far out
    expect(await page.getAttribute('#graph', 'data-drawn-edges')).toBe('0');
    await page.screenshot({ path: path.join(ARTIFACTS, 'large-fit.png') });
    // The heated box is visible in the overview, where the layout has it (block 6000 of 6700, from the top).
    const heatPixels = () => page.evaluate(() => {
      const c = document.querySelector('#graph canvas.graph-overview');
      const data = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      const ys = [];
      for (let i = 0; i < data.length; i += 4) if (data[i] === 200 && data[i + 1] === 30 && data[i + 2] === 30) ys.push(Math.floor(i / 4 / c.width));
      return ys.length ? { count: ys.length, y: ys.reduce((a, b) => a + b, 0) / ys.length } : { count: 0 };
    });
    await expect.poll(async () => (await heatPixels()).count).toBeGreaterThan(0);
    const { y } = await heatPixels();
    expect((y - view.y) / view.height).toBeCloseTo(6000 / 6700, 1);
    // Without heat, none of its colour.
    await page.evaluate(() => window.ptqscope.state.set('heat', null));
    await expect.poll(async () => (await heatPixels()).count).toBe(0);

    // Zooming in brings the SVG boxes back; the threshold is the zoom where text is hidden (35 %).
    await page.evaluate(() => window.ptqscope.state.set('focus', 'conv100'));
    await page.waitForSelector('#graph[data-overview="off"] .node[data-name="conv100"]');
    expect(await page.isHidden('#graph canvas.graph-overview')).toBe(true);
    const zoomTo = async (key, overview) => {
      await page.keyboard.press(key);
      await page.waitForSelector(`#graph[data-overview="${overview}"]`);
      await page.waitForTimeout(300); // the 200 ms zoom transition
    };
    await page.locator('#graph svg.graph-canvas').focus();
    // 0.8, the zoom a focus sets at least, once the focus's zoom transition has ended.
    await expect.poll(async () => (await whole()).k).toBeCloseTo(0.8, 5);
    for (let i = 0; i < 3; i++) await zoomTo('-', 'off'); // 0.64, 0.51, 0.41
    expect(await page.locator('#graph .node').count()).toBeGreaterThan(0);
    await zoomTo('-', 'on'); // 0.33
    expect((await whole()).k).toBeLessThan(0.35);
    await page.waitForFunction(() => document.querySelectorAll('#graph .node').length === 0);
    // A click on the overview selects the box under the pointer: conv100, still in the view's middle.
    expect(await page.evaluate(() => window.ptqscope.state.get('selection'))).toBe('relu6000'); // the sidebar stays open
    const svgBox = await page.locator('#graph svg.graph-canvas').boundingBox();
    await page.mouse.click(svgBox.x + svgBox.width / 2, svgBox.y + svgBox.height / 2);
    await page.waitForFunction(() => window.ptqscope.state.get('selection') === 'conv100');
    expect(await sidebarName()).toBe('conv100');
    await page.locator('#graph svg.graph-canvas').focus();
    await zoomTo('+', 'off'); // 0.41
    await page.waitForSelector('#graph .node.selected[data-name="conv100"]');
    await page.evaluate(() => window.ptqscope.state.set('heat', null));
  });

  it('dist/ works from a plain static server too (relative URLs, no special headers)', async () => {
    const root = path.dirname(PAGE); // dist/ (or the folder of PTQ_WEB_PAGE)
    const types = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css' };
    const served = [];
    const server = http.createServer((req, res) => {
      const file = path.join(root, decodeURIComponent(new URL(req.url, 'http://x').pathname));
      served.push(req.url);
      if (!file.startsWith(root) || !fs.existsSync(file) || fs.statSync(file).isDirectory()) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'content-type': types[path.extname(file)] ?? 'application/octet-stream' }).end(fs.readFileSync(file));
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${server.address().port}`;
    const other = await context.newPage();
    const foreign = [];
    other.on('request', (r) => { if (!r.url().startsWith(origin) && !/^(data|blob):/.test(r.url())) foreign.push(r.url()); });
    try {
      await other.goto(`${origin}/index.html`);
      await other.waitForSelector('body[data-ready="true"]');
      await other.click('#open-example');
      await other.waitForSelector('#graph[data-state="ready"]');
      expect(await other.locator('#graph .node-node').count()).toBe(normalNodes().length);
      expect(foreign).toEqual([]);
      expect(served.every((u) => u === '/index.html' || u.startsWith('/assets/'))).toBe(true);
    } finally {
      await other.close();
      server.close();
    }
  });

  it('made no network request and raised no page error', () => {
    expect(requests).toEqual([]);
    expect(pageErrors).toEqual([]);
  });
});
