#!/usr/bin/env node
// Float forward pass, one thread, measured in ONE run for: our wasm build (Node), our native build,
// onnxruntime-web 1.30 (wasm backend, 1 thread) and onnxruntime-node 1.30 (CPU EP, 1 thread).
// Prints the table and the ratios; `--write-docs` rewrites the table in docs/benchmarks.md.
// Our engines run in the convolution modes of --modes (setConvolutionMode / ptq_bench --conv; default
// 'accurate,fast': the default mode, im2col + GEMM, and Winograd F(2x2, 3x3)), the wasm ones in
// alternation with ORT-web.
// Not a test: speed targets are read from this table, never asserted in the suite.
// --compare-wasm FILE adds another build of the wasm module (e.g. one saved from before a kernel
// change) as a further engine in the alternation, run in its default mode: before/after in one run.
// Usage: node scripts/bench-executor.mjs [--runs N] [--warmup N] [--models resnet18,mobilenet_v2,yolov8n_like]
//        [--modes accurate,fast,fastest] [--compare-wasm FILE]
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { execFileSync } from 'node:child_process';
import { decodeNpy } from '../web/cli/lib/npy.mjs';
import { loadPtqModule, REPO_ROOT } from '../web/cli/lib/wasm.mjs';
import { readCalibrationFolder } from '../web/cli/lib/files.mjs';
import { machine, median, option, report, ortWebOneThread, runMain, timeAlternating, timeLoop } from './bench-common.mjs';

const runs = Number(option('runs', 20));
// V8 tiers wasm up from Liftoff to TurboFan after a while: generous warm-up for both wasm engines.
const warmup = Number(option('warmup', 8));
const models = option('models', 'resnet18,mobilenet_v2,yolov8n_like').split(',');
const fixtures = path.join(REPO_ROOT, '.cache/fixtures/float');
const nativeBench = path.join(REPO_ROOT, 'build/native-release/ptq_bench');

const time = (fn) => timeLoop(fn, { warmup, runs });
// Our convolution modes (describe().convolution_modes), the first is the ratio's reference.
const CONV_MODES = option('modes', 'accurate,fast').split(',');

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
  const ortWeb = await ortWebOneThread();
  const ortNode = await import('onnxruntime-node');
  const ptq = await loadPtqModule();
  const compareFile = option('compare-wasm', null);
  const other = compareFile ? await (await import(pathToFileURL(path.resolve(compareFile)).href)).default() : null;
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

    // The wasm engines in alternation (timeAlternating): the ratio to ORT-web is the goal. One
    // session per convolution mode (each keeps its own packed weights); the mode is process-wide,
    // so it is set before each run.
    const files = readCalibrationFolder(dataDir).filter((f) => sample.some((s) => f.path === `${s.name}/${path.basename(s.file)}`));
    const sessions = CONV_MODES.map(() => {
      const s = new ptq.Session();
      s.loadModel(bytes);
      s.loadCalibrationData(files);
      return s;
    });
    const webSession = await ortWeb.InferenceSession.create(bytes, { executionProviders: ['wasm'] });
    const feeds = Object.fromEntries(sample.map((s) => [s.name, new ortWeb.Tensor('float32', s.data, s.dims)]));
    const otherSession = other && new other.Session();
    if (otherSession) {
      otherSession.loadModel(bytes);
      otherSession.loadCalibrationData(files);
    }
    const engines = [
      ...CONV_MODES.map((mode, i) => () => {
        ptq.setConvolutionMode(mode);
        return sessions[i].run(0, 'off');
      }),
      ...(otherSession ? [() => otherSession.run(0, 'off')] : []),
      () => webSession.run(feeds),
    ];
    await timeAlternating(engines, warmup);
    const times = (await timeAlternating(engines, runs)).map(median);
    ptq.setConvolutionMode(CONV_MODES[0]);
    await webSession.release?.();
    sessions.forEach((s) => s.delete());
    otherSession?.delete();

    const native = (mode) => {
      if (!fs.existsSync(nativeBench)) return NaN;
      const out = execFileSync(nativeBench, [modelFile, ...sample.map((s) => s.file), '--warmup', String(warmup), '--runs', String(runs), '--conv', mode]);
      return JSON.parse(out.toString()).median_ms;
    };
    const ortNodeMs = await ortTime(ortNode, bytes, sample, { intraOpNumThreads: 1, interOpNumThreads: 1 });
    rows.push({ name, wasm: times.slice(0, CONV_MODES.length), otherMs: otherSession ? times.at(-2) : NaN, ortWebMs: times.at(-1), native: CONV_MODES.map(native), ortNodeMs });
    console.error(`${name}: done`);
  }
  const f = (x) => (Number.isFinite(x) ? x.toFixed(1) : 'n/a');
  const r = (a, b) => (Number.isFinite(a) && Number.isFinite(b) ? (a / b).toFixed(2) : 'n/a');
  const modes = CONV_MODES.join(' / ');
  const lines = [
    `| model | ${CONV_MODES.map((m) => `ptqscope wasm, ${m} (ms)`).join(' | ')} | onnxruntime-web wasm (ms) | wasm ratio ${modes} (ours / ORT-web) | ptqscope native, ${modes} (ms) | onnxruntime-node (ms) | native ratio ${modes} (ours / ORT-node) |`,
    `|---|${CONV_MODES.map(() => '---|').join('')}---|---|---|---|---|`,
    ...rows.map((x) => `| ${x.name} | ${x.wasm.map(f).join(' | ')} | ${f(x.ortWebMs)} | ${x.wasm.map((t) => r(t, x.ortWebMs)).join(' / ')} | ${x.native.map(f).join(' / ')} | ${f(x.ortNodeMs)} | ${x.native.map((t) => r(t, x.ortNodeMs)).join(' / ')} |`),
  ];
  if (compareFile) {
    lines[0] += ` ${compareFile} (ms) | its ratio to ORT-web |`;
    lines[1] += '---|---|';
    rows.forEach((x, i) => { lines[i + 2] += ` ${f(x.otherMs)} | ${r(x.otherMs, x.ortWebMs)} |`; });
  }
  const engines = `ours in the convolution modes ${modes}${compareFile ? `, ${compareFile}` : ''}, ORT-web`;
  report('bench-executor', `Float forward pass, batch 1, one thread, median of ${runs} runs after ${warmup} warm-ups (the wasm engines in alternation: ${engines}); ${machine()}`, lines);
}

runMain(main);
