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

export function unnamedNodeNames(graph, namedIds) {
  const found = [];
  for (const n of graph?.nodes ?? []) {
    if (n.op_type === 'Constant' || namedIds.has(n.name)) continue; // a real name that looks generated
    const m = new RegExp(`^${escapeRe(n.op_type)}_(\\d+)_*$`).exec(n.name);
    if (m) found.push([Number(m[1]), n.name]);
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
  return map;
}

// The node name of one element (inverse of nodeElementMap), or null.
export function elementNodeName(el, doc, graph) {
  const id = el?.id ?? '';
  if (id.startsWith(NAMED)) return id.slice(NAMED.length);
  if (!id.startsWith(UNNAMED)) return null;
  for (const [name, e] of nodeElementMap(doc, graph)) if (e === el) return name;
  return null;
}
