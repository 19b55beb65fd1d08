// The CI subset of the model-zoo coverage (docs/coverage.md): the zoo/ fixtures (scripts/fixtures/
// zoo_models.py, small variants of torchvision's paths with random weights) end to end through the CLI
// against onnxruntime-node (tests/js/zoo_e2e.mjs): float outputs within 1e-4 of onnxruntime's
// (Faster R-CNN's detections compared as sets), calibrate (+ its Q/DQ twin), `run --quant on` against
// onnxruntime running the Q/DQ twin, and an activation sweep over four calibration nodes.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadManifest } from './helpers.mjs';
import { checkModel, compareOutputs, floatRule, matchDetections } from './zoo_e2e.mjs';

const entries = loadManifest().filter((m) => m.kind === 'zoo');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ptq-zoo-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('zoo fixtures', () => {
  it('cover a detector with NonMaxSuppression / RoiAlign / If, transformers and GridSample', () => {
    expect(entries.map((e) => e.name).sort()).toEqual(['zoo_bert_matmul', 'zoo_faster_rcnn_tiny', 'zoo_raft_small', 'zoo_vit_tiny']);
    const ops = Object.fromEntries(entries.map((e) => [e.name, new Set(e.ops)]));
    for (const op of ['NonMaxSuppression', 'RoiAlign', 'If']) expect(ops.zoo_faster_rcnn_tiny.has(op), op).toBe(true);
    expect(ops.zoo_raft_small.has('GridSample')).toBe(true);
    for (const n of ['zoo_vit_tiny', 'zoo_bert_matmul']) expect(ops[n].has('Softmax') && ops[n].has('MatMul'), n).toBe(true);
  });

  it('match detections as sets: by label and box, whatever their order', () => {
    const t = (boxes, scores, labels) => [{ dims: [labels.length, 4], data: Float32Array.from(boxes) },
      { dims: [labels.length], data: Float32Array.from(scores) }, { dims: [labels.length], data: BigInt64Array.from(labels.map(BigInt)) }];
    const theirs = t([0, 0, 10, 10, 5, 5, 20, 20, 0, 0, 10, 10], [0.9, 0.8, 0.7], [1, 2, 2]);
    const ours = t([5, 5, 20, 20, 0, 0, 10, 10, 0, 0, 10, 10], [0.8, 0.7, 0.9], [2, 2, 1]);
    expect(matchDetections(ours, theirs).perm).toEqual([2, 0, 1]);
    expect(matchDetections(ours.map((o, i) => (i === 2 ? { ...o, data: BigInt64Array.from([2n, 2n, 2n]) } : o)), theirs).reason)
      .toBe('detection 0 (label 1) has no match');
    expect(matchDetections(t([0, 0, 1, 1], [0.5], [1]), theirs).reason).toBe('1 detections, onnxruntime 3');
  });
});

describe("float outputs against onnxruntime's two runs", () => {
  const run = (...data) => [[{ name: 'y', dims: [data.length], data: Float64Array.from(data) }]];
  const optimised = run(1, 0);
  const unoptimised = run(1, 1e-3); // the two runs 1e-3 apart
  const rule = (...ours) => {
    const [row] = compareOutputs(run(...ours), optimised, unoptimised).outputs;
    return [row.first, row.deviation, row.spread, floatRule(row)];
  };

  it('pass within 1e-4 of either run, then within their spread of the nearer one', () => {
    expect(rule(1, 5e-5)).toEqual([5e-5, 5e-5, 1e-3, null]);
    expect(rule(1, 9.5e-4).map((v, i) => (i < 3 ? Number(v.toPrecision(6)) : v))).toEqual([9.5e-4, 5e-5, 1e-3, 'unopt']);
    expect(rule(1, 5e-4)).toEqual([5e-4, 5e-4, 1e-3, 'spread']);
    expect(rule(1, 3e-3).map((v, i) => (i < 3 ? Number(v.toPrecision(6)) : v))).toEqual([3e-3, 2e-3, 1e-3, undefined]);
  });

  it("match the unoptimised run's detections to the optimised run's as sets", () => {
    const t = (boxes, scores, labels) => [[{ name: 'boxes', dims: [labels.length, 4], data: Float64Array.from(boxes) },
      { name: 'scores', dims: [labels.length], data: Float64Array.from(scores) },
      { name: 'labels', dims: [labels.length], data: BigInt64Array.from(labels.map(BigInt)) }]];
    const theirs = t([0, 0, 10, 10, 5, 5, 20, 20], [0.9, 0.8], [1, 2]);
    const swapped = t([5, 5, 20, 20, 0, 0, 10, 10], [0.8, 0.9], [2, 1]);
    const { outputs } = compareOutputs(theirs, theirs, swapped, { detection: true });
    expect(outputs.map((r) => [r.first, r.deviation, r.spread])).toEqual([[0, 0, 0], [0, 0, 0], [0, 0, 0]]);
    const other = compareOutputs(theirs, theirs, t([0, 0, 1, 1], [0.5], [1]), { detection: true }).outputs;
    expect(other.map((r) => [r.first, r.deviation, r.spread])).toEqual([[0, 0, NaN], [0, 0, NaN], [0, 0, NaN]]);
  });
});

describe.each(entries.map((e) => [e.name, e]))('%s', (name, entry) => {
  it('float vs onnxruntime-node, calibrate, run --quant on vs onnxruntime on the Q/DQ twin, activation sweep', async () => {
    const r = await checkModel(entry, path.join(tmp, name), { sweepNodes: 4 });
    for (const s of ['float', 'calibrate', 'quant', 'sweep']) expect(r[s]?.error, `${name} ${s}`).toBeUndefined();
    expect(r.float.max_rel_error).toBeLessThanOrEqual(1e-4);
    expect(r.sweep.nodes).toBe(4);
    expect(r.pass).toBe(true);
  });
});
