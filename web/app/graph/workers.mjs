// Main-thread clients of the viewer's two workers. Vite inlines each worker (`?worker&inline`: a
// blob URL made from inlined source), so the same code runs from dist/ on any static host and from
// the single-file ptqscope.html opened via file://.
import EngineWorker from './engine_worker.mjs?worker&inline';
import LayoutWorker from './layout_worker.mjs?worker&inline';
import { spawnWithWasm } from './wasm_share.mjs';

// Request/response over postMessage with ids; a worker that dies rejects what is pending.
function rpc(spawn) {
  let worker = null;
  let next = 1;
  const pending = new Map();
  const start = () => {
    worker = spawn();
    worker.onmessage = ({ data }) => {
      const p = pending.get(data.id);
      if (!p) return;
      pending.delete(data.id);
      if (data.error) {
        const err = new Error(data.error);
        if (data.errorName) err.name = data.errorName;
        p.reject(err);
      } else p.resolve(data);
    };
    worker.onerror = (ev) => {
      ev.preventDefault?.();
      const err = new Error(`worker failed: ${ev.message ?? 'unknown error'}`);
      for (const p of pending.values()) p.reject(err);
      pending.clear();
      worker.terminate();
      worker = null; // restarted on the next call
    };
  };
  return {
    call(message, transfer = []) {
      if (!worker) start();
      const id = next++;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject });
        worker.postMessage({ ...message, id }, transfer);
      });
    },
    // Drops a running request (e.g. the layout of a graph that was replaced).
    restart() {
      worker?.terminate();
      worker = null;
      for (const p of pending.values()) p.reject(Object.assign(new Error('cancelled'), { name: 'AbortError' }));
      pending.clear();
    },
  };
}

export const layoutWorker = rpc(() => new LayoutWorker({ name: 'ptqscope-layout' }));

// One request per engine worker: ending it afterwards gives its wasm heap (which only grows, to the
// size of the largest model) back; compiling the module again takes a fraction of a second.
// A fresh worker per request, so requests never wait for or cancel each other.
async function once(message, transfer) {
  const engine = rpc(() => spawnWithWasm(() => new EngineWorker({ name: 'ptqscope-engine' })));
  try {
    return await engine.call(message, transfer);
  } finally {
    engine.restart(); // nothing is pending any more: this only ends the worker
  }
}

// The app keeps the model bytes (for the analysis workers): the worker gets a copy, transferred.
export function loadModel(bytes) {
  const copy = bytes.slice();
  return once({ type: 'load', model: copy }, [copy.buffer]);
}
export function loadCalibration(files, modelBytes) {
  const copy = modelBytes.slice();
  return once({ type: 'data', model: copy, files }, [copy.buffer]);
}
// The view model and its layout, both computed in the layout worker.
export const modelAndLayout = (graph, options) => layoutWorker.call({ graph, options });
