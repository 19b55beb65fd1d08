// Combining result documents in the page (pure). Rows within one request are merged and sorted by the
// core (ptq.mergeResults); here we only put the documents of *different* analyses side by side in
// state 'results', and fold per-item events into a provisional document while a sweep runs.
import { describe } from '../../pipeline/catalog.mjs';

// Sections holding `{<node_type or name>: ...}` maps that different requests add to.
const MAP_SECTIONS = new Set([
  'sensitivity', 'sensitivity_order', 'leave_one_out', 'leave_one_out_order', 'acc_error',
  'distribution', 'channelwise', 'stat_info', 'sensitivity_analysis', 'options', 'timings_ms',
]);

export function combineResults(prev, next) {
  if (!prev) return next;
  if (!next) return prev;
  const out = { ...prev };
  for (const [key, value] of Object.entries(next)) {
    if (MAP_SECTIONS.has(key) && isPlainObject(value) && isPlainObject(prev[key])) {
      // The latest request's entries first: the panel lists a sweep's tables in this order, so a sweep
      // just run comes before the tables an earlier run (Run all's, say) left.
      const older = Object.entries(prev[key]).filter(([k]) => !Object.hasOwn(value, k));
      out[key] = { ...value, ...Object.fromEntries(older) };
    } else if (key === 'acc_error_figures' && Array.isArray(prev[key]) && Array.isArray(value)) {
      const names = new Set(value.map((f) => f.file_name));
      out[key] = [...prev[key].filter((f) => !names.has(f.file_name)), ...value];
    } else {
      out[key] = value;
    }
  }
  // A finished document replaces a streamed one: the streaming marker goes.
  if (!next.partial) delete out.partial;
  return out;
}

function isPlainObject(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

// Sweeps whose rows are keyed by node type (the event's `section`), then by item
// (the core's describe(): `keyed_by: "node_type"`).
const keyedByNodeType = (analysis) => describe.analyses.some((a) => a.name === analysis && a.keyed_by === 'node_type');

// Folds one item event ({type:"item", analysis, section, item, row, done, total}) into `doc` and
// returns a new document (the previous one is left untouched so listeners can compare). Table
// sweeps key rows by section then item; the others (acc_error: one curve per item) by item. Events
// without a row (progress only: stat_info, sensitivity_analysis send `row: null`) return `doc` itself.
export function applyItemEvent(doc, event) {
  const { analysis, section, item, row } = event;
  if (!analysis || item === undefined || item === null || row === undefined || row === null) return doc;
  const out = { ...(doc ?? { schema: 'ptqscope.result', version: 1, partial: true }) };
  if (keyedByNodeType(analysis) && section) {
    const orderKey = `${analysis}_order`;
    out[analysis] = { ...out[analysis], [section]: { ...out[analysis]?.[section], [item]: row } };
    const order = out[orderKey]?.[section] ?? [];
    if (!order.includes(item)) out[orderKey] = { ...out[orderKey], [section]: [...order, item] };
  } else {
    out[analysis] = { ...out[analysis], [item]: row };
  }
  return out;
}
