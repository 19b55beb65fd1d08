// Web Worker: builds the view model from graphJson and lays it out, off the main thread (both take
// a noticeable time on 3,000+ node graphs). Messages: {id, graph, options: {showCalibration}}
// -> {id, model, layout, ms} | {id, error}.
import { buildViewModel } from './model.mjs';
import { layoutGraph } from './layout_core.mjs';

self.onmessage = ({ data }) => {
  try {
    const t0 = performance.now();
    const model = buildViewModel(data.graph, data.options);
    const layout = layoutGraph({ nodes: model.nodes, edges: model.edges });
    self.postMessage({ id: data.id, model, layout, ms: performance.now() - t0 });
  } catch (err) {
    self.postMessage({ id: data.id, error: `layout failed: ${err.message}` });
  }
};
