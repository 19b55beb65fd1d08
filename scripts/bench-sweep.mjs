#!/usr/bin/env node
// Sensitivity sweeps (issue 3 item 7), measured in ONE run per model: our incremental sweep
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
//        [--max-items N] [--runs N] [--sweep-runs N] [--write-docs]
import fs from 'node:fs';
import path from 'node:path';
import { readCalibrationFolder } from '../web/cli/lib/files.mjs';
import { machine, median, option, report, runMain, timeLoop } from './bench-common.mjs';
import { decodeNpy } from '../web/cli/lib/npy.mjs';
import { loadPtqModule, REPO_ROOT } from '../web/cli/lib/wasm.mjs';

const models = option('models', 'resnet18,yolov8n_like').split(',');
const nodeTypes = option('node-types', 'activation,node').split(',');
const maxItems = Number(option('max-items', Infinity));  // smoke runs: the first N items only
const runs = Number(option('runs', 5));
const sweepRuns = Number(option('sweep-runs', 3));  // each sweep is timed this many times (median)
const fixtures = path.join(REPO_ROOT, '.cache/fixtures/float');

// Warm-ups: V8 first runs wasm on its baseline compiler and tiers up in the background; a few runs
// are needed before onnxruntime-web's (large) module is at full speed.
const time = (fn) => timeLoop(fn, { warmup: 8, runs });

// The calibrated fixture (scripts/fixtures/calibrated_models.py: ptq_calibrate, max calibration).
function calibrated(name) {
  const model = path.join(REPO_ROOT, '.cache/fixtures/calibrated', `${name}_calibrated_model.onnx`);
  if (!fs.existsSync(model)) throw new Error(`${model} is missing: run /usr/bin/python3 scripts/fixtures/make_fixtures.py`);
  return model;
}

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

// The calibration nodes switched ON for each item (reference §3.2), found as the relations do:
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

async function main() {
  const ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = 1;
  ort.env.logLevel = 'error';
  const ptq = await loadPtqModule();
  const rows = [];
  for (const name of models) {
    const dataDir = path.join(fixtures, `${name}_data`);
    const modelFile = calibrated(name);
    const session = new ptq.Session();
    session.loadModel(fs.readFileSync(modelFile));
    const files = readCalibrationFolder(dataDir);
    const { sampleCount } = session.loadCalibrationData(files);
    const graph = JSON.parse(session.graphJson());
    const oursForward = await time(() => session.run(sampleCount - 1, 'off'));
    const profiles = Array.from({ length: runs }, () => session.profile(sampleCount - 1, 'off'));
    const nodeMs = new Map(graph.nodes.map((n) => [n.name, median(profiles.map((p) => p[n.name] ?? 0))]));

    const floatBytes = fs.readFileSync(path.join(fixtures, `${name}.onnx`));
    const ortSession = await ort.InferenceSession.create(floatBytes, { executionProviders: ['wasm'] });
    const feeds = Object.fromEntries(lastSample(dataDir).map((s) => [s.name, new ort.Tensor('float32', s.data, s.dims)]));
    const ortForward = await time(() => ortSession.run(feeds));
    await ortSession.release?.();

    for (const nodeType of nodeTypes) {
      const request = { analysis: 'sensitivity', options: { node_type: nodeType, metrics: ['cosine-similarity'] } };
      const all = JSON.parse(session.listItems(JSON.stringify(request)));
      const count = Math.min(all.length, maxItems);
      const sweepMs = [];
      for (let r = 0; r < sweepRuns; ++r) {
        const t0 = performance.now();
        session.analyze(JSON.stringify({ ...request, items: { begin: 0, end: count } }));
        sweepMs.push(performance.now() - t0);
      }
      const ours = median(sweepMs);
      const floor = floorMs(graph, nodeType, all.slice(0, count), nodeMs);
      rows.push({ name, nodeType, count, ours, naive: count * ortForward, floor, oursForward, ortForward });
      console.error(`${name} ${nodeType}: ${count} items, ${ours.toFixed(0)} ms`);
    }
    session.delete();
  }
  const f = (x) => x.toFixed(0);
  const lines = [
    '| model | sweep | items | ptqscope sweep (ms) | naive: items × ORT-web forward (ms) | speed-up vs naive | floor: Σ cone time of a forward pass (ms) | ours / floor |',
    '|---|---|---|---|---|---|---|---|',
    ...rows.map((r) => `| ${r.name} | ${r.nodeType} | ${r.count} | ${f(r.ours)} | ${f(r.naive)} (${r.ortForward.toFixed(1)} per item) | `
      + `${(r.naive / r.ours).toFixed(2)}× | ${f(r.floor)} (forward ${r.oursForward.toFixed(1)}) | ${(r.ours / r.floor).toFixed(2)} |`),
  ];
  const header = `Sensitivity sweep (metric cosine-similarity, data_num 1), wasm, one thread, one worker${Number.isFinite(maxItems) ? `, first ${maxItems} items only (smoke run)` : ''}; `
    + `sweeps: median of ${sweepRuns} runs; forward passes: median of ${runs} runs; ${machine()}`;
  report('bench-sweep', header, lines);
}

runMain(main);
