// A fixed-size pool of analysis workers speaking worker_core.mjs's protocol. Environment-neutral:
// `spawn()` returns a Worker-like object ({postMessage, onmessage, onerror, terminate}; onmessage
// receives {data}), a browser Worker or node_worker.mjs's adapter.
//
// Every worker gets the model bytes and calibration files once (`load`); a worker terminated by a
// cancellation is replaced by a fresh one that is sent the same `load` before its next job.

export class WorkerError extends Error {
  constructor({ name, message }) {
    super(message);
    // Keep the core's error kind (FormatError / PtqError / RangeError / InternalError): the CLI maps
    // it to an exit code.
    this.name = name;
  }
}

export function abortError(signal) {
  const reason = signal?.reason;
  if (reason instanceof Error && reason.name === 'AbortError') return reason;
  const err = new Error('the analysis was cancelled');
  err.name = 'AbortError';
  return err;
}

export function createPool({ size, spawn }) {
  if (!(size >= 1)) throw new Error(`pool size must be at least 1 (got ${size})`);
  let nextId = 1;
  let loadMsg = null; // the last `load`, replayed to replacement workers
  let closed = false;
  const queue = []; // jobs waiting for a free worker
  const slots = Array.from({ length: size }, () => ({ worker: null, job: null, loaded: null }));

  function send(slot, msg, onEvent) {
    const id = nextId++;
    if (slot.pending) return Promise.reject(new Error('internal: a worker was sent two requests at once'));
    return new Promise((resolve, reject) => {
      slot.pending = { id, resolve, reject, onEvent };
      slot.worker.postMessage({ ...msg, id });
    });
  }

  function onMessage(slot, data) {
    const p = slot.pending;
    if (!p || data.id !== p.id) return; // a late reply of a cancelled job
    if (data.type === 'event') {
      p.onEvent?.(data.event);
      return;
    }
    slot.pending = null;
    if (data.type === 'error') p.reject(new WorkerError(data.error));
    else p.resolve(data);
  }

  function start(slot) {
    const worker = spawn();
    slot.worker = worker;
    slot.loaded = null;
    slot.loading = null;
    worker.onmessage = (e) => onMessage(slot, e.data);
    worker.onerror = (e) => {
      // The worker died (e.g. out of memory): fail its job, replace it.
      const p = slot.pending;
      slot.pending = null;
      replace(slot);
      p?.reject(new WorkerError({ name: 'InternalError', message: `analysis worker failed: ${e?.message ?? e}` }));
    };
  }

  function replace(slot) {
    slot.worker?.terminate();
    slot.worker = null;
    slot.loaded = null;
  }

  // Makes sure the slot's worker exists and has the current model loaded.
  function ready(slot) {
    if (!slot.worker) start(slot);
    if (loadMsg && slot.loaded !== loadMsg) {
      const msg = loadMsg;
      slot.loaded = msg;
      slot.loading = send(slot, msg).catch((err) => {
        if (slot.loaded === msg) slot.loaded = null;
        throw err;
      });
    }
    return slot.loaded ? slot.loading : null;
  }

  async function runJob(slot, job) {
    slot.job = job;
    try {
      const loading = ready(slot);
      if (loading) await loading;
      if (job.signal?.aborted) throw abortError(job.signal);
      job.resolve(await send(slot, job.msg, job.onEvent));
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
        const onAbort = () => {
          const queued = queue.indexOf(job);
          if (queued >= 0) queue.splice(queued, 1);
          const slot = slots.find((s) => s.job === job);
          const pending = slot?.pending;
          if (slot) {
            slot.pending = null;
            replace(slot);
          }
          pending?.reject(abortError(signal)); // frees the slot (runJob's finally)
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
  async function load({ model, files, modelName, dataName }) {
    if (slots.some((s) => s.job)) throw new Error('load() while analyses are running');
    const msg = { type: 'load', model, files, modelName, dataName };
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

  function close() {
    closed = true;
    for (const job of queue.splice(0)) job.reject(new Error('the worker pool was closed'));
    for (const slot of slots) {
      slot.pending?.reject(new Error('the worker pool was closed'));
      slot.pending = null;
      replace(slot);
    }
  }

  return { size, load, request, close };
}
