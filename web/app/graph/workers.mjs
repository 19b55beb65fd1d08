// Main-thread clients of the viewer's two workers. Vite inlines each worker (`?worker&inline`: a
// blob URL made from inlined source), so the same code runs from dist/ on any static host and from
// the single-file ptqscope.html opened via file://.
import EngineWorker from './engine_worker.mjs?worker&inline';
import LayoutWorker from './layout_worker.mjs?worker&inline';
import { spawnWithWasm } from './wasm_share.mjs';

import { createClient, transferredCopies } from '../../pipeline/protocol.mjs';

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

// The engine worker of the open model: it keeps the session it read the model into for the calibration
// check, which then does not send the model again (with a gigabyte of weights, a second copy in a
// second worker is what the page cannot afford). It is ended once the data is checked, or when another
// model is opened: a wasm heap never shrinks (to the size of the largest model), ending the worker
// gives it back, and the analyses load their own pool. A fresh worker per model, so a new load never
// waits for an old one.
let held = null; // {engine, bytes}: the engine that loaded the model `bytes`
const newEngine = () => rpc(() => spawnWithWasm(() => new EngineWorker({ name: 'ptqscope-engine' })), 'engine worker');
function release(entry) {
  if (held === entry) held = null;
  entry?.engine.restart(); // pending calls (an older load still running) fail with AbortError
}

// Every byte array goes to the worker as a copy by transfer (protocol.mjs transferredCopies): the app
// keeps the model's bytes for the analysis workers. `candidates` / `externalFiles`: [{path, bytes}]
// external-data files.
// `relations`: the relation rules of the graph (describe().relation_rules; the default when absent).
export async function loadModel(bytes, candidates = [], relations = undefined) {
  release(held);
  const entry = { engine: newEngine(), bytes };
  held = entry;
  const { copy, copyFiles, transfer } = transferredCopies();
  try {
    return await entry.engine.call('load', { model: copy(bytes), candidates: copyFiles(candidates), relations }, transfer);
  } catch (err) {
    release(entry);
    throw err;
  }
}

// The core's checks of calibration files against the model `modelBytes`: in the engine that loaded it
// when it still holds it, else in a fresh one given the model. Data the core refuses leaves that
// engine for the next try.
export async function loadCalibration(files, modelBytes, externalFiles = []) {
  const entry = held?.bytes === modelBytes ? held : { engine: newEngine(), bytes: modelBytes };
  const { copy, copyFiles, transfer } = transferredCopies();
  const payload = entry === held ? { files: copyFiles(files) }
    : { model: copy(modelBytes), externalFiles: copyFiles(externalFiles), files: copyFiles(files) };
  try {
    const checked = await entry.engine.call('data', payload, transfer);
    release(entry);
    return checked;
  } catch (err) {
    if (entry !== held || !REFUSED_DATA.has(err?.name)) release(entry);
    throw err;
  }
}
// The kinds of error of data the core refused (the session is intact); any other failure (the worker
// died, was cancelled) ends the engine.
const REFUSED_DATA = new Set(['PtqError', 'FormatError', 'RangeError']);
// The view model and its layout, both computed in the layout worker.
export const modelAndLayout = (graph, options) => layoutWorker.call('layout', { graph, options });
