// graphJson of a model, computed in an analysis worker: Netron's Content-Security-Policy
// (script-src 'self', no 'wasm-unsafe-eval') forbids compiling WebAssembly in the page itself, while a
// same-origin worker script gets its own (empty) policy. Protocol: web/pipeline/worker_core.mjs.

export function loadGraphInWorker(spawn, bytes, modelName) {
  return new Promise((resolve, reject) => {
    let worker;
    try {
      worker = spawn();
    } catch (err) {
      reject(new Error(`cannot start the analysis worker: ${err.message}`));
      return;
    }
    const finish = (fn, value) => {
      worker.terminate();
      fn(value);
    };
    worker.onmessage = (e) => {
      const m = e.data;
      if (m?.type === 'error') finish(reject, Object.assign(new Error(m.error?.message ?? m.message ?? 'worker error'), { name: m.error?.name ?? 'Error' }));
      else if (m?.type === 'graph') {
        try {
          finish(resolve, JSON.parse(m.json));
        } catch (err) {
          finish(reject, new Error(`${modelName}: graphJson is not valid JSON (${err.message})`));
        }
      }
    };
    worker.onerror = (e) => finish(reject, new Error(`analysis worker failed: ${e?.message ?? e}`));
    // A copy: the page keeps modelBytes for the analysis pool.
    worker.postMessage({ type: 'load', id: 1, model: bytes, modelName });
    worker.postMessage({ type: 'graph', id: 2 });
  });
}
