// The message protocol of an analysis worker, independent of the environment: the Node worker
// (node_worker.mjs) and the browser worker (web/app/analysis/worker.mjs) both forward their messages
// to handleMessage(ptq, msg, post) with their loaded wasm module.
//
// Requests (each with a numeric `id`, echoed in every reply):
//   {type: 'load', model: Uint8Array, files: [{path, bytes}], modelName?, dataName?}
//        -> {type: 'loaded', summary, data: {sampleCount, sampleNames}}
//   {type: 'listItems', request}  -> {type: 'items', items: [names]}
//   {type: 'analyze', request}    -> {type: 'event', event} per finished item, then {type: 'result', json}
//   {type: 'merge', parts: [json strings]} -> {type: 'result', json}
//   {type: 'graph'}               -> {type: 'graph', json}
// Any failure -> {type: 'error', error: {name, message}}; the worker stays usable.
// `request` is the object of docs/wasm-api.md ({analysis, options, items?, model_file?}).

const states = new WeakMap(); // ptq module -> { session, modelName, dataName }

function stateOf(ptq) {
  let s = states.get(ptq);
  if (!s) {
    s = { session: null, modelName: '', dataName: '' };
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
  load(ptq, s, msg) {
    s.session?.delete();
    s.session = null;
    const session = new ptq.Session();
    try {
      const summary = inFile(msg.modelName, () => session.loadModel(msg.model));
      const data = msg.files ? inFile(msg.dataName, () => session.loadCalibrationData(msg.files)) : null;
      s.session = session;
      s.modelName = msg.modelName ?? '';
      s.dataName = msg.dataName ?? '';
      return { type: 'loaded', summary, data };
    } catch (err) {
      session.delete();
      throw err;
    }
  },
  listItems(ptq, s, msg) {
    return { type: 'items', items: JSON.parse(loadedSession(s).listItems(JSON.stringify(msg.request))) };
  },
  analyze(ptq, s, msg, post) {
    const onEvent = (text) => post({ type: 'event', id: msg.id, event: JSON.parse(text) });
    return { type: 'result', json: loadedSession(s).analyze(JSON.stringify(msg.request), onEvent) };
  },
  merge(ptq, s, msg) {
    return { type: 'result', json: ptq.mergeResults(`[${msg.parts.join(',')}]`) };
  },
  graph(ptq, s) {
    return { type: 'graph', json: loadedSession(s).graphJson() };
  },
};

export function handleMessage(ptq, msg, post) {
  const handler = HANDLERS[msg?.type];
  try {
    if (!handler) throw new Error(`unknown worker message type '${msg?.type}'`);
    post({ ...handler(ptq, stateOf(ptq), msg, post), id: msg.id });
  } catch (err) {
    post({ type: 'error', id: msg?.id, error: { name: err?.name ?? 'Error', message: String(err?.message ?? err) } });
  }
}
