// Main-thread side of the wasm core's single copy: the page holds the module's bytes once (Vite's
// virtual:ptqscope-wasm, cut out of the SINGLE_FILE glue by vite.config.mjs, whose workers get the
// glue without them), compiles them once, and gives every worker the compiled WebAssembly.Module
// (structured-cloneable) as its first message. Receiving side: wasm_worker.mjs.
import wasmBase64 from 'virtual:ptqscope-wasm';
import { withFirstMessage } from './first_message.mjs';

export const WASM_MESSAGE = 'ptq-wasm';

let compiled = null;
function decode(base64) {
  const text = atob(base64);
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return bytes;
}
// One compilation per page (CSP: 'wasm-unsafe-eval'); later workers reuse it.
export const wasmModule = () => (compiled ??= WebAssembly.compile(decode(wasmBase64)));

// `create()` makes a Worker that runs wasm_worker.mjs. Messages posted before the module was sent
// wait, so the module is always the worker's first message (first_message.mjs).
export function spawnWithWasm(create) {
  const module = wasmModule().then((compiledModule) => ({ type: WASM_MESSAGE, module: compiledModule }),
    (err) => ({ type: WASM_MESSAGE, error: `the embedded wasm module does not compile: ${err?.message ?? err}` }));
  return withFirstMessage(create(), module);
}
