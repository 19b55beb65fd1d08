#!/usr/bin/env node
// The seed's scale (goal in docs/benchmarks.md): a full activation sweep of a calibrated model with
// at least 128 activation calibration nodes and 1 GFLOP per forward pass, over 100 samples, in the
// CLI (`--workers 2`) and in the page's worker pool (dist/ptqscope.html in Chromium), at several
// sample counts so that the peak wasm heap per worker shows whether memory grows with the samples.
// For each engine and sample count: the wall time, each worker's wasm heap (a heap only grows, so
// its size is its peak: the CLI's `--memory`, the page header's data-heap-analysis), and the naive
// estimate items × samples × onnxruntime-web's float forward pass (wasm, one thread), timed in this
// process right before and after that run.
// The samples are generated once into .cache/bench/seed/ (git-ignored): flipped, shifted, rescaled
// and noisy variants of the fixture's own photos, deterministic.
// Usage: node scripts/bench-seed.mjs [--model yolov8n_like] [--samples 10,30,100] [--engines cli,page]
//        [--workers 2] [--ort-runs 5] [--write-docs]
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { decodeNpy, encodeNpy } from '../web/cli/lib/npy.mjs';
import { loadPtqModule, REPO_ROOT } from '../web/cli/lib/wasm.mjs';
import { readCalibrationFolder } from '../web/cli/lib/files.mjs';
import { CHROMIUM_ARGS, PAGE, openPanel } from '../tests/js/e2e/browser.mjs';
import { calibratedModel, floatFixture, graphFlops, machine, median, option, ortWebOneThread, report, runMain, timeAlternating } from './bench-common.mjs';

const MODEL = option('model', 'yolov8n_like');
const SAMPLES = option('samples', '10,30,100').split(',').map(Number);
const ENGINES = option('engines', 'cli,page').split(',');
const WORKERS = Number(option('workers', 2));
const ORT_RUNS = Number(option('ort-runs', 5));
const CLI = path.join(REPO_ROOT, 'web/cli/ptqscope.mjs');
const SWEEP_TIMEOUT = 4 * 3600_000;

// --- the samples -----------------------------------------------------------------------------------
// A deterministic uniform generator in [0, 1) (a linear congruential one: the samples must not
// change between runs or machines).
function uniform(seed) {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

// Variant k of the fixture's photo k mod n (NCHW, values in [0, 1]): mirrored every other pair,
// shifted by a k-dependent offset (edges repeated), brightness and contrast changed and noise added.
function variant(base, dims, k) {
  const [, channels, height, width] = dims;
  const random = uniform(k + 1);
  const flip = (k >> 1) % 2 === 1;
  const dy = Math.floor(random() * height / 4) - height / 8, dx = Math.floor(random() * width / 4) - width / 8;
  const gain = 0.7 + 0.6 * random(), offset = 0.2 * random() - 0.1;
  const out = new Float32Array(base.length);
  const clamp = (v, hi) => Math.min(hi, Math.max(0, v));
  for (let c = 0; c < channels; c++) {
    for (let y = 0; y < height; y++) {
      const sy = clamp(y + dy, height - 1);
      for (let x = 0; x < width; x++) {
        const sx = clamp(flip ? width - 1 - x - dx : x + dx, width - 1);
        const noise = 0.02 * (random() + random() - 1);
        out[(c * height + y) * width + x] = clamp(base[(c * height + sy) * width + sx] * gain + offset + noise, 1);
      }
    }
  }
  return out;
}

// The calibration_data folder of the first `count` variants (.cache/bench/seed/<model>_<count>/input/),
// written once.
function sampleFolder(count) {
  const dir = path.join(REPO_ROOT, '.cache/bench/seed', `${MODEL}_${count}`);
  const fixtureData = floatFixture(`${MODEL}_data`);
  const inputs = fs.readdirSync(fixtureData);
  if (inputs.length !== 1) throw new Error(`${fixtureData}: one input folder expected, found ${inputs.join(', ')}`);
  const target = path.join(dir, inputs[0]);
  if (fs.existsSync(target) && fs.readdirSync(target).length === count) return dir;
  const photos = readCalibrationFolder(fixtureData).map((f) => decodeNpy(f.bytes));
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(target, { recursive: true });
  for (let k = 0; k < count; k++) {
    const { dtype, dims, data } = photos[k % photos.length];
    if (dtype !== 'float32' || dims.length !== 4) throw new Error(`${fixtureData}: a float32 NCHW image expected, found ${dtype} ${dims}`);
    fs.writeFileSync(path.join(target, `${String(k).padStart(3, '0')}.npy`), encodeNpy(dtype, dims, variant(data, dims, k)));
  }
  return dir;
}

// --- onnxruntime-web's forward pass ------------------------------------------------------------------
async function ortForward() {
  const ort = await ortWebOneThread();
  const session = await ort.InferenceSession.create(fs.readFileSync(floatFixture(`${MODEL}.onnx`)), { executionProviders: ['wasm'] });
  const [file] = readCalibrationFolder(floatFixture(`${MODEL}_data`));
  const { dims, data } = decodeNpy(file.bytes);
  const feeds = { [session.inputNames[0]]: new ort.Tensor('float32', data, dims) };
  // The times (ms) of ORT_RUNS forward passes after 2 untimed ones.
  return async () => {
    await timeAlternating([() => session.run(feeds)], 2);
    return (await timeAlternating([() => session.run(feeds)], ORT_RUNS))[0];
  };
}

// --- the two engines -------------------------------------------------------------------------------
// `ptqscope get-sensitivity-of-nodes -n activation -d N --workers W --memory`: wall time of the
// process, the sweep's own time (timings_ms) and each worker's heap from --memory's lines.
function runCli(model, data, samples) {
  const json = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ptq-bench-seed-')), 'result.json');
  const args = [CLI, 'get-sensitivity-of-nodes', model, data, '-n', 'activation', '-d', String(samples),
    '--workers', String(WORKERS), '--memory', '--quiet', '--json', json];
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => { stderr += d; });
    child.on('error', reject);
    child.on('close', (code) => {
      const wall = performance.now() - t0;
      if (code !== 0) return reject(new Error(`ptqscope ${args.slice(1).join(' ')} exited ${code}: ${stderr}`));
      const doc = JSON.parse(fs.readFileSync(json, 'utf8'));
      fs.rmSync(path.dirname(json), { recursive: true, force: true });
      const heaps = [...stderr.matchAll(/wasm heap (\d+) bytes/g)].map((m) => Number(m[1]));
      resolve({ wall, sweep: doc.timings_ms?.sensitivity, items: doc.sensitivity_order.activation.length, heaps });
    });
  });
}

// The page: model and folder opened on its own inputs, the activation sweep run from the analyses
// panel; wall time from Run to "done", the heaps the header reports. The pool has
// navigator.hardwareConcurrency - 1 workers (at most 4): the page is told of WORKERS + 1 cores.
async function openPage() {
  if (!fs.existsSync(PAGE)) throw new Error(`${PAGE} is missing: build the web app first (scripts/build.sh web)`);
  const context = await chromium.launchPersistentContext(fs.mkdtempSync(path.join(os.tmpdir(), 'ptq-bench-seed-')), {
    executablePath: '/usr/bin/chromium', headless: true, args: CHROMIUM_ARGS, viewport: { width: 1400, height: 900 },
  });
  await context.addInitScript(`Object.defineProperty(navigator, 'hardwareConcurrency', { get: () => ${WORKERS + 1} })`);
  return context;
}

async function runPage(context, model, data, samples) {
  const page = await context.newPage();
  try {
    await page.goto(pathToFileURL(PAGE).href);
    await page.waitForSelector('body[data-ready="true"]');
    await page.setInputFiles('#open-model', model);
    await page.waitForSelector('#graph[data-state="ready"]', { timeout: 600_000 });
    await page.setInputFiles('#open-data-folder', data);
    await page.waitForFunction((n) => new RegExp(`${n} calibration samples`).test(document.querySelector('#model-info').textContent), samples, { timeout: 600_000 });
    await openPanel(page, 'analyses');
    const form = page.locator('form.ptq-analysis-form[data-analysis="sensitivity"]');
    await form.locator('select[name="node_type"]').selectOption('activation');
    await form.locator('input[name="data_num"]').fill(String(samples));
    const t0 = performance.now();
    await page.click('.ptq-run');
    await page.waitForFunction(() => /: (done|failed|cancelled)/.test(document.querySelector('.ptq-progress-text').textContent), null, { timeout: SWEEP_TIMEOUT, polling: 500 });
    const wall = performance.now() - t0;
    const status = await page.textContent('.ptq-progress-text');
    if (!/: done in /.test(status)) throw new Error(`the page's sweep did not finish: ${status}; ${await page.textContent('#error-banner')}`);
    await page.waitForFunction(() => document.querySelector('#model-info').dataset.heapAnalysis);
    const header = await page.textContent('#model-info');
    const heap = Number(await page.getAttribute('#model-info', 'data-heap-analysis'));
    const workers = Number(/per analysis worker \((\d+)\)/.exec(header)?.[1]);
    const items = await page.$$eval('.ptq-analysis-output table.sensitivity-table tbody tr', (rows) => rows.length);
    return { wall, items, heaps: [heap], workers };
  } finally {
    await page.close();
  }
}

async function main() {
  const model = calibratedModel(MODEL);
  const ptq = await loadPtqModule();
  const session = new ptq.Session();
  session.loadModel(fs.readFileSync(model));
  const graph = JSON.parse(session.graphJson());
  session.delete();
  const flops = graphFlops(graph);
  const calibrations = graph.nodes.filter((n) => n.op_type === 'HzCalibration').length;
  console.error(`${MODEL}: ${graph.nodes.length} nodes, ${calibrations} calibration nodes, ${(flops / 1e9).toFixed(2)} GFLOP per forward pass`);
  const forward = await ortForward();
  // Chromium is started for the first page run (dist/ may still be building while the CLI runs).
  let context = null;
  const rows = [];
  try {
    for (const samples of SAMPLES) {
      const data = sampleFolder(samples);
      for (const engine of ENGINES) {
        const before = await forward();
        if (engine === 'page') context ??= await openPage();
        const r = engine === 'cli' ? await runCli(model, data, samples) : await runPage(context, model, data, samples);
        const after = await forward();
        const row = { engine, samples, ...r, ortMs: median([...before, ...after]), load: os.loadavg()[0] };
        row.naive = row.items * samples * row.ortMs;
        rows.push(row);
        writeTable(rows, { calibrations, flops });
        console.error(`${engine} ${samples} samples: ${row.items} items, wall ${(row.wall / 1000).toFixed(1)} s, heaps ${row.heaps.map(mb).join(' / ')} MB, `
          + `ORT-web forward ${row.ortMs.toFixed(1)} ms (before ${before.map(ms).join(', ')}; after ${after.map(ms).join(', ')}), naive ${(row.naive / 1000).toFixed(0)} s, load ${row.load.toFixed(1)}`);
      }
    }
  } finally {
    await context?.close();
  }
}

const mb = (bytes) => (bytes / 2 ** 20).toFixed(0);
const ms = (t) => t.toFixed(0);
const sec = (t) => (t / 1000).toFixed(1);

// The table of the rows so far, written after every run: a long run stopped half-way keeps the
// rows it measured.
function writeTable(rows, { calibrations, flops }) {
  const lines = [
    '| engine | samples | items | wall time (s) | sweep time summed over the workers (s, CLI `timings_ms`) | peak wasm heap per worker (MB) | ORT-web forward (ms) | naive: items × samples × forward (s) | naive / wall | load average (1 min) at the end |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...rows.map((r) => `| ${r.engine === 'cli' ? `CLI, \`--workers ${WORKERS}\`` : `page, ${r.workers} workers`} | ${r.samples} | ${r.items} | ${sec(r.wall)} | ${r.sweep ? sec(r.sweep) : '–'} | `
      + `${r.heaps.map(mb).join(' / ')} | ${r.ortMs.toFixed(1)} | ${sec(r.naive)} | ${(r.naive / r.wall).toFixed(2)} | ${r.load.toFixed(1)} |`),
  ];
  const header = `Activation sweep of ${MODEL} (${calibrations} calibration nodes, ${(flops / 1e9).toFixed(2)} GFLOP per forward pass counted from the graph's shapes), `
    + `metric cosine-similarity, all samples of the folder (\`-d N\`); the page's heap is the largest of its workers'; ORT-web forward: median of ${ORT_RUNS} runs before and ${ORT_RUNS} after each sweep, `
    + `in the script's process; ${machine()}`;
  report('bench-seed', header, lines);
}

runMain(main);
