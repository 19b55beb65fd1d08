// The what-if state (pure; no DOM): a quantization configuration document (docs/config-schema.md,
// "ptqscope.config") built from a starting document and the list of the user's changes, each undoable.
// The core resolves the document (config_doc.cpp: base, then intents, then calibration overrides);
// this module only edits it. The latest change always wins: a node's qtype intent removes the on /
// qtype overrides of the calibration nodes feeding it (input_calibrations of the graph document), a
// threshold change removes their threshold overrides, and an override of a calibration node is written
// after every intent.
import { QTYPES, THRESHOLD_METHODS } from '../../pipeline/catalog.mjs';
import { formatValue } from '../../charts/format.mjs';

// The actions of the what-if's buttons: float, then the qtypes the core offers (describe().qtypes:
// int8, uint8, int16, uint16); `threshold` takes a method or values (thresholdParams).
export const ACTIONS = ['float', ...QTYPES.map((q) => q.name)];
export const THRESHOLD = 'threshold';
export const BASES = { stored: 'as calibrated', all_off: 'all float', all_on: 'all quantized' };

const isCalibration = (graph, name) => graph?.nodes?.some((n) => n.name === name && n.calibration) ?? false;
const METHOD_NAMES = () => THRESHOLD_METHODS.map((m) => m.name);

// A threshold change's fields as the configuration document takes them: {method, percentile?,
// per_channel?} or {value: [numbers]} (a suggestion may name both: its value is what was measured).
// Throws naming the field.
export function thresholdParams(params = {}) {
  if (Array.isArray(params.value) || typeof params.value === 'number') {
    const value = [params.value].flat().map(Number);
    if (!value.length || !value.every(Number.isFinite)) throw new Error(`what-if: threshold values must be numbers (got '${[params.value].flat().join(', ')}')`);
    return { value };
  }
  if (!METHOD_NAMES().includes(params.method)) {
    throw new Error(`what-if: threshold method '${params.method ?? ''}' is not one of ${METHOD_NAMES().join(', ')} (or give the values)`);
  }
  const out = { method: params.method };
  if (params.method === 'percentile') {
    const p = Number(params.percentile);
    if (!(p > 0 && p <= 100)) throw new Error(`what-if: the percentile must lie in (0, 100] (got '${params.percentile ?? ''}')`);
    out.percentile = p;
  }
  if (params.per_channel !== undefined && params.per_channel !== null) out.per_channel = Boolean(params.per_channel);
  return out;
}

// "threshold mse", "threshold percentile 99.99 per channel", "threshold 0.403", "threshold" (a fix's
// thresholds, carried as calibration states).
export function thresholdText(params) {
  if (!params) return 'threshold';
  if (params.value) return `threshold ${params.value.map((v) => formatValue(v, 4)).join(', ')}`;
  const pct = params.method === 'percentile' ? ` ${params.percentile}` : '';
  const channel = params.per_channel === true ? ' per channel' : params.per_channel === false ? ' per tensor' : '';
  return `threshold ${params.method}${pct}${channel}`;
}

/**
 * createWhatIf({graph, modelName}) -> {document(), startDocument(), changes, add(targets, action, params),
 *   applyIntent(intent, source), undo(), reset(base), open(doc), applyFix(doc, nodes), canUndo}
 * targets: node names (normal nodes become intents, calibration nodes overrides; a threshold change is
 * always an intent), one undo step. A change may carry `calibrations` ({name: {on, qtype, thresholds}}):
 * the exact states it gives those calibration nodes (a fix's node: the fix only ever raises precision
 * and writes the thresholds it chose, which an intent alone does not say).
 */
export function createWhatIf({ graph = null, modelName = null } = {}) {
  let start = emptyDocument('stored', modelName);
  let changes = []; // [{targets, action, params?, calibrations?, source?, text?}]
  // A fix applied as changes: its provenance stays on the document while the changes are exactly its.
  let applied = null; // {changes, provenance}

  const node = (name) => graph?.nodes?.find((n) => n.name === name);
  const calibrationSet = (name) => node(name)?.input_calibrations ?? [];
  // The calibration nodes a threshold change on `name` re-calibrates: itself, or a normal node's
  // activation inputs (weights take theirs on their own name).
  const thresholdSet = (name) => (isCalibration(graph, name) ? [name]
    : calibrationSet(name).filter((c) => node(c)?.calibration?.kind !== 'weight'));
  // The calibration nodes a change decides exactly (a fix's states): the node itself or its set.
  const decided = (name) => (isCalibration(graph, name) ? [name] : calibrationSet(name));

  // Drops `fields` from the overrides of `names` (an override left empty goes).
  const dropFields = (calibrations, names, fields) => {
    for (const c of names) {
      if (!calibrations[c]) continue;
      const rest = Object.fromEntries(Object.entries(calibrations[c]).filter(([k]) => !fields.includes(k)));
      if (Object.keys(rest).length) calibrations[c] = rest;
      else delete calibrations[c];
    }
  };

  function applyChange(doc, { targets, action, params, calibrations }) {
    for (const name of targets) {
      if (action === THRESHOLD) {
        // A later threshold change on the node replaces the earlier one; the thresholds it sets win
        // over thresholds an earlier override wrote (a fix's).
        if (params) {
          doc.intents = doc.intents.filter((i) => !(i.node === name && i.action === THRESHOLD));
          doc.intents.push({ node: name, action: THRESHOLD, ...params });
        }
        dropFields(doc.calibrations, thresholdSet(name), ['thresholds', 'thresholds_from']);
      } else if (isCalibration(graph, name)) {
        const kept = Object.fromEntries(Object.entries(doc.calibrations[name] ?? {}).filter(([k]) => k === 'thresholds' || k === 'thresholds_from'));
        doc.calibrations[name] = { ...(action === 'float' ? { on: false } : { on: true, qtype: action }), ...kept };
      } else {
        // A later intent for the same node replaces the earlier one (kept in change order).
        doc.intents = doc.intents.filter((i) => i.node !== name || i.action === THRESHOLD);
        doc.intents.push({ node: name, action });
        dropFields(doc.calibrations, calibrationSet(name), ['on', 'qtype']);
      }
    }
    Object.assign(doc.calibrations, structuredClone(calibrations ?? {}));
  }

  function document(upTo = changes.length) {
    const doc = structuredClone(start);
    doc.intents = [...(doc.intents ?? [])];
    doc.calibrations = { ...(doc.calibrations ?? {}) };
    for (const change of changes.slice(0, upTo)) applyChange(doc, change);
    if (!Object.keys(doc.calibrations).length) delete doc.calibrations;
    if (applied && applied.changes === changes && upTo === changes.length && applied.provenance) doc.provenance = structuredClone(applied.provenance);
    return doc;
  }

  // The checks of a change before it is added (throws naming the nodes).
  function checkTargets(targets, action) {
    const list = [...new Set([...(targets ?? [])].filter(Boolean))];
    if (!list.length) throw new Error('what-if: select a node on the graph (or pick several) first');
    if (action !== THRESHOLD && !ACTIONS.includes(action)) throw new Error(`what-if: unknown action '${action}' (expected ${[...ACTIONS, THRESHOLD].join(', ')})`);
    const known = new Set((graph?.nodes ?? []).map((n) => n.name));
    const unknown = graph ? list.filter((n) => !known.has(n)) : [];
    if (unknown.length) throw new Error(`what-if: ${unknown.join(', ')} ${unknown.length > 1 ? 'are' : 'is'} not a node of the model`);
    const inert = graph ? list.filter((n) => !isCalibration(graph, n) && !calibrationSet(n).length) : [];
    if (inert.length) throw new Error(`what-if: ${inert.join(', ')} ${inert.length > 1 ? 'have' : 'has'} no calibrated inputs (nothing to switch)`);
    const noActivation = graph && action === THRESHOLD ? list.filter((n) => !thresholdSet(n).length) : [];
    if (noActivation.length) {
      throw new Error(`what-if: ${noActivation.join(', ')} read${noActivation.length > 1 ? '' : 's'} no activation through a calibration node (select a weight's calibration node to set its thresholds)`);
    }
    return list;
  }

  return {
    document: () => document(),
    // The configuration the changes start from (what "before" is computed on).
    startDocument: () => document(0),
    get changes() {
      return changes.map((c) => ({ ...c, targets: [...c.targets] }));
    },
    get base() {
      return start.base;
    },
    get canUndo() {
      return changes.length > 0;
    },
    // params: a threshold change's method or values (thresholdParams).
    add(targets, action, params) {
      const list = checkTargets(targets, action);
      changes = [...changes, action === THRESHOLD ? { targets: list, action, params: thresholdParams(params) } : { targets: list, action }];
    },
    // A configuration intent ({node, action, ...}: a hint's suggestion) as one change, marked `source`
    // and shown with the intent's `text` when it has one.
    applyIntent(intent, source = null) {
      const list = checkTargets([intent?.node], intent?.action);
      const change = { targets: list, action: intent.action };
      if (intent.action === THRESHOLD) change.params = thresholdParams(intent);
      if (source) change.source = source;
      if (intent.text) change.text = intent.text;
      changes = [...changes, change];
    },
    undo() {
      changes = changes.slice(0, -1);
    },
    // "as calibrated" (stored) or "all float" (all_off): no changes.
    reset(base = 'stored') {
      if (!(base in BASES)) throw new Error(`what-if: unknown base '${base}'`);
      start = emptyDocument(base, modelName);
      changes = [];
    },
    // A saved document (a file): the new starting point, no changes.
    open(doc) {
      start = checkDocument(doc);
      changes = [];
    },
    // A fix's document: its base is the starting point and each node it raised one change (in the
    // order chosen, each undoable), giving that node's calibration nodes the fix's states (thresholds
    // included). `nodes`: the fix's final set ([{node, action}]); without it, one change per intent.
    applyFix(doc, nodes = null) {
      const fix = checkDocument(doc, 'fix');
      start = emptyDocument(fix.base ?? 'stored', modelName);
      if (fix.round) start.round = fix.round;
      const states = fix.calibrations ?? {};
      const statesOf = (name) => Object.fromEntries(decided(name).filter((c) => states[c]).map((c) => [c, states[c]]));
      changes = (nodes ?? fix.intents ?? []).map(({ node: name, action, ...rest }) => {
        const change = { targets: [name], action, source: 'fix', calibrations: statesOf(name) };
        // An intent of the document keeps its thresholds; a node of the final set has them in the states.
        if (action === THRESHOLD && !nodes) change.params = thresholdParams(rest);
        return change;
      });
      applied = { changes, provenance: fix.provenance ?? null };
    },
  };
}

export function emptyDocument(base = 'stored', modelName = null) {
  const doc = { schema: 'ptqscope.config', version: 1 };
  if (modelName) doc.model = modelName;
  doc.base = base;
  doc.intents = [];
  return doc;
}

// The shape checks of a document read from a file (the core checks names, actions and qtypes and
// names the field it rejects).
export function checkDocument(doc, file = 'configuration') {
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw new Error(`${file}: not a JSON object`);
  if (doc.schema !== 'ptqscope.config') throw new Error(`${file}: "schema" is ${JSON.stringify(doc.schema)}, expected "ptqscope.config"`);
  if (doc.intents !== undefined && !Array.isArray(doc.intents)) throw new Error(`${file}: "intents" must be a list`);
  if (doc.calibrations !== undefined && (typeof doc.calibrations !== 'object' || Array.isArray(doc.calibrations) || doc.calibrations === null)) {
    throw new Error(`${file}: "calibrations" must be an object`);
  }
  return structuredClone(doc);
}

// Text of one change for the list ("Conv_2, Conv_9 → int16", "Conv_2 → int16 (fix)", "x_HzCalibration →
// threshold 0.403 (max) (hint)").
export const changeText = ({ targets, action, params, source, text }) =>
  `${targets.join(', ')} → ${text ?? (action === THRESHOLD ? thresholdText(params) : action)}${source ? ` (${source})` : ''}`;
