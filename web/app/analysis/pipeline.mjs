// The page's view of web/pipeline: a pool that is loaded with the model and calibration files when
// made, runAnalysis, and runAll (§8.4).
import { createPool as makePool } from '../../pipeline/pool.mjs';
import { runAnalysis } from '../../pipeline/sweep.mjs';

export { runAnalysis };

export async function createPool({ size, spawn, model, files, modelName }) {
  const pool = makePool({ size, spawn });
  try {
    await pool.load({ model, files, modelName, dataName: 'calibration_data' });
  } catch (err) {
    pool.close();
    throw err;
  }
  return { ...pool, terminate: pool.close };
}

export async function runAll() {
  throw new Error('Run all is not available in this build yet (web/pipeline has no runAll)');
}
