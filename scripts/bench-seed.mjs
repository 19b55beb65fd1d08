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
import fs from 'node:fs';
import os from 'node:os';
import { decodeNpy } from '../web/cli/lib/npy.mjs';
import { loadPtqModule } from '../web/cli/lib/wasm.mjs';
import { readCalibrationFolder } from '../web/cli/lib/files.mjs';
import { openPage, runPage } from './bench-page.mjs';
import { sampleFolder } from './bench-samples.mjs';
import { calibratedModel, floatFixture, graphFlops, machine, median, option, ortWebOneThread, report, runCliJson, runMain, timeAlternating } from './bench-common.mjs';

const MODEL = option('model', 'yolov8n_like');
const SAMPLES = option('samples', '10,30,100').split(',').map(Number);
const ENGINES = option('engines', 'cli,page').split(',');
const WORKERS = Number(option('workers', 2));
const ORT_RUNS = Number(option('ort-runs', 5));

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
async function runCli(model, data, samples) {
  const args = ['get-sensitivity-of-nodes', model, data, '-n', 'activation', '-d', String(samples), '--workers', String(WORKERS), '--memory', '--quiet'];
  // The wasm engine (its heap is what this table measures) unless PTQSCOPE_ENGINE says otherwise.
  const { wall, doc, stderr } = await runCliJson(args, { PTQSCOPE_ENGINE: process.env.PTQSCOPE_ENGINE || 'wasm' });
  const heaps = [...stderr.matchAll(/wasm heap (\d+) bytes/g)].map((m) => Number(m[1]));
  return { wall, sweep: doc.timings_ms?.sensitivity, items: doc.sensitivity_order.activation.length, heaps };
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
      const data = sampleFolder(floatFixture(`${MODEL}_data`), MODEL, samples, 'seed');
      for (const engine of ENGINES) {
        const before = await forward();
        if (engine === 'page') context ??= await openPage(WORKERS);
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
