// The configuration in effect on the graph: which calibration nodes the what-if configuration
// (state 'calibrationStates', the core's resolved {name: {on, qtype}}) puts in another state than the
// model stores, and how to say it. The page's badges and the plugin's marks on Netron's nodes.

// The state in effect when it differs from `stored` ({on, qtype}), else null.
export function changedState(stored, effect) {
  if (!effect) return null;
  const now = { on: effect.on !== false, qtype: effect.qtype ?? stored.qtype };
  return now.on === stored.on && (!now.on || now.qtype === stored.qtype) ? null : now;
}

// "int16", "float": the short text of a state in effect.
export const effectText = (now) => (now.on ? now.qtype : 'float');

// "in effect (what-if): int16" / "...: float (switched off)".
export const effectTitle = (now) => `in effect (what-if): ${now.on ? now.qtype : 'float (switched off)'}`;

// The stored state of a graph node's calibration (graph-schema.md Calibration).
export function storedState(calibration) {
  const c = calibration ?? {};
  return { on: c.switch === undefined || c.switch === true || c.switch === 'ON', qtype: c.qtype ?? 'int8' };
}

// Map<calibration node name, state in effect> of the graph's calibration nodes the states change.
export function changedCalibrations(graph, states) {
  const out = new Map();
  if (!states) return out;
  for (const n of graph?.nodes ?? []) {
    if (!n.calibration) continue;
    const name = n.calibration.item ?? n.name;
    const now = changedState(storedState(n.calibration), states[name]);
    if (now) out.set(name, now);
  }
  return out;
}
