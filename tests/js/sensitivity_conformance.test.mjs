// Activation sensitivity on the calibrated fixtures (HzCalibration nodes, made by ptq_calibrate) against
// onnxruntime (issue 17): item X (§3.2: X ON, every other quantizer OFF, weights included) is, for
// onnxruntime, the fixture's Q/DQ rewrite (the manifest's `qdq_model`) with only X's
// QuantizeLinear -> DequantizeLinear pair kept, every other pair removed by a graph edit made here
// (tie_origin.mjs withQdqPairsKept: the consumers read the pair's input), and the float reference that
// model with every pair removed. The §4 metrics (mse, cosine) of item against reference are computed here
// in float64 (quant_oracle.mjs) and aggregated as §3.3 (mean over samples per output, then over
// outputs). Each of onnxruntime's valid evaluations computes both runs with its own kernels:
// onnxruntime-node and onnxruntime-web (wasm backend), graph optimisations off and at 'basic', and
// onnxruntime-node at 'all' with its QDQ fusions off (as fake_quant_conformance.test.mjs). The first
// (node, off) is the expectation; onnxruntime's spread for the item is the largest distance of the
// others' metric from it.
// The exact value: the fixture's float64 evaluation of the same two models (manifest `items_float64`,
// scripts/fixtures/onnx_float64.py: every float in double, the item's quantizer applied exactly), which
// gives each item's §4 metrics and its change of the outputs (item run - float run).
// Ours, with no allowance beyond the float budget:
//  - our executor's runs of the item and of the float model (Session.run with the item's configuration,
//    every quantizer OFF) give, by the same float64 formulas, metrics within that spread of the
//    expectation. An item beyond it is traced (tie_origin.mjs divergences, our run configured as the
//    item, only its quantizer traced), per sample: where the item's quantizer differs from
//    onnxruntime's, only in elements one level apart whose inputs lie within onnxruntime's own float
//    spread of the rounding boundary (a tie); where it is identical, the difference is float rounding
//    of the unquantized rest alone, and there the outputs' change is at least as accurate against the
//    float64 change as onnxruntime's (the float budget of float64_reference.test.mjs on every output,
//    quant_oracle.mjs changeBudget). onnxruntime's evaluations share most kernels, so
//    their spread is narrower than their error: the float64 metric itself lies beyond that spread on a
//    quarter of the items (printed with PTQ_REPORT=1, docs/compatibility.md);
//  - the analysis (session.analyze, same samples) reports for the item exactly §4's float32 metric of
//    those outputs (float32 arithmetic, numpy's pairwise sums, computed here: metric32), bit for bit.
// The reported metric is a float32 (§4, as numpy computes it): near 1 a cosine resolves only 2^-24
// (6e-8), while onnxruntime's evaluations of an item differ by ~1e-10 in float64. Comparing the reported
// value with the float64 expectation would need an allowance for that rounding; the steps need none.
// Items and samples: those of the float64 evaluation (every activation item on fixtures with at most 8;
// on larger ones, yolov8n_like: 204, the first, the last and every k-th in graph order; the first
// sample). PTQ_REPORT=1 prints, per fixture, onnxruntime's largest spread and our largest distance, the
// items beyond it, and the metrics' errors against float64 (ours / onnxruntime's).
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES, loadManifest, loadPtqModule, readCalibrationFolder } from './helpers.mjs';
import { aggregate32, changeBudget, changeDisagreement, cosine32, describeBudget, expectChangeAgreement, expectReportedMetrics, float64Variants, itemConfig, largestMagnitude, metricsOf, mse32, ourFloatRuns, ourItemRuns } from './quant_oracle.mjs';
import { ONNXRUNTIME_EVALUATIONS, ONNXRUNTIME_REFERENCE, divergences, feedsOf, withQdqPairsKept } from './tie_origin.mjs';

// onnxruntime's valid evaluations, the reference first (tie_origin.mjs: node and web, optimisations off
// and 'basic', node 'all' with its QDQ fusions off): bytes -> {run, outputNames, release}.
const EVALUATIONS = [ONNXRUNTIME_REFERENCE, ...ONNXRUNTIME_EVALUATIONS];
const outputsOf = async (s, feed) => {
  const out = await s.run(feed);
  return s.outputNames.map((n) => out[n]);
};
const entries = loadManifest().filter((m) => m.kind === 'calibrated' && m.qdq_model);
// The convolution mode of our runs (setConvolutionMode; PTQ_CONV=fastest shows the float64 check failing
// on the Winograd paths, docs/compatibility.md).
const CONV = process.env.PTQ_CONV ?? 'accurate';
// Every fixture's compared items, for the float64 report at the end.
const judged = [];

describe('calibrated fixtures', () => {
  it('the manifest lists calibrated fixtures with a Q/DQ rewrite and their float64 items', () => {
    expect(entries.length, 'no calibrated fixture with qdq_model: run /usr/bin/python3 scripts/fixtures/make_fixtures.py').toBeGreaterThan(0);
    for (const e of entries) expect(e.items_float64, `${e.name}: no items_float64`).toBeTruthy();
  });
});

describe.each(entries.map((e) => [e.name, e]))('%s', (name, entry) => {
  let ptq;
  let session;
  let calibrations; // the calibrated model's quantizers, in the order a run configuration lists them
  let items; // [{name, output}]: the activation quantizers compared
  let feeds;
  let count;
  let qdqBytes;
  let exact; // item output -> its §4 metrics in float64 and its change of the outputs (float64Variants)
  beforeAll(async () => {
    ptq = await loadPtqModule();
    ptq.setConvolutionMode(CONV);
    session = new ptq.Session();
    calibrations = session.loadModel(fs.readFileSync(entry.model)).calibrations;
    const samples = session.loadCalibrationData(readCalibrationFolder(entry.data)).sampleCount;
    const graph = JSON.parse(session.graphJson());
    const features = graph.nodes.filter((n) => n.calibration?.kind === 'feature').map((n) => ({ name: n.name, output: n.outputs[0] }));
    const float64 = float64Variants(entry.items_float64);
    exact = float64.items;
    items = [...exact.keys()].map((output) => features.find((f) => f.output === output) ?? { missing: output });
    count = Math.min(float64.samples, samples);
    feeds = feedsOf(entry.data).slice(0, count);
    qdqBytes = fs.readFileSync(path.join(FIXTURES, entry.qdq_model));
  });
  afterAll(() => session?.delete());

  // One comparison, made once: the tie check below and the printed report of the float-only samples.
  let compared;
  const comparison = () => (compared ??= compare());
  async function compare() {
    const t0 = performance.now();
    const request = { analysis: 'sensitivity', options: { node_type: 'activation', metrics: ['mse', 'cosine-similarity'], data_num: count,
      sample_selection: 'first', interested_nodes: items.map((i) => i.name) } };
    const ours = JSON.parse(session.analyze(JSON.stringify(request))).sensitivity.activation;
    // The float reference of every evaluation, run by that evaluation.
    const floatBytes = withQdqPairsKept(qdqBytes, new Set());
    const floats = [];
    for (const open of EVALUATIONS) {
      const s = await open(floatBytes);
      const outputs = [];
      for (const f of feeds) outputs.push(await outputsOf(s, f));
      floats.push(outputs);
      await s.release();
    }
    const ourFloat = ourFloatRuns(session, calibrations, feeds.length);
    const rows = [];
    for (const item of items) {
      const kept = withQdqPairsKept(qdqBytes, new Set([item.output]));
      const metrics = [];
      for (const [e, open] of EVALUATIONS.entries()) {
        const s = await open(kept);
        const pairs = [];
        for (let k = 0; k < feeds.length; k++) {
          const v = await outputsOf(s, feeds[k]);
          pairs.push(floats[e][k].map((x, i) => [x, v[i]]));
        }
        await s.release();
        metrics.push(metricsOf(pairs, exact.get(item.output).change));
      }
      const [expected, ...others] = metrics;
      const row = ours[item.name];
      expect(row, `${name} ${item.name}: no sensitivity item`).toBeDefined();
      // Our executor's item and float runs on the same samples.
      const runs = ourItemRuns(session, calibrations, item.name, 'sensitivity', ourFloat);
      const mine = metricsOf(runs, exact.get(item.output).change);
      expectReportedMetrics(`${name} ${item.name}`, row, aggregate32(runs, mse32), aggregate32(runs, cosine32));
      rows.push({
        item,
        exact: exact.get(item.output),
        expected,
        others,
        ours: mine,
        spread: { mse: Math.max(...others.map((m) => Math.abs(m.mse - expected.mse))), cos: Math.max(...others.map((m) => Math.abs(m.cos - expected.cos))) },
        distance: { mse: Math.abs(mine.mse - expected.mse), cos: Math.abs(mine.cos - expected.cos) },
      });
    }
    const beyond = rows.filter((r) => !(r.distance.mse <= r.spread.mse && r.distance.cos <= r.spread.cos));
    const describeRow = (r) => `${r.item.name}: mse ours ${r.ours.mse} onnxruntime ${r.expected.mse} (spread ${r.spread.mse.toExponential(2)}, ours off by ${r.distance.mse.toExponential(2)}); ` +
      `cosine ours ${r.ours.cos} onnxruntime ${r.expected.cos} (spread ${r.spread.cos.toExponential(2)}, ours off by ${r.distance.cos.toExponential(2)})`;
    // Beyond the spread: only a rounding tie at the item's quantizer may explain it.
    const ties = [];
    for (const r of beyond) {
      const origins = await divergences(fs.readFileSync(entry.model), withQdqPairsKept(qdqBytes, new Set([r.item.output])), entry.data,
        { count, config: itemConfig(calibrations, r.item.name, 'sensitivity'), traced: [r.item.name] });
      // A sample whose item quantizer equals onnxruntime's is float rounding of the rest alone: there the
      // outputs' change is within the float budget against float64 (changeBudget, on every output; an
      // output the item does not reach has no change and no error in any run). One where it differs
      // must differ at a tie.
      const budget = (k) => changeBudget(r.ours.samples[k].change, r.expected.samples[k].change, ourFloat[k].map(largestMagnitude));
      const accurate = (k) => budget(k).every((b) => b.within);
      if (process.env.PTQ_REPORT) {
        for (let k = 0; k < count; k++) {
          console.log(`${r.item.name} sample ${k}: ours mse ${r.ours.samples[k].mse} cos ${r.ours.samples[k].cos}; onnxruntime ${[r.expected, ...r.others].map((o) => `${o.samples[k].mse} / ${o.samples[k].cos}`).join(', ')}`);
        }
      }
      const samples = origins.map((d, k) => ({
        tie: d ? d.tie : null,
        accurate: d ? null : accurate(k),
        text: `sample ${k}: ${d ? `${d.differing} of ${d.size} differ, inputs up to ${d.gap.toExponential(2)} apart, onnxruntime's float spread there ${d.spread?.toExponential(2)}${d.tie ? ' (tie)' : `: NOT a tie: ${d.why.join('; ')}`}` :
          `the quantizer does not differ; the outputs' change against float64, ours / onnxruntime's error: ${describeBudget(budget(k))}${accurate(k) ? '' : ' (BEYOND the float budget)'}`}`,
      }));
      ties.push({ r, samples });
    }
    const worst = (key, what) => Math.max(...rows.map((r) => r[what][key]));
    if (process.env.PTQ_REPORT) {
      console.log(`${name}: ${rows.length} activation items, ${count} samples, ${((performance.now() - t0) / 1000).toFixed(1)} s\n` +
        `  largest onnxruntime spread: mse ${worst('mse', 'spread').toExponential(2)}, cosine ${worst('cos', 'spread').toExponential(2)}\n` +
        `  largest distance of ours:   mse ${worst('mse', 'distance').toExponential(2)}, cosine ${worst('cos', 'distance').toExponential(2)}\n` +
        `  beyond the spread: ${beyond.length}${ties.map((t) => `\n    ${describeRow(t.r)}\n      ${t.samples.map((x) => x.text).join('; ')}`).join('')}`);
    }
    judged.push(...rows.map((r) => ({ fixture: name, ...r })));
    return { ties, describeRow };
  }

  it('items beyond onnxruntime\'s spread whose quantizer differs from its differ at rounding ties', async () => {
    const { ties, describeRow } = await comparison();
    for (const t of ties) {
      for (const x of t.samples) if (x.tie !== null) expect(x.tie, `${name} ${describeRow(t.r)}\n${x.text}`).toBe(true);
    }
  });

  it('items beyond onnxruntime\'s spread whose quantizer equals its are within the float budget against float64', async () => {
    const { ties, describeRow } = await comparison();
    for (const t of ties) {
      for (const x of t.samples) if (x.accurate !== null) expect(x.accurate, `${name} ${describeRow(t.r)}\n${x.text}`).toBe(true);
    }
  });

  it('has float64 changes that some evaluation of each item reproduces', async () => {
    await comparison();
    for (const r of judged.filter((x) => x.fixture === name)) {
      expectChangeAgreement(`${name} ${r.item.name}`, changeDisagreement([r.ours, r.expected, ...r.others], r.exact.change));
    }
  });

  it('lists only activation quantizers of the model as its float64 items', () => {
    expect(items.filter((i) => i.missing).map((i) => i.missing), `${name}: float64 items with no activation calibration node`).toEqual([]);
  });
});

// The metrics themselves against their float64 values (PTQ_REPORT=1, printed, not asserted): per
// fixture and over every item, the geometric mean over the items of ours' error / each onnxruntime
// evaluation's, and on how many items the float64 value itself lies beyond onnxruntime's spread. A
// metric's error is one projection of the outputs' float noise on the item's change, and the float
// run's noise is shared by every item of a fixture, so one fixture's ratio scatters over a decade
// either way (the outputs' change, checked above, is the stable measure of the arithmetic).
afterAll(() => {
  if (!process.env.PTQ_REPORT || !judged.length) return;
  const names = ['node off (reference)', 'node basic', 'node all', 'web off', 'web basic'];
  const keys = ['mse', 'cos'];
  // An error of exactly zero would be an infinitely small logarithm: floored at float64's resolution.
  const errorOf = (m, exact, key) => Math.max(Math.abs(m[key] - exact[key]), 2 ** -52 * Math.abs(exact[key]));
  const ratio = (rows, e, key) => Math.exp(rows.reduce((s, r) => s + Math.log(errorOf(r.ours, r.exact, key) / errorOf([r.expected, ...r.others][e], r.exact, key)), 0) / rows.length);
  const lines = [`| fixture | items | ${names.map((n) => `vs ${n} (mse / cosine)`).join(' | ')} | float64 value beyond onnxruntime's spread |`, `|---|---|${names.map(() => '---|').join('')}---|`];
  for (const f of [...new Set(judged.map((r) => r.fixture)), null]) {
    const rows = judged.filter((r) => f === null || r.fixture === f);
    const outside = rows.filter((r) => keys.some((k) => Math.abs(r.exact[k] - r.expected[k]) > r.spread[k])).length;
    lines.push(`| ${f ?? 'all'} | ${rows.length} | ${names.map((_, e) => keys.map((k) => ratio(rows, e, k).toFixed(2)).join(' / ')).join(' | ')} | ${outside} |`);
  }
  console.log(`metrics against float64, geometric mean over the items of ours' error / onnxruntime's:\n${lines.join('\n')}`);
});
