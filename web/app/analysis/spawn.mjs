// Browser analysis workers. Vite inlines the worker (`?worker&inline`, like the viewer's own workers),
// so dist/ on any static host and the single-file ptqscope.html from file:// both work; each worker
// instantiates the wasm module the page compiled once (../graph/wasm_share.mjs: the single file
// carries the wasm bytes once; no SharedArrayBuffer needed).
import AnalysisWorker from './worker.mjs?worker&inline';
import { spawnWithWasm } from '../graph/wasm_share.mjs';

let count = 0;
export const spawnWorker = () => spawnWithWasm(() => new AnalysisWorker({ name: `ptqscope-analysis-${++count}` }));
