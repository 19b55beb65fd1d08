#!/usr/bin/env node
// Sensitivity sweeps (goals in docs/benchmarks.md), measured in ONE run per model: our incremental sweep
// (Session.analyze, wasm, one thread) against
//  * the naive method: one full forward pass per item with onnxruntime-web (wasm backend, 1 thread);
//    counted as items x the median float forward pass, i.e. without the per-item model rewrite and
//    session creation the original pays, so the naive time is a lower bound;
//  * the cost floor: for every item, the time of its downstream cone (the nodes its calibration
//    nodes reach) in a plain forward pass, each node at its own measured time (Session.profile),
//    summed: what a perfect incremental sweep would cost with this executor. (Counting FLOPs at the
//    average rate stopped being a floor once kernels differ in speed: Winograd 3x3 layers run at
//    several times the rate of the im2col ones, and cones favour the late layers.)
// Prints the table; `--write-docs` rewrites the table in docs/benchmarks.md. Not a test.
// Usage: node scripts/bench-sweep.mjs [--models resnet18,yolov8n_like] [--node-types activation,node]
//        [--max-items N] [--pairs N] [--sweep-runs N] [--workers N] [--write-docs]
import fs from 'node:fs';
import path from 'node:path';
import { readCalibrationFolder } from '../web/cli/lib/files.mjs';
import { calibratedModel, floatFixture, machine, median, option, ortWebOneThread, report, runMain, timeAlternating } from './bench-common.mjs';
import { decodeNpy } from '../web/cli/lib/npy.mjs';
import { loadPtqModule, wasmModulePath } from '../web/cli/lib/wasm.mjs';
import { createPool } from '../web/pipeline/pool.mjs';
import { spawnNodeWorker } from '../web/pipeline/node_worker.mjs';
import { runAnalysis } from '../web/pipeline/sweep.mjs';

const models = option('models', 'resnet18,yolov8n_like').split(',');
const nodeTypes = option('node-types', 'activation,node').split(',');
const maxItems = Number(option('max-items', Infinity));  // smoke runs: the first N items only
const pairs = Number(option('pairs', 3));  // forward passes of each engine before and after every sweep run
const sweepRuns = Number(option('sweep-runs', 5));  // each sweep is timed this many times (median)
// The same sweep split across this many workers (the CLI's and the page's pool), timed right after
// the one-worker sweep; full sweeps only. 1: not measured.
const workers = Number(option('workers', 2));

// Nodes reachable from `start` node names (inclusive), by tensor consumers.
function downstream(graph, byName, start) {
  const seen = new Set();
  const stack = [...start];
  while (stack.length) {
    const n = stack.pop();
    if (seen.has(n)) continue;
    seen.add(n);
    for (const o of byName.get(n).outputs) for (const c of graph.values[o]?.consumers ?? []) stack.push(c);
  }
  return seen;
}

// The calibration nodes switched ON for each item (§3.2), found as the relations do:
// a node's inputs, looking through skippable producers.
const SKIPPABLE = new Set(['MaxPool', 'GlobalMaxPool', 'Relu', 'Reshape', 'Transpose', 'ReduceMax', 'Split', 'Slice', 'Gather', 'ScatterND']);
function inputCalibrations(graph, byName, node) {
  const found = new Set();
  const visit = (tensor, depth) => {
    const p = graph.values[tensor]?.producer;
    if (!p || depth > 64) return;
    const pn = byName.get(p);
    if (pn.calibration) found.add(p);
    else if (SKIPPABLE.has(pn.op_type)) for (const i of pn.inputs) if (i) visit(i, depth + 1);
  };
  for (const i of node.inputs) if (i) visit(i, 0);
  return [...found];
}

// The floor: for every item, the time its downstream cone takes in a plain forward pass (each
// node's own measured time, so fast Winograd layers and slow im2col layers count at their real cost).
function floorMs(graph, nodeType, items, nodeMs) {
  const byName = new Map(graph.nodes.map((n) => [n.name, n]));
  let sum = 0;
  for (const item of items) {
    const start = nodeType === 'node' ? inputCalibrations(graph, byName, byName.get(item)) : [item];
    for (const n of downstream(graph, byName, start)) sum += nodeMs.get(n) ?? 0;
  }
  return sum;
}

// --- measurement -----------------------------------------------------------------------------
function lastSample(dataDir) {
  return fs.readdirSync(dataDir).sort().map((name) => {
    const file = path.join(dataDir, name, fs.readdirSync(path.join(dataDir, name)).sort().at(-1));
    return { name, ...decodeNpy(fs.readFileSync(file)) };
  });
}

// Nothing is compared across time (see timeAlternating): every sweep run is sandwiched between
// alternating forward passes of both engines and a profile of ours (averaged for the floor), and each
// ratio is formed from the measurements around that one run. The table shows the median ratio over
// the runs and their range.
async function around(ours, theirs, profile, pairs) {
  const [o, t] = await timeAlternating([ours, theirs], pairs);
  return { ours: o, theirs: t, profiles: [profile()] };
}

async function main() {
  const ort = await ortWebOneThread();
  const ptq = await loadPtqModule();
  const rows = [];
  for (const name of models) {
    const dataDir = floatFixture(`${name}_data`);
    const session = new ptq.Session();
    const model = fs.readFileSync(calibratedModel(name));
    const files = readCalibrationFolder(dataDir);
    session.loadModel(model);
    const { sampleCount } = session.loadCalibrationData(files);
    const graph = JSON.parse(session.graphJson());
    const pool = workers > 1 && !Number.isFinite(maxItems)
      ? createPool({ size: workers, spawn: () => spawnNodeWorker(wasmModulePath()) }) : null;
    await pool?.load({ model, files, modelName: name, dataName: dataDir });
    const floatBytes = fs.readFileSync(floatFixture(`${name}.onnx`));
    const ortSession = await ort.InferenceSession.create(floatBytes, { executionProviders: ['wasm'] });
    const feeds = Object.fromEntries(lastSample(dataDir).map((s) => [s.name, new ort.Tensor('float32', s.data, s.dims)]));
    const oursForward = () => session.run(sampleCount - 1, 'off');
    const ortForward = () => ortSession.run(feeds);
    const profile = () => session.profile(sampleCount - 1, 'off');
    // Warm-ups: V8 first runs wasm on its baseline compiler and tiers up in the background; a few
    // runs are needed before onnxruntime-web's (large) module is at full speed.
    await around(oursForward, ortForward, profile, 8);
    // The workers' own warm-up: one untimed split sweep.
    if (pool) await runAnalysis(pool, { analysis: 'sensitivity', options: { node_type: nodeTypes[0], metrics: ['cosine-similarity'] } });

    for (const nodeType of nodeTypes) {
      const request = { analysis: 'sensitivity', options: { node_type: nodeType, metrics: ['cosine-similarity'] } };
      const all = JSON.parse(session.listItems(JSON.stringify(request)));
      const count = Math.min(all.length, maxItems);
      const body = JSON.stringify({ ...request, items: { begin: 0, end: count } });
      const measured = [];
      for (let r = 0; r < sweepRuns; ++r) {
        const before = await around(oursForward, ortForward, profile, pairs);
        const t0 = performance.now();
        session.analyze(body);
        const sweep = performance.now() - t0;
        let pooled = NaN;
        if (pool) {
          const t1 = performance.now();
          await runAnalysis(pool, request);
          pooled = performance.now() - t1;
        }
        const after = await around(oursForward, ortForward, profile, pairs);
        const ortMs = median([...before.theirs, ...after.theirs]);
        const oursMs = median([...before.ours, ...after.ours]);
        const profiles = [...before.profiles, ...after.profiles];
        const nodeMs = new Map(graph.nodes.map((n) => [n.name, profiles.reduce((sum, p) => sum + (p[n.name] ?? 0), 0) / profiles.length]));
        const floor = floorMs(graph, nodeType, all.slice(0, count), nodeMs);
        measured.push({ sweep, pooled, ortMs, oursMs, floor, speedup: (count * ortMs) / sweep, overFloor: sweep / floor });
        console.error(`${name} ${nodeType} run ${r + 1}: ${count} items, sweep ${sweep.toFixed(0)} ms, `
          + `forward ours ${oursMs.toFixed(1)} / ORT-web ${ortMs.toFixed(1)} ms, ${(count * ortMs / sweep).toFixed(2)}x naive, ${(sweep / floor).toFixed(2)} of floor`
          + `${pool ? `, ${workers} workers ${pooled.toFixed(0)} ms` : ''}`);
      }
      rows.push({ name, nodeType, count, measured });
    }
    await ortSession.release?.();
    pool?.close();
    session.delete();
  }
  const f = (x) => x.toFixed(0);
  const range = (xs, digits) => `${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)}`;
  const mid = (r, key) => median(r.measured.map((m) => m[key]));
  // Time with the pool, and how many times faster than one worker (median of the per-run ratios).
  const pooledCell = (r) => (Number.isFinite(mid(r, 'pooled'))
    ? `${f(mid(r, 'pooled'))} (${median(r.measured.map((m) => m.sweep / m.pooled)).toFixed(2)}× one worker)` : 'not measured');
  const lines = [
    `| model | sweep | items | ptqscope sweep (ms) | ORT-web forward (ms) | naive: items × ORT-web forward (ms) | speed-up vs naive (range) | floor: Σ cone time (ms) | ours / floor (range) | ptqscope, ${workers} workers (ms) |`,
    '|---|---|---|---|---|---|---|---|---|---|',
    ...rows.map((r) => {
      const speedups = r.measured.map((m) => m.speedup), overs = r.measured.map((m) => m.overFloor);
      return `| ${r.name} | ${r.nodeType} | ${r.count} | ${f(mid(r, 'sweep'))} | ${mid(r, 'ortMs').toFixed(1)} (ours ${mid(r, 'oursMs').toFixed(1)}) | `
        + `${f(r.count * mid(r, 'ortMs'))} | ${median(speedups).toFixed(2)}× (${range(speedups, 2)}) | ${f(mid(r, 'floor'))} | `
        + `${median(overs).toFixed(2)} (${range(overs, 2)}) | ${pooledCell(r)} |`;
    }),
  ];
  const header = `Sensitivity sweep (metric cosine-similarity, data_num 1), wasm, one thread, one worker${Number.isFinite(maxItems) ? `, first ${maxItems} items only (smoke run)` : ''}`
    + `${workers > 1 && !Number.isFinite(maxItems) ? ` (last column: the same sweep split across ${workers} workers, timed right after it)` : ''}; `
    + `${sweepRuns} sweep runs, each between ${pairs} alternating forward passes of both engines before and after it (ratios formed per run, median shown); ${machine()}`;
  report('bench-sweep', header, lines);
}

runMain(main);
