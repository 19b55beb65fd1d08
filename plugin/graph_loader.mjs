// The plugin's engine (the opener's interface, web/app/open/open.mjs): a model's graphJson and the
// core's checks of its calibration data, each computed in a fresh analysis worker: Netron's
// Content-Security-Policy (script-src 'self', no 'wasm-unsafe-eval') forbids compiling WebAssembly in
// the page itself, while a same-origin worker script gets its own (empty) policy. Requests:
// web/pipeline/worker_core.mjs, messages: web/pipeline/protocol.mjs.
import { createClient } from '../web/pipeline/protocol.mjs';
import { postableFiles } from '../web/app/analysis/pipeline.mjs';

function workerClient(spawn) {
  return createClient(() => {
    try {
      return spawn();
    } catch (err) {
      throw new Error(`cannot start the analysis worker: ${err.message}`);
    }
  }, { name: 'analysis worker' });
}

// externalFiles: [{path, bytes}] the files opened with the model (its external data, if it has any);
// relations: the relation rules of the graph (describe().relation_rules; the default when absent).
// -> {graph, summary} (summary: the core's model summary, e.g. its unsupported nodes).
export async function loadGraphInWorker(spawn, bytes, modelName, externalFiles = [], relations = undefined) {
  const client = workerClient(spawn);
  try {
    // A copy: the page keeps modelBytes for the analysis pool.
    // Both sent at once; the worker answers in order, so a model that fails to load is the error.
    const [{ summary }, { json }] = await Promise.all([client.call('load', { model: bytes, externalFiles, modelName, relations }), client.call('graph')]);
    try {
      return { graph: JSON.parse(json), summary };
    } catch (err) {
      throw new Error(`${modelName}: graphJson is not valid JSON (${err.message})`);
    }
  } finally {
    client.terminate();
  }
}

// The core's dtype / shape / NaN checks of calibration files [{path, bytes, file?}] against the model
// -> {sampleCount, sampleNames}.
export async function loadDataInWorker(spawn, files, modelBytes, externalFiles = []) {
  const client = workerClient(spawn);
  try {
    const { data } = await client.call('load', { model: modelBytes, externalFiles, files: postableFiles(files) });
    return data;
  } finally {
    client.terminate();
  }
}

// The engine of web/app/open/open.mjs createOpener over these workers. Every file opened with the
// model is handed to the analyses as a possible external-data file (the core reads those it names).
export const workerEngine = (spawn, modelName) => ({
  loadModel: async (bytes, candidates = [], relations = undefined) => ({
    ...await loadGraphInWorker(spawn, bytes, modelName(), candidates, relations), externalPaths: candidates.map((c) => c.path),
  }),
  loadCalibration: (files, modelBytes, externalFiles) => loadDataInWorker(spawn, files, modelBytes, externalFiles),
});
