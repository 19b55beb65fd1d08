// Worker side of the wasm core's single copy (see wasm_share.mjs): the first message decides where
// the module comes from. {type: 'ptq-wasm', module} (the web app) instantiates that compiled module
// with the glue; any other first message (a worker started without it, e.g. the Netron plugin's,
// whose glue still embeds the bytes) lets the glue instantiate its own bytes.
import createPtqModule from '../../../build/wasm/ptqscope.mjs';

const WASM_MESSAGE = 'ptq-wasm'; // wasm_share.mjs's (not imported: that module holds the bytes)

function fromModule(module) {
  return new Promise((resolve, reject) => {
    createPtqModule({
      instantiateWasm(imports, receive) {
        WebAssembly.instantiate(module, imports).then((instance) => receive(instance, module), reject);
        return {}; // the exports arrive asynchronously
      },
    }).then(resolve, reject);
  });
}

// -> { ready: Promise<ptq module>, take(data): true if `data` was the module message (consumed) }.
export function wasmFromFirstMessage() {
  let first;
  const firstMessage = new Promise((resolve) => { first = resolve; });
  const ready = firstMessage.then((data) => {
    if (data?.type !== WASM_MESSAGE) return createPtqModule();
    if (data.error) throw new Error(data.error);
    return fromModule(data.module);
  });
  ready.catch(() => {}); // reported to each message that waits for it
  let seen = false;
  return {
    ready,
    take(data) {
      if (seen) return false;
      seen = true;
      first(data);
      return data?.type === WASM_MESSAGE;
    },
  };
}

// A request the browser could not copy into this worker (out of memory) arrives as a `messageerror`
// instead of a message, so no handler would ever answer it. Thrown here, the error reaches the page
// as the Worker's `error` event and its client fails the pending requests.
export function failOnUnreadableMessages(scope) {
  scope.onmessageerror = () => {
    throw new Error('a request could not be read by the worker (out of memory?)');
  };
}
