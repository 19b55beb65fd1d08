// Web Worker with one wasm Session for the viewer (engine_core.mjs: its requests and replies):
// parses the model (graphJson, summary) and validates calibration data with the session of that load
// (workers.mjs: the main thread ends this worker once the data is checked or another model opened, as
// a wasm heap never shrinks). Analyses run in their own pool. Messages: web/pipeline/protocol.mjs. The
// wasm module comes with the first message (wasm_share.mjs), compiled once by the page.
import { failOnUnreadableMessages, wasmFromFirstMessage } from './wasm_worker.mjs';
import { releaseBytes, serve } from '../../pipeline/protocol.mjs';
import { engineHandlers } from './engine_core.mjs';

const wasm = wasmFromFirstMessage();
failOnUnreadableMessages(self);
const ready = wasm.ready.then(engineHandlers);

// The request's bytes are this worker's copies (workers.mjs transfers them): freed once read.
const handle = (type) => async (msg) => {
  try {
    return (await ready)[type](msg);
  } finally {
    releaseBytes(msg.model, msg.candidates, msg.externalFiles, msg.files);
  }
};
const onMessage = serve({ load: handle('load'), data: handle('data') }, (msg, transfer) => self.postMessage(msg, transfer ?? []));
self.onmessage = ({ data }) => {
  if (!wasm.take(data)) onMessage(data);
};
