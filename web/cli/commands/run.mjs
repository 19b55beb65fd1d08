// `ptqscope run MODEL CALIBRATION_DATA --quant on|off --out DIR` (or `--config FILE` for --quant)
// Runs every calibration sample (lexicographic file order) through the model with every calibration
// node as saved (--quant on: the stored configuration), none quantizing (--quant off: the float
// model) or as a configuration document sets them (--config: a what-if's or a fix's configuration,
// docs/config-schema.md), and writes graph output i of sample k to DIR/sample_<k>/<i>.npy.
import path from 'node:path';
import { parseArgs } from '../lib/args.mjs';
import { withContext } from '../lib/errors.mjs';
import { readConfigFile } from '../lib/analysis.mjs';
import { calibrationFilesOnDemand, readExternalData, readModelFile } from '../lib/files.mjs';
import { encodeNpy } from '../lib/npy.mjs';
import { checkOutputs, makeOutputDir, withOutputs, writeOutput } from '../lib/outputs.mjs';
import { reportMemory } from '../lib/memory.mjs';
import { createProgress } from '../lib/progress.mjs';
import { loadPtqModule } from '../lib/wasm.mjs';
import { CONVOLUTION_MODES, RELATION_RULES } from '../../pipeline/catalog.mjs';

export const summary = 'run every calibration sample through the model and save the outputs as .npy';
export const usage = `usage: ptqscope run MODEL CALIBRATION_DATA (--quant on|off | --config FILE) --out DIR

  MODEL             the .onnx model (calibrated: HzCalibration nodes or Q/DQ quantizers; or a float model)
  CALIBRATION_DATA  folder with one sub-folder per model input, one .npy per sample
  --quant on        every calibration node as saved in the model (its stored switch and qtype)
  --quant off       no calibration node quantizes (the float model)
  --config FILE     every calibration node as this configuration sets it (docs/config-schema.md:
                    what the page's what-if saves, or fix --config-out writes)
  --out DIR         writes DIR/sample_<k>/<output index>.npy; k follows the file-name order
  --conv MODE       convolution kernels (default ${CONVOLUTION_MODES[0].name}):
${CONVOLUTION_MODES.map((m) => `                      ${m.name}: ${m.doc}`).join('\n')}
  --relations RULES which calibration nodes a node of --config's intents switches (§1.9; default ${RELATION_RULES[0].name}):
${RELATION_RULES.map((r) => `                      ${r.name}: ${r.doc}`).join('\n')}
  --memory          at the end, print the wasm heap's size (its peak) and the most bytes counted
                    against the memory budget at once, on stderr
  --quiet           no progress on stderr`;

const SPEC = {
  positionals: ['MODEL', 'CALIBRATION_DATA'],
  options: { quant: { choices: ['on', 'off'], either: 'config' }, config: {}, out: { required: true }, conv: {}, relations: { choices: RELATION_RULES.map((r) => r.name) },
    memory: { flag: true }, quiet: { flag: true } },
};

// The CLI's "on" is the model as saved; the wasm API's 'on' would force every node on.
const MODES = { on: 'stored', off: 'off' };

export async function main(argv, { log = console.log } = {}) {
  const { options, positionals } = parseArgs(argv, SPEC);
  const [modelPath, dataDir] = positionals;
  const config = options.config === undefined ? null : readConfigFile(options.config);
  checkOutputs([{ path: options.out, kind: 'dir', option: '--out' }]);
  const modelBytes = readModelFile(modelPath);
  const files = calibrationFilesOnDemand(dataDir);

  const ptq = await loadPtqModule();
  withContext('--conv', () => ptq.setConvolutionMode(options.conv ?? CONVOLUTION_MODES[0].name));
  const session = new ptq.Session();
  try {
    const model = withContext(modelPath, () => session.loadModel(modelBytes, readExternalData(ptq, modelPath, modelBytes)));
    for (const w of model.warnings ?? []) process.stderr.write(`${modelPath}: warning: ${w}\n`);
    if (options.relations) session.setRelations(options.relations);
    // Checked against the model before any sample runs; the core's errors name the field.
    if (config) withContext(options.config, () => session.resolveConfig(JSON.stringify(config)));
    const { sampleCount, sampleNames } = withContext(dataDir, () => session.loadCalibrationData(files));
    const runConfig = config ?? MODES[options.quant];
    const how = config ? `config ${options.config}` : `quant ${options.quant}`;
    // Progress on stderr, sample by sample, as the analysis commands show theirs (--quiet: none).
    const progress = createProgress({ quiet: options.quiet });
    progress.stage(`Running ${sampleCount} sample${sampleCount === 1 ? '' : 's'} (${how})`);
    const started = Date.now();
    await withOutputs(() => {
      makeOutputDir(options.out);
      for (let k = 0; k < sampleCount; k++) {
        withContext(`${dataDir}: sample ${sampleNames[k]}`, () => session.run(k, runConfig));
        const dir = path.join(options.out, `sample_${k}`);
        for (let i = 0; i < session.outputCount(); i++) {
          // Encode right away: the view into wasm memory is invalidated by the next call.
          const { dtype, dims, data } = session.output(i);
          writeOutput(path.join(dir, `${i}.npy`), encodeNpy(dtype, dims, data));
        }
        progress.update(k + 1, sampleCount, ((Date.now() - started) / (k + 1)) * (sampleCount - k - 1));
      }
    });
    progress.end();
    log(`ptqscope run: ${sampleCount} samples x ${model.outputs.length} outputs (${how}, ` +
        `${model.calibrations.length} calibration nodes) -> ${options.out}`);
    if (options.memory) reportMemory([ptq.memoryUsage()], 'run');
  } finally {
    session.delete();
  }
  return 0;
}
