#!/usr/bin/env node
// The race with the original tool (docs/benchmarks.md): a full sensitivity sweep at the original's own
// scale, ptqscope against the original's method on native onnxruntime, all measured in ONE run per
// model and sample count, the engines in rotating order.
//  * ORT method: what horizon_nn's NodeSensitivity does, on onnxruntime-node: the float model's outputs
//    on every sample, then for every item a model with only that item's calibration nodes on (the
//    fixture's Q/DQ twin with only the item's QuantizeLinear -> DequantizeLinear pairs kept,
//    tests/js/tie_origin.mjs withQdqPairsKept), a new session, every sample (batch 1, its default), and
//    the metric against the float outputs. The item models are prepared outside the timed part (the
//    original rewrites and serialises each), so its time is a lower bound. Sessions with as many
//    intra-op threads as the machine has cores, graph optimisations at onnxruntime's default.
//  * CLI: `ptqscope get-sensitivity-of-nodes MODEL DATA -n TYPE -d N --workers W` as a process (wall
//    time, model and data loading included), on the native engine and on the wasm engine.
//  * pool: the page's worker pool (web/pipeline/pool.mjs) on Node worker_threads running the wasm
//    module, the page's engine: workers started, model and data loaded, sweep run (wall time).
//  * page: the same in Chromium (dist/ptqscope.html, scripts/bench-page.mjs), from Run to done.
// W = the machine's cores (os.availableParallelism) for every engine. Agreement: the largest
// difference of an item's cosine similarity from the ORT method's, per engine (the float budget
// itself is checked by the tests). The load average is recorded beside every run.
// Samples: .cache/bench/race/<model>_<N>/ (scripts/bench-samples.mjs), generated once.
// Usage: node scripts/bench-race.mjs [--models resnet18,yolov8n_like,ppocr_det] [--samples 10,100]
//        [--node-types activation,node] [--engines ort,cli-native,cli-wasm,pool,page] [--workers N]
//        [--every K] [--block NAME] [--write-docs]   (--write-docs: the table between <!-- NAME:begin/end --> in docs/benchmarks.md)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as ort from 'onnxruntime-node';
import { decodeNpy } from '../web/cli/lib/npy.mjs';
import { listCalibrationFolder, readCalibrationFolder } from '../web/cli/lib/files.mjs';
import { loadEngine, wasmModulePath } from '../web/cli/lib/wasm.mjs';
import { createPool } from '../web/pipeline/pool.mjs';
import { spawnNodeWorker } from '../web/pipeline/node_worker.mjs';
import { runAnalysis } from '../web/pipeline/sweep.mjs';
import { FIXTURES, loadManifest } from '../tests/js/helpers.mjs';
import { withQdqPairsKept } from '../tests/js/tie_origin.mjs';
import { openPage, runPage } from './bench-page.mjs';
import { sampleFolder } from './bench-samples.mjs';
import { calibratedModel, machine, option, report, runCliJson, runMain } from './bench-common.mjs';

const MODELS = option('models', 'resnet18,yolov8n_like,ppocr_det').split(',');
const SAMPLES = option('samples', '10,100').split(',').map(Number);
const NODE_TYPES = option('node-types', 'activation,node').split(',');
const ENGINES = option('engines', 'ort,cli-native,cli-wasm,pool').split(',');
const WORKERS = Number(option('workers', os.availableParallelism?.() ?? os.cpus().length));
// Every K-th item of the sweep only (K > 1: a run that would take hours on a busy machine; the items
// keep their spread over the graph, and every engine runs the same ones, as interested_nodes).
const EVERY = Number(option('every', 1));
// The docs block --write-docs replaces: runs of different scope keep their own table.
const BLOCK = option('block', 'bench-race');

// The fixture's float calibration folder (the samples' source) and its Q/DQ twin.
function fixtureOf(name) {
  const entry = loadManifest().find((m) => m.name === `${name}_calibrated`);
  if (!entry?.qdq_model) throw new Error(`${name}_calibrated: no fixture with a Q/DQ twin (run scripts/fixtures/make_fixtures.py)`);
  return { model: calibratedModel(name), qdq: path.join(FIXTURES, entry.qdq_model), data: entry.data };
}

// The sweep's items and, per item, the outputs of its calibration nodes (the Q/DQ pairs kept for it):
// an activation item is one calibration node; a node item the calibration nodes on its inputs (§3.2).
async function sweepItems(modelBytes, nodeType) {
  const ptq = await loadEngine('wasm');
  const session = new ptq.Session();
  try {
    session.loadModel(modelBytes);
    const graph = JSON.parse(session.graphJson());
    const byName = new Map(graph.nodes.map((n) => [n.name, n]));
    const names = JSON.parse(session.listItems(JSON.stringify({ analysis: 'sensitivity', options: { node_type: nodeType } })));
    return names.filter((_, i) => i % EVERY === 0).map((name) => {
      const node = byName.get(name);
      const calibrations = node.calibration ? [name] : node.input_calibrations;
      return { name, outputs: new Set(calibrations.map((c) => byName.get(c).outputs[0])) };
    });
  } finally {
    session.delete();
  }
}

// §4 cosine similarity (float64 here) and §3.3's aggregation: per output the mean over samples, then
// the mean over outputs.
function cosine(a, b) {
  let ab = 0, aa = 0, bb = 0;
  for (let i = 0; i < a.length; i++) {
    ab += a[i] * b[i];
    aa += a[i] * a[i];
    bb += b[i] * b[i];
  }
  return ab / (Math.sqrt(aa) * Math.sqrt(bb));
}
function aggregate(perSample) {
  const outputs = perSample[0].length;
  let sum = 0, counted = 0;
  for (let o = 0; o < outputs; o++) {
    const values = perSample.map((s) => s[o]).filter((v) => !Number.isNaN(v));
    if (values.length) {
      sum += values.reduce((x, y) => x + y, 0) / values.length;
      counted++;
    }
  }
  return counted ? sum / counted : NaN;
}

// The original's method on onnxruntime-node; only sessions, runs and metrics are timed.
async function ortMethod(qdqBytes, items, feeds) {
  const options = { intraOpNumThreads: WORKERS, interOpNumThreads: 1, logSeverityLevel: 3 };
  let timed = 0;
  const outputsOf = async (bytes) => {
    const t0 = performance.now();
    const session = await ort.InferenceSession.create(bytes, options);
    const outputs = [];
    for (const feed of feeds) {
      const out = await session.run(feed);
      outputs.push(session.outputNames.map((n) => out[n].data));
    }
    await session.release();
    timed += performance.now() - t0;
    return outputs;
  };
  const float = await outputsOf(withQdqPairsKept(qdqBytes, new Set()));
  const metrics = {};
  for (const item of items) {
    const bytes = withQdqPairsKept(qdqBytes, item.outputs); // untimed: the original's model rewrite
    const variant = await outputsOf(bytes);
    const t0 = performance.now();
    metrics[item.name] = aggregate(variant.map((outs, k) => outs.map((y, o) => cosine(float[k][o], y))));
    timed += performance.now() - t0;
  }
  return { wall: timed, metrics };
}

function cosinesOf(doc, nodeType) {
  const table = doc.sensitivity[nodeType];
  return Object.fromEntries(Object.entries(table).map(([k, row]) => [k, Number(row['cosine-similarity'])]));
}

// `ptqscope get-sensitivity-of-nodes` on `engine` as a process: wall time, the metrics, the engine.
// interested_nodes of the items (all: none given).
const interested = (items) => (EVERY > 1 ? items.map((i) => i.name) : null);

async function runCli(engine, model, data, samples, nodeType, items) {
  const args = ['get-sensitivity-of-nodes', model, data, '-n', nodeType, '-d', String(samples), '--workers', String(WORKERS), '--quiet'];
  if (interested(items)) args.push('-i', `[${interested(items).map((n) => `'${n}'`).join(',')}]`);
  const { wall, doc } = await runCliJson(args, { PTQSCOPE_ENGINE: engine });
  return { wall, metrics: cosinesOf(doc, nodeType), engine: doc.engine };
}

// The page's pool on worker_threads with the wasm module: started, loaded and run, as one wall time.
async function runPool(modelBytes, data, samples, nodeType, items) {
  const t0 = performance.now();
  const pool = createPool({ size: WORKERS, spawn: () => spawnNodeWorker(wasmModulePath()) });
  try {
    await pool.load({ model: modelBytes, files: listCalibrationFolder(data) });
    const request = { analysis: 'sensitivity', options: { node_type: nodeType, data_num: samples, metrics: ['cosine-similarity'], ...(interested(items) ? { interested_nodes: interested(items) } : {}) } };
    const doc = await runAnalysis(pool, request);
    return { wall: performance.now() - t0, metrics: cosinesOf(doc, nodeType), engine: doc.engine };
  } finally {
    pool.close();
  }
}

const load = () => os.loadavg()[0].toFixed(1);
const sec = (ms) => (ms / 1000).toFixed(1);
const ENGINE_LABELS = { ort: 'ORT method (onnxruntime-node)', 'cli-native': 'ptqscope CLI, native', 'cli-wasm': 'ptqscope CLI, wasm', pool: 'page pool (worker_threads, wasm)', page: 'page (Chromium)' };

async function main() {
  const rows = [];
  let context = null;
  try {
    for (const name of MODELS) {
      const fixture = fixtureOf(name);
      const modelBytes = fs.readFileSync(fixture.model);
      const qdqBytes = fs.readFileSync(fixture.qdq);
      for (const samples of SAMPLES) {
        const data = sampleFolder(fixture.data, name, samples, 'race');
        const feeds = readCalibrationFolder(data).map((f) => {
          const { dtype, dims, data: values } = decodeNpy(f.bytes);
          return { [path.basename(path.dirname(f.path))]: new ort.Tensor(dtype, values, dims) };
        });
        for (const nodeType of NODE_TYPES) {
          const items = await sweepItems(modelBytes, nodeType);
          const results = {};
          // One run of each engine, the order rotating from one sweep to the next.
          const shift = rows.length % ENGINES.length;
          for (const engine of [...ENGINES.slice(shift), ...ENGINES.slice(0, shift)]) {
            const before = load();
            let r;
            if (engine === 'ort') r = await ortMethod(qdqBytes, items, feeds);
            else if (engine === 'cli-native') r = await runCli('native', fixture.model, data, samples, nodeType, items);
            else if (engine === 'cli-wasm') r = await runCli('wasm', fixture.model, data, samples, nodeType, items);
            else if (engine === 'pool') r = await runPool(modelBytes, data, samples, nodeType, items);
            else if (engine === 'page') {
              context ??= await openPage(WORKERS);
              r = await runPage(context, fixture.model, data, samples, nodeType, interested(items));
              if (r.items !== items.length) throw new Error(`the page swept ${r.items} items, not the ${items.length} asked`);
            } else throw new Error(`unknown engine ${engine}`);
            results[engine] = { ...r, load: `${before} → ${load()}` };
            console.error(`${name} ${nodeType} ${samples} samples, ${engine}: ${sec(r.wall)} s (load ${results[engine].load})`);
          }
          rows.push({ name, nodeType, samples, items: items.length, results });
          writeTable(rows);
        }
      }
    }
  } finally {
    await context?.close();
  }
}

// Largest |cosine - the ORT method's| over the items (NaN items skipped).
function agreement(r, ortMetrics) {
  if (!r.metrics || !ortMetrics) return '–';
  let worst = 0;
  for (const [item, v] of Object.entries(ortMetrics)) {
    const ours = r.metrics[item];
    if (ours === undefined) return 'items differ';
    if (!Number.isNaN(v) && !Number.isNaN(ours)) worst = Math.max(worst, Math.abs(ours - v));
  }
  return worst.toExponential(1);
}

function writeTable(rows) {
  const lines = [
    '| model | sweep | items | samples | engine | wall time (s) | ORT method / this (×) | max Δ cosine vs ORT method | load average (1 min) before → after |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  for (const row of rows) {
    const ortRun = row.results.ort;
    for (const [engine, r] of Object.entries(row.results)) {
      const engineLabel = ENGINE_LABELS[engine] + (r.engine ? ` (${r.engine.name}, ${r.engine.simd})` : '');
      const ratio = ortRun ? (ortRun.wall / r.wall).toFixed(2) : '–';
      lines.push(`| ${row.name} | ${row.nodeType} | ${row.items} | ${row.samples} | ${engineLabel} | ${sec(r.wall)} | ${ratio} | `
        + `${engine === 'ort' ? '–' : agreement(r, ortRun?.metrics)} | ${r.load} |`);
    }
  }
  const header = `${EVERY > 1 ? `Every ${EVERY}th item of full sensitivity sweeps (as interested_nodes)` : 'Full sensitivity sweeps'} (metric cosine-similarity, all samples of the folder), ${WORKERS} workers / onnxruntime intra-op threads `
    + `on ${os.availableParallelism?.() ?? os.cpus().length} cores; the engines of a row group run one after another in rotating order; ${machine()}`;
  report(BLOCK, header, lines);
}

runMain(main);
