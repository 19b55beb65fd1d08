// `ptqscope calibrate FLOAT_MODEL CALIBRATION_DATA --out CALIBRATED_MODEL [--method max|percentile|kl]
//  [--percentile P] [--int16 name,name] [--qdq QDQ_MODEL]`
// Makes a Horizon-format calibrated model (HzCalibration nodes, §1) from a float model and
// its calibration data with the wasm core (calibrate/calibrate.h), so the other commands and the web app
// can be tried on any float ONNX model. --qdq also writes the QuantizeLinear/DequantizeLinear rewrite
// that onnxruntime runs. A float model saved with external data is read with its side files (beside
// it); the models written hold every tensor.
import { parseArgs } from '../lib/args.mjs';
import { UsageError, withContext } from '../lib/errors.mjs';
import { readCalibrationFolder, readExternalData, readModelFile } from '../lib/files.mjs';
import { checkOutputs, withOutputs, writeOutput } from '../lib/outputs.mjs';
import { loadPtqModule } from '../lib/wasm.mjs';

export const summary = 'make a calibrated model (HzCalibration nodes) from a float model and its calibration data';
export const usage = `usage: ptqscope calibrate FLOAT_MODEL CALIBRATION_DATA --out CALIBRATED_MODEL [options]

  FLOAT_MODEL       the float .onnx model (no HzCalibration nodes; external data is read beside it)
  CALIBRATION_DATA  folder with one sub-folder per model input, one .npy per sample
  --out FILE        the calibrated model to write (e.g. calibrated_model.onnx)
  --method M        activation thresholds: max (default), percentile or kl; weights: per-channel max |w|
  --percentile P    percent of |x| kept by --method percentile (default 99.99)
  --int16 NAMES     comma-separated calibration node, tensor or node names quantized as int16
  --qdq FILE        also write the QuantizeLinear/DequantizeLinear model (runs in onnxruntime)`;

const SPEC = {
  positionals: ['FLOAT_MODEL', 'CALIBRATION_DATA'],
  options: {
    out: { required: true },
    method: { default: 'max', choices: ['max', 'percentile', 'kl'] },
    percentile: {},
    int16: {},
    qdq: {},
  },
};

export async function main(argv, { log = console.log } = {}) {
  const { options, positionals } = parseArgs(argv, SPEC);
  const [modelPath, dataDir] = positionals;
  const request = { method: options.method, qdq: options.qdq !== undefined };
  if (options.percentile !== undefined) request.percentile = parsePercentile(options.percentile);
  if (options.int16 !== undefined) request.int16 = options.int16.split(',').filter(Boolean);
  checkOutputs([{ path: options.out, kind: 'file', option: '--out' }, { path: options.qdq, kind: 'file', option: '--qdq' }]);
  const modelBytes = readModelFile(modelPath);
  const files = readCalibrationFolder(dataDir);
  const ptq = await loadPtqModule();
  // The native engine's portable GEMM kernel unless PTQSCOPE_SIMD chooses one: the calibrated bytes are
  // then the same on every CPU and equal the wasm build's (the AVX kernels fuse multiply-adds).
  if (ptq.setSimd && !process.env.PTQSCOPE_SIMD) ptq.setSimd('portable');
  // A model saved with external data: its side files, read beside it as every command reads them.
  const externalFiles = readExternalData(ptq, modelPath, modelBytes);
  if (externalFiles.length) request.externalFiles = externalFiles;
  const result = withContext(modelPath, () => ptq.calibrate(modelBytes, files, request));
  await withOutputs(() => {
    writeOutput(options.out, result.model);
    if (result.qdq) writeOutput(options.qdq, result.qdq);
  });
  log(`ptqscope calibrate: ${result.activations} activation and ${result.weights} weight calibration nodes ` +
      `from ${result.samples} sample(s) -> ${options.out}`);
  if (result.qdq) log(`ptqscope calibrate: QuantizeLinear/DequantizeLinear model -> ${options.qdq}`);
  return 0;
}

function parsePercentile(text) {
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value <= 0 || value > 100) {
    throw new UsageError(`--percentile must be a number in (0, 100], got '${text}'`, { showUsage: true });
  }
  return value;
}
