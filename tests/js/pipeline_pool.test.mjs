// web/pipeline on in-process fake workers (no wasm): the pool loads the model once per worker and
// again only into replacement workers; runAnalysis splits a sweep into chunks that cover every item
// exactly once, reports progress with an ETA, merges the parts, and on cancellation stops
// scheduling, terminates the busy workers and returns what finished; worker errors keep their kind.
import { describe, expect, it } from 'vitest';
import { createPool, poolSizeFor } from '../../web/pipeline/pool.mjs';
import { partCount, partOf, runAnalysis } from '../../web/pipeline/sweep.mjs';
import { handleMessage } from '../../web/pipeline/worker_core.mjs';

const ITEMS = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];
const value = (item) => (item.charCodeAt(0) * 37) % 11; // deterministic, unsorted

// Rows of the items at `indices`, sorted by value (descending), ties in run order.
function sorted(indices) {
  const keys = [...indices].sort((x, y) => value(ITEMS[y]) - value(ITEMS[x]) || x - y).map((i) => ITEMS[i]);
  return { sensitivity: { node: Object.fromEntries(keys.map((k) => [k, { mse: value(k) }])) }, sensitivity_order: { node: keys } };
}

// A stand-in for the wasm module: one Session with listItems / analyze (per-item events) and a
// module-level mergeResults (rows re-sorted by value, then run order).
function fakePtq(log) {
  class Session {
    loadModel(bytes) {
      if (bytes[0] === 0xff) throw Object.assign(new Error('not an ONNX model'), { name: 'FormatError' });
      log.loads++;
      return { outputs: [], calibrations: [] };
    }
    loadCalibrationData(files) { return { sampleCount: files.length, sampleNames: files.map((f) => f.path) }; }
    listItems() { return JSON.stringify(ITEMS); }
    analyze(text, onEvent) {
      const req = JSON.parse(text);
      if (req.options.fail) throw Object.assign(new Error('x does not exist in the model.'), { name: 'PtqError' });
      log.requests.push(req.items ?? null);
      const { begin = 0, end = ITEMS.length } = Array.isArray(req.items) ? {} : req.items ?? {};
      const indices = [];
      for (let i = begin; i < end; i++) {
        if (Array.isArray(req.items) && !req.items.includes(ITEMS[i])) continue;
        indices.push(i);
        log.computed.push(ITEMS[i]);
      }
      // As a sensitivity sweep over `blocks` sample blocks (one sample each): an event per item and
      // block counting (item, sample) evaluations, the item named in the last block only.
      const blocks = req.options.blocks ?? 1;
      for (let b = 0; b < blocks; b++) {
        indices.forEach((i, k) => onEvent?.(JSON.stringify({
          type: 'item', item: b === blocks - 1 ? ITEMS[i] : null, done: b * indices.length + k + 1, total: blocks * indices.length,
        })));
      }
      return JSON.stringify({ ...sorted(indices), sweep: { items: indices.map((i) => ITEMS[i]), indices, total: ITEMS.length }, cancelled: false });
    }
    delete() {}
  }
  return {
    Session,
    setConvolutionMode(mode) { log.convolution = mode; },
    mergeResults(text) {
      const parts = JSON.parse(text);
      log.merges++;
      return JSON.stringify({ ...sorted(parts.flatMap((p) => p.sweep.indices)), cancelled: parts.some((p) => p.cancelled) });
    },
  };
}

// Fake Worker: messages are cloned and handled asynchronously; `hold(type)` delays that message type
// until release() so tests can cancel while a job is "running".
function fakeWorkers() {
  const log = { loads: 0, computed: [], requests: [], merges: 0, spawned: 0, terminated: 0, held: [] };
  const spawn = () => {
    log.spawned++;
    const ptq = fakePtq(log);
    const w = {
      onmessage: null, onerror: null, dead: false,
      postMessage(msg) {
        const m = structuredClone(msg);
        const go = () => {
          if (w.dead) return;
          handleMessage(ptq, m, (reply) => setTimeout(() => !w.dead && w.onmessage?.({ data: structuredClone(reply) })));
        };
        if (log.hold === m.type) log.held.push(go);
        else setTimeout(go);
      },
      terminate() { w.dead = true; log.terminated++; },
    };
    return w;
  };
  return { log, spawn };
}

// Waits (macrotask by macrotask) until `cond()` holds; fails after 2 s.
async function until(cond) {
  const end = Date.now() + 2000;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${cond}`);
    await new Promise((r) => setTimeout(r, 1));
  }
}

const REQUEST = { analysis: 'sensitivity', options: { node_type: 'node' } };
const MODEL = { model: new Uint8Array([1, 2, 3]), files: [{ path: 'input/0.npy', bytes: new Uint8Array(4) }], modelName: 'm.onnx', dataName: 'data' };

describe('splitting', () => {
  it('interleaves the items over the parts (each part gets early and late items)', () => {
    const parts = (names, n) => Array.from({ length: n }, (_, k) => partOf(names, k, n));
    expect(parts(ITEMS, 3)).toEqual([['a', 'd', 'g'], ['b', 'e'], ['c', 'f']]);
    expect(parts(['a', 'b'], 3)).toEqual([['a'], ['b'], []]); // more parts than items: empty parts
    expect(parts(ITEMS, 1)).toEqual([ITEMS]);
  });
  it('one part per worker, three per worker when cancellable, one call for one worker', () => {
    expect(partCount(40, 2, false)).toBe(2);
    expect(partCount(40, 2, true)).toBe(6);
    expect(partCount(4, 2, true)).toBe(4);
    expect(partCount(40, 1, false)).toBe(1);
    expect(partCount(40, 1, true)).toBe(3);
  });
  it('position ranges (for sweeps with repeated names) cover [0, n) with contiguous near-equal chunks', () => {
    const parts = (names, n) => Array.from({ length: n }, (_, k) => partOf(names, k, n));
    expect(parts(['a', 'b', 'a', 'c', 'd', 'e', 'f'], 3)).toEqual([{ begin: 0, end: 2 }, { begin: 2, end: 4 }, { begin: 4, end: 7 }]);
    expect(parts(['a', 'a'], 3)).toEqual([{ begin: 0, end: 0 }, { begin: 0, end: 1 }, { begin: 1, end: 2 }]);
    expect(parts(['a', 'a', 'b', 'c', 'd'], 1)).toEqual([{ begin: 0, end: 5 }]);
  });
});

describe('pool size', () => {
  it('a big model gets fewer workers: their copies of it together within 1 GiB, at least one', () => {
    const MiB = 2 ** 20;
    expect(poolSizeFor(3, 1024)).toBe(3); // small: the size asked
    expect(poolSizeFor(3, 300 * MiB)).toBe(3); // 3 x 300 MiB = 900 MiB
    expect(poolSizeFor(3, 400 * MiB)).toBe(2); // 2 x 400 MiB = 800 MiB; 3 would be 1200
    expect(poolSizeFor(3, 513 * MiB)).toBe(1);
    expect(poolSizeFor(3, 2 ** 30 + 165_545)).toBe(1); // the 1 GiB fixture with its .onnx
    expect(poolSizeFor(3, 3 * 2 ** 30)).toBe(1);
  });
});

describe('worker pool and sweep splitting', () => {
  it('loads the model once per worker, whatever the number of analyses', async () => {
    const { log, spawn } = fakeWorkers();
    const pool = createPool({ size: 2, spawn });
    const loaded = await pool.load(MODEL);
    expect(loaded.data).toEqual({ sampleCount: 1, sampleNames: ['input/0.npy'] });
    for (let k = 0; k < 3; k++) await runAnalysis(pool, REQUEST);
    expect(log.spawned).toBe(2);
    expect(log.loads).toBe(2);
    expect(log.convolution).toBe('accurate'); // the default convolution mode, set by every load
    pool.close();
  });

  it("sends the load's bytes to each worker as its own copies, listed for transfer", async () => {
    const { log, spawn } = fakeWorkers();
    const sent = []; // [type, transferred buffers, the message's byte arrays]
    const recording = () => {
      const w = spawn();
      const post = w.postMessage.bind(w);
      w.postMessage = (msg, transfer = []) => {
        sent.push([msg.type, transfer, [msg.model, ...(msg.files ?? []).map((f) => f.bytes)]]);
        post(msg);
      };
      return w;
    };
    const pool = createPool({ size: 2, spawn: recording });
    await pool.load(MODEL);
    const loads = sent.filter(([type]) => type === 'load');
    expect(loads).toHaveLength(2);
    for (const [, transfer, arrays] of loads) {
      expect(transfer).toEqual(arrays.map((a) => a.buffer));
      expect(arrays[0]).not.toBe(MODEL.model);
      expect([...arrays[0]]).toEqual([...MODEL.model]);
    }
    expect(loads[0][1][0]).not.toBe(loads[1][1][0]); // one copy per worker
    expect(log.loads).toBe(2);
    pool.close();
  });

  it("hands the load's convolution mode to every worker's module", async () => {
    const { log, spawn } = fakeWorkers();
    const pool = createPool({ size: 1, spawn });
    await pool.load({ ...MODEL, convolution: 'fast' });
    expect(log.convolution).toBe('fast');
    pool.close();
  });

  it('splits a sweep across workers: every item once, merged result = one-worker result', async () => {
    const one = fakeWorkers();
    const pool1 = createPool({ size: 1, spawn: one.spawn });
    await pool1.load(MODEL);
    const single = await runAnalysis(pool1, REQUEST);
    expect(one.log.merges).toBe(0); // one worker, no signal: a single call

    const two = fakeWorkers();
    const pool2 = createPool({ size: 2, spawn: two.spawn });
    await pool2.load(MODEL);
    const items = [];
    const split = await runAnalysis(pool2, REQUEST, { onItem: (ev) => items.push(ev.item) });
    expect([...two.log.computed].sort()).toEqual(ITEMS);
    expect(two.log.requests.slice(-2)).toEqual([['a', 'c', 'e', 'g'], ['b', 'd', 'f']]); // one interleaved part per worker
    expect([...items].sort()).toEqual(ITEMS);
    expect(two.log.merges).toBe(1);
    expect(split.sensitivity_order.node).toEqual(single.sensitivity_order.node);
    expect(split.sensitivity_order.node).not.toEqual(ITEMS); // really re-sorted
    expect(split.sensitivity.node).toEqual(single.sensitivity.node);
    pool1.close();
    pool2.close();
  });

  it('a shard runs only its items (i mod N), split over the pool; an empty shard runs no item', async () => {
    const two = fakeWorkers();
    const pool = createPool({ size: 2, spawn: two.spawn });
    await pool.load(MODEL);
    const shard = await runAnalysis(pool, REQUEST, { shard: { index: 2, count: 3 } });
    expect([...two.log.computed].sort()).toEqual(['b', 'e']); // items 1 and 4 of 7
    expect(two.log.requests.slice(-2)).toEqual([['b'], ['e']]); // the shard's items, one part per worker
    expect(shard.sensitivity_order.node.sort()).toEqual(['b', 'e']);
    two.log.computed.length = 0;
    await runAnalysis(pool, REQUEST, { shard: { index: 9, count: 9 } });
    expect(two.log.requests.at(-1)).toEqual([]);
    expect(two.log.computed).toEqual([]);
    pool.close();
  });

  it('reports progress over all chunks with an ETA from the elapsed time', async () => {
    const { spawn } = fakeWorkers();
    const pool = createPool({ size: 2, spawn });
    await pool.load(MODEL);
    let t = 1000;
    const seen = [];
    await runAnalysis(pool, REQUEST, { now: () => (t += 10), onProgress: (done, total, eta) => seen.push([done, total, eta]) });
    expect(seen.map(([d]) => d)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(seen.every(([, total]) => total === 7)).toBe(true);
    // tracker started at t=1010; item k finishes at 1010 + 10k: elapsed/done = 10 ms per item.
    expect(seen[0][2]).toBe(60);
    expect(seen.at(-1)[2]).toBe(0);
    pool.close();
  });

  it('progress advances within items when the core reports sample blocks, in one call or split', async () => {
    const { spawn } = fakeWorkers();
    for (const [size, chunks] of [[1, undefined], [2, 3]]) {
      const pool = createPool({ size, spawn });
      await pool.load(MODEL);
      const seen = [];
      await runAnalysis(pool, { ...REQUEST, options: { ...REQUEST.options, blocks: 2 } }, {
        chunks, onProgress: (done, total) => seen.push([done, total]),
      });
      expect(seen).toHaveLength(14); // 7 items × 2 blocks
      expect(seen.every(([, total]) => total === 7)).toBe(true);
      expect(seen.every(([d], k) => k === 0 || d > seen[k - 1][0])).toBe(true);
      expect(seen.at(-1)[0]).toBe(7);
      if (size === 1) expect(seen.map(([d]) => d)).toEqual(Array.from({ length: 14 }, (_, k) => (k + 1) / 2));
      pool.close();
    }
  });

  it('cancellation stops scheduling, terminates the busy worker, returns the finished chunks', async () => {
    const { log, spawn } = fakeWorkers();
    const pool = createPool({ size: 1, spawn });
    await pool.load(MODEL);
    const ctrl = new AbortController();
    let chunksDone = 0;
    log.hold = 'analyze';
    const run = runAnalysis(pool, REQUEST, {
      signal: ctrl.signal,
      chunks: 3,
      onItem: () => {},
    });
    // Let chunk 1 run, then cancel while chunk 2 is held "inside the wasm call".
    await until(() => log.held.length === 1);
    log.held.shift()(); // chunk 1 finishes
    await until(() => log.held.length === 1); // chunk 2 started
    chunksDone = log.computed.length;
    ctrl.abort();
    const result = await run;
    expect(result.cancelled).toBe(true);
    expect(chunksDone).toBe(3); // part 1 of 7 items in 3 parts: a, d, g
    expect(Object.keys(result.sensitivity.node).sort()).toEqual(['a', 'd', 'g']);
    expect(log.terminated).toBe(1);
    // The pool still works: a replacement worker, loaded once before its first job.
    log.hold = null;
    const loadsBefore = log.loads;
    const again = await runAnalysis(pool, REQUEST);
    expect(Object.keys(again.sensitivity.node).sort()).toEqual(ITEMS);
    expect(log.spawned).toBe(2);
    expect(log.loads).toBe(loadsBefore + 1);
    pool.close();
  });

  it('cancellation before any chunk finished rejects with an AbortError', async () => {
    const { log, spawn } = fakeWorkers();
    const pool = createPool({ size: 2, spawn });
    await pool.load(MODEL);
    log.hold = 'analyze';
    const ctrl = new AbortController();
    const run = runAnalysis(pool, REQUEST, { signal: ctrl.signal });
    await until(() => log.held.length === 2); // both workers inside a chunk
    ctrl.abort();
    await expect(run).rejects.toMatchObject({ name: 'AbortError' });
    expect(log.terminated).toBe(2);
    pool.close();
  });

  it("errors keep the core's kind and message; the pool stays usable", async () => {
    const { spawn } = fakeWorkers();
    const pool = createPool({ size: 2, spawn });
    await expect(pool.load({ ...MODEL, model: new Uint8Array([0xff]) }))
      .rejects.toMatchObject({ name: 'FormatError', message: 'm.onnx: not an ONNX model' });
    await pool.load(MODEL);
    await expect(runAnalysis(pool, { ...REQUEST, options: { fail: true } }))
      .rejects.toMatchObject({ name: 'PtqError', message: 'x does not exist in the model.' });
    const ok = await runAnalysis(pool, REQUEST);
    expect(Object.keys(ok.sensitivity.node)).toHaveLength(ITEMS.length);
    pool.close();
  });

  it('a crashed worker fails its job and is replaced', async () => {
    const { log, spawn } = fakeWorkers();
    const workers = [];
    const pool = createPool({ size: 1, spawn: () => { const w = spawn(); workers.push(w); return w; } });
    await pool.load(MODEL);
    log.hold = 'analyze';
    const run = runAnalysis(pool, REQUEST);
    await until(() => log.held.length === 1);
    workers[0].onerror(new Error('out of memory'));
    await expect(run).rejects.toMatchObject({ name: 'InternalError', message: expect.stringContaining('out of memory') });
    log.hold = null;
    const ok = await runAnalysis(pool, REQUEST);
    expect(Object.keys(ok.sensitivity.node)).toHaveLength(ITEMS.length);
    expect(log.spawned).toBe(2);
    pool.close();
  });
});
