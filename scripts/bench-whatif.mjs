#!/usr/bin/env node
// What-if toggles (the page's loop, docs/config-schema.md): the time of ONE toggle, i.e. one
// `what_if` request whose configuration differs from the previous request's in one node, answered by
// a worker of the pool the CLI and the page use (worker_threads here, Web Workers in the page) and
// timed from the caller (request + JSON round trip). The core derives each run from the previous
// configuration's cached run, so a toggle re-runs only the cone of the changed node: early nodes
// (large cones) cost the most, late ones little. The toggles walk the normal nodes at evenly spaced
// positions, each switched to int16 on top of the previous toggles. Alternating with them: one float
// forward pass of onnxruntime-web (wasm, one thread) in this thread, the reference of the ratio.
// Prints the table; `--write-docs` rewrites it in docs/benchmarks.md. Not a test.
// Usage: node scripts/bench-whatif.mjs [--models resnet18,yolov8n_like] [--toggles N] [--write-docs]
import fs from 'node:fs';
import path from 'node:path';
import { readCalibrationFolder } from '../web/cli/lib/files.mjs';
import { decodeNpy } from '../web/cli/lib/npy.mjs';
import { REPO_ROOT, wasmModulePath } from '../web/cli/lib/wasm.mjs';
import { createPool } from '../web/pipeline/pool.mjs';
import { spawnNodeWorker } from '../web/pipeline/node_worker.mjs';
import { machine, median, option, report, runMain } from './bench-common.mjs';

const models = option('models', 'resnet18,yolov8n_like').split(',');
const toggles = Number(option('toggles', 12));
const fixtures = path.join(REPO_ROOT, '.cache/fixtures');

function lastSample(dataDir) {
  return fs.readdirSync(dataDir).sort().map((name) => {
    const file = path.join(dataDir, name, fs.readdirSync(path.join(dataDir, name)).sort().at(-1));
    return { name, ...decodeNpy(fs.readFileSync(file)) };
  });
}

async function main() {
  const ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = 1;
  ort.env.logLevel = 'error';
  const rows = [];
  for (const name of models) {
    const modelFile = path.join(fixtures, 'calibrated', `${name}_calibrated_model.onnx`);
    const dataDir = path.join(fixtures, 'float', `${name}_data`);
    if (!fs.existsSync(modelFile)) throw new Error(`${modelFile} is missing: run /usr/bin/python3 scripts/fixtures/make_fixtures.py`);
    const pool = createPool({ size: 1, spawn: () => spawnNodeWorker(wasmModulePath()) });
    await pool.load({ model: fs.readFileSync(modelFile), files: readCalibrationFolder(dataDir), modelName: name, dataName: dataDir });
    const ortSession = await ort.InferenceSession.create(fs.readFileSync(path.join(fixtures, 'float', `${name}.onnx`)), { executionProviders: ['wasm'] });
    const feeds = Object.fromEntries(lastSample(dataDir).map((s) => [s.name, new ort.Tensor('float32', s.data, s.dims)]));
    const ortForward = () => ortSession.run(feeds);
    const whatIf = async (intents) => JSON.parse((await pool.request({ type: 'analyze', request: {
      analysis: 'what_if', config: { schema: 'ptqscope.config', version: 1, intents } } })).json);

    // As calibrated: the float and quantized keep-all runs land in the worker's run cache.
    const first = await whatIf([]);
    const nodes = first.what_if.order;
    for (let i = 0; i < 8; i++) await ortForward();  // onnxruntime-web's tier-up
    // Warm-up toggles (V8 tiers the wasm up), then back to the calibrated state.
    for (const n of nodes.slice(-3)) await whatIf([{ node: n, action: 'int16' }]);
    await whatIf([]);

    const picked = Array.from({ length: Math.min(toggles, nodes.length) }, (_, k) => nodes[Math.floor((k * nodes.length) / Math.min(toggles, nodes.length))]);
    const intents = [];
    const measured = [];
    for (const node of picked) {
      const t0 = performance.now();
      await ortForward();
      const ortMs = performance.now() - t0;
      intents.push({ node, action: 'int16' });
      const t1 = performance.now();
      const doc = await whatIf([...intents]);
      const ms = performance.now() - t1;
      measured.push({ node, ms, ortMs, executed: doc.what_if.executed_nodes, of: doc.what_if.graph_nodes });
      console.error(`${name} toggle ${node}: ${ms.toFixed(1)} ms (${doc.what_if.executed_nodes}/${doc.what_if.graph_nodes} nodes), ORT-web forward ${ortMs.toFixed(1)} ms`);
    }
    rows.push({ name, nodes: nodes.length, measured });
    await ortSession.release?.();
    pool.close();
  }
  const ms = (r) => r.measured.map((m) => m.ms);
  const lines = [
    '| model | toggles | one toggle, median (ms) | slowest toggle (ms) | nodes re-run per toggle (median / range / graph) | ORT-web float forward (ms) | median toggle / ORT-web forward |',
    '|---|---|---|---|---|---|---|',
    ...rows.map((r) => {
      const ex = r.measured.map((m) => m.executed);
      const ort = median(r.measured.map((m) => m.ortMs));
      return `| ${r.name} | ${r.measured.length} | ${median(ms(r)).toFixed(1)} | ${Math.max(...ms(r)).toFixed(1)} | `
        + `${median(ex)} / ${Math.min(...ex)}–${Math.max(...ex)} / ${r.measured[0].of} | ${ort.toFixed(1)} | ${(median(ms(r)) / ort).toFixed(2)} |`;
    }),
  ];
  const header = `One what-if toggle (a node switched to int16 on top of the previous ones, nodes evenly spaced along the graph), one sample, `
    + `one worker (worker_threads), timed from the caller; each toggle follows one onnxruntime-web float forward pass (wasm, one thread) in the calling thread; ${machine()}`;
  report('bench-whatif', header, lines);
}

runMain(main);
