// Browser analysis workers. Vite inlines the worker (`?worker&inline`, like the viewer's own workers),
// so dist/ on any static host and the single-file ptqscope.html from file:// both work; each worker
// compiles its own wasm instance (no SharedArrayBuffer needed).
import AnalysisWorker from './worker.mjs?worker&inline';

let count = 0;
export const spawnWorker = () => new AnalysisWorker({ name: `ptqscope-analysis-${++count}` });
