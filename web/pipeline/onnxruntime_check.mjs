// "Check with onnxruntime": the model outputs' metrics of a configuration computed by onnxruntime
// beside ptqscope's, so that a user who doubts a number can see an independent engine give it
// (docs/web-app.md). Environment-neutral: the analysis worker (worker_core.mjs) runs it with its
// loaded session and the onnxruntime module its environment loads (onnxruntime-web's wasm build in
// the page and the plugin, from the files the build ships beside them: onnxruntimeFromAssets).
//
// What is run: the configuration exported as a Q/DQ model (the core's qdq-onnx export; a Horizon
// calibrated model in its Q/DQ form) and the float model (the export of the all-float
// configuration), on the samples ptqscope's what_if used, by onnxruntime with graph optimisations off
// and at 'basic'. The metrics of onnxruntime's outputs are computed by the core (OutputComparison: §4
// in float32 with numpy's pairwise sums, §3.3's aggregation), the way ptqscope's own are.
//
// The float spread (judgeCheck): how far a metric moves between valid float32 evaluations of the
// same two models, that no quantizer decision separates: onnxruntime with graph optimisations off
// and at 'basic', and onnxruntime's quantized outputs measured against ptqscope's float outputs
// instead of its own. That crossing measures what the two engines' float rounding of one run does
// to the metric; the quantized run is rounded by each engine too, by as much where no value crosses
// a rounding boundary, so it counts twice. ptqscope's number agrees when it lies within that spread
// of onnxruntime's (optimisations off), or within FLOAT32_ULPS units in the last place of the
// float32 metric, which no float32 computation of it resolves better.
import { toNumber } from './result.mjs';

export const ORT_SETTINGS = [
  { name: 'disabled', label: 'graph optimisations off' },
  { name: 'basic', label: "graph optimisations 'basic'" },
];
export const FLOAT32_ULPS = 4;

// The files the builds ship in their onnxruntime-web folder (web/pipeline/onnxruntime_assets.mjs):
// the wasm build's JS (its glue inside) as is, and its .wasm as a module exporting the bytes in
// base64, which a page whose CSP forbids connections can still import (a script, not a fetch).
export const ORT_FILES = { script: 'ort.wasm.bundle.min.mjs', wasm: 'ort-wasm-simd-threaded.wasm.mjs' };

function decodeBase64(text) {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

// onnxruntime-web from the folder `base` (an absolute URL): single-threaded (no shared memory
// needed), its wasm handed over as bytes so that nothing is fetched.
export async function onnxruntimeFromAssets(base) {
  if (!base) throw new Error('onnxruntime-web is not available here');
  const ort = await import(/* @vite-ignore */ new URL(ORT_FILES.script, base).href);
  const { default: wasm } = await import(/* @vite-ignore */ new URL(ORT_FILES.wasm, base).href);
  ort.env.wasm.wasmBinary = decodeBase64(wasm).buffer;
  ort.env.wasm.numThreads = 1;
  ort.env.wasm.proxy = false;
  return ort;
}

// The options of a what_if or fix request (or result) that choose the samples a check runs on
// (data_num null, as results write "every sample", is kept: what_if reads it the same way).
export const checkOptions = (o = {}) => Object.fromEntries(['data_num', 'sample_selection']
  .filter((k) => o[k] !== undefined).map((k) => [k, o[k]]));

const STORED = { schema: 'ptqscope.config', version: 1, base: 'stored' };
const ALL_FLOAT = { schema: 'ptqscope.config', version: 1, base: 'all_off' };

// The outputs `names` of one onnxruntime run, in that order (an output the exported model does not
// produce is an error naming it).
function outputsOf(result, names) {
  return names.map((n) => {
    if (!result[n]) throw new Error(`onnxruntime: the exported model has no output '${n}' (ptqscope compares it): the check compares graph outputs only`);
    return result[n].data;
  });
}

/**
 * checkWithOnnxruntime({ptq, session, ort, sampleNames, config?, options?, modelName?, emit?}) -> result
 * session: a wasm Session with the model and calibration data loaded; sampleNames: its sample names
 * (loadCalibrationData's); config: the configuration document (default: as stored); options:
 * what_if's data_num / sample_selection. emit({stage, done, total}) reports progress.
 * result: {samples, calibration_samples, outputs, config, ptqscope: {outputs, mean},
 *          onnxruntime: {[setting]: {outputs, mean}}, crossed: {outputs, mean}, settings, version}
 */
export async function checkWithOnnxruntime({ ptq, session, ort, sampleNames, config = STORED, options = {}, modelName, emit = () => {} }) {
  emit({ stage: 'ptqscope', done: 0, total: 1 });
  const ours = JSON.parse(session.analyze(JSON.stringify({ analysis: 'what_if', options, config, ...(modelName ? { model_file: modelName } : {}) })));
  const names = ours.what_if.output_order;
  const samples = ours.what_if.samples.map((name) => {
    const k = sampleNames.indexOf(name);
    if (k < 0) throw new Error(`onnxruntime check: sample '${name}' is not in the calibration data`);
    return k;
  });
  const quantized = session.exportConfig(JSON.stringify(config), 'qdq-onnx');
  const float = session.exportConfig(JSON.stringify(ALL_FLOAT), 'qdq-onnx');
  const comparisons = Object.fromEntries([...ORT_SETTINGS.map((s) => s.name), 'crossed'].map((k) => [k, new ptq.OutputComparison(names)]));
  const total = ORT_SETTINGS.length * samples.length;
  let done = 0;
  try {
    for (const setting of ORT_SETTINGS) {
      const open = async (bytes, what) => {
        try {
          return await ort.InferenceSession.create(bytes, { graphOptimizationLevel: setting.name, logSeverityLevel: 3 });
        } catch (err) {
          throw new Error(`onnxruntime cannot run ${what} ptqscope exported (qdq-onnx): ${err?.message ?? err}`);
        }
      };
      const floatSession = await open(float, 'the float model');
      let quantizedSession = null;
      try {
        quantizedSession = await open(quantized, 'the configuration');
        for (const k of samples) {
          emit({ stage: setting.name, done, total });
          const feeds = Object.fromEntries(session.sampleInputs(k).map((t) => [t.name, new ort.Tensor(t.dtype, t.data, t.dims)]));
          const reference = outputsOf(await floatSession.run(feeds), names);
          const got = outputsOf(await quantizedSession.run(feeds), names);
          comparisons[setting.name].add(reference, got);
          if (setting === ORT_SETTINGS[0]) comparisons.crossed.add(ptqscopeFloatOutputs(session, k, names), got);
          done++;
        }
      } finally {
        await floatSession.release();
        await quantizedSession?.release();
      }
    }
    emit({ stage: 'done', done, total });
    const measured = Object.fromEntries(Object.entries(comparisons).map(([k, c]) => {
      const { outputs, mean } = JSON.parse(c.result());
      return [k, { outputs, mean }];
    }));
    const { crossed, ...onnxruntime } = measured;
    return {
      samples: ours.what_if.samples,
      calibration_samples: ours.calibration_samples,
      outputs: names,
      config: ours.config ?? config,
      ptqscope: { outputs: ours.what_if.outputs, mean: ours.what_if.mean },
      onnxruntime,
      crossed,
      settings: ORT_SETTINGS,
      version: ort.env?.versions?.web ?? ort.env?.versions?.common ?? '',
    };
  } finally {
    Object.values(comparisons).forEach((c) => c.delete());
  }
}

// ptqscope's float run of sample k: the outputs `names` (copies), as what_if's reference holds them.
function ptqscopeFloatOutputs(session, k, names) {
  session.run(k, 'off');
  const byName = new Map();
  for (let i = 0; i < session.outputCount(); i++) {
    const o = session.output(i);
    byName.set(o.name, o.data.slice());
  }
  return names.map((n) => {
    if (!byName.has(n)) throw new Error(`onnxruntime check: '${n}' is not a graph output of the model (ptqscope compares it): the check compares graph outputs only`);
    return byName.get(n);
  });
}

// |a - b|; 0 for equal values (inf and inf, NaN and NaN), Infinity when only one is finite or NaN.
function distance(a, b) {
  if (Object.is(a, b) || a === b) return 0;
  const d = Math.abs(a - b);
  return Number.isFinite(d) ? d : Infinity;
}

// One unit in the last place of |v| as a float32 (0 for non-finite values).
export function float32Ulp(v) {
  const x = Math.abs(Math.fround(v));
  if (!Number.isFinite(x)) return 0;
  if (x < 2 ** -126) return 2 ** -149;
  return 2 ** (Math.floor(Math.log2(x)) - 23);
}

/**
 * judgeCheck(result, scope = 'mean' | output name) -> {rows, beyond, agrees}
 * rows: per metric {metric, ptqscope, onnxruntime, difference, spread, allowed, within, settings:
 * {[setting]: value}}: onnxruntime's value is its evaluation with graph optimisations off; spread the
 * larger of its distance to onnxruntime's other setting and twice its distance to the crossed
 * evaluation (one run's float rounding, counted for both runs); allowed = max(spread, FLOAT32_ULPS
 * ulps of the value). beyond: the rows outside.
 */
export function judgeCheck(result, scope = 'mean') {
  const pick = (section) => (scope === 'mean' ? section.mean : section.outputs?.[scope]) ?? {};
  const ours = pick(result.ptqscope);
  const [first, ...others] = result.settings.map((s) => s.name);
  const reference = pick(result.onnxruntime[first]);
  const rows = Object.keys(ours).map((metric) => {
    const p = toNumber(ours[metric]);
    const o = toNumber(reference[metric]);
    const distances = [...others.map((s) => distance(toNumber(pick(result.onnxruntime[s])[metric]), o)),
      2 * distance(toNumber(pick(result.crossed)[metric]), o)];
    const spread = Math.max(0, ...distances.filter(Number.isFinite));
    const allowed = Math.max(spread, FLOAT32_ULPS * float32Ulp(o));
    const difference = distance(p, o);
    return {
      metric, ptqscope: p, onnxruntime: o, difference, spread, allowed,
      within: difference <= allowed,
      settings: Object.fromEntries(result.settings.map((s) => [s.name, toNumber(pick(result.onnxruntime[s.name])[metric])])),
    };
  });
  const beyond = rows.filter((r) => !r.within);
  return { rows, beyond, agrees: beyond.length === 0 };
}
