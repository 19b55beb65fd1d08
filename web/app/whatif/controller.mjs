// The what-if loop of a host (the app or the Netron plugin), env-neutral: the configuration document
// being edited (config.mjs), a `what_if` analysis after every change on the host's runner (the core
// re-runs only what the change reaches: its run cache in the worker), the answers for the starting
// configuration ("before": as calibrated, or the document opened) and for the current one ("after"),
// and `node_errors` on demand. Everything panels draw is in state 'whatIf': {document, changes, base,
// before, after, busy, options}; the calibration nodes' states in effect (the core's resolved
// document of the latest answer, {name: {on, qtype}}) are state 'calibrationStates' (null before the
// first answer: the model as stored), for the graph's badges and tooltips.
//
// The worker that answers is the pool's first free one; what-if runs are sequential, so they land on
// the same worker and find its cached float and quantized passes.
import { createWhatIf } from './config.mjs';
import { queuedRun } from '../analysis/runner.mjs';

import { coreOption } from './defaults.mjs';

// What the panel shows before the user changes anything: the core's defaults of what_if.
// data_num 0 = every sample.
export const defaultOptions = () => Object.fromEntries(['metric', 'data_num', 'sample_selection']
  .map((k) => [k, coreOption('what_if', k)?.default]).filter(([, v]) => v !== undefined && v !== null));

/**
 * createWhatIfController(state, runner) -> {add(targets, action, params?), applyIntent(intent, source),
 *   undo(), reset(base), open(doc), applyFix(doc, nodes?), refresh(), nodeErrors(extra?), setOptions(o),
 *   document(), resolvedDocument(), dispose()}
 * Every edit runs what_if at once (queued behind a run in flight; edits made meanwhile collapse into
 * one run of the latest document).
 */
export function createWhatIfController(state, runner) {
  let model = createWhatIf({ graph: state.get('graph'), modelName: state.get('modelName') });
  let options = defaultOptions(); // only what the core describes or the user set is sent
  let before = null; // the starting configuration's answer
  let after = null;
  let busy = null; // label of the run in flight
  let wanted = 0; // edits not yet run
  let loop = null;
  const queued = queuedRun(runner);

  function publish() {
    state.set('whatIf', {
      document: model.document(), changes: model.changes, base: model.base, canUndo: model.canUndo,
      before, after, busy, options: { ...options },
    });
  }

  const request = (analysis, config = model.document()) => ({ analysis, options: { ...options }, config });
  // One what_if answer ({what_if, config (the core's resolved document), changes, calibration_samples}),
  // null on failure (the runner put the message in state 'error').
  // `sent`: the document asked about (resolvedDocument() hands out the core's resolution of it).
  const answer = async (config, changes) => {
    try {
      const doc = await queued(request('what_if', config), 'What-if');
      return doc?.what_if ? { what_if: doc.what_if, config: doc.config ?? config, sent: config, changes, calibration_samples: doc.calibration_samples } : null;
    } catch {
      return null;
    }
  };

  // Runs what_if for the latest document, after the starting configuration's when that is not known
  // yet (a new start: another model, a reset, a document opened, other options); edits during a run
  // trigger one more run afterwards.
  function refresh() {
    wanted++;
    publish();
    loop ??= (async () => {
      try {
        while (wanted) {
          wanted = 0;
          busy = 'what-if';
          publish();
          const changes = model.changes.length;
          if (!before) {
            before = await answer(model.startDocument(), 0);
            if (before && !changes) after = before;
            publish();
            if (!changes) continue;
          }
          const now = await answer(model.document(), changes);
          if (now) after = now;
        }
        if (after) {
          state.set('heatSettings', { ...state.get('heatSettings'), view: 'what_if', metric: after.what_if.metric });
          state.set('calibrationStates', after.config.calibrations ?? null);
        }
      } finally {
        busy = null;
        loop = null;
        publish();
      }
    })();
    return loop;
  }

  // Each node's own and accumulated error under the current document (heat layers, path chart).
  // `extra`: options of node_errors alone (measure).
  async function nodeErrors(extra = {}) {
    busy = 'node errors';
    publish();
    try {
      const r = request('node_errors');
      const doc = await queued({ ...r, options: { ...r.options, ...extra } }, 'Node errors');
      if (doc?.node_errors) state.set('heatSettings', { ...state.get('heatSettings'), view: 'accumulated', metric: doc.node_errors.metric });
      return doc;
    } finally {
      busy = loop ? 'what-if' : null;
      publish();
    }
  }

  const edit = (fn) => {
    fn();
    return refresh();
  };
  // An edit that replaces the starting configuration: "before" is computed again.
  const restart = (fn) => edit(() => {
    fn();
    before = null;
  });

  // A new model: a fresh document, no answers.
  const offs = ['graph', 'modelName'].map((k) => state.on(k, (v, prev) => {
    if (v === prev) return;
    model = createWhatIf({ graph: state.get('graph'), modelName: state.get('modelName') });
    before = null;
    after = null;
    state.set('calibrationStates', null);
    publish();
  }));
  publish();

  return {
    add: (targets, action, params) => {
      model.add(targets, action, params); // throws before anything runs
      return refresh();
    },
    // A configuration intent (a hint's suggestion) as one undoable change.
    applyIntent: (intent, source) => {
      model.applyIntent(intent, source);
      return refresh();
    },
    undo: () => edit(() => model.undo()),
    reset: (base) => restart(() => model.reset(base)),
    open: (doc) => restart(() => model.open(doc)),
    // A fix's configuration as the changes it makes (each undoable) on top of its base.
    applyFix: (doc, nodes) => restart(() => model.applyFix(doc, nodes)),
    refresh,
    nodeErrors,
    // New options (samples, metric) re-run what-if, the starting configuration's too, only when it
    // has an answer to replace.
    setOptions(o) {
      options = { ...options, ...o };
      before = null;
      if (after || loop) return refresh();
      publish();
      return Promise.resolve();
    },
    document: () => model.document(),
    // What to save and export: a document that chooses thresholds by a method is saved as the core
    // resolved it in the latest answer (when that answered the document as it is now): the thresholds
    // the numbers were computed with, whatever samples an export would choose them on. Else the document.
    resolvedDocument() {
      const doc = model.document();
      const chooses = doc.calibration || (doc.intents ?? []).some((i) => i.action === 'threshold' && i.method);
      return chooses && after && JSON.stringify(after.sent) === JSON.stringify(doc) ? structuredClone(after.config) : doc;
    },
    get changes() {
      return model.changes;
    },
    dispose() {
      offs.forEach((off) => off());
    },
  };
}
