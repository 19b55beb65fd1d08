// Web Worker with one wasm Session for the viewer (engine_core.mjs: its requests and replies):
// parses the model (graphJson, summary) and validates calibration data. Analyses run in their own
// pool. The main thread ends this worker after each request (a wasm heap never shrinks), so 'data'
// brings the model again. Messages: web/pipeline/protocol.mjs. The wasm module comes with the first
// message (wasm_share.mjs), compiled once by the page.
import { wasmFromFirstMessage } from './wasm_worker.mjs';
import { serve } from '../../pipeline/protocol.mjs';
import { engineHandlers } from './engine_core.mjs';

const wasm = wasmFromFirstMessage();
const ready = wasm.ready.then(engineHandlers);

const onMessage = serve({
  load: async (msg) => (await ready).load(msg),
  data: async (msg) => (await ready).data(msg),
}, (msg, transfer) => self.postMessage(msg, transfer ?? []));
self.onmessage = ({ data }) => {
  if (!wasm.take(data)) onMessage(data);
};
