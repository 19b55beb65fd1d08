// Web Worker: builds the view model from graphJson and lays it out, off the main thread (both take
// a noticeable time on 3,000+ node graphs). Request (messages: web/pipeline/protocol.mjs):
// layout {graph, options: {showCalibration}} -> {model, layout, ms}.
import { buildViewModel } from './model.mjs';
import { layoutGraph } from './layout_core.mjs';
import { serve } from '../../pipeline/protocol.mjs';

const handlers = {
  layout({ graph, options }) {
    const t0 = performance.now();
    try {
      const model = buildViewModel(graph, options);
      const layout = layoutGraph({ nodes: model.nodes, edges: model.edges });
      return { model, layout, ms: performance.now() - t0 };
    } catch (err) {
      err.message = `layout failed: ${err.message}`;
      throw err;
    }
  },
};

const onMessage = serve(handlers, (msg, transfer) => self.postMessage(msg, transfer ?? []));
self.onmessage = ({ data }) => onMessage(data);
