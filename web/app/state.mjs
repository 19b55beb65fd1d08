// The app's one observable store. Keys used across the app:
//   graph            graphJson object (docs/graph-schema.md) of the loaded model, or null
//   modelBytes       Uint8Array of the loaded .onnx
//   modelName        its file name
//   externalFiles    [{path, bytes}] the model's external-data files (paths as the model names them), or []
//   calibrationFiles [{path: '<input>/<file>.npy', bytes, file?}] of the calibration_data folder (file: the File read), or null
//   samples          {count, names, folder} of the checked calibration data, or null
//   heldData         calibration data opened before its model was read: {label, files, reading} (reading:
//                    a model is being read; else none is open yet), or null (open/open.mjs)
//   selection        node name | null (the sidebar shows it)
//   picked           Set of node names (multi-select; replace the Set, do not mutate it in place)
//   heat             { values: Map<nodeName, {value, color, label}>, legend: {title, direction, domain} } | null
//   focus            node name to centre in the graph view (set it again to re-centre)
//   results          merged result object
//   whatIf           the what-if view: {document, changes, base, before, after, busy, options} (whatif/controller.mjs)
//   calibrationStates the calibration nodes' states in the configuration in effect, {name: {on, qtype}}
//                    (the core's resolved what-if document), or null (as stored): badges and tooltips
//   compare          two compared results: {nameA, nameB, source, metric, comparison} | null (compare/panel.mjs)
//   report           a toolchain report beside the model: {name, report, mapped, document} | null (reports/)
//   error            message for the banner | null; the page stays usable
//   status           short progress text ('Loading model…') | null
//   memory           wasm heaps in bytes: {load: the viewer's engine worker once the model is loaded,
//                    analysis: [each analysis worker after the latest run] | null}
//   onnxruntime      where onnxruntime-web is for "Check with onnxruntime": {url} (the folder the build ships
//                    it in) or {unavailable: why not}; unset: not available (whatif/onnxruntime_view.mjs)
//   showPanel        a panel id ('whatif', 'fix', …) another panel asks the host to bring into view (the app's
//                    dock shows that tab, the plugin's dock scrolls to that section)
//   convolutionMode  'accurate' (default when unset) | 'fast' | 'fastest': the analysis workers' convolution
//                    kernels (the analyses panel's setting; docs/compatibility.md)
//   relationRules    'horizon_nn' (default when unset) | 'hmct': how calibration nodes relate to the nodes
//                    reading them (describe().relation_rules, behaviour.md §1.9; the analyses panel's
//                    setting): the graph is read again and the analysis workers reloaded when it changes
// Listeners get (value, previous, key). `set` notifies even when the value is identical so that
// re-setting 'focus' to the same node re-centres it; use `update` to notify only on change.

export function createStore(initial = {}) {
  const values = new Map(Object.entries(initial));
  const listeners = new Map();

  function on(key, fn) {
    if (!listeners.has(key)) listeners.set(key, new Set());
    listeners.get(key).add(fn);
    return () => listeners.get(key).delete(fn);
  }

  function set(key, value) {
    const previous = values.get(key);
    values.set(key, value);
    for (const fn of [...(listeners.get(key) ?? []), ...(listeners.get('*') ?? [])]) {
      try {
        fn(value, previous, key);
      } catch (err) {
        // One broken listener (e.g. a panel) must not stop the others nor the caller.
        console.error(`state listener for '${key}' failed:`, err);
        if (key !== 'error') set('error', `Internal error while updating '${key}': ${err.message}`);
      }
    }
  }

  return {
    get: (key) => values.get(key),
    set,
    update(key, value) {
      if (values.get(key) !== value) set(key, value);
    },
    on,
    // Several keys at once, then listeners in the given order.
    setMany(entries) {
      for (const [k, v] of Object.entries(entries)) set(k, v);
    },
    keys: () => [...values.keys()],
  };
}

export const DEFAULTS = Object.freeze({
  graph: null,
  modelBytes: null,
  externalFiles: [],
  modelName: null,
  calibrationFiles: null,
  samples: null,
  heldData: null,
  selection: null,
  picked: new Set(),
  heat: null,
  focus: null,
  results: null,
  whatIf: null,
  calibrationStates: null,
  compare: null,
  report: null,
  error: null,
  status: null,
});

// What belongs to the model shown and is dropped when another is opened (the page's opener, the
// plugin's capture of Netron's model): its results, the comparison drawn on its graph and the heat made
// of them, the selection and the picked nodes. A new object (a new Set) on every call.
export const modelScopedState = () => ({ selection: null, picked: new Set(), heat: null, results: null, compare: null });

// The app-wide store (main.mjs and every panel share it).
export const state = createStore({ ...DEFAULTS, picked: new Set() });
export default state;
