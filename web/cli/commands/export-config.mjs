// `ptqscope export-config CONFIG --model MODEL --format FORMAT [--out FILE]` — writes a quantization
// configuration (docs/config-schema.md, e.g. what `ptqscope fix` found) for the user's toolchain:
// Horizon YAML entries, the calibrated model with the configuration written in, onnxruntime's
// quantizer settings (JSON or Python), or rknn-toolkit2's custom_quantize_layers (docs/config-export.md).
// The core writes every format; this command only loads the model and saves what it returns.
import { parseArgs } from '../lib/args.mjs';
import { UsageError, withContext } from '../lib/errors.mjs';
import { readModelFile, readTextInput } from '../lib/files.mjs';
import { checkOutputs, withOutputs, writeOutput } from '../lib/outputs.mjs';
import { loadPtqModule } from '../lib/wasm.mjs';

export const summary = 'write a configuration for the toolchain: horizon-yaml, calibrated-onnx, ort-json, ort-python, rknn-cfg';
export const usage = `usage: ptqscope export-config CONFIG --model MODEL --format FORMAT [--out FILE]

  CONFIG           a configuration document (docs/config-schema.md), e.g. from ptqscope fix --config-out
  --model MODEL    the calibrated model the configuration was made for
  --format FORMAT  horizon-yaml     hb_mapper / hb_compile node_info and run_on_cpu entries
                   calibrated-onnx  the model with the HzCalibration switch / qtype attributes rewritten
                   ort-json         onnxruntime quantize_static nodes_to_exclude + TensorQuantOverrides
                   ort-python       the same as a Python snippet
                   rknn-cfg         rknn-toolkit2 hybrid quantization custom_quantize_layers
  --out FILE       where to write (default: standard output; required for calibrated-onnx)
  (docs/config-export.md describes each format)`;

const SPEC = {
  positionals: ['CONFIG'],
  options: { model: { required: true }, format: { required: true }, out: {} },
};

export async function main(argv, { stdout = process.stdout } = {}) {
  const { options, positionals } = parseArgs(argv, SPEC);
  const [configPath] = positionals;
  // --out is checked before any work and written under a temporary name renamed at the end.
  checkOutputs([{ path: options.out, kind: 'file', option: '--out' }]);
  const configText = readTextInput(configPath, 'the configuration');
  const modelBytes = readModelFile(options.model);
  const ptq = await loadPtqModule();
  const formats = ptq.exportFormats();
  if (!formats.includes(options.format)) {
    throw new UsageError(`--format: unknown format '${options.format}' (known: ${formats.join(', ')})`);
  }
  if (options.format === 'calibrated-onnx' && !options.out) {
    throw new UsageError('--format calibrated-onnx writes a model file: give --out FILE');
  }
  const session = new ptq.Session();
  try {
    const summary = withContext(options.model, () => session.loadModel(modelBytes));
    for (const w of summary.warnings ?? []) process.stderr.write(`${options.model}: warning: ${w}\n`);
    const out = withContext(configPath, () => session.exportConfig(configText, options.format));
    if (options.out) {
      await withOutputs(() => writeOutput(options.out, out));
      console.error(`ptqscope export-config: ${options.format} written to ${options.out}`);
    } else {
      stdout.write(out);
    }
  } finally {
    session.delete();
  }
  return 0;
}
