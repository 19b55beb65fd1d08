// The analysis worker's requests, independent of the environment: the Node worker (node_worker.mjs)
// and the browser worker (web/app/analysis/worker.mjs) both forward their messages to
// handleMessage(ptq, msg, post) with their loaded wasm module. Message shapes, ids, events,
// cancellation and errors are protocol.mjs's; the requests and their results:
//   load  {model: Uint8Array, externalFiles?: [{path, bytes}], files: [{path, bytes} | {path, file}], modelName?, dataName?, convolution?, relations?}
//                             -> {summary, data: {sampleCount, sampleNames} | null, memory}
//                             convolution: the module's convolution kernels (setConvolutionMode,
//                             describe().convolution_modes: 'accurate' when absent, 'fast',
//                             'fastest'); relations: the session's relation rules (setRelations,
//                             describe().relation_rules; the default when absent); externalFiles: the model's external-data files
//                             (Session.loadModel(bytes, files), docs/wasm-api.md); files: the
//                             calibration files, each with its bytes or with `file`, what the
//                             worker's readFile reads whenever the core decodes that sample (a
//                             File in the browser, a path in Node), so that they are not all held
//   listItems {request}       -> {items: [names]}
//   analyze {request}         -> an event per finished item, then {json}
//   merge {parts: [json strings]} -> {json}
//   graph                     -> {json}
//   memory                    -> the module's ptq.memoryUsage() ({budget, inUse, peakInUse, heapBytes})
//   exportConfig {config: document | JSON text, format} -> {data: string | Uint8Array} (the core's
//                               session.exportConfig: docs/config-export.md)
//   calibrate {model: Uint8Array, files: [{path, bytes} | {path, file}], options?}
//                             -> {model: Uint8Array, activations, weights, samples}: a float model
//                             calibrated by the core (ptq.calibrate, docs/wasm-api.md), independent of the
//                             session the worker holds
//   checkOnnxruntime {config?, options?, onnxruntime?} -> onnxruntime_check.mjs's result: the
//                               configuration's output metrics by onnxruntime beside ptqscope's; events
//                               {stage, done, total}. `onnxruntime`: where the environment's
//                               loadOnnxruntime finds it (the page's and the plugin's asset folder URL)
// A failure answers {ok: false, error: {name, message}}; the worker stays usable.
// `request` is the object of docs/wasm-api.md ({analysis, options, items?, model_file?, config?}).
import { releaseBytes, serve } from './protocol.mjs';
import { checkWithOnnxruntime } from './onnxruntime_check.mjs';

const states = new WeakMap(); // ptq module -> { session, modelName, dataName }

function stateOf(ptq) {
  let s = states.get(ptq);
  if (!s) {
    s = { session: null, modelName: '', dataName: '', sampleNames: [] };
    states.set(ptq, s);
  }
  return s;
}

function loadedSession(s) {
  if (!s.session) throw Object.assign(new Error('no model loaded in this worker (send a load message first)'), { name: 'PtqError' });
  return s.session;
}

// Prefixes the core's message with the file it concerns (the CLI and the page show it as is).
function inFile(name, fn) {
  try {
    return fn();
  } catch (err) {
    if (name && err instanceof Error && !err.message.includes(name)) err.message = `${name}: ${err.message}`;
    throw err;
  }
}

const HANDLERS = {
  load(ptq, s, msg, ctx, { readFile }) {
    s.session?.delete();
    s.session = null;
    ptq.setConvolutionMode(msg.convolution ?? 'accurate');
    const session = new ptq.Session();
    try {
      if (msg.relations) session.setRelations(msg.relations);
      const summary = inFile(msg.modelName, () => session.loadModel(msg.model, msg.externalFiles ?? []));
      const files = msg.files?.map((f) => (f.bytes ? f : { path: f.path, bytes: () => readFile(f.file) }));
      const data = files ? inFile(msg.dataName, () => session.loadCalibrationData(files)) : null;
      s.session = session;
      s.modelName = msg.modelName ?? '';
      s.dataName = msg.dataName ?? '';
      s.sampleNames = data?.sampleNames ?? [];
      return { summary, data, memory: ptq.memoryUsage?.() ?? null }; // absent from the tests' stand-in modules
    } catch (err) {
      session.delete();
      throw err;
    } finally {
      // This worker's copies (pool.mjs sends them); the calibration files' bytes stay with the session,
      // which reads them again as samples are used.
      releaseBytes(msg.model, msg.externalFiles);
    }
  },
  listItems(ptq, s, msg) {
    return { items: JSON.parse(loadedSession(s).listItems(JSON.stringify(msg.request))) };
  },
  analyze(ptq, s, msg, { emit }) {
    const onEvent = (text) => emit(JSON.parse(text));
    return { json: loadedSession(s).analyze(JSON.stringify(msg.request), onEvent) };
  },
  merge(ptq, s, msg) {
    return { json: ptq.mergeResults(`[${msg.parts.join(',')}]`) };
  },
  exportConfig(ptq, s, msg) {
    const session = loadedSession(s);
    if (typeof session.exportConfig !== 'function') throw new Error('this build of the wasm core has no Session.exportConfig: rebuild it (scripts/build.sh wasm-module)');
    const text = typeof msg.config === 'string' ? msg.config : JSON.stringify(msg.config);
    return { data: session.exportConfig(text, msg.format) };
  },
  async checkOnnxruntime(ptq, s, msg, { emit }, { loadOnnxruntime }) {
    const session = loadedSession(s);
    const ort = await loadOnnxruntime(msg.onnxruntime);
    return checkWithOnnxruntime({ ptq, session, ort, sampleNames: s.sampleNames, config: msg.config, options: msg.options, modelName: s.modelName || undefined, emit });
  },
  graph(ptq, s) {
    return { json: loadedSession(s).graphJson() };
  },
  calibrate(ptq, s, msg, ctx, { readFile }) {
    const files = msg.files.map((f) => ({ path: f.path, bytes: f.bytes ?? readFile(f.file) }));
    const { model, activations, weights, samples } = ptq.calibrate(msg.model, files, msg.options ?? {});
    return { model, activations, weights, samples };
  },
  memory(ptq) {
    return ptq.memoryUsage();
  },
};

const servers = new WeakMap(); // ptq module -> protocol.serve's onMessage

const noFileReader = () => {
  throw new Error('this worker cannot read calibration files by reference (no readFile)');
};
const noOnnxruntime = () => {
  throw new Error('onnxruntime is not available in this worker');
};

// Handles one protocol message with the worker's wasm module; replies through `post(msg)`.
// `readFile(file)` -> Uint8Array: the environment's synchronous read of a calibration file given by
// reference (load's `files[i].file`); `loadOnnxruntime(where)` -> Promise<the onnxruntime module>
// (checkOnnxruntime's `onnxruntime`).
export function handleMessage(ptq, msg, post, { readFile = noFileReader, loadOnnxruntime = noOnnxruntime } = {}) {
  let server = servers.get(ptq);
  if (!server) {
    const s = stateOf(ptq);
    const env = { readFile, loadOnnxruntime };
    const handlers = Object.fromEntries(Object.entries(HANDLERS).map(([type, fn]) => [type, (m, ctx) => fn(ptq, s, m, ctx, env)]));
    server = { post, onMessage: serve(handlers, (reply, transfer) => server.post(reply, transfer)) };
    servers.set(ptq, server);
  }
  server.post = post;
  return server.onMessage(msg);
}
