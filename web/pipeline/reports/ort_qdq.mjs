// onnxruntime's quantization debugging (onnxruntime.quantization.qdq_loss_debug) saved as JSON.
// ORT keeps its results in memory only: compute_activation_error(...) returns
// {activation_name: {"qdq_err": float, "xmodel_err": float}} and compute_weight_error(...) returns
// {weight_name: float}. ptqscope reads them as json.dump writes them (NaN / Infinity included):
//   the activation dict alone:   {"<tensor>": {"qdq_err": 31.7, "xmodel_err": 24.9}, ...}
//   or both under two keys:      {"activations": {<as above>}, "weights": {"<initializer>": 38.2, ...}}
// The on-disk shape is therefore ptqscope's convention (§12), not
// ORT's. The functions and keys are confirmed from onnxruntime/python/tools/quantization/qdq_loss_debug.py.
// Values are ORT's default error function, compute_signal_to_quantization_noice_ratio:
// 20·log10(‖x‖/‖x−y‖) in dB over all samples concatenated, higher is better. It is not ptqscope's
// `sqnr` (§4 takes half of it, per sample), so it stays a metric of its own.
//   qdq_err:    the tensor before vs after its QuantizeLinear→DequantizeLinear pair (this tensor's own error)
//   xmodel_err: the float model's tensor vs the QDQ model's dequantized one (accumulated; only with float data)
//   weight:     the float initializer vs its dequantized copy
// Names are ONNX tensor names (`keys: 'tensor'`); weights may carry ORT's `_quantized` suffix.
import { isPlainObject, keyLines, parseJsonLenient, parseNumber } from './common.mjs';

export const id = 'ort-qdq';
export const label = 'onnxruntime qdq_loss_debug errors (JSON: qdq_err / xmodel_err, SQNR dB)';
export const keys = 'tensor';

const METRICS = [
  { name: 'qdq_err (dB)', better: 'higher', field: 'qdq_err' },
  { name: 'xmodel_err (dB)', better: 'higher', field: 'xmodel_err' },
  { name: 'weight error (dB)', better: 'higher' },
];

const ERR_KEYS = /"(qdq_err|xmodel_err)"\s*:/;
const WRAPPED = /^\s*\{\s*"(activations|weights)"\s*:\s*\{/;

export function detect(name, text) {
  if (!/\.json$/i.test(name ?? '') && !/^\s*\{/.test(text)) return false;
  return ERR_KEYS.test(text) || WRAPPED.test(text);
}

const kind = (v) => (v === null ? 'null' : Array.isArray(v) ? 'a list' : typeof v === 'string' ? JSON.stringify(v) : typeof v);

export function parse(text) {
  const problems = [];
  const rows = [];
  const { value: doc, error } = parseJsonLenient(text);
  if (error) return { metrics: [], rows, problems: [{ line: 1, reason: `not valid JSON: ${error}` }] };
  if (!isPlainObject(doc)) return { metrics: [], rows, problems: [{ line: 1, reason: 'expected a JSON object of tensor names' }] };
  const wrapped = 'activations' in doc || 'weights' in doc;
  const activations = wrapped ? doc.activations ?? {} : doc;
  const weights = wrapped ? doc.weights ?? {} : {};
  if (!isPlainObject(activations)) problems.push({ line: 1, reason: '"activations" is not an object' });
  if (!isPlainObject(weights)) problems.push({ line: 1, reason: '"weights" is not an object' });
  const from = (key) => (wrapped ? Math.max(0, text.indexOf(`"${key}"`)) : 0);
  const used = new Set();
  if (isPlainObject(activations)) {
    const at = keyLines(text, Object.keys(activations), from('activations'));
    for (const [name, entry] of Object.entries(activations)) {
      const line = at.get(name) ?? null;
      if (!isPlainObject(entry)) {
        problems.push({ line, reason: `${name}: expected {"qdq_err": number, "xmodel_err": number}, got ${kind(entry)}` });
        continue;
      }
      const values = {};
      let bad = false;
      for (const m of METRICS.slice(0, 2)) {
        if (!(m.field in entry)) continue;
        const v = parseNumber(entry[m.field]);
        if (v === null) {
          problems.push({ line, reason: `${name}: ${m.field} is not a number (${kind(entry[m.field])})` });
          bad = true;
        } else {
          values[m.name] = v;
        }
      }
      if (bad) continue;
      if (!Object.keys(values).length) {
        problems.push({ line, reason: `${name}: neither qdq_err nor xmodel_err` });
        continue;
      }
      Object.keys(values).forEach((m) => used.add(m));
      rows.push({ layer: name, values, line });
    }
  }
  if (isPlainObject(weights)) {
    const at = keyLines(text, Object.keys(weights), from('weights'));
    for (const [name, entry] of Object.entries(weights)) {
      const line = at.get(name) ?? null;
      const v = parseNumber(entry);
      if (v === null) {
        problems.push({ line, reason: `${name}: the weight error is not a number (${kind(entry)})` });
        continue;
      }
      rows.push({ layer: name, values: { [METRICS[2].name]: v }, line, info: { weight: true } });
      used.add(METRICS[2].name);
    }
  }
  return { metrics: METRICS.filter((m) => used.has(m.name)).map(({ name, better }) => ({ name, better })), rows, problems };
}
