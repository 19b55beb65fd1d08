// Qualcomm AIMET QuantAnalyzer per-layer results (QuantAnalyzer.analyze(results_dir=...)), each a flat
// JSON object {<layer name>: <number>} written with json.dump, told apart by the file name:
//   per_layer_quant_enabled.json   the eval score with only this layer's quantizers on
//   per_layer_quant_disabled.json  the eval score with every quantizer on except this layer's
//   per_layer_mse_loss.json        MSE between the fp32 and the quantsim output of this layer
// Confirmed from AIMET's quant_analyzer.py (aimet_common, aimet_torch, aimet_onnx). The score is
// whatever the user's eval_callback returns; higher is taken as better (AIMET's convention, e.g.
// top-1 accuracy). For the heat layer "worse" means "this layer is the problem": a low score with only
// this layer quantized (enabled), a HIGH score with only this layer left in float (disabled: restoring
// it helps most), a high MSE. So per_layer_quant_disabled declares `better: 'lower'`.
// AIMET's per-layer MSE divides the sum of the batches' means by the number of samples: compare it
// within one run only (it is not ptqscope's mse).
// Names: aimet_onnx writes ONNX node names; aimet_torch writes torch module names
// (backbone.layer1.0.conv1), which the mapping matches against the scopes of a torch-exported ONNX
// model (`keys: 'node'`). min_max_ranges/*.json (quantizer ranges, not per-layer errors) are not read.
import { isPlainObject, keyLines, parseJsonLenient, parseNumber } from './common.mjs';

export const id = 'aimet';
export const label = 'AIMET QuantAnalyzer per-layer JSON (per_layer_quant_enabled / _disabled / _mse_loss)';
export const keys = 'node';

const KINDS = {
  quant_enabled: { name: 'eval score, only this layer quantized', better: 'higher' },
  quant_disabled: { name: 'eval score, all but this layer quantized', better: 'lower' },
  mse_loss: { name: 'AIMET mse loss', better: 'lower' },
};

const kindOf = (name) => /per_layer_(quant_enabled|quant_disabled|mse_loss)[^/\\]*\.json$/i.exec(name ?? '')?.[1]?.toLowerCase() ?? null;

export function detect(name) {
  return kindOf(name) !== null;
}

// The file name decides the metric; without one it is the enabled-layer score.
export function parse(text, name) {
  const problems = [];
  const rows = [];
  const metric = KINDS[kindOf(name) ?? 'quant_enabled'];
  const { value: doc, error } = parseJsonLenient(text);
  if (error) return { metrics: [], rows, problems: [{ line: 1, reason: `not valid JSON: ${error}` }] };
  if (!isPlainObject(doc)) return { metrics: [], rows, problems: [{ line: 1, reason: 'expected a JSON object {layer name: number}' }] };
  const at = keyLines(text, Object.keys(doc));
  for (const [layer, entry] of Object.entries(doc)) {
    const v = parseNumber(entry);
    if (v === null) {
      const what = entry === null ? 'null' : typeof entry === 'object' ? 'an object' : JSON.stringify(entry);
      problems.push({ line: at.get(layer) ?? null, reason: `${layer}: not a number (${what})` });
      continue;
    }
    rows.push({ layer, values: { [metric.name]: v }, line: at.get(layer) ?? null });
  }
  return { metrics: [metric], rows, problems };
}
