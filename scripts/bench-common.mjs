// Shared by the benchmark scripts (bench-executor, bench-sweep, bench-seed...): options, fixtures,
// timing, FLOP counts, and the tables they print and write into docs/benchmarks.md between
// `<!-- <name>:begin/end -->` markers.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from '../web/cli/lib/wasm.mjs';

export const args = process.argv.slice(2);

export function option(name, fallback) {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
}

// A float fixture's file or folder (.cache/fixtures/float/<name>).
export const floatFixture = (name) => path.join(REPO_ROOT, '.cache/fixtures/float', name);

// The calibrated fixture (scripts/fixtures/calibrated_models.py: ptq_calibrate, max calibration).
export function calibratedModel(name) {
  const model = path.join(REPO_ROOT, '.cache/fixtures/calibrated', `${name}_calibrated_model.onnx`);
  if (!fs.existsSync(model)) throw new Error(`${model} is missing: run /usr/bin/python3 scripts/fixtures/make_fixtures.py`);
  return model;
}

export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

// Median wall time (ms) of `runs` calls after `warmup` untimed ones (V8 tiers wasm up meanwhile).
export async function timeLoop(fn, { warmup, runs }) {
  for (let i = 0; i < warmup; i++) await fn();
  const times = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await fn();
    times.push(performance.now() - t0);
  }
  return median(times);
}

// Times the functions in alternation, `rounds` times; the order rotates every round, so none always
// runs right after another. This machine's speed drifts by up to ±40 % over seconds to minutes (a
// shared VM): engines compared in alternation see the same drift, engines timed one after the other
// do not. Returns the wall times (ms) per function.
export async function timeAlternating(fns, rounds) {
  const times = fns.map(() => []);
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < fns.length; k++) {
      const i = (k + r) % fns.length;
      const t0 = performance.now();
      await fns[i]();
      times[i].push(performance.now() - t0);
    }
  }
  return times;
}

// "Node v20…, <CPU>; <date>": the machine line of every table header.
export const machine = () =>
  `Node ${process.version}, ${os.cpus()[0]?.model ?? 'unknown CPU'}; ${new Date().toISOString().slice(0, 10)}.`;

const numel = (dims) => (Array.isArray(dims) && dims.every((d) => Number.isInteger(d) && d >= 0) ? dims.reduce((a, b) => a * b, 1) : 0);

// Floating-point operations of one node from the graph JSON's static shapes (docs/graph-schema.md):
// 2 per multiply-add of Conv / MatMul / Gemm, one per output element for every other op (0 where a
// shape is unknown).
export function nodeFlops(graph, node) {
  const dims = (name) => graph.values[name]?.dims ?? [];
  const out = node.outputs.reduce((s, o) => s + (o ? numel(dims(o)) : 0), 0);
  switch (node.op_type) {
    case 'Conv': return 2 * out * numel(dims(node.inputs[1]).slice(1));
    case 'MatMul': return 2 * out * (dims(node.inputs[0]).at(-1) ?? 0);
    case 'Gemm': return 2 * out * (dims(node.inputs[0])[node.attributes?.transA ? 0 : 1] ?? 0);
    default: return out;
  }
}
export const graphFlops = (graph) => graph.nodes.reduce((sum, n) => sum + nodeFlops(graph, n), 0);

// Prints the table; with --write-docs also replaces the `name` block of docs/benchmarks.md.
export function report(name, header, lines) {
  console.log(header);
  console.log(lines.join('\n'));
  if (!args.includes('--write-docs')) return;
  const doc = path.join(REPO_ROOT, 'docs/benchmarks.md');
  const begin = `<!-- ${name}:begin -->`, end = `<!-- ${name}:end -->`;
  const text = fs.readFileSync(doc, 'utf8');
  fs.writeFileSync(doc, text.replace(new RegExp(`${begin}[\\s\\S]*${end}`), `${begin}\n${header}\n\n${lines.join('\n')}\n${end}`));
}

// onnxruntime-web, the baseline of every table, on one thread (its default on a 2-core machine), quiet.
export async function ortWebOneThread() {
  const ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = 1;
  ort.env.logLevel = 'error';
  return ort;
}

// The CLI processes running now: stopped with the script (an orphaned sweep would load the machine
// under the next measurement).
const children = new Set();
let stopsChildren = false;
function stopChildrenOnExit() {
  if (stopsChildren) return;
  stopsChildren = true;
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.on(signal, () => {
      for (const child of children) child.kill(signal);
      process.exit(130);
    });
  }
}

// `ptqscope ARGS... --json FILE` as a process with `env` added: {wall (ms), doc (the --json document),
// stderr}; rejects with its stderr when it fails.
export function runCliJson(args, env = {}) {
  const json = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ptq-bench-')), 'result.json');
  const argv = [path.join(REPO_ROOT, 'web/cli/ptqscope.mjs'), ...args, '--json', json];
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, argv, { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
    stopChildrenOnExit();
    children.add(child);
    let stderr = '';
    child.stderr.on('data', (d) => { stderr += d; });
    child.on('error', reject);
    child.on('close', (code) => {
      const wall = performance.now() - t0;
      children.delete(child);
      if (code !== 0) return reject(new Error(`ptqscope ${args.join(' ')} exited ${code}: ${stderr}`));
      const doc = JSON.parse(fs.readFileSync(json, 'utf8'));
      fs.rmSync(path.dirname(json), { recursive: true, force: true });
      resolve({ wall, doc, stderr });
    });
  });
}

export function runMain(main) {
  main().catch((e) => {
    console.error(e?.stack ?? String(e));
    process.exit(1);
  });
}
