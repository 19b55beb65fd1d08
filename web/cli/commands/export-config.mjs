// `ptqscope export-config CONFIG --model MODEL --format FORMAT [--out FILE]` — writes a quantization
// configuration (docs/config-schema.md, e.g. what `ptqscope fix` found) for the user's toolchain:
// Horizon YAML entries, the calibrated model with the configuration written in, a Q/DQ model with its
// quantizers removed or re-quantized, onnxruntime's
// quantizer settings (JSON or Python), or rknn-toolkit2's custom_quantize_layers (docs/config-export.md).
// The core writes every format; this command only loads the model and saves what it returns.
import { parseArgs } from '../lib/args.mjs';
import { UsageError, withContext } from '../lib/errors.mjs';
import { readExternalData, readModelFile, readTextInput } from '../lib/files.mjs';
import { checkOutputs, withOutputs, writeOutput } from '../lib/outputs.mjs';
import { loadPtqModule } from '../lib/wasm.mjs';
import { EXPORT_FORMATS, RELATION_RULES, exportFormat } from '../../pipeline/catalog.mjs';

const FORMAT_NAMES = EXPORT_FORMATS.map((f) => f.name);
export const summary = `write a configuration for the toolchain: ${FORMAT_NAMES.join(', ')}`;
// The formats and their one-line descriptions are the core's (describe().export_formats).
const formatLines = EXPORT_FORMATS.map((f, k) => `${k ? ' '.repeat(19) : ''}${f.name.padEnd(16)} ${f.label}`).join('\n');
export const usage = `usage: ptqscope export-config CONFIG --model MODEL --format FORMAT [--out FILE]

  CONFIG           a configuration document (docs/config-schema.md), e.g. from ptqscope fix --config-out
  --model MODEL    the calibrated model the configuration was made for
  --format FORMAT  ${formatLines}
  --relations NAME
                   which calibration nodes a node of the configuration's intents switches (§1.9; default
                   ${RELATION_RULES[0].name}; the documents fix and the what-if write list those nodes themselves):
${RELATION_RULES.map((r) => `                     ${r.name}: ${r.doc}`).join('\n')}
  --out FILE       where to write (default: standard output; required for a model file: ${EXPORT_FORMATS.filter((f) => f.binary).map((f) => f.name).join(', ')})
  (docs/config-export.md describes each format)`;

const SPEC = {
  positionals: ['CONFIG'],
  options: { model: { required: true }, format: { required: true }, out: {}, relations: { choices: RELATION_RULES.map((r) => r.name) } },
};

export async function main(argv, { stdout = process.stdout } = {}) {
  const { options, positionals } = parseArgs(argv, SPEC);
  const [configPath] = positionals;
  // --out is checked before any work and written under a temporary name renamed at the end.
  checkOutputs([{ path: options.out, kind: 'file', option: '--out' }]);
  const configText = readTextInput(configPath, 'the configuration');
  const modelBytes = readModelFile(options.model);
  if (!FORMAT_NAMES.includes(options.format)) {
    throw new UsageError(`--format: unknown format '${options.format}' (known: ${FORMAT_NAMES.join(', ')})`);
  }
  if (exportFormat(options.format).binary && !options.out) {
    throw new UsageError(`--format ${options.format} writes a model file: give --out FILE`);
  }
  const ptq = await loadPtqModule();
  const session = new ptq.Session();
  try {
    const summary = withContext(options.model, () => session.loadModel(modelBytes, readExternalData(ptq, options.model, modelBytes)));
    for (const w of summary.warnings ?? []) process.stderr.write(`${options.model}: warning: ${w}\n`);
    if (options.relations) session.setRelations(options.relations);
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
