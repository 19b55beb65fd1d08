// Browser worker entry: one wasm instance per worker; the message protocol is
// web/pipeline/worker_core.mjs's, shared with the Node worker. In the web app the compiled module is
// the first message (spawn.mjs, ../graph/wasm_share.mjs); the Netron plugin starts this worker
// without it and the glue instantiates its own embedded bytes. Messages that arrive while the module
// is instantiated are handled in order once it is ready.
import { wasmFromFirstMessage } from '../graph/wasm_worker.mjs';
import { handleMessage } from '../../pipeline/worker_core.mjs';

const post = (msg, transfer) => self.postMessage(msg, transfer ?? []);
const wasm = wasmFromFirstMessage();
const { ready } = wasm;
let chain = ready;

self.onmessage = (event) => {
  if (wasm.take(event.data)) return;
  chain = chain.then((ptq) => handleMessage(ptq, event.data, post)).then(
    () => ready,
    (err) => {
      // worker_core reports errors itself; this only catches a failure to start the module.
      post({ type: 'error', id: event.data?.id, error: { name: err?.name ?? 'Error', message: `analysis worker: ${err?.message ?? err}` } });
      return ready;
    },
  );
};
