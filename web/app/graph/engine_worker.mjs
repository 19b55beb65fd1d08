// Web Worker with one wasm Session for the viewer: parses the model (graphJson, summary) and
// validates calibration data (the core's dtype/shape/NaN checks). Analyses run in their own pool.
// The main thread ends this worker after each request (a wasm heap never shrinks), so 'data' brings
// the model again.
// Requests (messages: web/pipeline/protocol.mjs):
//   load {model: Uint8Array, candidates?: [{path, bytes}]} -> {summary, graph, externalPaths}
//        candidates: files opened with the model; those it names as external data are used
//        (externalPaths), a named file that is missing fails the load naming it
//   data {model?: Uint8Array, externalFiles?: [{path, bytes}], files: [{path, bytes}]} -> {sampleCount, sampleNames}
// The wasm module comes with the first message (wasm_share.mjs), compiled once by the page.
import { wasmFromFirstMessage } from './wasm_worker.mjs';
import { serve } from '../../pipeline/protocol.mjs';

const wasm = wasmFromFirstMessage();
let session = null;
const ready = wasm.ready.then((ptq) => {
  session = new ptq.Session();
  return ptq;
});

function plainSummary(s) {
  // Float32Array thresholds survive structured clone; everything else is plain already.
  return s;
}

const handlers = {
  async load({ model, candidates = [] }) {
    const ptq = await ready;
    const needed = ptq.externalDataFiles(model, candidates.map((c) => c.path));
    const missing = needed.filter((n) => n.path === null).map((n) => `'${n.location}'`);
    if (missing.length) {
      throw new Error(`its tensors are stored in the external file${missing.length > 1 ? 's' : ''} ${missing.join(', ')}, ` +
        'not opened with it: open the model together with its data files (or drop its folder)');
    }
    const externalPaths = needed.map((n) => n.path);
    const summary = plainSummary(session.loadModel(model, candidates.filter((c) => externalPaths.includes(c.path))));
    // A model that loads but cannot be drawn is still usable by the analyses: report, do not fail.
    if (typeof session.graphJson !== 'function') {
      return { summary, graph: null, externalPaths, graphError: 'this build of ptqscope.mjs has no Session.graphJson(): rebuild the wasm module (scripts/build.sh wasm-module)' };
    }
    return { summary, graph: JSON.parse(session.graphJson()), externalPaths };
  },
  async data({ model, externalFiles = [], files }) {
    await ready;
    if (model) session.loadModel(model, externalFiles);
    const { sampleCount, sampleNames } = session.loadCalibrationData(files);
    return { sampleCount, sampleNames: [...sampleNames] };
  },
};

const onMessage = serve(handlers, (msg, transfer) => self.postMessage(msg, transfer ?? []));
self.onmessage = ({ data }) => {
  if (!wasm.take(data)) onMessage(data);
};
