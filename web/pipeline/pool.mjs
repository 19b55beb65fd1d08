// A fixed-size pool of analysis workers speaking protocol.mjs (requests: worker_core.mjs).
// Environment-neutral: `spawn()` returns a Worker-like object ({postMessage, onmessage, onerror,
// terminate}; onmessage receives {data}), a browser Worker or node_worker.mjs's adapter.
//
// Every worker gets the model bytes and calibration files once (`load`); a worker terminated by a
// cancellation (a wasm call cannot be interrupted) is replaced by a fresh one that is sent the same
// `load` before its next job.
import { createClient, WorkerError, abortError, transferredCopies } from './protocol.mjs';

// Errors keep the core's kind (FormatError / PtqError / RangeError / InternalError): the CLI maps it
// to an exit code.
export { WorkerError, abortError };

// Each worker holds its own copy of the model, and a run adds up to as much again in quantized weights
// and their packing (its heap reaches about three times the model), so a big model gets fewer
// workers: the copies of the pool together stay within MODEL_COPIES_BYTES (their heaps then within
// about 3 GiB), with at least one worker. `modelBytes`: the model file and its external data together.
export const MODEL_COPIES_BYTES = 2 ** 30;
export const poolSizeFor = (size, modelBytes) => Math.max(1, Math.min(size, Math.floor(MODEL_COPIES_BYTES / Math.max(1, modelBytes))));

export function createPool({ size, spawn }) {
  if (!(size >= 1)) throw new Error(`pool size must be at least 1 (got ${size})`);
  let loadMsg = null; // the last `load`, replayed to replacement workers
  let closed = false;
  const queue = []; // jobs waiting for a free worker
  // One protocol client per worker; a cancelled job terminates its worker, the next job spawns a
  // fresh one (client.started is false again) which is loaded first.
  const slots = Array.from({ length: size }, () => {
    const slot = { job: null, loaded: null, loading: null };
    slot.client = createClient(() => {
      slot.loaded = null; // a new worker has nothing loaded
      return spawn();
    }, { onCancel: 'terminate', name: 'analysis worker' });
    return slot;
  });

  const send = (slot, { type, ...payload }, options) => slot.client.call(type, payload, options);

  // The load's bytes go to each worker as copies by transfer (protocol.mjs transferredCopies); the
  // pool keeps its own for replacement workers.
  function sendLoad(slot, { model, externalFiles, files, ...rest }) {
    const { copy, copyFiles, transfer } = transferredCopies();
    const payload = { ...rest, model: copy(model), externalFiles: copyFiles(externalFiles), files: copyFiles(files) };
    return send(slot, payload, { transfer });
  }

  // Makes sure the slot's worker exists and has the current model loaded.
  function ready(slot) {
    if (loadMsg && (slot.loaded !== loadMsg || !slot.client.started)) {
      const msg = loadMsg;
      slot.loading = sendLoad(slot, msg).catch((err) => {
        if (slot.loaded === msg) slot.loaded = null;
        throw err;
      });
      slot.loaded = msg; // after send(): spawning resets it
    }
    return slot.loaded ? slot.loading : null;
  }

  async function runJob(slot, job) {
    slot.job = job;
    try {
      const loading = ready(slot);
      if (loading) await loading;
      if (job.signal?.aborted) throw abortError(job.signal);
      job.resolve(await send(slot, job.msg, { onEvent: job.onEvent, signal: job.signal }));
    } catch (err) {
      job.reject(err);
    } finally {
      job.cleanup?.();
      slot.job = null;
      pump();
    }
  }

  function pump() {
    if (closed) return;
    for (const slot of slots) {
      if (slot.job || !queue.length) continue;
      runJob(slot, queue.shift());
    }
  }

  // Runs one request on the next free worker. `signal` aborts it: a queued job is dropped, a running
  // one has its worker terminated (a wasm call cannot be interrupted) and replaced.
  function request(msg, { onEvent, signal } = {}) {
    if (closed) return Promise.reject(new Error('the worker pool is closed'));
    if (signal?.aborted) return Promise.reject(abortError(signal));
    return new Promise((resolve, reject) => {
      const job = { msg, onEvent, signal, resolve, reject };
      if (signal) {
        // Queued: dropped. Running: the slot's client terminates its worker (a load in progress
        // finishes in the background; the job does not start).
        const onAbort = () => {
          const queued = queue.indexOf(job);
          if (queued >= 0) queue.splice(queued, 1);
          reject(abortError(signal));
        };
        signal.addEventListener('abort', onAbort, { once: true });
        job.cleanup = () => signal.removeEventListener('abort', onAbort);
      }
      queue.push(job);
      pump();
    });
  }

  // Loads the model (and calibration files) into every worker; resolves with the first reply
  // ({summary, data}). Errors name the file when modelName / dataName are given.
  async function load({ model, externalFiles, files, modelName, dataName, convolution, relations }) {
    if (slots.some((s) => s.job)) throw new Error('load() while analyses are running');
    const msg = { type: 'load', model, externalFiles, files, modelName, dataName, convolution, relations };
    loadMsg = msg;
    try {
      // Wait for every worker (even after a failure) so that none is left mid-load.
      const settled = await Promise.allSettled(slots.map((slot) => ready(slot)));
      const failed = settled.find((r) => r.status === 'rejected');
      if (failed) throw failed.reason;
      const first = settled[0].value;
      return { summary: first.summary, data: first.data };
    } catch (err) {
      if (loadMsg === msg) loadMsg = null;
      throw err;
    }
  }

  // Every loaded worker's ptq.memoryUsage() (worker_core's `memory`), in slot order; waits for running jobs.
  function memory() {
    return Promise.all(slots.filter((slot) => slot.loaded && slot.client.started).map((slot) => send(slot, { type: 'memory' })));
  }

  function close() {
    closed = true;
    for (const job of queue.splice(0)) job.reject(new Error('the worker pool was closed'));
    for (const slot of slots) slot.client.terminate(new Error('the worker pool was closed'));
  }

  return { size, load, request, memory, close };
}
