// Node names (ours: graphJson / result rows) ↔ Netron's node elements of the current render.
// Netron ids a node `node-name-<ONNX name>`, or `node-id-<k>` when the name is empty, k counting the
// unnamed nodes of one render in file order. The wasm reader names an unnamed node
// `<op_type>_<file index>` (plus `_` while that collides), so the unnamed nodes are the generated names
// without a `node-name-` element, sorted by that index. Constant nodes do not count: Netron folds them
// into their consumers' argument rows.
import { graphNodeElements } from './contract.mjs';

const NAMED = 'node-name-';
const UNNAMED = 'node-id-';
const escapeRe = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

// The nodes of the file as Netron draws them: a QOperator model's rewritten nodes as the file holds
// them (file_nodes, behaviour.md §1.12), graphJson's nodes, plus the QuantizeLinear /
// DequantizeLinear nodes a Q/DQ model's quantizers replaced when the core loaded it
// (calibration.qdq_nodes, behaviour.md §1.11), which Netron still draws. [{name, op_type}]
function fileNodes(graph) {
  const out = [];
  const seen = new Set();
  const add = (name, ops) => {
    if (!seen.has(name)) out.push({ name, ops });
    seen.add(name);
  };
  for (const f of graph?.file_nodes ?? []) add(f.name, [f.op_type]);
  for (const n of graph?.nodes ?? []) {
    // A DequantizeLinear sharing another's QuantizeLinear stays as an Identity under its own name.
    add(n.name, n.op_type === 'Identity' ? ['Identity', 'DequantizeLinear'] : [n.op_type]);
    for (const q of n.calibration?.qdq_nodes ?? []) add(q, ['QuantizeLinear', 'DequantizeLinear']);
  }
  return out;
}

// Calibration node name -> the file's QuantizeLinear/DequantizeLinear node names it stands for, and
// the node names of a QOperator model's file nodes standing for it (its output's quantizer: a
// QLinearConv stands for the quantizer of its output, as in the page).
function qdqNodesOf(graph) {
  const map = new Map();
  for (const n of graph?.nodes ?? []) if (n.calibration?.qdq_nodes?.length) map.set(n.name, [...n.calibration.qdq_nodes]);
  for (const f of graph?.file_nodes ?? []) {
    if (!f.stands) continue;
    if (!map.has(f.stands)) map.set(f.stands, []);
    map.get(f.stands).push(f.name);
  }
  return map;
}

export function unnamedNodeNames(graph, namedIds) {
  const found = [];
  for (const n of fileNodes(graph)) {
    if (n.ops.includes('Constant') || namedIds.has(n.name)) continue; // a real name that looks generated
    for (const op of n.ops) {
      const m = new RegExp(`^${escapeRe(op)}_(\\d+)_*$`).exec(n.name);
      if (m) {
        found.push([Number(m[1]), n.name]);
        break;
      }
    }
  }
  return found.sort((a, b) => a[0] - b[0]).map(([, name]) => name);
}

// Map<node name, g.node element> for the current render. `graph` (graphJson) is optional: without it
// unnamed nodes are left out.
export function nodeElementMap(doc, graph) {
  const elements = graphNodeElements(doc);
  const map = new Map();
  const unnamedEls = [];
  for (const el of elements) {
    const id = el.id ?? '';
    if (id.startsWith(NAMED)) map.set(id.slice(NAMED.length), el);
    else if (id.startsWith(UNNAMED)) unnamedEls.push([Number(id.slice(UNNAMED.length)), el]);
  }
  if (graph && unnamedEls.length) {
    const unnamed = unnamedNodeNames(graph, map);
    for (const [k, el] of unnamedEls) if (unnamed[k] !== undefined) map.set(unnamed[k], el);
  }
  // A Q/DQ model's quantizer is drawn by Netron as its QuantizeLinear (or, for a weight stored as
  // integers, its DequantizeLinear): that element stands for the calibration node.
  for (const [name, qdq] of qdqNodesOf(graph)) {
    const el = qdq.map((q) => map.get(q)).find(Boolean);
    if (el && !map.has(name)) map.set(name, el);
  }
  return map;
}

// The node name of one element (inverse of nodeElementMap), or null.
// A QuantizeLinear/DequantizeLinear element of a Q/DQ model answers its calibration node's name.
export function elementNodeName(el, doc, graph) {
  const id = el?.id ?? '';
  if (!id.startsWith(NAMED) && !id.startsWith(UNNAMED)) return null;
  let own = id.startsWith(NAMED) ? id.slice(NAMED.length) : null;
  if (own === null) for (const [name, e] of nodeElementMap(doc, graph)) if (e === el) { own = name; break; }
  for (const [name, qdq] of qdqNodesOf(graph)) if (qdq.includes(own)) return name;
  return own;
}

// Netron draws a Q/DQ model as it is, QuantizeLinear and DequantizeLinear nodes included (the plugin
// never relayouts Netron's graph, so it cannot fold them into badges as the page does): heat and
// picks of a quantizer's calibration node go on every one of its Q/DQ nodes.
// heat: state 'heat' ({values: Map<name, entry>, ...}) -> the same with the Q/DQ node names added
// (a node standing for a quantizer takes the quantizer's heat, as in the page).
export function heatOnQdqNodes(heat, graph) {
  if (!heat?.values) return heat;
  const qdq = qdqNodesOf(graph);
  if (!qdq.size) return heat;
  const values = new Map(heat.values);
  for (const [name, entry] of heat.values) for (const q of qdq.get(name) ?? []) values.set(q, entry);
  return { ...heat, values };
}
// picked names -> the same with each picked quantizer's Q/DQ node names added.
export function namesWithQdqNodes(names, graph) {
  const qdq = qdqNodesOf(graph);
  const out = new Set(names ?? []);
  for (const name of names ?? []) for (const q of qdq.get(name) ?? []) out.add(q);
  return out;
}
