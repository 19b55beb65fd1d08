// Result rows → per-node heat values (pure; no DOM). Weight/activation rows are keyed by calibration
// node; their value is shown on the normal nodes that consume that calibration node's output
// (cali_normal_map, §1.9: graphJson `calibration.consumers`, else the row's `node` column).
import { toNumber, formatValue } from '../../charts/format.mjs';
import { worseDirection } from '../../charts/heat_scale.mjs';
import { HINT_LAYER, isMetric } from '../../pipeline/catalog.mjs';
import { hintLayer, orderedKeys } from '../../pipeline/result.mjs';

// Which way is "worse" (the core's describe(), §4, or the direction a report's format declares for
// its own metrics: `better`); false for non-metric columns.
export function worseIsLower(metric, better) {
  if (better) return worseDirection(metric, better) === 'lower';
  return isMetric(metric) && worseDirection(metric) === 'lower';
}

// Non-finite numbers are strings in the result JSON; the chart package parses and prints them.
export { toNumber, formatValue };

// The views of the heatmap toggle and where their rows live in the result document:
// the sweeps (node / weight / activation / leave-one-out), the accumulated error of the what-if
// configuration (what_if.nodes), each node's own and accumulated error (node_errors), and the change
// between two compared results (context.compare: web/app/compare/compare.mjs's compareDocuments), and
// a toolchain report's metrics per node (context.report: web/pipeline/reports/document.mjs), and the
// cause hints (explain: per node the largest share of the output loss a cure recovers; nodes without
// a hint stay uncoloured).
export const VIEWS = ['node', 'weight', 'activation', 'leave_one_out', 'what_if', 'own', 'accumulated', 'hints', 'compare', 'report'];

// {section, nodeType, rows, order, better?} for a view, or null when the result has no such table.
// `looType` picks the leave-one-out table when several node types were run (else node first).
// better: {metric: 'higher' | 'lower'} for metrics whose direction the table declares (a report's).
export function viewTable(result, view, looType, context = {}) {
  if (view === 'report') {
    const rep = context.report?.report;
    if (!rep?.order?.length) return null;
    return {
      section: 'report', nodeType: rep.format, rows: rep.nodes, order: rep.order,
      better: Object.fromEntries(rep.metrics.map((m) => [m.name, m.better])), label: rep.label,
    };
  }
  if (view === 'compare') {
    const cmp = context.compare;
    if (!cmp?.rows?.length) return null;
    const rows = Object.fromEntries(cmp.rows.map((r) => [r.name, { [cmp.metric]: r.delta }]));
    const better = cmp.better ? { [cmp.metric]: cmp.better } : undefined;
    return { section: 'compare', nodeType: cmp.source, rows, order: cmp.rows.map((r) => r.name), better };
  }
  if (!result) return null;
  if (view === 'hints') {
    const layer = hintLayer(result);
    if (!layer.size) return null;
    const rows = Object.fromEntries([...layer].map(([node, v]) => [node, { [HINT_LAYER.name]: v }]));
    return { section: 'hints', nodeType: 'node', rows, order: [...layer.keys()], better: { [HINT_LAYER.name]: HINT_LAYER.better } };
  }
  if (view === 'what_if') {
    const wi = result.what_if;
    if (!wi?.nodes || !wi.metric) return null;
    const rows = Object.fromEntries(Object.entries(wi.nodes).map(([k, v]) => [k, { [wi.metric]: v }]));
    return { section: 'what_if', nodeType: 'node', rows, order: wi.order ?? Object.keys(wi.nodes) };
  }
  if (view === 'own' || view === 'accumulated') {
    const ne = result.node_errors;
    if (!ne?.nodes || !ne.metric) return null;
    const order = ne.order ?? Object.keys(ne.nodes);
    const rows = Object.fromEntries(order.filter((k) => ne.nodes[k] && view in ne.nodes[k]).map((k) => [k, { [ne.metric]: ne.nodes[k][view] }]));
    return { section: 'node_errors', nodeType: view, rows, order };
  }
  if (view === 'leave_one_out') {
    const loo = result.leave_one_out ?? {};
    const nodeType = [looType, 'node', 'activation', 'weight', 'tae'].find((t) => t && loo[t]) ?? Object.keys(loo)[0];
    if (!nodeType) return null;
    return { section: 'leave_one_out', nodeType, rows: loo[nodeType], order: result.leave_one_out_order?.[nodeType] };
  }
  const rows = result.sensitivity?.[view];
  if (!rows) return null;
  return { section: 'sensitivity', nodeType: view, rows, order: result.sensitivity_order?.[view] };
}

// The metric columns of a table: every key of its rows except the extra columns (§3.3 step 6).
const EXTRA_COLUMNS = new Set(['node', 'threshold', 'qtype']);
export function metricColumns(rows) {
  const cols = [];
  for (const row of Object.values(rows ?? {})) {
    for (const k of Object.keys(row)) if (!EXTRA_COLUMNS.has(k) && !cols.includes(k)) cols.push(k);
  }
  return cols;
}

export const orderedItems = (table) => orderedKeys(table.rows, table.order);

// name → graph node, built once per graph.
const nodeIndexCache = new WeakMap();
export function nodeIndex(graph) {
  if (!graph) return new Map();
  let idx = nodeIndexCache.get(graph);
  if (!idx) {
    idx = new Map((graph.nodes ?? []).map((n) => [n.name, n]));
    nodeIndexCache.set(graph, idx);
  }
  return idx;
}

// The graph nodes an item's value is drawn on. Interested-node groups are keyed "A+B".
export function targetsOfItem(item, row, graph) {
  const idx = nodeIndex(graph);
  const names = idx.has(item) ? [item] : item.split('+').filter((n) => idx.has(n));
  const out = new Set();
  for (const name of names.length ? names : [item]) {
    out.add(name);
    const cal = idx.get(name)?.calibration;
    const consumers = cal?.consumers?.length
      ? cal.consumers
      : cal && typeof row?.node === 'string' && row.node ? row.node.split(';') : [];
    for (const c of consumers) out.add(c);
  }
  return [...out];
}

// Per node: the worst value of `metric` over the items mapped onto it, with every contributing item.
// Returns Map<nodeName, {value, items: [{item, value}]}>.
export function nodeValues(result, graph, { view = 'node', metric, looType } = {}, context = {}) {
  const table = viewTable(result, view, looType, context);
  const out = new Map();
  if (!table) return out;
  const m = metric ?? metricColumns(table.rows)[0];
  if (!m) return out;
  const lowerWorse = worseIsLower(m, table.better?.[m]);
  const worse = (a, b) => {
    if (Number.isNaN(a)) return false;
    if (Number.isNaN(b)) return true;
    return lowerWorse ? a < b : a > b;
  };
  for (const item of orderedItems(table)) {
    const row = table.rows[item];
    if (!row || !(m in row)) continue;
    const value = toNumber(row[m]);
    for (const target of targetsOfItem(item, row, graph)) {
      const cur = out.get(target);
      if (!cur) out.set(target, { value, items: [{ item, value }] });
      else {
        cur.items.push({ item, value });
        if (worse(value, cur.value)) cur.value = value;
      }
    }
  }
  return out;
}

// Hover text (the graph view prefixes the legend title, which names the metric): the value of every
// item shown on the node, with the item's name when it is not the node itself.
export function heatLabel(entry, nodeName) {
  return entry.items.map(({ item, value }) => (item === nodeName ? formatValue(value) : `${formatValue(value)} (${item})`)).join('\n');
}

// The value of state 'heat' (web/app/state.mjs): colours from the chart package's heat scale.
// `heatScale(metric, values, {better, scale}) -> {color(v), legend}` is passed in so this module stays
// pure. `scale`: the heat scale asked for (heatScale's 'auto' when absent); the compare view's values
// are changes, not metric values, so it always takes the range of those shown.
export function buildHeat(result, graph, { view = 'node', metric, looType, scale } = {}, heatScale, context = {}) {
  const table = viewTable(result, view, looType, context);
  if (!table) return null;
  const m = metric ?? metricColumns(table.rows)[0];
  const values = nodeValues(result, graph, { view, metric: m, looType }, context);
  if (!values.size) return null;
  const finite = [...values.values()].map((e) => e.value).filter(Number.isFinite);
  const colours = heatScale(m, finite, { better: table.better?.[m], scale: view === 'compare' ? 'range' : scale });
  const heat = new Map();
  for (const [name, entry] of values) {
    heat.set(name, {
      value: entry.value,
      color: colours.color(entry.value),
      label: heatLabel(entry, name),
    });
  }
  const title = `${viewTitle(view, table)}: ${m}`;
  return { values: heat, legend: { ...colours.legend, title, view, metric: m, asked: scale ?? 'auto' } };
}

function viewTitle(view, table) {
  switch (view) {
    case 'leave_one_out': return `leave-one-out (${table.nodeType})`;
    case 'what_if': return 'what-if accumulated error';
    case 'own': return 'own error (only its calibration on)';
    case 'accumulated': return 'accumulated error';
    case 'hints': return 'cause hints: share of the loss a cure recovers';
    case 'compare': return `change B − A (${table.nodeType})`;
    case 'report': return `report (${table.nodeType})`;
    default: return `${view} sensitivity`;
  }
}
