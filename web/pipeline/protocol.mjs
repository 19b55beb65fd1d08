// The one request/response protocol between a main thread and its workers: the page's analysis,
// engine and layout workers, the Netron plugin's worker and the CLI's worker_threads all speak it.
// Environment-neutral (no DOM, no node: imports).
//
//   request   {id, type, ...payload}                    main -> worker
//   cancel    {type: 'cancel', id}                      main -> worker (the request's id)
//   event     {id, event}                               worker -> main, zero or more per request
//   response  {id, ok: true, result}                    worker -> main, exactly one per request
//             {id, ok: false, error: {name, message}}
//
// `name` keeps the error's kind (FormatError / PtqError / RangeError / InternalError / AbortError):
// the CLI maps it to an exit code, the page shows `message`. A cancelled request answers with an
// AbortError (a handler sees its `signal` aborted; one that has not started yet never starts).
// A wasm call cannot be interrupted: clients that must stop one at once terminate the worker
// (`createClient`'s `onCancel: 'terminate'`) and a fresh one is spawned on the next call.

export const CANCEL = 'cancel';

// An Error rebuilt from a response's {name, message}.
export class WorkerError extends Error {
  constructor({ name, message } = {}) {
    super(String(message ?? 'worker error'));
    this.name = name || 'Error';
  }
}

export function abortError(signal) {
  const reason = signal?.reason;
  if (reason instanceof Error && reason.name === 'AbortError') return reason;
  const err = new Error('the analysis was cancelled');
  err.name = 'AbortError';
  return err;
}

// The error shape of a response, from anything thrown.
export function errorShape(err) {
  return { name: err?.name ? String(err.name) : 'Error', message: String(err?.message ?? err) };
}

// Byte arrays sent by transfer, as fresh copies: a clone is serialized, copy by copy, and Chromium
// fails to clone a gigabyte of weights followed by the data files ("Data cannot be cloned, out of
// memory"); a transferred copy is moved, not serialized, and the sender keeps its own bytes.
// -> {copy(bytes), copyFiles([{path, bytes}]), transfer: [buffers]}
export function transferredCopies() {
  const transfer = [];
  const copy = (bytes) => {
    const c = new Uint8Array(bytes); // a new buffer, also for a Node Buffer (whose slice() is a view)
    transfer.push(c.buffer);
    return c;
  };
  // A file given by reference ({path, file}) goes as it is: its worker reads it.
  return { copy, copyFiles: (files) => files?.map((f) => (f.bytes ? { ...f, bytes: copy(f.bytes) } : f)), transfer };
}

// The receiving side: once a request's bytes are in the wasm heap, the worker frees its own copies
// (detached by ArrayBuffer.prototype.transfer) rather than leaving them to a garbage collection, which
// a worker busy in long wasm calls may not reach: a gigabyte of weights is then held once, in the
// heap. Engines without `transfer` (Node 20) leave them to the collector. `files`: [{bytes}].
export function releaseBytes(bytes, ...files) {
  for (const b of [bytes, ...files.flatMap((list) => (list ?? []).map((f) => f.bytes))]) b?.buffer?.transfer?.(0);
}

// Messages of the protocol (for handlers and tests).
export const response = (id, result) => ({ id, ok: true, result });
export const failure = (id, err) => ({ id, ok: false, error: errorShape(err) });
export const eventMessage = (id, event) => ({ id, event });

/**
 * Worker side. serve(handlers, post) -> onMessage(msg)
 * handlers: {[type]: (msg, {emit(event), signal, post}) => result | Promise<result>}.
 * Requests run one after another in arrival order (a worker holds one wasm session); a `cancel`
 * aborts the request's signal (queued: it answers AbortError without running). `post(msg, transfer?)`
 * sends a message; a handler may return `{result, transfer}` via `withTransfer`.
 */
export function serve(handlers, post) {
  const live = new Map(); // id -> AbortController of queued and running requests
  let chain = Promise.resolve();
  return function onMessage(msg) {
    if (msg?.type === CANCEL) {
      live.get(msg.id)?.abort();
      return;
    }
    const id = msg?.id;
    const controller = new AbortController();
    live.set(id, controller);
    const run = async () => {
      try {
        if (controller.signal.aborted) throw abortError(controller.signal);
        const handler = Object.hasOwn(handlers, msg?.type) ? handlers[msg.type] : null;
        if (!handler) throw new Error(`unknown worker message type '${msg?.type}'`);
        const emit = (event) => post(eventMessage(id, event));
        const out = await handler(msg, { emit, signal: controller.signal, post });
        if (out instanceof Transferable) post(response(id, out.result), out.transfer);
        else post(response(id, out));
      } catch (err) {
        post(failure(id, err));
      } finally {
        live.delete(id);
      }
    };
    chain = chain.then(run);
    return chain;
  };
}

class Transferable {
  constructor(result, transfer) {
    this.result = result;
    this.transfer = transfer;
  }
}
// A handler's result whose buffers are transferred rather than copied.
export const withTransfer = (result, transfer) => new Transferable(result, transfer);

/**
 * Main side. createClient(spawn, {onCancel}) -> {call, terminate, get busy}
 * spawn(): a Worker-like object ({postMessage(msg, transfer?), onmessage, onerror, terminate}; onmessage
 * receives {data}), started lazily on the first call and again after a terminate.
 * call(type, payload?, {onEvent, signal, transfer}) -> Promise<result>; rejects with a WorkerError
 * (the worker's {name, message}), an AbortError when `signal` fires, or an InternalError when the
 * worker dies (every pending call fails and the next call spawns a fresh worker).
 * onCancel: 'message' (default: send {type: 'cancel', id}) or 'terminate' (end the worker: the only
 * way to stop a running wasm call; other pending calls fail with AbortError too).
 */
export function createClient(spawn, { onCancel = 'message', name = 'worker' } = {}) {
  let worker = null;
  let nextId = 1;
  const pending = new Map(); // id -> {resolve, reject, onEvent, cleanup}

  const settle = (id) => {
    const p = pending.get(id);
    pending.delete(id);
    p?.cleanup?.();
    return p;
  };
  const failAll = (makeError) => {
    for (const id of [...pending.keys()]) settle(id).reject(makeError());
  };

  function start() {
    worker = spawn();
    const current = worker;
    worker.onmessage = ({ data }) => {
      if (current !== worker || !data || !pending.has(data.id)) return; // a late reply of a cancelled call
      if ('event' in data && !('ok' in data)) {
        pending.get(data.id).onEvent?.(data.event);
        return;
      }
      const p = settle(data.id);
      if (data.ok) p.resolve(data.result);
      else p.reject(new WorkerError(data.error));
    };
    const fail = (message) => {
      if (current !== worker) return;
      terminate();
      failAll(() => new WorkerError({ name: 'InternalError', message: `${name} failed: ${message}` }));
    };
    worker.onerror = (ev) => {
      ev?.preventDefault?.();
      fail(ev?.message ?? ev);
    };
    // A reply the browser could not copy (out of memory) never arrives as a message.
    worker.onmessageerror = () => fail('a reply from it could not be read (out of memory?)');
  }

  function terminate() {
    const w = worker;
    worker = null;
    w?.terminate();
  }

  function call(type, payload = {}, { onEvent, signal, transfer } = {}) {
    if (signal?.aborted) return Promise.reject(abortError(signal));
    if (!worker) start();
    const id = nextId++;
    return new Promise((resolve, reject) => {
      const entry = { resolve, reject, onEvent };
      if (signal) {
        const onAbort = () => {
          if (!pending.has(id)) return;
          if (onCancel === 'terminate') {
            terminate();
            failAll(() => abortError(signal));
          } else {
            settle(id).reject(abortError(signal));
            worker?.postMessage({ type: CANCEL, id });
          }
        };
        signal.addEventListener('abort', onAbort, { once: true });
        entry.cleanup = () => signal.removeEventListener('abort', onAbort);
      }
      pending.set(id, entry);
      try {
        worker.postMessage({ ...payload, type, id }, transfer ?? []);
      } catch (err) {
        settle(id);
        reject(err);
      }
    });
  }

  return {
    call,
    // Ends the worker; pending calls fail with `reason` (an AbortError by default).
    terminate(reason) {
      terminate();
      failAll(() => reason ?? abortError());
    },
    get busy() {
      return pending.size > 0;
    },
    get started() {
      return worker !== null;
    },
  };
}
