// Runs analyses for the page (env-neutral; the pipeline and the worker spawner are injected so the
// same code runs under Vitest with Node workers). One pool per loaded model + data: it is made on the
// first run and dropped when state 'modelBytes' or 'calibrationFiles' change. Rows stream into state
// 'results' as items finish (throttled), the merged document replaces them at the end. A big model
// gets fewer workers (pool.mjs poolSizeFor); after each run the workers' wasm heaps go to state
// 'memory' (.analysis).
import { applyItemEvent, combineResults } from './results.mjs';
import { describe } from '../../pipeline/catalog.mjs';
import { poolSizeFor } from '../../pipeline/pool.mjs';

// Whether the run's item events carry rows of its result (describe()'s streams_items; runall's stages do).
const streamsRows = (kind, payload) => kind === 'runall' || describe.analyses.find((a) => a.name === payload?.analysis)?.streams_items !== false;

const STREAM_INTERVAL_MS = 150;

export function createAnalysisRunner({ state, pipeline, spawn, size = defaultPoolSize() }) {
  let pool = null;
  let running = null; // {controller, label}
  const listeners = new Set();
  let idleWaiters = []; // resolvers of whenIdle()

  const emit = (ev) => listeners.forEach((fn) => fn(ev));

  function dropPool() {
    pool?.terminate?.();
    pool = null;
  }
  const offs = ['modelBytes', 'calibrationFiles', 'convolutionMode', 'relationRules'].map((k) => state.on(k, (v, prev) => {
    if (v !== prev) {
      cancel();
      dropPool();
    }
  }));

  async function ensurePool() {
    if (pool) return pool;
    const model = state.get('modelBytes');
    const files = state.get('calibrationFiles');
    if (!model) throw new Error('no model loaded: open a calibrated .onnx first');
    if (!files?.length) throw new Error('no calibration data: open the calibration_data folder (or a .zip of it) first');
    const externalFiles = state.get('externalFiles') ?? [];
    const modelBytes = externalFiles.reduce((sum, f) => sum + f.bytes.length, model.length);
    pool = await pipeline.createPool({
      size: poolSizeFor(size, modelBytes), spawn, model, externalFiles, files, modelName: state.get('modelName') ?? undefined, convolution: state.get('convolutionMode') ?? undefined,
      relations: state.get('relationRules') ?? undefined,
    });
    return pool;
  }

  // The heap of each analysis worker (the most it has held: a wasm heap never shrinks).
  async function reportMemory(p) {
    const usage = p.memory ? await p.memory().catch(() => null) : null;
    if (usage?.length) state.set('memory', { ...state.get('memory'), analysis: usage.map((u) => u.heapBytes) });
  }

  // A streaming view of state 'results' while `run` is in flight.
  function streamer(base) {
    let partial = null;
    let timer = null;
    const flush = () => {
      timer = null;
      if (partial) state.set('results', combineResults(base, partial));
    };
    return {
      item(ev) {
        partial = applyItemEvent(partial, ev);
        timer ??= setTimeout(flush, STREAM_INTERVAL_MS);
      },
      stop() {
        if (timer) clearTimeout(timer);
        timer = null;
      },
      get partial() {
        return partial;
      },
    };
  }

  // kind: 'analysis' (request) or 'runall' (options). Resolves to the final document (also put in
  // state 'results'), or null when cancelled before any item finished.
  async function run(kind, payload, label = kind === 'runall' ? 'Run all' : payload.analysis) {
    if (running) throw new Error(`'${running.label}' is still running: cancel it first`);
    const controller = new AbortController();
    running = { controller, label };
    const base = state.get('results');
    // Events of analyses that do not stream rows (what_if, fix: progress only) never become a partial result.
    const stream = streamsRows(kind, payload) ? streamer(base) : { item() {}, stop() {}, partial: null };
    const started = Date.now();
    emit({ type: 'start', label });
    try {
      const p = await ensurePool();
      // Results, the configurations fix finds and what is exported from them name the opened file
      // (the core writes model.file / a configuration's model from the request's model_file).
      const modelFile = state.get('modelName') || undefined;
      const request = kind === 'runall' || !modelFile || payload?.model_file ? payload : { ...payload, model_file: modelFile };
      const hooks = {
        modelFile,
        signal: controller.signal,
        onItem: (ev) => {
          stream.item(ev);
          emit({ type: 'item', event: ev });
        },
        onProgress: (done, total, etaMs) => emit({ type: 'progress', done, total, etaMs, elapsedMs: Date.now() - started }),
        onStage: (stage, detail) => emit({ type: 'stage', label, stage, detail }),
        graph: state.get('graph'),
      };
      const result = kind === 'runall'
        ? await pipeline.runAll(p, payload, hooks)
        : await pipeline.runAnalysis(p, request, hooks);
      stream.stop();
      const doc = typeof result === 'string' ? JSON.parse(result) : result;
      if (doc) state.set('results', combineResults(base, doc));
      await reportMemory(p);
      emit({ type: 'done', label, cancelled: Boolean(doc?.cancelled || controller.signal.aborted), elapsedMs: Date.now() - started });
      return doc;
    } catch (err) {
      stream.stop();
      if (controller.signal.aborted) {
        // Keep what finished: the rows streamed so far, marked cancelled.
        if (stream.partial) state.set('results', combineResults(base, { ...stream.partial, cancelled: true }));
        emit({ type: 'done', label, cancelled: true, elapsedMs: Date.now() - started });
        return null;
      }
      // A worker that failed is not trusted with the next run.
      dropPool();
      emit({ type: 'error', label, message: err?.message ?? String(err) });
      state.set('error', `${label}: ${err?.message ?? err}`);
      throw err;
    } finally {
      running = null;
      const waiters = idleWaiters;
      idleWaiters = [];
      waiters.forEach((resolve) => resolve());
    }
  }

  // One request of web/pipeline/worker_core.mjs that is not an analysis run (e.g. exportConfig,
  // checkOnnxruntime), on the same pool (it queues behind the parts of a run in flight) -> its result.
  // options: pool.request's {onEvent, signal}.
  async function call(type, payload = {}, options = {}) {
    const p = await ensurePool();
    return p.request({ type, ...payload }, options);
  }

  // Resolves when no run is in flight (at once when none is).
  function whenIdle() {
    return running ? new Promise((resolve) => idleWaiters.push(resolve)) : Promise.resolve();
  }

  function cancel() {
    running?.controller.abort();
  }

  return {
    run,
    call,
    cancel,
    whenIdle,
    get running() {
      return running?.label ?? null;
    },
    on(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
    dispose() {
      cancel();
      dropPool();
      offs.forEach((off) => off());
    },
  };
}

// A run that waits its turn instead of being refused while another is in flight (the box plot's
// channel clicks): onWait(label) is told what it waits for, onWait(null) when it starts after waiting.
// Waiters woken together go one at a time.
export function queuedRun(runner, kind = 'analysis') {
  return async (payload, label, onWait) => {
    let waited = false;
    while (runner.running) {
      waited = true;
      onWait?.(runner.running);
      await runner.whenIdle();
    }
    if (waited) onWait?.(null);
    return runner.run(kind, payload, label);
  };
}

function defaultPoolSize() {
  const cores = typeof navigator !== 'undefined' && navigator.hardwareConcurrency ? navigator.hardwareConcurrency : 2;
  return Math.max(1, Math.min(4, cores - 1 || 1));
}

// "1 min 5 s", "12 s", "<1 s".
export function formatDuration(ms) {
  if (!Number.isFinite(ms) || ms < 0) return '';
  const s = Math.round(ms / 1000);
  if (s < 1) return '<1 s';
  if (s < 60) return `${s} s`;
  return `${Math.floor(s / 60)} min ${s % 60} s`;
}

export function progressText({ done, total, etaMs }) {
  const eta = done < total && Number.isFinite(etaMs) ? ` · ETA ${formatDuration(etaMs)}` : '';
  return `${Math.floor(done)} / ${total} items${eta}`; // done is fractional inside an item
}
