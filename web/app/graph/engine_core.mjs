// What the viewer's engine does with one wasm Session, independent of the worker around it
// (engine_worker.mjs in the page; Node tests call it directly): read a model with the files opened
// with it, and check calibration data with the core's dtype / shape / NaN rules.
//   load {model: Uint8Array, candidates?: [{path, bytes}], relations?} -> {summary, graph, externalPaths, memory}
//        relations: the relation rules the graph's relations follow (Session.setRelations; default when absent)
//        memory: the worker's ptq.memoryUsage() once the model is loaded and drawn (heapBytes: its wasm heap)
//        graph nodes the core cannot run (summary.unsupported) carry unsupported: true
//        candidates: files opened with the model; those it names as external data are used
//        (externalPaths), a named file that is missing fails the load naming it
//   data {model?: Uint8Array, externalFiles?: [{path, bytes}], files: [{path, bytes}]} -> {sampleCount, sampleNames}
//        without `model`: checked against the model of the preceding load

export function engineHandlers(ptq) {
  const session = new ptq.Session();
  return {
    load({ model, candidates = [], relations }) {
      const needed = ptq.externalDataFiles(model, candidates.map((c) => c.path));
      const missing = needed.filter((n) => n.path === null).map((n) => `'${n.location}'`);
      if (missing.length) {
        throw new Error(`its tensors are stored in the external file${missing.length > 1 ? 's' : ''} ${missing.join(', ')}, ` +
          'not opened with it: open the model together with its data files (or drop its folder)');
      }
      const externalPaths = needed.map((n) => n.path);
      if (relations) session.setRelations(relations);
      const summary = session.loadModel(model, candidates.filter((c) => externalPaths.includes(c.path)));
      // A model that loads but cannot be drawn is still usable by the analyses: report, do not fail.
      if (typeof session.graphJson !== 'function') {
        return { summary, graph: null, externalPaths, graphError: 'this build of ptqscope.mjs has no Session.graphJson(): rebuild the wasm module (scripts/build.sh wasm-module)' };
      }
      const graph = JSON.parse(session.graphJson());
      // The nodes the core cannot run (summary.unsupported): the graph view marks them.
      const unsupported = new Set(summary.unsupported?.map((u) => u.node) ?? []);
      for (const n of graph.nodes) if (unsupported.has(n.name)) n.unsupported = true;
      return { summary, graph, externalPaths, memory: ptq.memoryUsage() };
    },
    data({ model, externalFiles = [], files }) {
      if (model) session.loadModel(model, externalFiles);
      const { sampleCount, sampleNames } = session.loadCalibrationData(files);
      return { sampleCount, sampleNames: [...sampleNames] };
    },
  };
}

// The opener's engine interface (open/open.mjs) over these handlers, for callers in the same thread.
export function directEngine(ptq) {
  const h = engineHandlers(ptq);
  return {
    loadModel: async (bytes, candidates = [], relations = undefined) => h.load({ model: bytes, candidates, relations }),
    loadCalibration: async (files, modelBytes, externalFiles = []) => h.data({ model: modelBytes, externalFiles, files }),
  };
}
