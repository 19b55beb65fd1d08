// Main-thread clients of the viewer's two workers. Vite inlines each worker (`?worker&inline`: a
// blob URL made from inlined source), so the same code runs from dist/ on any static host and from
// the single-file ptqscope.html opened via file://.
import EngineWorker from './engine_worker.mjs?worker&inline';
import LayoutWorker from './layout_worker.mjs?worker&inline';
import { spawnWithWasm } from './wasm_share.mjs';

import { createClient } from '../../pipeline/protocol.mjs';

// A protocol client (web/pipeline/protocol.mjs) whose restart() drops what is running: the worker is
// ended, pending calls fail with AbortError, the next call starts a fresh worker.
function rpc(spawn, name) {
  const client = createClient(spawn, { onCancel: 'terminate', name });
  return {
    call: (type, payload, transfer = []) => client.call(type, payload, { transfer }),
    restart: () => client.terminate(),
  };
}

export const layoutWorker = rpc(() => new LayoutWorker({ name: 'ptqscope-layout' }), 'layout worker');

// One request per engine worker: ending it afterwards gives its wasm heap (which only grows, to the
// size of the largest model) back; compiling the module again takes a fraction of a second.
// A fresh worker per request, so requests never wait for or cancel each other.
async function once(type, payload, transfer) {
  const engine = rpc(() => spawnWithWasm(() => new EngineWorker({ name: 'ptqscope-engine' })), 'engine worker');
  try {
    return await engine.call(type, payload, transfer);
  } finally {
    engine.restart(); // nothing is pending any more: this only ends the worker
  }
}

// The app keeps the model bytes (for the analysis workers): the worker gets a copy, transferred.
// `candidates` / `externalFiles`: [{path, bytes}] external-data files (copied by the message).
export function loadModel(bytes, candidates = []) {
  const copy = bytes.slice();
  return once('load', { model: copy, candidates }, [copy.buffer]);
}
export function loadCalibration(files, modelBytes, externalFiles = []) {
  const copy = modelBytes.slice();
  return once('data', { model: copy, externalFiles, files }, [copy.buffer]);
}
// The view model and its layout, both computed in the layout worker.
export const modelAndLayout = (graph, options) => layoutWorker.call('layout', { graph, options });
