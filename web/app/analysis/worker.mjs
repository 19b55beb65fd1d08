// Browser worker entry (module worker): one wasm instance per worker; the message protocol is
// web/pipeline/worker_core.mjs's, shared with the Node worker. Messages that arrive while the module
// compiles are handled in order once it is ready.
import createPtqModule from '../../../build/wasm/ptqscope.mjs';
import { handleMessage } from '../../pipeline/worker_core.mjs';

const post = (msg, transfer) => self.postMessage(msg, transfer ?? []);
const ready = createPtqModule();
let chain = ready;

self.onmessage = (event) => {
  chain = chain.then((ptq) => handleMessage(ptq, event.data, post)).then(
    () => ready,
    (err) => {
      // worker_core reports errors itself; this only catches a failure to start the module.
      post({ type: 'error', id: event.data?.id, error: { name: err?.name ?? 'Error', message: `analysis worker: ${err?.message ?? err}` } });
      return ready;
    },
  );
};
