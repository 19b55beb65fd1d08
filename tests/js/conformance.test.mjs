// (b) Float-model conformance: every fixture model (all calibration nodes off: these are float
// models) run by our wasm executor vs onnxruntime-node 1.30.0 on the same inputs. Every output must
// match in name, dtype and shape, with relError (helpers.mjs: max|a-b| / max(max|b|, 1e-6)) <= 1e-4.
import * as ort from 'onnxruntime-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadManifest, openSession, relError, runCopy, samplesOf } from './helpers.mjs';

const TOLERANCE = 1e-4;
const MAX_SAMPLES = 2; // per model: the check is per sample; more only adds run time

// Float models only: onnxruntime cannot load the calibrated fixtures' HzCalibration nodes (those are
// checked against their QDQ rewrites in fake_quant_conformance.test.mjs).
describe.each(loadManifest().filter((m) => m.kind === 'float').map((m) => [m.name, m]))('%s', (name, entry) => {
  let wasm;
  let reference;
  beforeAll(async () => {
    wasm = await openSession(entry);
    reference = await ort.InferenceSession.create(entry.model, { intraOpNumThreads: 1, logSeverityLevel: 3 });
  });
  afterAll(async () => {
    wasm?.session.delete();
    await reference?.release();
  });

  it('declares the same inputs and outputs as onnxruntime sees', () => {
    expect(wasm.summary.inputs.map((i) => i.name)).toEqual(reference.inputNames);
    expect(wasm.summary.outputs.map((o) => o.name)).toEqual(reference.outputNames);
  });

  it(`matches onnxruntime-node on every output (relError <= ${TOLERANCE})`, async () => {
    const inputs = Object.fromEntries(reference.inputNames.map((n) => [n, samplesOf(entry, n)]));
    const count = Math.min(MAX_SAMPLES, wasm.data.sampleCount);
    for (let k = 0; k < count; k++) {
      const feeds = Object.fromEntries(Object.entries(inputs).map(([n, s]) => [n, new ort.Tensor(s[k].dtype, s[k].data, s[k].dims)]));
      const expected = await reference.run(feeds);
      const actual = runCopy(wasm.session, k, 'off');
      expect(actual.map((o) => o.name)).toEqual(reference.outputNames);
      for (const out of actual) {
        const ref = expected[out.name];
        const where = `${name} sample ${wasm.data.sampleNames[k]} output ${out.name}`;
        expect(out.dtype, where).toBe(ref.type);
        expect(out.dims, where).toEqual(Array.from(ref.dims));
        expect(relError(out.data, ref.data), where).toBeLessThanOrEqual(TOLERANCE);
      }
    }
  });
});
