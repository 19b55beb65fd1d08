// The page's view of web/pipeline: a pool that is loaded with the model and calibration files when
// made, runAnalysis, and runAll (§8.4) returning its combined result document.
import { createPool as makePool } from '../../pipeline/pool.mjs';
import { runAnalysis } from '../../pipeline/sweep.mjs';
import { runAll as runAllStages, withoutNone } from '../../pipeline/runall.mjs';
import { calibrationSetResolver } from '../../pipeline/relations.mjs';
import { combineDocuments } from '../../pipeline/result.mjs';

export { runAnalysis };

// `files`: the calibration files [{path, bytes, file?}]; one opened from disk goes to the workers as
// its File, which they read whenever a sample is used, so that no worker holds the whole folder. Only
// a real Blob can be posted to a worker and read there; anything else File-like goes as its bytes.
export const postableFiles = (files) => files?.map((f) => (f.file instanceof Blob ? { path: f.path, file: f.file } : { path: f.path, bytes: f.bytes }));

export async function createPool({ size, spawn, model, externalFiles, files, modelName, convolution, relations }) {
  const pool = makePool({ size, spawn });
  const sent = postableFiles(files);
  try {
    await pool.load({ model, externalFiles, files: sent, modelName, dataName: 'calibration_data', convolution, relations });
  } catch (err) {
    pool.close();
    throw err;
  }
  return { ...pool, terminate: pool.close };
}

// hooks: the runner's (signal, onItem, onProgress, onStage, modelFile: the opened file's name, which
// every request names) plus `graph` for node_type=node's calibration sets. After the stages of §8.4, the page's Run all also evaluates the model's outputs as
// calibrated (a `what_if` of the stored configuration, on the samples the sweeps used): the summary it
// ends with starts from those numbers (analysis/views.mjs).
export async function runAll(pool, options, { graph, ...hooks } = {}) {
  const calibrationSetOf = graph ? calibrationSetResolver(graph) : undefined;
  const { result } = await runAllStages(pool, options, { ...hooks, calibrationSetOf });
  hooks.onStage?.('outputs as calibrated');
  const outputs = await runAnalysis(pool, { analysis: 'what_if', options: withoutNone({ data_num: options.data_num }),
    ...(hooks.modelFile ? { model_file: hooks.modelFile } : {}) }, { signal: hooks.signal, onProgress: hooks.onProgress });
  return combineDocuments([result, outputs]);
}
