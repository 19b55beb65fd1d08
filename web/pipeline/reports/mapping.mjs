// A report's layer names → the model's nodes (§12.2 states these rules for users). Toolchains rename
// and fuse layers, so each row is tried against the model by a fixed list of rules, the first that
// finds something wins, and a row no rule places is listed as unmatched with the reason; nothing is
// guessed beyond the rules.
//
// Resolving one name:
//   node    a node of that name (a calibration node is kept: the heat layer draws it on its consumers)
//   tensor  a tensor of that name → the node producing it; a tensor made by a calibration node →
//           the producer of the tensor that calibration node quantizes; a graph input or an
//           initializer → the calibration node quantizing it, else (initializer) its first consumer
// A format whose names are tensor names (keys 'tensor') tries tensor before node, the others node
// before tensor (in a Q/DQ model a calibration node is named after its tensor).
// Rules, in order, each resolving the name(s) it derives:
//   exact      the name as written
//   renamed    the name without one or two known suffixes: rknn-toolkit2's converted copies
//              (`__float16`, `_float16`, `_int8`, `_int16`, `_conv`), onnxruntime's Q/DQ names
//              (`_QuantizeLinear_Input`, `_DequantizeLinear_Output[_1]`, `_quantized`), Horizon's
//              calibration names (`_HzCalibration`, `_calibrated`) and the exporter's tensor name
//              (`_output_<n>` → the node)
//   truncated  Horizon's `...` + the last 47 characters of a long name: the one node whose name ends so
//   module     a torch module path (`backbone.layer1.0.conv1`, AIMET's torch names): the last node,
//              in graph order, of the matching scope of a torch-exported ONNX model
//              (`/backbone/layer1/layer1.0/conv1/Conv`)
// Several rows on one node (rknn lists `x_int8` and `x`): the node keeps the values of the row found
// by the earliest rule, the later row among equals (a fused group's last layer); every row stays in
// the table with the node it was placed on.
import { isPlainObject } from './common.mjs';

const SUFFIXES = [
  '__float16', '_float16', '_int8', '_int16', '_conv',
  '_QuantizeLinear_Input', '_DequantizeLinear_Output_1', '_DequantizeLinear_Output', '_quantized',
  '_HzCalibration', '_calibrated',
];
const OUTPUT_SUFFIX = /_output_\d+$/;
const RULES = ['exact', 'renamed', 'truncated', 'module'];

// Names derived by removing one suffix (the exporter's `_output_<n>` included).
function stripped(name) {
  const out = [];
  for (const s of SUFFIXES) if (name.endsWith(s) && name.length > s.length) out.push(name.slice(0, -s.length));
  if (OUTPUT_SUFFIX.test(name)) out.push(name.replace(OUTPUT_SUFFIX, ''));
  return out;
}

// The torch module path of an exported node's scope: `/layer1/layer1.0/conv1/Conv` → `layer1.0.conv1`
// (a scope part that repeats its parent's path as a prefix replaces it).
export function modulePath(nodeName) {
  const parts = nodeName.split('/').filter(Boolean).slice(0, -1);
  const kept = [];
  for (const p of parts) {
    if (kept.length && p.startsWith(`${kept[kept.length - 1]}.`)) kept[kept.length - 1] = p;
    else kept.push(p);
  }
  return kept.join('.');
}

function indexGraph(graph) {
  const nodes = new Map((graph?.nodes ?? []).map((n, i) => [n.name, { ...n, index: i }]));
  const values = isPlainObject(graph?.values) ? graph.values : {};
  const calByTensor = new Map();
  for (const n of graph?.nodes ?? []) if (n.calibration?.tensor && !calByTensor.has(n.calibration.tensor)) calByTensor.set(n.calibration.tensor, n.name);
  const modules = new Map(); // module path -> last node of that scope
  for (const n of graph?.nodes ?? []) {
    if (n.calibration) continue;
    const m = modulePath(n.name);
    if (m) modules.set(m, n.name);
  }
  return { nodes, values, calByTensor, modules, names: [...nodes.keys()] };
}

// {node} or {reason} for one name by `kind` ('node' | 'tensor').
function resolveAs(idx, name, kind, depth = 0) {
  if (kind === 'node') return idx.nodes.has(name) ? { node: name } : null;
  const v = idx.values[name];
  if (!v) return null;
  if (v.producer) {
    const p = idx.nodes.get(v.producer);
    if (p?.calibration?.tensor && depth < 2 && p.calibration.tensor !== name) {
      return resolveAs(idx, p.calibration.tensor, 'tensor', depth + 1) ?? { node: p.name };
    }
    return { node: v.producer };
  }
  const cal = idx.calByTensor.get(name);
  if (cal) return { node: cal };
  if (v.initializer && v.consumers?.length) return { node: v.consumers[0] };
  return { reason: v.initializer ? `${name} is an initializer that no node uses` : `${name} is a graph input (no node produces it)` };
}

function resolve(idx, name, order) {
  let why = null;
  for (const kind of order) {
    const r = resolveAs(idx, name, kind);
    if (r?.node) return r;
    if (r?.reason) why = r;
  }
  return why;
}

// Which node a layer name is placed on: {node, rule, via} or {node: null, reason}.
function place(idx, layer, keys) {
  const order = keys === 'tensor' ? ['tensor', 'node'] : ['node', 'tensor'];
  const exact = resolve(idx, layer, order);
  if (exact?.node) return { node: exact.node, rule: 'exact', via: layer };
  // renamed: one suffix, then a second one
  const seen = new Set([layer]);
  let frontier = [layer];
  for (let depth = 0; depth < 2; depth++) {
    const next = [];
    for (const name of frontier) {
      for (const s of stripped(name)) {
        if (seen.has(s)) continue;
        seen.add(s);
        const r = resolve(idx, s, order);
        if (r?.node) return { node: r.node, rule: 'renamed', via: s };
        next.push(s);
      }
    }
    frontier = next;
  }
  if (layer.startsWith('...') && layer.length > 3) {
    const tail = layer.slice(3);
    const hits = idx.names.filter((n) => n.endsWith(tail));
    if (hits.length === 1) return { node: hits[0], rule: 'truncated', via: hits[0] };
    if (hits.length > 1) return { node: null, reason: `a truncated name that ${hits.length} nodes end with (${hits.slice(0, 3).join(', ')}${hits.length > 3 ? ', ...' : ''})` };
  }
  if (!layer.includes('/') && idx.modules.has(layer)) return { node: idx.modules.get(layer), rule: 'module', via: layer };
  if (exact?.reason) return { node: null, reason: exact.reason };
  const tried = [...seen].slice(1, 4);
  return { node: null, reason: `no node or tensor of that name${tried.length ? ` (also tried ${tried.join(', ')})` : ''}` };
}

/**
 * mapReport(report, graph) -> {rows, unmatched, nodes, order, matched}
 *   rows      every row of the report: {layer, line, values, info, node | null, rule | null, reason?, used}
 *             (used: the node shows this row's values)
 *   unmatched the rows placed on no node: {layer, line, reason}
 *   nodes     {node: {metric: value}}: the values each node shows (see the rule order above)
 *   order     those nodes in graph order
 */
export function mapReport(report, graph) {
  const idx = indexGraph(graph);
  const chosen = new Map(); // node -> row index
  const rules = [];
  const rows = report.rows.map((r, i) => {
    if (r.info?.whole) return { ...r, node: null, rule: null, reason: 'about the whole model, not a node', used: false };
    let p;
    try {
      p = place(idx, String(r.layer), report.keys);
    } catch (err) {
      p = { node: null, reason: `could not be placed: ${err.message}` };
    }
    const row = { ...r, node: p.node, rule: p.rule ?? null, via: p.via ?? null, reason: p.reason ?? null, used: false };
    if (p.node && Object.keys(r.values ?? {}).length) {
      const prev = chosen.get(p.node);
      const rank = RULES.indexOf(p.rule);
      if (prev === undefined || rank <= RULES.indexOf(rules[prev])) chosen.set(p.node, i);
    }
    rules[i] = p.rule;
    return row;
  });
  const nodes = {};
  for (const [node, i] of chosen) {
    rows[i].used = true;
    nodes[node] = { ...rows[i].values };
  }
  const order = [...chosen.keys()].sort((a, b) => idx.nodes.get(a).index - idx.nodes.get(b).index);
  const unmatched = rows.filter((r) => !r.node).map((r) => ({ layer: r.layer, line: r.line ?? null, reason: r.reason }));
  return { rows, unmatched, nodes, order, matched: rows.length - unmatched.length };
}
