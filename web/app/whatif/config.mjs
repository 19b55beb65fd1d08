// The what-if state (pure; no DOM): a quantization configuration document (docs/config-schema.md,
// "ptqscope.config") built from a starting document and the list of the user's changes, each undoable.
// The core resolves the document (config_doc.cpp: base, then intents, then calibration overrides);
// this module only edits it. The latest change always wins: a node's intent removes the explicit
// overrides of the calibration nodes feeding it (input_calibrations of the graph document), and an
// override of a calibration node is written after every intent.

export const ACTIONS = ['float', 'int8', 'int16'];
export const BASES = { stored: 'as calibrated', all_off: 'all float', all_on: 'all quantized' };

const isCalibration = (graph, name) => graph?.nodes?.some((n) => n.name === name && n.calibration) ?? false;

/**
 * createWhatIf({graph, modelName}) -> {document(), startDocument(), changes, add(targets, action),
 *   undo(), reset(base), open(doc), applyFix(doc), canUndo}
 * targets: node names (normal nodes become intents, calibration nodes overrides), one undo step.
 * A change may carry `calibrations` ({name: {on, qtype}}): the exact states it gives those calibration
 * nodes (a fix's node: the fix only ever raises precision, which an intent alone does not say).
 */
export function createWhatIf({ graph = null, modelName = null } = {}) {
  let start = emptyDocument('stored', modelName);
  let changes = []; // [{targets, action}]
  // A fix applied as changes: its provenance stays on the document while the changes are exactly its.
  let applied = null; // {changes, provenance}

  const calibrationSet = (name) => graph?.nodes?.find((n) => n.name === name)?.input_calibrations ?? [];

  function document(upTo = changes.length) {
    const doc = structuredClone(start);
    doc.intents = [...(doc.intents ?? [])];
    doc.calibrations = { ...(doc.calibrations ?? {}) };
    for (const { targets, action, calibrations } of changes.slice(0, upTo)) {
      for (const name of targets) {
        if (isCalibration(graph, name)) {
          doc.calibrations[name] = action === 'float' ? { on: false } : { on: true, qtype: action };
        } else {
          // A later intent for the same node replaces the earlier one (kept in change order).
          doc.intents = doc.intents.filter((i) => i.node !== name);
          doc.intents.push({ node: name, action });
          for (const c of calibrationSet(name)) delete doc.calibrations[c];
        }
      }
      Object.assign(doc.calibrations, structuredClone(calibrations ?? {}));
    }
    if (!Object.keys(doc.calibrations).length) delete doc.calibrations;
    if (applied && applied.changes === changes && upTo === changes.length && applied.provenance) doc.provenance = structuredClone(applied.provenance);
    return doc;
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
    add(targets, action) {
      const list = [...new Set([...(targets ?? [])].filter(Boolean))];
      if (!list.length) throw new Error('what-if: select a node on the graph (or pick several) first');
      if (!ACTIONS.includes(action)) throw new Error(`what-if: unknown action '${action}' (expected ${ACTIONS.join(', ')})`);
      const known = new Set((graph?.nodes ?? []).map((n) => n.name));
      const unknown = graph ? list.filter((n) => !known.has(n)) : [];
      if (unknown.length) throw new Error(`what-if: ${unknown.join(', ')} ${unknown.length > 1 ? 'are' : 'is'} not a node of the model`);
      const inert = graph ? list.filter((n) => !isCalibration(graph, n) && !calibrationSet(n).length) : [];
      if (inert.length) throw new Error(`what-if: ${inert.join(', ')} ${inert.length > 1 ? 'have' : 'has'} no calibrated inputs (nothing to switch)`);
      changes = [...changes, { targets: list, action }];
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
    // order chosen, each undoable), giving that node's calibration nodes the fix's states.
    applyFix(doc) {
      const fix = checkDocument(doc, 'fix');
      start = emptyDocument(fix.base ?? 'stored', modelName);
      if (fix.round) start.round = fix.round;
      const states = fix.calibrations ?? {};
      changes = (fix.intents ?? []).map(({ node, action }) => ({
        targets: [node], action, source: 'fix',
        calibrations: Object.fromEntries(calibrationSet(node).filter((c) => states[c]).map((c) => [c, states[c]])),
      }));
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

// Text of one change for the list ("Conv_2, Conv_9 → int16", "Conv_2 → int16 (fix)").
export const changeText = ({ targets, action, source }) => `${targets.join(', ')} → ${action}${source ? ` (${source})` : ''}`;
