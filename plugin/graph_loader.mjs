// graphJson of a model, computed in an analysis worker: Netron's Content-Security-Policy
// (script-src 'self', no 'wasm-unsafe-eval') forbids compiling WebAssembly in the page itself, while a
// same-origin worker script gets its own (empty) policy. Requests: web/pipeline/worker_core.mjs,
// messages: web/pipeline/protocol.mjs.
import { createClient } from '../web/pipeline/protocol.mjs';

// externalFiles: [{path, bytes}] the files opened with the model (its external data, if it has any).
// -> {graph, summary} (summary: the core's model summary, e.g. its unsupported nodes).
export async function loadGraphInWorker(spawn, bytes, modelName, externalFiles = []) {
  const client = createClient(() => {
    try {
      return spawn();
    } catch (err) {
      throw new Error(`cannot start the analysis worker: ${err.message}`);
    }
  }, { name: 'analysis worker' });
  try {
    // A copy: the page keeps modelBytes for the analysis pool.
    // Both sent at once; the worker answers in order, so a model that fails to load is the error.
    const [{ summary }, { json }] = await Promise.all([client.call('load', { model: bytes, externalFiles, modelName }), client.call('graph')]);
    try {
      return { graph: JSON.parse(json), summary };
    } catch (err) {
      throw new Error(`${modelName}: graphJson is not valid JSON (${err.message})`);
    }
  } finally {
    client.terminate();
  }
}
