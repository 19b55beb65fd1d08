// The plugin bundle's entry (dist/plugin/ptqscope-plugin.js): the browser implementations of the
// plugin's dependencies, then start once Netron has created window.__view__.
import { startWhenReady } from './plugin.mjs';
import { createStore, DEFAULTS } from '../web/app/state.mjs';
import * as pipeline from '../web/app/analysis/pipeline.mjs';
import { heatScale } from '../web/charts/heat_scale.mjs';
import { renderNodeSection } from '../web/app/heatmap/sidebar.mjs';
import { renderReportSection } from '../web/app/reports/sidebar.mjs';
import { filesFromDataTransfer, filesFromFileList } from '../web/app/open/sources.mjs';

// A worker *file* next to this script, not an inlined blob: a blob/data worker inherits Netron's CSP
// (script-src 'self'), which forbids both the blob URL and compiling WebAssembly.
let count = 0;
const spawn = () => new Worker(new URL('../web/app/analysis/worker.mjs', import.meta.url),
  { type: 'module', name: `ptqscope-plugin-${++count}` });

// onnxruntime-web, shipped by the build beside the worker (plugin/vite.config.mjs) and loaded by the
// worker only when "Check with onnxruntime" is pressed (same origin, so Netron's CSP allows it).
const ORT_DIR = 'ptqscope-plugin/onnxruntime-web/';

const deps = {
  state: createStore({ ...DEFAULTS, picked: new Set(), onnxruntime: { url: new URL(ORT_DIR, import.meta.url).href } }),
  pipeline,
  spawn,
  heatScale,
  sections: () => [
    { id: 'analysis-results', title: 'Analysis results', render: renderNodeSection },
    { id: 'report', title: 'Toolchain report', render: renderReportSection },
  ],
  readDrop: filesFromDataTransfer,
  readPicked: filesFromFileList,
};

// window.__ptqscope__: the plugin's handle (its store and runner), for debugging and the tests.
window.__ptqscope__ = startWhenReady(window, deps).then((plugin) => {
  window.__ptqscope__ = plugin;
  return plugin;
});
