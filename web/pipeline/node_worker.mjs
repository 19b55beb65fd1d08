// Node's side of the worker pool: this file is both the worker_threads entry (it loads the wasm core
// and forwards messages to worker_core.handleMessage) and, imported from the main thread, the
// `spawn` adapter giving pool.mjs a browser-Worker-like object.
import fs from 'node:fs';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { pathToFileURL } from 'node:url';
import { handleMessage } from './worker_core.mjs';

// A Worker-like wrapper ({postMessage, onmessage, onerror, terminate}) around a worker thread.
// `wasmPath`: the ES module of the wasm core (build/wasm/ptqscope.mjs).
export function spawnNodeWorker(wasmPath) {
  const worker = new Worker(new URL(import.meta.url), { workerData: { wasmPath } });
  const adapter = {
    onmessage: null,
    onerror: null,
    postMessage: (msg, transfer) => worker.postMessage(msg, transfer),
    terminate: () => {
      adapter.terminated = true;
      worker.terminate();
    },
  };
  worker.on('message', (data) => adapter.onmessage?.({ data }));
  worker.on('error', (err) => adapter.onerror?.(err));
  worker.on('exit', (code) => {
    if (!adapter.terminated && code !== 0) adapter.onerror?.(new Error(`worker exited with code ${code}`));
  });
  return adapter;
}

if (!isMainThread && workerData?.wasmPath) {
  const { default: createPtqModule } = await import(pathToFileURL(workerData.wasmPath).href);
  const ptq = await createPtqModule();
  // A calibration file given by reference is a path, read whenever its sample is used.
  const readFile = (file) => fs.readFileSync(file);
  // onnxruntime-web's Node build: the engine the page and the plugin check with (single-threaded, as there).
  let ort = null;
  const loadOnnxruntime = () => (ort ??= import('onnxruntime-web').then((m) => {
    m.env.wasm.numThreads = 1;
    return m;
  }));
  parentPort.on('message', (msg) => handleMessage(ptq, msg, (reply) => parentPort.postMessage(reply), { readFile, loadOnnxruntime }));
}
