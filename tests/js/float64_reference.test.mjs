// Float accuracy against a float64 reference: every fixture with one (manifest field `float64`: torch's
// double-precision forward of the exported module, scripts/fixtures/make_float_models.py) run by our
// executor on each engine this checkout has built (wasm, and the CLI's native addon: docs/wasm-api.md,
// "Engines") and by onnxruntime-node (default session options, one thread), each compared with the
// reference by relError (helpers.mjs: max|a - ref| / max|ref|, per output, worst over the samples).
// The budget: ours <= RATIO x onnxruntime's on every model and output, and ours <= ABSOLUTE wherever
// onnxruntime is within ORT_TIGHT. Below FLOOR (helpers.mjs FLOAT64_FLOOR) both are at the level of
// rounding the outputs themselves to float32, where a ratio compares noise.
//
// Models: the float fixtures and the `deep` part (resnet50 by default; PTQ_DEEP_MODELS=all
// /usr/bin/python3 scripts/fixtures/make_fixtures.py adds resnet101, inception_v3, fcn_resnet50).
// The table is printed; PTQ_FLOAT64_DOCS=1 also writes it into docs/compatibility.md. PTQ_CONV=fast
// (or fastest) measures another convolution mode (setConvolutionMode) and only prints: the budget is
// the default mode's.
import fs from 'node:fs';
import path from 'node:path';
import * as ort from 'onnxruntime-node';
import { afterAll, describe, expect, it } from 'vitest';
import { builtEngines, decodeNpy, FIXTURES, FLOAT64_FLOOR as FLOOR, FLOAT64_RATIO as RATIO, loadManifest, openSession, REPO_ROOT, relError, runCopy, samplesOf } from './helpers.mjs';

const ORT_TIGHT = 5e-5;
const ABSOLUTE = 1e-4;
const CONV = process.env.PTQ_CONV ?? 'accurate';

const entries = loadManifest().filter((m) => m.float64);
const ENGINES = builtEngines();
const rows = new Map(); // "model output" -> {model, output, ort, ours: {engine: error}}

function float64Outputs(entry, output) {
  const dir = path.join(FIXTURES, entry.float64, output);
  return fs.readdirSync(dir).filter((f) => f.endsWith('.npy')).sort((a, b) => parseInt(a, 10) - parseInt(b, 10))
    .map((f) => decodeNpy(fs.readFileSync(path.join(dir, f))));
}

function formatTable() {
  const lines = [
    `| model | output | ${ENGINES.map((e) => `ptqscope (${e}) vs float64`).join(' | ')} | onnxruntime-node vs float64 | ratio (${ENGINES.join(' / ')}) |`,
    `|---|---|${ENGINES.map(() => '---|').join('')}---|---|`,
  ];
  for (const r of rows.values()) {
    const ours = ENGINES.map((e) => r.ours[e]);
    lines.push(`| ${r.model} | ${r.output} | ${ours.map((x) => x?.toExponential(2) ?? '–').join(' | ')} | ${r.ort.toExponential(2)} | `
      + `${ours.map((x) => (x === undefined ? '–' : (x / r.ort).toFixed(2))).join(' / ')} |`);
  }
  return lines.join('\n');
}

afterAll(() => {
  if (!rows.size) return;
  console.log(`max relative error against the float64 reference (worst over the samples), convolution mode ${CONV}:\n${formatTable()}`);
  if (process.env.PTQ_FLOAT64_DOCS && CONV === 'accurate') {
    const file = path.join(REPO_ROOT, 'docs/compatibility.md');
    const text = fs.readFileSync(file, 'utf8');
    const begin = '<!-- float64:begin -->';
    const end = '<!-- float64:end -->';
    const i = text.indexOf(begin);
    const j = text.indexOf(end);
    if (i < 0 || j < i) throw new Error(`${file} has no ${begin} ... ${end} section`);
    const ortVersion = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'node_modules/onnxruntime-node/package.json'), 'utf8')).version;
    const stamp = `Measured by tests/js/float64_reference.test.mjs (PTQ_FLOAT64_DOCS=1): ptqscope's ${ENGINES.join(' and ')} engine${ENGINES.length > 1 ? 's' : ''} and onnxruntime-node ${ortVersion} (one thread, default options), ${new Date().toISOString().slice(0, 10)}.`;
    fs.writeFileSync(file, `${text.slice(0, i + begin.length)}\n${stamp}\n\n${formatTable()}\n${text.slice(j)}`);
  }
});

describe('float64 reference', () => {
  it('has models with a float64 reference (the float fixtures and the deep part)', () => {
    expect(entries.filter((e) => e.kind === 'float').length).toBeGreaterThan(0);
    expect(entries.filter((e) => e.kind === 'deep').length).toBeGreaterThan(0);
  });
});

describe.each(entries.flatMap((e) => ENGINES.map((engine) => [e.name, engine, e])))('%s on the %s engine', (name, engine, entry) => {
  it(`is within ${RATIO}x onnxruntime-node's error against float64 on every output`, async () => {
    const wasm = await openSession(entry, engine);
    wasm.ptq.setConvolutionMode(CONV);
    const reference = await ort.InferenceSession.create(entry.model, { intraOpNumThreads: 1, logSeverityLevel: 3 });
    try {
      const inputs = Object.fromEntries(reference.inputNames.map((n) => [n, samplesOf(entry, n)]));
      const count = wasm.data.sampleCount;
      const worst = Object.fromEntries(reference.outputNames.map((o) => [o, { ours: 0, ort: 0 }]));
      const exact = Object.fromEntries(reference.outputNames.map((o) => [o, float64Outputs(entry, o)]));
      for (let k = 0; k < count; k++) {
        const feeds = Object.fromEntries(Object.entries(inputs).map(([n, s]) => [n, new ort.Tensor(s[k].dtype, s[k].data, s[k].dims)]));
        const theirs = await reference.run(feeds);
        const ours = runCopy(wasm.session, k, 'off');
        for (const o of ours) {
          const ref = exact[o.name][k];
          expect(ref, `${name}: no float64 reference for output ${o.name} sample ${k}`).toBeDefined();
          expect(o.dims, `${name} ${o.name}`).toEqual(Array.from(ref.dims));
          worst[o.name].ours = Math.max(worst[o.name].ours, relError(o.data, ref.data));
          worst[o.name].ort = Math.max(worst[o.name].ort, relError(theirs[o.name].data, ref.data));
        }
      }
      for (const [output, w] of Object.entries(worst)) {
        const row = rows.get(`${name} ${output}`) ?? { model: name, output, ort: w.ort, ours: {} };
        row.ours[engine] = w.ours;
        rows.set(`${name} ${output}`, row);
        const where = `${name} output ${output}: ptqscope (${engine}) ${w.ours.toExponential(2)}, onnxruntime-node ${w.ort.toExponential(2)}`;
        if (CONV !== 'accurate') continue;
        if (w.ours > FLOOR) expect(w.ours, where).toBeLessThanOrEqual(RATIO * w.ort);
        if (w.ort <= ORT_TIGHT) expect(w.ours, where).toBeLessThanOrEqual(ABSOLUTE);
      }
    } finally {
      wasm.session.delete();
      await reference.release();
    }
  });
});
