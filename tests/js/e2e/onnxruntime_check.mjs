// "Check with onnxruntime" as a person sees it, for the page's and the plugin's Chromium tests:
// the table under the button read from the DOM (boxes inside the window), and what it must show,
// computed in the test: ptqscope's what_if of the same configuration, onnxruntime-web run here in
// Node on the same exported models (the same engine as the page's worker: its numbers are expected
// bit for bit), the float64 formulas of cosine and mse on those outputs (quant_oracle.mjs: the core
// measured onnxruntime's outputs, not something else), and the verdict onnxruntime-node, another
// engine, gives on the same exported models.
import { expect } from 'vitest';
import * as ortWeb from 'onnxruntime-web';
import * as ortNode from 'onnxruntime-node';
import { aggregate, cosine, mse } from '../quant_oracle.mjs';
import { checkWithOnnxruntime, judgeCheck } from '../../../web/pipeline/onnxruntime_check.mjs';
import { toNumber } from '../../../web/pipeline/result.mjs';
import { openSession } from '../helpers.mjs';

ortWeb.env.wasm.numThreads = 1;

const ALL_FLOAT = { schema: 'ptqscope.config', version: 1, base: 'all_off' };

// The check's table (mean over outputs) under `scope` (a locator of the what-if or fix panel):
// {verdict, caption, rows: {metric: {ptqscope, onnxruntime, difference, spread, within}}} (data-value texts).
export async function readCheck(page, scope) {
  const check = scope.locator('.ptq-ort');
  const table = check.locator('table.ptq-ort-table[data-output="mean"]');
  await table.scrollIntoViewIfNeeded();
  // What a person sees: the table and the sentence lie inside the window.
  const view = page.viewportSize();
  for (const box of [await table.boundingBox(), await check.locator('.ptq-ort-verdict').boundingBox()]) {
    expect(box.y).toBeGreaterThanOrEqual(0);
    expect(box.x).toBeGreaterThanOrEqual(0);
    expect(box.x + box.width).toBeLessThanOrEqual(view.width + 1);
    expect(box.y + box.height).toBeLessThanOrEqual(view.height + 1);
  }
  const rows = {};
  const trs = table.locator('tbody tr');
  for (let i = 0; i < await trs.count(); i++) {
    const tr = trs.nth(i);
    const cell = (k) => tr.locator('td').nth(k).getAttribute('data-value');
    rows[await tr.getAttribute('data-metric')] = {
      ptqscope: await cell(0), onnxruntime: await cell(1), difference: await cell(2), spread: await cell(3),
      within: await tr.getAttribute('data-within'),
    };
  }
  return {
    state: await check.getAttribute('data-state'),
    verdict: await check.locator('.ptq-ort-verdict').textContent(),
    caption: await table.locator('caption').textContent(),
    rows,
  };
}

// Presses the panel's button and waits for the check to finish; -> readCheck's view.
export async function runCheck(page, scope) {
  await scope.locator('.ptq-ort-check').click();
  await scope.locator('.ptq-ort:is([data-state="agrees"], [data-state="beyond"], [data-state="error"])').waitFor({ timeout: 300_000 });
  if (await scope.locator('.ptq-ort[data-state="error"]').count()) throw new Error(await scope.locator('.ptq-ort-verdict').textContent());
  return readCheck(page, scope);
}

// onnxruntime's outputs of `bytes` on every sample k of `samples` (feeds from the core's samples).
async function outputsOf(ort, session, bytes, samples, names, level) {
  const s = await ort.InferenceSession.create(bytes, { graphOptimizationLevel: level, logSeverityLevel: 3, intraOpNumThreads: 1 });
  try {
    const out = [];
    for (const k of samples) {
      const feeds = Object.fromEntries(session.sampleInputs(k).map((t) => [t.name, new ort.Tensor(t.dtype, t.data, t.dims)]));
      const r = await s.run(feeds);
      out.push(names.map((n) => r[n].data));
    }
    return out;
  } finally {
    await s.release();
  }
}

/**
 * expectedCheck({ptq, session, sampleNames, config, options}) -> {ptqscope, web, float64, nodeVerdict}
 * ptqscope: what_if's mean; web: the core's metrics of onnxruntime-web's outputs (graph optimisations
 * off); float64: {cosine, mse} of the same outputs in float64; nodeVerdict: judgeCheck's agreement
 * on onnxruntime-node's evaluation of the same models.
 */
export async function expectedCheck({ ptq, session, sampleNames, config, options }) {
  const ours = JSON.parse(session.analyze(JSON.stringify({ analysis: 'what_if', options, config })));
  const names = ours.what_if.output_order;
  const samples = ours.what_if.samples.map((n) => sampleNames.indexOf(n));
  const quantized = session.exportConfig(JSON.stringify(config), 'qdq-onnx');
  const float = session.exportConfig(JSON.stringify(ALL_FLOAT), 'qdq-onnx');
  const reference = await outputsOf(ortWeb, session, float, samples, names, 'disabled');
  const got = await outputsOf(ortWeb, session, quantized, samples, names, 'disabled');
  const comparison = new ptq.OutputComparison(names);
  reference.forEach((r, k) => comparison.add(r, got[k]));
  const web = JSON.parse(comparison.result()).mean;
  comparison.delete();
  const pairs = reference.map((r, k) => r.map((x, o) => [x, got[k][o]]));
  const float64 = { 'cosine-similarity': aggregate(pairs, cosine), mse: aggregate(pairs, mse) };
  const node = await checkWithOnnxruntime({ ptq, session, ort: ortNode, sampleNames, config, options });
  return { ptqscope: ours.what_if.mean, web, float64, nodeVerdict: judgeCheck(node).agrees, samples: ours.what_if.samples };
}

// The shown check against expectedCheck's numbers.
export function expectCheckShows(shown, expected) {
  expect(Object.keys(shown.rows)).toEqual(Object.keys(expected.ptqscope));
  for (const [metric, row] of Object.entries(shown.rows)) {
    expect(Number(row.ptqscope), metric).toBe(toNumber(expected.ptqscope[metric]));
    expect(Number(row.onnxruntime), metric).toBe(toNumber(expected.web[metric]));
  }
  // The core's float32 metrics of onnxruntime's outputs against float64 formulas on the same outputs.
  for (const [metric, value] of Object.entries(expected.float64)) {
    expect(Math.abs(Number(shown.rows[metric].onnxruntime) - value), metric).toBeLessThanOrEqual(1e-5 * Math.abs(value) + 1e-7);
  }
  // The verdict: what the rows say, and what onnxruntime-node's evaluation says too.
  const agrees = Object.values(shown.rows).every((r) => r.within === 'true');
  expect(shown.state).toBe(agrees ? 'agrees' : 'beyond');
  expect(shown.verdict).toMatch(agrees ? /^onnxruntime agrees with ptqscope/ : /^onnxruntime's numbers differ from ptqscope's beyond the float spread on /);
  expect(expected.nodeVerdict, 'onnxruntime-node gives the same verdict').toBe(agrees);
  expect(shown.caption).toContain(`${expected.samples.length} of `);
  expect(shown.caption).toContain('onnxruntime-web 1.30.0');
}

// The shown check against what `entry`'s model and data give for `config` on the samples `options` choose.
export async function expectCheckOf(shown, entry, config, options) {
  const { ptq, session, data } = await openSession(entry);
  try {
    expectCheckShows(shown, await expectedCheck({ ptq, session, sampleNames: data.sampleNames, config, options }));
  } finally {
    session.delete();
  }
}
