// The configuration in effect on the graph: which calibration nodes the what-if configuration
// (state 'calibrationStates', the core's resolved {name: {on, qtype, thresholds?}}) puts in another
// state than the model stores, and how to say it. The page's badges and the plugin's marks on
// Netron's nodes. The resolved document writes `thresholds` only where the configuration sets them.
import { formatValue } from '../../charts/format.mjs';

const sameNumbers = (a, b) => Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((v, i) => Number(v) === Number(b[i]));

// The state in effect when it differs from `stored` ({on, qtype, thresholds?}), else null:
// {on, qtype, qtypeChanged, thresholds?} (thresholds: set by the configuration, other than stored).
export function changedState(stored, effect) {
  if (!effect) return null;
  const now = { on: effect.on !== false, qtype: effect.qtype ?? stored.qtype };
  const qtypeChanged = !(now.on === stored.on && (!now.on || now.qtype === stored.qtype));
  const thresholds = now.on && effect.thresholds?.length && !sameNumbers(effect.thresholds, stored.thresholds) ? effect.thresholds : null;
  if (!qtypeChanged && !thresholds) return null;
  return { ...now, qtypeChanged, ...(thresholds ? { thresholds } : {}) };
}

// "int16", "float", "thr", "int16·thr": the short text of a state in effect (a graph badge, as wide as
// a qtype's, beside which the tensor's shape is written; the tooltip says it in words).
export function effectText(now) {
  if (!now.on) return 'float';
  if (!now.thresholds) return now.qtype;
  return now.qtypeChanged ? `${now.qtype}·thr` : 'thr';
}

// "0.403", "16 channels: 0.081 … 2.5": thresholds in a few characters.
export function thresholdsText(list) {
  const values = list.map(Number);
  if (values.length <= 2) return values.map((v) => formatValue(v, 4)).join(', ');
  return `${values.length} channels: ${formatValue(Math.min(...values), 3)} … ${formatValue(Math.max(...values), 3)}`;
}

// "int16" / "float (switched off)" / "uint8; threshold changed: 0.403": a state in effect in words.
export const effectState = (now) => `${now.on ? now.qtype : 'float (switched off)'}` +
  (now.thresholds ? `; threshold changed: ${thresholdsText(now.thresholds)}` : '');

// "in effect (what-if): int16" / "...: float (switched off)" / "...: uint8; threshold changed: 0.403".
export const effectTitle = (now) => `in effect (what-if): ${effectState(now)}`;

// The stored state of a graph node's calibration (graph-schema.md Calibration).
export function storedState(calibration) {
  const c = calibration ?? {};
  return { on: c.switch === undefined || c.switch === true || c.switch === 'ON', qtype: c.qtype ?? 'int8', thresholds: c.thresholds };
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
