#!/usr/bin/env node
// Float forward pass, one thread, measured in ONE run for: our wasm build (Node), our native build,
// onnxruntime-web 1.30 (wasm backend, 1 thread) and onnxruntime-node 1.30 (CPU EP, 1 thread).
// Prints the table and the ratios; `--write-docs` rewrites the table in docs/benchmarks.md.
// Not a test: speed targets are read from this table, never asserted in the suite.
// Usage: node scripts/bench-executor.mjs [--runs N] [--warmup N] [--models resnet18,mobilenet_v2,yolov8n_like]
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { decodeNpy } from '../web/cli/lib/npy.mjs';
import { loadPtqModule, REPO_ROOT } from '../web/cli/lib/wasm.mjs';
import { readCalibrationFolder } from '../web/cli/lib/files.mjs';
import { machine, median, option, report, runMain, timeAlternating, timeLoop } from './bench-common.mjs';

const runs = Number(option('runs', 20));
// V8 tiers wasm up from Liftoff to TurboFan after a while: generous warm-up for both wasm engines.
const warmup = Number(option('warmup', 8));
const models = option('models', 'resnet18,mobilenet_v2,yolov8n_like').split(',');
const fixtures = path.join(REPO_ROOT, '.cache/fixtures/float');
const nativeBench = path.join(REPO_ROOT, 'build/native-release/ptq_bench');

const time = (fn) => timeLoop(fn, { warmup, runs });

function firstSample(dataDir) {
  // One sub-folder per input; the lexicographically first file of each.
  const inputs = fs.readdirSync(dataDir).sort();
  return inputs.map((name) => {
    const file = path.join(dataDir, name, fs.readdirSync(path.join(dataDir, name)).sort()[0]);
    return { name, file, ...decodeNpy(fs.readFileSync(file)) };
  });
}

async function ortTime(ort, bytes, sample, options) {
  const session = await ort.InferenceSession.create(bytes, options);
  const feeds = {};
  for (const s of sample) feeds[s.name] = new ort.Tensor('float32', s.data, s.dims);
  const ms = await time(() => session.run(feeds));
  await session.release?.();
  return ms;
}

async function main() {
  const ortWeb = await import('onnxruntime-web');
  ortWeb.env.wasm.numThreads = 1;
  ortWeb.env.logLevel = 'error';
  const ortNode = await import('onnxruntime-node');
  const ptq = await loadPtqModule();
  const rows = [];
  for (const name of models) {
    const modelFile = path.join(fixtures, `${name}.onnx`);
    const dataDir = path.join(fixtures, `${name}_data`);
    if (!fs.existsSync(modelFile)) {
      console.error(`skip ${name}: ${modelFile} missing (run scripts/fixtures/make_fixtures.py)`);
      continue;
    }
    const bytes = fs.readFileSync(modelFile);
    const sample = firstSample(dataDir);

    // The two wasm engines in alternation (timeAlternating): their ratio is the goal.
    const session = new ptq.Session();
    session.loadModel(bytes);
    session.loadCalibrationData(readCalibrationFolder(dataDir).filter((f) => sample.some((s) => f.path === `${s.name}/${path.basename(s.file)}`)));
    const webSession = await ortWeb.InferenceSession.create(bytes, { executionProviders: ['wasm'] });
    const feeds = Object.fromEntries(sample.map((s) => [s.name, new ortWeb.Tensor('float32', s.data, s.dims)]));
    const engines = [() => session.run(0, 'off'), () => webSession.run(feeds)];
    await timeAlternating(engines, warmup);
    const [oursWasm, ortWebMs] = (await timeAlternating(engines, runs)).map(median);
    await webSession.release?.();
    session.delete();

    let oursNative = NaN;
    if (fs.existsSync(nativeBench)) {
      const out = execFileSync(nativeBench, [modelFile, ...sample.map((s) => s.file), '--warmup', String(warmup), '--runs', String(runs)]);
      oursNative = JSON.parse(out.toString()).median_ms;
    }
    const ortNodeMs = await ortTime(ortNode, bytes, sample, { intraOpNumThreads: 1, interOpNumThreads: 1 });
    rows.push({ name, oursWasm, ortWebMs, oursNative, ortNodeMs });
    console.error(`${name}: done`);
  }
  const f = (x) => (Number.isFinite(x) ? x.toFixed(1) : 'n/a');
  const r = (a, b) => (Number.isFinite(a) && Number.isFinite(b) ? (a / b).toFixed(2) : 'n/a');
  const lines = [
    '| model | ptqscope wasm (ms) | onnxruntime-web wasm (ms) | wasm ratio (ours / ORT-web) | ptqscope native (ms) | onnxruntime-node (ms) | native ratio (ours / ORT-node) |',
    '|---|---|---|---|---|---|---|',
    ...rows.map((x) => `| ${x.name} | ${f(x.oursWasm)} | ${f(x.ortWebMs)} | ${r(x.oursWasm, x.ortWebMs)} | ${f(x.oursNative)} | ${f(x.ortNodeMs)} | ${r(x.oursNative, x.ortNodeMs)} |`),
  ];
  report('bench-executor', `Float forward pass, batch 1, one thread, median of ${runs} runs after ${warmup} warm-ups (the two wasm engines in alternation); ${machine()}`, lines);
}

runMain(main);
