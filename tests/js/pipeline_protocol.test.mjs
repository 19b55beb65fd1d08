// web/pipeline/protocol.mjs between an in-process fake worker (serve) and its client: results, one
// error shape keeping the error's kind, events, cancellation of queued and running requests (by
// message and by terminating), a dying worker, and the exact messages on the wire.
import { describe, expect, it } from 'vitest';
import { createClient, releaseBytes, serve, transferredCopies, WorkerError } from '../../web/pipeline/protocol.mjs';

// A Worker-like object whose "thread" is `serve(handlers)`; messages are structured-cloned and
// delivered asynchronously both ways. `wire` records every message in both directions.
function fakeWorkerFactory(handlers) {
  const log = { spawned: 0, terminated: 0, wire: [] };
  const spawn = () => {
    log.spawned++;
    const w = { onmessage: null, onerror: null, dead: false };
    const onMessage = serve(handlers, (msg) => {
      log.wire.push(['out', structuredClone(msg)]);
      setTimeout(() => !w.dead && w.onmessage?.({ data: structuredClone(msg) }));
    });
    w.postMessage = (msg) => {
      log.wire.push(['in', structuredClone(msg)]);
      setTimeout(() => !w.dead && onMessage(structuredClone(msg)));
    };
    w.terminate = () => {
      w.dead = true;
      log.terminated++;
    };
    w.crash = (message) => w.onerror?.({ message });
    w.unreadable = () => w.onmessageerror?.({});
    log.last = w;
    return w;
  };
  return { log, spawn };
}

const tick = (ms = 5) => new Promise((r) => setTimeout(r, ms));

const HANDLERS = {
  add: ({ a, b }) => ({ sum: a + b }),
  fail: () => {
    throw Object.assign(new Error('Conv_9 does not exist in the model.'), { name: 'PtqError' });
  },
  count: async ({ n }, { emit }) => {
    for (let k = 1; k <= n; k++) emit({ done: k, total: n });
    return { n };
  },
  // Waits until its signal aborts (or 200 ms), like a cancellable multi-step job.
  wait: async (_, { signal }) => {
    for (let k = 0; k < 40 && !signal.aborted; k++) await tick();
    if (signal.aborted) throw Object.assign(new Error('stopped'), { name: 'AbortError' });
    return { waited: true };
  },
};

describe('worker protocol', () => {
  it('answers {id, ok: true, result} and the client resolves with the result', async () => {
    const { log, spawn } = fakeWorkerFactory(HANDLERS);
    const client = createClient(spawn);
    await expect(client.call('add', { a: 2, b: 3 })).resolves.toEqual({ sum: 5 });
    expect(log.wire).toEqual([['in', { a: 2, b: 3, type: 'add', id: 1 }], ['out', { id: 1, ok: true, result: { sum: 5 } }]]);
  });

  it('one error shape {name, message}; the client rejects with a WorkerError of that name', async () => {
    const { log, spawn } = fakeWorkerFactory(HANDLERS);
    const client = createClient(spawn);
    const err = await client.call('fail').catch((e) => e);
    expect(err).toBeInstanceOf(WorkerError);
    expect([err.name, err.message]).toEqual(['PtqError', 'Conv_9 does not exist in the model.']);
    expect(log.wire.at(-1)[1]).toEqual({ id: 1, ok: false, error: { name: 'PtqError', message: 'Conv_9 does not exist in the model.' } });
    const unknown = await client.call('nope').catch((e) => e);
    expect(unknown.message).toBe("unknown worker message type 'nope'");
    // the worker stays usable
    await expect(client.call('add', { a: 1, b: 1 })).resolves.toEqual({ sum: 2 });
    expect(log.spawned).toBe(1);
  });

  it('events {id, event} reach onEvent before the response', async () => {
    const { spawn } = fakeWorkerFactory(HANDLERS);
    const client = createClient(spawn);
    const events = [];
    const result = await client.call('count', { n: 3 }, { onEvent: (e) => events.push(e) });
    expect(events).toEqual([{ done: 1, total: 3 }, { done: 2, total: 3 }, { done: 3, total: 3 }]);
    expect(result).toEqual({ n: 3 });
  });

  it("cancel by message: {type: 'cancel', id} stops a running handler and a queued one never runs", async () => {
    const ran = [];
    const { log, spawn } = fakeWorkerFactory({ ...HANDLERS, add: (m) => { ran.push(m.id); return HANDLERS.add(m); } });
    const client = createClient(spawn);
    const first = new AbortController();
    const second = new AbortController();
    const running = client.call('wait', {}, { signal: first.signal });
    const queued = client.call('add', { a: 1, b: 2 }, { signal: second.signal });
    await tick(10);
    first.abort();
    second.abort();
    await expect(running).rejects.toMatchObject({ name: 'AbortError' });
    await expect(queued).rejects.toMatchObject({ name: 'AbortError' });
    await tick(30);
    expect(log.wire.filter(([dir, m]) => dir === 'in' && m.type === 'cancel')).toEqual([['in', { type: 'cancel', id: 1 }], ['in', { type: 'cancel', id: 2 }]]);
    expect(ran).toEqual([]);
    // the worker answered both with AbortError (late replies the client ignores) and stays in use
    expect(log.wire.filter(([dir, m]) => dir === 'out' && m.ok === false).map(([, m]) => m.error.name)).toEqual(['AbortError', 'AbortError']);
    await expect(client.call('add', { a: 4, b: 4 })).resolves.toEqual({ sum: 8 });
    expect(log.terminated).toBe(0);
  });

  it("cancel by terminating ('terminate'): the worker ends, the next call starts a fresh one", async () => {
    const { log, spawn } = fakeWorkerFactory(HANDLERS);
    const client = createClient(spawn, { onCancel: 'terminate' });
    const ctrl = new AbortController();
    const p = client.call('wait', {}, { signal: ctrl.signal });
    await tick();
    ctrl.abort();
    await expect(p).rejects.toMatchObject({ name: 'AbortError' });
    expect(log.terminated).toBe(1);
    expect(client.started).toBe(false);
    await expect(client.call('add', { a: 1, b: 2 })).resolves.toEqual({ sum: 3 });
    expect(log.spawned).toBe(2);
  });

  it('a worker that dies fails every pending call with InternalError; the next call respawns', async () => {
    const { log, spawn } = fakeWorkerFactory(HANDLERS);
    const client = createClient(spawn, { name: 'analysis worker' });
    const a = client.call('wait');
    const b = client.call('add', { a: 1, b: 1 });
    await tick();
    log.last.crash('out of memory');
    for (const p of [a, b]) {
      await expect(p).rejects.toMatchObject({ name: 'InternalError', message: 'analysis worker failed: out of memory' });
    }
    await expect(client.call('add', { a: 2, b: 2 })).resolves.toEqual({ sum: 4 });
    expect(log.spawned).toBe(2);
  });

  it('a reply that cannot be read (messageerror) fails every pending call with InternalError; the next call respawns', async () => {
    const { log, spawn } = fakeWorkerFactory(HANDLERS);
    const client = createClient(spawn, { name: 'analysis worker' });
    const a = client.call('wait');
    await tick();
    log.last.unreadable();
    await expect(a).rejects.toMatchObject({ name: 'InternalError', message: 'analysis worker failed: a reply from it could not be read (out of memory?)' });
    await expect(client.call('add', { a: 2, b: 2 })).resolves.toEqual({ sum: 4 });
    expect([log.spawned, log.terminated]).toEqual([2, 1]);
  });

  it('transferredCopies: byte arrays are sent as copies whose buffers are transferred; the sender keeps its own', () => {
    const { copy, copyFiles, transfer } = transferredCopies();
    const model = Buffer.from([1, 2, 3]); // a Node Buffer: its slice() would be a view of its pool
    const files = [{ path: 'x/0.npy', bytes: new Uint8Array([4, 5]) }];
    const message = { model: copy(model), files: copyFiles(files) };
    expect(transfer).toEqual([message.model.buffer, message.files[0].bytes.buffer]);
    const received = structuredClone(message, { transfer });
    expect([...received.model, ...received.files[0].bytes]).toEqual([1, 2, 3, 4, 5]);
    expect(received.files[0].path).toBe('x/0.npy');
    expect([message.model.byteLength, message.files[0].bytes.byteLength]).toEqual([0, 0]); // moved
    expect([...model, ...files[0].bytes]).toEqual([1, 2, 3, 4, 5]); // the sender's bytes are intact
    expect(copyFiles(undefined)).toBeUndefined();
  });

  it('releaseBytes detaches the buffer of every byte array it is given (where the engine can: transfer(0))', () => {
    const detached = [];
    const array = (name) => ({ buffer: { transfer: (length) => detached.push([name, length]) } });
    releaseBytes(array('model'), [{ path: 'w.bin', bytes: array('w.bin') }], undefined, [{ path: 'x/0.npy', bytes: array('x/0.npy') }]);
    expect(detached).toEqual([['model', 0], ['w.bin', 0], ['x/0.npy', 0]]);
    expect(() => releaseBytes(new Uint8Array(2), undefined)).not.toThrow(); // Node 20: no transfer, left to the collector
  });

  it('an already-aborted signal rejects without sending anything', async () => {
    const { log, spawn } = fakeWorkerFactory(HANDLERS);
    const client = createClient(spawn);
    const ctrl = new AbortController();
    ctrl.abort();
    await expect(client.call('add', { a: 1, b: 1 }, { signal: ctrl.signal })).rejects.toMatchObject({ name: 'AbortError' });
    expect(log.wire).toEqual([]);
    expect(log.spawned).toBe(0);
  });
});
