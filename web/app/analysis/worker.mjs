// Browser worker entry: one wasm instance per worker; the requests are web/pipeline/worker_core.mjs's
// (shared with the Node worker), the messages web/pipeline/protocol.mjs's. In the web app the compiled module is
// the first message (spawn.mjs, ../graph/wasm_share.mjs); the Netron plugin starts this worker
// without it and the glue instantiates its own embedded bytes. Messages that arrive while the module
// is instantiated are handled in order once it is ready.
import { failOnUnreadableMessages, wasmFromFirstMessage } from '../graph/wasm_worker.mjs';
import { handleMessage } from '../../pipeline/worker_core.mjs';
import { failure } from '../../pipeline/protocol.mjs';
import { onnxruntimeFromAssets } from '../../pipeline/onnxruntime_check.mjs';

const post = (msg, transfer) => self.postMessage(msg, transfer ?? []);
// A calibration file given by reference is a File (or Blob), read whenever its sample is used.
const readFile = (file) => new Uint8Array(new FileReaderSync().readAsArrayBuffer(file));
// onnxruntime-web, loaded on the first check from the folder the page or the plugin ships it in.
let onnxruntime = null;
const loadOnnxruntime = (base) => (onnxruntime ??= onnxruntimeFromAssets(base).catch((err) => {
  onnxruntime = null;
  throw new Error(`onnxruntime-web could not be loaded from ${base}: ${err?.message ?? err}`);
}));
const wasm = wasmFromFirstMessage();
failOnUnreadableMessages(self);

// Callbacks on one promise run in registration order, so messages are handed on in arrival order
// (worker_core queues the requests; a `cancel` reaches it while an earlier request waits).
self.onmessage = (event) => {
  if (wasm.take(event.data)) return;
  wasm.ready.then(
    (ptq) => handleMessage(ptq, event.data, post, { readFile, loadOnnxruntime }),
    (err) => {
      // worker_core reports request errors itself; this is a failure to start the module.
      if (event.data?.type !== 'cancel') post(failure(event.data?.id, { name: err?.name, message: `analysis worker: ${err?.message ?? err}` }));
    },
  );
};
