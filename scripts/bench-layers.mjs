#!/usr/bin/env node
// Where the wasm forward pass spends its time, per layer type, against the host's GEMM peak.
// Not a test: `--write-docs` rewrites its table in docs/benchmarks.md.
//
// The peak: one 1x1 Conv of 256 -> 256 channels on a 32x32 plane (a 256x1024x256 GEMM: one block of
// depth, L2-resident panels), run through the same executor. Each model: the forward pass's
// CPU time (process.cpuUsage, median of --runs), split over the layer types by their share of the
// nodes' wall times (Session.profile, median per node). CPU time rather than wall time: on a shared
// machine a long layer is preempted more often than a short one, which wall time would charge to it.
// GFLOP/s count 2 per multiply-add (bench-common nodeFlops).
// Usage: node scripts/bench-layers.mjs [--runs N] [--models resnet18,mobilenet_v2,yolov8n_like] [--write-docs]
import fs from 'node:fs';
import { loadPtqModule } from '../web/cli/lib/wasm.mjs';
import { readCalibrationFolder } from '../web/cli/lib/files.mjs';
import { buildModel } from '../tests/js/onnx_builder.mjs';
import { floatFixture, machine, median, nodeFlops, option, report, runMain } from './bench-common.mjs';

const runs = Number(option('runs', 15));
const models = option('models', 'resnet18,mobilenet_v2,yolov8n_like').split(',');
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

// Median CPU time (ms) of `runs` calls after as many warm-ups.
function cpuTime(fn) {
  for (let i = 0; i < runs; i++) fn();
  const times = [];
  for (let i = 0; i < runs; i++) {
    const t0 = cpuMs();
    fn();
    times.push(cpuMs() - t0);
  }
  return median(times);
}

// The layer type of a node: the convolutions by kernel and grouping, GEMMs, the rest memory-bound.
function layerType(graph, node) {
  if (node.op_type === 'Gemm' || node.op_type === 'MatMul') return 'GEMM (fully connected)';
  if (node.op_type !== 'Conv') return 'memory-bound ops';
  const w = graph.values[node.inputs[1]]?.dims ?? [];
  if ((node.attributes?.group ?? 1) > 1 && w[1] === 1) return 'depthwise conv';
  const k = w.slice(2).join('x');
  if (k === '1x1') return 'conv 1x1';
  if (k === '3x3') return 'conv 3x3';
  return `conv ${k}`;
}

// Returns a function measuring the peak (GFLOP/s) once more; measured around each model, since the
// machine's speed drifts.
function gemmPeak(ptq) {
  const C = 256, HW = 32;
  // The weights as a second input (the model encoder cannot hold a large initializer): packed per
  // call, 0.2 % of the GEMM's work at this size.
  const bytes = buildModel({
    nodes: [{ name: 'conv', op: 'Conv', inputs: ['x', 'w'], outputs: ['y'] }],
    inputs: [{ name: 'x', dims: [1, C, HW, HW] }, { name: 'w', dims: [C, C, 1, 1] }],
    outputs: [{ name: 'y', dims: [1, C, HW, HW] }],
  });
  const fill = (n) => new Float32Array(n).map((_, i) => ((i * 7919) % 511) / 511 - 0.5);
  const s = new ptq.Session();
  s.loadModel(bytes);
  s.loadCalibrationData([
    { path: 'w/0.npy', bytes: npyBytes(fill(C * C), [C, C, 1, 1]) },
    { path: 'x/0.npy', bytes: npyBytes(fill(C * HW * HW), [1, C, HW, HW]) },
  ]);
  return () => (2 * C * C * HW * HW) / cpuTime(() => s.run(0, 'off')) / 1e6;
}

// A float32 .npy file (format 1.0) of the given shape.
function npyBytes(data, dims) {
  let header = `{'descr': '<f4', 'fortran_order': False, 'shape': (${dims.join(', ')},), }`;
  header += ' '.repeat(63 - ((header.length + 10) % 64)) + '\n';
  const out = new Uint8Array(10 + header.length + data.byteLength);
  out.set([0x93, ...new TextEncoder().encode('NUMPY'), 1, 0, header.length & 255, header.length >> 8]);
  out.set(new TextEncoder().encode(header), 10);
  out.set(new Uint8Array(data.buffer), 10 + header.length);
  return out;
}

function profileModel(ptq, name) {
  const s = new ptq.Session();
  s.loadModel(fs.readFileSync(floatFixture(`${name}.onnx`)));
  s.loadCalibrationData(readCalibrationFolder(floatFixture(`${name}_data`)));
  const graph = JSON.parse(s.graphJson());
  const forwardMs = cpuTime(() => s.run(0, 'off'));
  const perNode = new Map();
  for (let i = 0; i < runs; i++) {
    for (const [node, ms] of Object.entries(s.profile(0, 'off'))) perNode.set(node, [...(perNode.get(node) ?? []), ms]);
  }
  s.delete();
  const types = new Map();
  let wall = 0;
  for (const node of graph.nodes) {
    const ms = median(perNode.get(node.name) ?? [0]);
    wall += ms;
    const t = types.get(layerType(graph, node)) ?? { ms: 0, flops: 0, nodes: 0 };
    t.ms += ms;
    t.flops += /^(Conv|Gemm|MatMul)$/.test(node.op_type) ? nodeFlops(graph, node) : 0;
    t.nodes += 1;
    types.set(layerType(graph, node), t);
  }
  return { forwardMs, types: [...types].map(([type, t]) => ({ type, ...t, cpuMs: (forwardMs * t.ms) / wall })).sort((a, b) => b.cpuMs - a.cpuMs) };
}

async function main() {
  const ptq = await loadPtqModule();
  ptq.setConvolutionMode('accurate');
  const measurePeak = gemmPeak(ptq);
  const lines = [];
  for (const name of models) {
    const before = measurePeak();
    const { forwardMs, types } = profileModel(ptq, name);
    const peak = (before + measurePeak()) / 2;
    for (const t of types.filter((x) => x.cpuMs >= 0.01 * forwardMs)) {
      const rate = t.flops / t.cpuMs / 1e6;
      const compute = t.flops > 0;
      lines.push(`| ${name} | ${forwardMs.toFixed(1)} | ${peak.toFixed(1)} | ${t.type} | ${t.nodes} | ${((100 * t.cpuMs) / forwardMs).toFixed(1)} % | ${compute ? rate.toFixed(1) : '–'} | ${compute ? `${((100 * rate) / peak).toFixed(0)} %` : '–'} |`);
    }
  }
  report('bench-layers', `Time per layer type, wasm, convolution mode accurate, one thread, CPU time (medians of ${runs} runs); GEMM peak: a 256x1024x256 GEMM through a 1x1 Conv, measured before and after each model; ${machine()}`, [
    '| model | forward (ms CPU) | GEMM peak (GFLOP/s) | layer type | nodes | share of the forward pass | GFLOP/s | of the GEMM peak |',
    '|---|---|---|---|---|---|---|---|',
    ...lines,
  ]);
}

runMain(main);
