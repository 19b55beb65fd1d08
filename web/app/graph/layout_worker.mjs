// Web Worker: lays the graph out off the main thread. Messages: {id, graph} -> {id, layout} | {id, error}.
import { layoutGraph } from './layout_core.mjs';

self.onmessage = ({ data }) => {
  try {
    const t0 = performance.now();
    const layout = layoutGraph(data.graph, data.options);
    self.postMessage({ id: data.id, layout, ms: performance.now() - t0 });
  } catch (err) {
    self.postMessage({ id: data.id, error: `layout failed: ${err.message}` });
  }
};
