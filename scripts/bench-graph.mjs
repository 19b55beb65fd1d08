// The graph view on a big model against the real Netron 9.2.1, in one Chromium run (not in CI):
//   node scripts/bench-graph.mjs [--nodes 10000] [--reps 3] [--write-docs]
// A CNN-like float model of about --nodes operators (residual blocks with a 1×1 side branch, a
// squeeze-excite branch every 8 blocks, one level per few nodes: deep, like the worst case of a
// layered layout) is generated once into .cache/bench/. Both pages open it in the same browser, in
// alternation, each repetition on a fresh page:
// - first view: from the file chosen (setInputFiles on the page's own file input) to the graph drawn:
//   ours `#graph[data-state=ready]`, Netron its `#nodes > g.node` shown with the spinner gone;
// - frames: requestAnimationFrame deltas in the page while a scripted pan (a mouse drag there and
//   back) and zoom (wheel in and out at the view's centre) run, at several zoom levels: ours at 100 %,
//   41 %, 21 % and after Fit; Netron at 100 % and at its smallest zoom (it clamps).
// The Netron tarball is found as by tests/js/plugin/netron_site.mjs; without it the script says so
// and stops. Prints the CPU, the load average and the ratios; --write-docs writes the two tables of
// docs/benchmarks.md (bench-graph-first, bench-graph-frames).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { REPO_ROOT } from '../web/cli/lib/wasm.mjs';
import { buildModel } from '../tests/js/onnx_builder.mjs';
import { NETRON_AVAILABLE, NETRON_MISSING, consentCookie, extractNetron, serveFolder } from '../tests/js/plugin/netron_site.mjs';
import { CHROMIUM_ARGS, PAGE } from '../tests/js/e2e/browser.mjs';
import { median, option, report, runMain } from './bench-common.mjs';

const NODES = Number(option('nodes', 10000));
const REPS = Number(option('reps', 3));
const VIEW = { width: 1280, height: 800 };
const FIRST_VIEW_TIMEOUT = 20 * 60_000;

// --- the model --------------------------------------------------------------------------------
function cnnModel(count) {
  const C = 4;
  const nodes = [];
  const initializers = [];
  let seed = 1;
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648 - 0.5) * 0.2;
  const weight = (name, dims) => {
    initializers.push({ name, dims, floats: Array.from({ length: dims.reduce((a, b) => a * b, 1) }, random) });
    return name;
  };
  const conv = (name, x, k) => {
    nodes.push({ name, op: 'Conv', inputs: [x, weight(`${name}.w`, [C, C, k, k])], outputs: [`${name}.y`],
      attrs: [{ name: 'kernel_shape', ints: [k, k] }, { name: 'pads', ints: k === 3 ? [1, 1, 1, 1] : [0, 0, 0, 0] }] });
    return `${name}.y`;
  };
  const op = (name, type, inputs) => {
    nodes.push({ name, op: type, inputs, outputs: [`${name}.y`] });
    return `${name}.y`;
  };
  let x = 'input';
  for (let b = 0; nodes.length < count; b++) {
    const p = `/block${b}`;
    const main = conv(`${p}/conv2`, op(`${p}/relu1`, 'Relu', [conv(`${p}/conv1`, x, 3)]), 3);
    const side = op(`${p}/relu_side`, 'Relu', [conv(`${p}/conv_side`, x, 1)]);
    x = op(`${p}/relu`, 'Relu', [op(`${p}/add`, 'Add', [main, side])]);
    if (b % 8 === 7) {
      const gate = op(`${p}/se/sigmoid`, 'Sigmoid', [conv(`${p}/se/conv`, op(`${p}/se/pool`, 'GlobalAveragePool', [x]), 1)]);
      x = op(`${p}/se/mul`, 'Mul', [x, gate]);
    }
  }
  return {
    bytes: buildModel({ opsets: [['', 17]], nodes, initializers,
      inputs: [{ name: 'input', dims: [1, C, 16, 16] }], outputs: [{ name: x, dims: [1, C, 16, 16] }] }),
    nodes: nodes.length,
  };
}

function modelFile() {
  const file = path.join(REPO_ROOT, `.cache/bench/graph_cnn_${NODES}.onnx`);
  if (!fs.existsSync(file)) {
    const { bytes, nodes } = cnnModel(NODES);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, bytes);
    console.log(`wrote ${path.relative(REPO_ROOT, file)}: ${nodes} nodes, ${bytes.length} bytes`);
  }
  return file;
}

// --- measuring in the page (through CDP: Netron stubs window.eval, so page.evaluate fails there) -----
async function evaluate(cdp, expression) {
  const { result, exceptionDetails } = await cdp.send('Runtime.evaluate', { expression, returnByValue: true, awaitPromise: true });
  if (exceptionDetails) throw new Error(`${expression}: ${exceptionDetails.exception?.description ?? exceptionDetails.text}`);
  return result.value;
}
// Our page also says how long each overview frame's drawing took (#graph's data-overview-ms).
const START_FRAMES = `(() => { const f = window.__benchFrames = { t: [], on: true, draws: [] };
  const tick = (ts) => { f.t.push(ts); if (f.on) requestAnimationFrame(tick); }; requestAnimationFrame(tick);
  const graph = document.getElementById('graph');
  if (graph) (f.observer = new MutationObserver(() => f.draws.push(Number(graph.dataset.overviewMs)))).observe(graph, { attributeFilter: ['data-overview-ms'] }); })()`;
const STOP_FRAMES = `(() => { const f = window.__benchFrames; f.on = false; f.observer?.disconnect();
  return { deltas: f.t.slice(1).map((t, i) => t - f.t[i]), draws: f.draws }; })()`;

// A pan (drag there and back) and a zoom (wheel in, then out) at the view's centre
// -> {deltas: frame deltas (ms), draws: overview drawing times (ms)}.
async function panZoom(page, cdp, { wheelDelta, modifier }) {
  const cx = VIEW.width / 2;
  const cy = VIEW.height / 2;
  await evaluate(cdp, START_FRAMES);
  await page.mouse.move(cx, cy);
  await page.mouse.down();
  await page.mouse.move(cx - 250, cy - 300, { steps: 15 });
  await page.mouse.move(cx, cy, { steps: 15 });
  await page.mouse.up();
  if (modifier) await page.keyboard.down(modifier);
  for (const sign of [-1, -1, -1, -1, 1, 1, 1, 1]) {
    await page.mouse.wheel(0, sign * wheelDelta);
    await page.waitForTimeout(30);
  }
  if (modifier) await page.keyboard.up(modifier);
  await page.waitForTimeout(500); // frames still drawing what the last event brought into view
  return evaluate(cdp, STOP_FRAMES);
}
const frameStats = ({ deltas, draws }) => {
  const s = [...deltas].sort((a, b) => a - b);
  return { frames: s.length, median: median(s), p95: s[Math.floor(0.95 * (s.length - 1))], max: s.at(-1), over50: s.filter((d) => d > 50).length,
    draws: draws.length ? `${draws.length}, ${median(draws).toFixed(1)} / ${Math.max(...draws).toFixed(1)}` : '–' };
};

// --- the two pages --------------------------------------------------------------------------------
async function ours(context, model, { frames }) {
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await page.goto(pathToFileURL(PAGE).href);
  await page.waitForSelector('body[data-ready="true"]');
  const t0 = performance.now();
  await page.setInputFiles('#open-model', model);
  await page.waitForSelector('#graph[data-state="ready"][data-nodes]', { timeout: FIRST_VIEW_TIMEOUT });
  const firstView = performance.now() - t0;
  const boxes = Number(await page.getAttribute('#graph', 'data-nodes'));
  const result = { firstView, boxes, levels: [] };
  if (frames) {
    const zoom = () => evaluate(cdp, "document.querySelector('#graph svg').__zoom.k");
    const press = async (key, times) => {
      await page.locator('#graph svg').focus();
      for (let i = 0; i < times; i++) {
        await page.keyboard.press(key);
        await page.waitForTimeout(400); // each press is a 200 ms transition; a press during one cuts it short
      }
    };
    const level = async (label) => result.levels.push({ label, k: await zoom(),
      overview: (await page.getAttribute('#graph', 'data-overview')) === 'on', ...frameStats(await panZoom(page, cdp, { wheelDelta: 100 })) });
    await level('first view');
    await press('-', 4); // 0.8^4 = 41 %
    await level('zoomed out');
    await press('-', 3); // 21 %
    await level('zoomed out');
    await press('f', 1);
    await level('Fit');
  }
  await page.close();
  return result;
}

async function netron(context, base, model, { frames }) {
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await page.goto(`${base}index.html`);
  await page.locator('body.welcome:not(.spinner)').waitFor({ timeout: 60_000 });
  const t0 = performance.now();
  await page.setInputFiles('#open-file-dialog', model);
  await page.locator('body.default:not(.spinner) #nodes > g.node').first().waitFor({ timeout: FIRST_VIEW_TIMEOUT });
  const firstView = performance.now() - t0;
  const boxes = await evaluate(cdp, "document.querySelectorAll('#nodes > g.node').length");
  const result = { firstView, boxes, levels: [] };
  if (frames) {
    // Netron's zoom is the SVG's CSS size over its layout size; it clamps at max(view / graph width, 0.15) and 1.
    const zoom = () => evaluate(cdp, `(() => { const c = document.getElementById('canvas'); return c.getBoundingClientRect().width / c.viewBox.baseVal.width; })()`);
    const level = async (label) => result.levels.push({ label, k: await zoom(), overview: false,
      ...frameStats(await panZoom(page, cdp, { wheelDelta: 10, modifier: 'Control' })) }); // Ctrl+wheel zooms, ×10 (view.js)
    await level('first view');
    await page.mouse.move(VIEW.width / 2, VIEW.height / 2);
    await page.keyboard.down('Control');
    for (let i = 0; i < 12; i++) await page.mouse.wheel(0, 100);
    await page.keyboard.up('Control');
    await page.waitForTimeout(600);
    await level('smallest zoom');
  }
  await page.close();
  return result;
}

async function main() {
  if (!NETRON_AVAILABLE) {
    console.log(`bench-graph: skipped, ${NETRON_MISSING}`);
    return;
  }
  if (!fs.existsSync(PAGE)) throw new Error(`${PAGE} is missing: build the web app first (scripts/build.sh web)`);
  const model = modelFile();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ptq-bench-graph-'));
  const server = await serveFolder(extractNetron(tmp));
  const base = `http://127.0.0.1:${server.address().port}/`;
  const context = await chromium.launchPersistentContext(fs.mkdtempSync(path.join(tmp, 'profile-')), {
    executablePath: '/usr/bin/chromium', headless: true, args: CHROMIUM_ARGS, viewport: VIEW,
  });
  await context.addCookies([consentCookie(base)]);
  const probe = await context.newPage();
  const { product } = await (await context.newCDPSession(probe)).send('Browser.getVersion');
  await probe.close();
  const cpu = /model name\s*:\s*(.*)/.exec(fs.readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? os.cpus()[0]?.model ?? 'unknown CPU';
  const loadBefore = os.loadavg();
  const runs = { ours: [], netron: [] };
  try {
    for (let r = 0; r < REPS; r++) {
      // Alternating, the order rotating each repetition; frames are measured in the last one.
      const frames = r === REPS - 1;
      const jobs = [['ours', () => ours(context, model, { frames })], ['netron', () => netron(context, base, model, { frames })]];
      if (r % 2) jobs.reverse();
      for (const [name, job] of jobs) {
        const res = await job();
        runs[name].push(res);
        console.log(`rep ${r + 1}/${REPS} ${name}: first view ${(res.firstView / 1000).toFixed(2)} s (${res.boxes} boxes ${name === 'ours' ? 'in the view model' : 'rendered'}), load ${os.loadavg()[0].toFixed(1)}`);
      }
    }
  } finally {
    await context.close();
    server.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  const loadAfter = os.loadavg();
  const load = `load average ${loadBefore.map((l) => l.toFixed(1)).join(' / ')} before, ${loadAfter.map((l) => l.toFixed(1)).join(' / ')} after (1 / 5 / 15 min, ${os.cpus().length} cores)`;
  const machineLine = `${cpu}, ${os.cpus().length} cores; ${load}; /usr/bin/chromium (${product}), --disable-gpu, ${VIEW.width}×${VIEW.height}; ${new Date().toISOString().slice(0, 10)}.`;
  const ratios = runs.ours.map((o, i) => o.firstView / runs.netron[i].firstView);
  const s = (ms) => (ms / 1000).toFixed(2);
  report('bench-graph-first',
    `First view of a ${NODES}-node CNN-like ONNX model (file chosen → graph drawn), ${REPS} alternating repetitions on fresh pages; ${machineLine}`,
    ['| page | first view per repetition (s) | median (s) |', '|---|---|---|',
      `| ptqscope (dist/ptqscope.html) | ${runs.ours.map((x) => s(x.firstView)).join(', ')} | ${s(median(runs.ours.map((x) => x.firstView)))} |`,
      `| Netron 9.2.1 | ${runs.netron.map((x) => s(x.firstView)).join(', ')} | ${s(median(runs.netron.map((x) => x.firstView)))} |`,
      `| ratio ptqscope / Netron | ${ratios.map((x) => x.toFixed(3)).join(', ')} | ${median(ratios).toFixed(3)} |`]);
  const f = (x) => x.toFixed(1);
  const rows = [];
  for (const [name, list] of [['ptqscope', runs.ours.at(-1).levels], ['Netron 9.2.1', runs.netron.at(-1).levels]]) {
    for (const l of list) rows.push(`| ${name} | ${l.label} | ${(100 * l.k).toPrecision(3)} %${l.overview ? ' (overview)' : ''} | ${l.frames} | ${f(l.median)} | ${f(l.p95)} | ${f(l.max)} | ${l.over50} | ${l.draws} |`);
  }
  report('bench-graph-frames',
    `Frames during a scripted pan (a drag there and back, 30 steps) and zoom (8 wheel steps in and out) on the same model, requestAnimationFrame deltas in the page (and our overview's own drawing time per frame, in JavaScript), from the last repetition; ${machineLine}`,
    ['| page | view | zoom | frames | median (ms) | p95 (ms) | slowest (ms) | frames > 50 ms | overview drawings: count, median / slowest (ms) |', '|---|---|---|---|---|---|---|---|---|', ...rows]);
  console.log(`ratio (ours / Netron, first view): median ${median(ratios).toFixed(3)}; ${load}`);
}

runMain(main);
