// The page's view of web/pipeline: a pool that is loaded with the model and calibration files when
// made, runAnalysis, and runAll (§8.4) returning its combined result document.
import { createPool as makePool } from '../../pipeline/pool.mjs';
import { runAnalysis } from '../../pipeline/sweep.mjs';
import { runAll as runAllStages } from '../../pipeline/runall.mjs';
import { calibrationSetResolver } from '../../pipeline/relations.mjs';

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

// hooks: the runner's (signal, onItem, onProgress, onStage) plus `graph` for node_type=node's
// calibration sets.
export async function runAll(pool, options, { graph, ...hooks } = {}) {
  const calibrationSetOf = graph ? calibrationSetResolver(graph) : undefined;
  const { result } = await runAllStages(pool, options, { ...hooks, calibrationSetOf });
  return result;
}
