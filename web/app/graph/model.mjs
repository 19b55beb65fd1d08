// graphJson (docs/graph-schema.md) -> the view model the renderer and the layout worker use:
// plain data, no DOM (Netron's model/view split). HzCalibration nodes are either collapsed into
// badges (on the edge they quantize, or on the initializer row of the node whose weight they
// quantize) or kept as nodes. A Q/DQ model's quantizer (§1.11: a calibration node with
// `calibration.qdq_nodes`) kept as nodes is drawn as the file's own nodes: its QuantizeLinear and
// DequantizeLinear nodes (or the DequantizeLinear of a weight stored as integers), each standing for
// the calibration node (`stands`: selection, heat and what-if act on it). A QOperator model (§1.12)
// kept as nodes is drawn from `file_nodes`: each node the load rewrote as the file holds it (QLinearConv,
// ConvInteger, ...) in place of what it became, standing for the node the core names (its output's
// calibration node), its weight's calibration node as a badge on its weight row; the Q/DQ nodes the
// rewrite made are not drawn, those of the file are.
import { storedState } from '../whatif/in_effect.mjs';
import { categoryOf, inputNamesOf } from './categories.mjs';

export const CALIBRATION_OP = 'HzCalibration';
export const isCalibration = (node) => node.op_type === CALIBRATION_OP;

// Attributes worth showing inside the node box (the sidebar shows all of them).
const KEY_ATTRIBUTES = ['kernel_shape', 'strides', 'pads', 'dilations', 'group', 'axis', 'axes', 'perm', 'to', 'mode',
  'alpha', 'epsilon', 'transA', 'transB', 'keepdims', 'split'];
const MAX_ATTRIBUTE_ROWS = 3;

export function formatDims(dims) {
  if (dims == null) return '?';
  return dims.map((d) => (d === -1 || d == null ? '?' : String(d))).join('×');
}

export function formatValue(value) {
  if (value == null) return '';
  if (Array.isArray(value)) return value.map(formatValue).join(', ');
  if (typeof value === 'object') {
    if (value.graph) return 'graph';
    if (value.dims) return `${value.dtype ?? ''}⟨${formatDims(value.dims)}⟩`;
    return JSON.stringify(value);
  }
  if (typeof value === 'number' && !Number.isInteger(value)) return String(Math.round(value * 1e6) / 1e6);
  return String(value);
}

function keyAttributeRows(node) {
  const rows = [];
  for (const name of KEY_ATTRIBUTES) {
    if (!(name in (node.attributes ?? {}))) continue;
    const text = formatValue(node.attributes[name]);
    if (text.length > 28 || rows.length >= MAX_ATTRIBUTE_ROWS) continue;
    if (name === 'group' && node.attributes[name] === 1) continue;
    rows.push({ kind: 'attribute', name, value: text });
  }
  return rows;
}

// Text width in the graph's 11px font. Measured with an OffscreenCanvas where there is one (the
// layout worker and the page: cheap, no DOM layout), estimated elsewhere (Node tests).
const FONT = '11px -apple-system, BlinkMacSystemFont, "Segoe UI", Ubuntu, "Droid Sans", "DejaVu Sans", sans-serif';
let measure = null;
try {
  if (typeof OffscreenCanvas !== 'undefined') {
    const ctx = new OffscreenCanvas(1, 1).getContext('2d');
    measure = (text, bold) => {
      ctx.font = bold ? `bold ${FONT}` : FONT;
      return ctx.measureText(text).width;
    };
  }
} catch {
  measure = null;
}
export const textWidth = (text, bold = false) => Math.ceil(measure ? measure(String(text), bold) : String(text).length * (bold ? 7 : 6.4));

export const HEADER_HEIGHT = 22;
export const ROW_HEIGHT = 15;

function sizeOf(vnode) {
  const widths = [textWidth(vnode.title) + 18];
  for (const r of vnode.rows) widths.push(textWidth(`${r.name} `, true) + textWidth(r.value) + (r.badge ? badgeWidth(r.badge) + 8 : 0) + 16);
  vnode.width = Math.max(40, ...widths);
  vnode.height = HEADER_HEIGHT + vnode.rows.length * ROW_HEIGHT + (vnode.rows.length ? 4 : 0);
}

// Badge text is 9px: about 0.8 of the 11px width.
export const badgeWidth = (badge) => Math.ceil(textWidth(badge.text) * 0.82) + 10;

export function badgeOf(cali) {
  const c = cali.calibration ?? {};
  const { on, qtype } = storedState(c);
  return { node: c.item ?? cali.name, qtype, on, kind: c.kind ?? '', text: `${qtype}${on ? '' : ' off'}` };
}

// The file's Q/DQ node names of a Q/DQ model's quantizer (empty for an HzCalibration node).
export const qdqNodesOf = (node) => node?.calibration?.qdq_nodes ?? [];
export const hasQdq = (graph) => (graph?.nodes ?? []).some((n) => qdqNodesOf(n).length > 0);

// A constant read as a row: scalars and tiny constants show their values (Clip's min/max, Reshape's
// shape, a scale), others their shape.
function constantText({ dims, values: small } = {}) {
  if (small && small.length <= 4) return small.length === 1 && dims?.length === 0 ? String(small[0]) : `[${small.join(', ')}]`;
  return `⟨${formatDims(dims)}⟩`;
}

// The subgraphs of a node (If's branches, Loop's and Scan's body: GRAPH / GRAPHS attributes of
// graphJson), in attribute order -> [{attr, graph}] (`attr` is "body", or "branches[1]" in a GRAPHS list).
export function bodiesOf(node) {
  const bodies = [];
  for (const [attr, value] of Object.entries(node?.attributes ?? {})) {
    if (value?.graph) bodies.push({ attr, graph: value.graph });
    else if (Array.isArray(value)) value.forEach((g, i) => g?.graph && bodies.push({ attr: `${attr}[${i}]`, graph: g.graph }));
  }
  return bodies;
}

// Builds { nodes, edges, byName, calibrationOf, stats }. options.showCalibration keeps HzCalibration
// nodes as nodes (a Q/DQ quantizer as its QuantizeLinear/DequantizeLinear nodes); otherwise they
// become badges. byName also finds the first drawn node of an expanded quantizer by its calibration
// node's name.
export function buildViewModel(graph, { showCalibration = false } = {}) {
  const collapse = !showCalibration;
  // The file's QOperator nodes (drawn as nodes only) replace the loaded nodes they became; their
  // tensors are read as the file holds them.
  const fileNodes = collapse ? [] : graph.file_nodes ?? [];
  const values = fileNodes.length ? { ...graph.values, ...graph.file_values } : graph.values ?? {};
  const replaced = new Set(fileNodes.flatMap((f) => [f.name, ...f.became]));
  const fileTensorOf = new Map(); // calibration node -> the file's integer tensor it quantizes
  for (const f of fileNodes) for (const [t, c] of Object.entries(f.quantizers)) if (!fileTensorOf.has(c)) fileTensorOf.set(c, t);
  // Initializers and Constant-node outputs are drawn as rows of the nodes that read them (Netron
  // folds Constant nodes the same way); the Constant nodes themselves are not drawn.
  const isInit = (t) => Boolean(values[t]?.initializer || values[t]?.constant);
  const folded = (n) => n.op_type === 'Constant' && n.outputs.every((t) => !t || isInit(t));

  // Collapsed mode: tensor aliases (calibration output -> its input) and the badges riding on them.
  const alias = new Map();
  const badgesOn = new Map(); // tensor as consumed (the calibration output) -> [badge]
  if (collapse) {
    for (const n of graph.nodes) {
      if (!isCalibration(n) || !n.inputs[0] || !n.outputs[0]) continue;
      alias.set(n.outputs[0], n.inputs[0]);
      badgesOn.set(n.outputs[0], [badgeOf(n)]);
    }
  }
  // Follows chains of calibration nodes; collects their badges in data-flow order.
  const resolve = (tensor) => {
    const badges = [];
    let t = tensor;
    const seen = new Set();
    while (alias.has(t) && !seen.has(t)) {
      seen.add(t);
      badges.unshift(...(badgesOn.get(t) ?? []));
      t = alias.get(t);
    }
    return { tensor: t, badges };
  };

  const vnodes = [];
  const byName = new Map();
  const add = (v) => {
    sizeOf(v);
    vnodes.push(v);
    byName.set(v.id, v);
  };
  const inputIds = new Map();
  for (const v of graph.inputs ?? []) {
    if (isInit(v.name)) continue;
    const id = `input:${v.name}`;
    inputIds.set(v.name, id);
    add({ id, kind: 'input', name: v.name, title: v.name, opType: '', category: 'input', rows: [], tensor: v.name });
  }

  const producerOf = new Map(); // tensor -> view node id
  for (const [name, id] of inputIds) producerOf.set(name, id);
  const calibrationOf = new Map(); // normal node name -> [calibration node names it reads through]
  // Expanded Q/DQ quantizers: the Identity nodes the import made of a QuantizeLinear's further
  // DequantizeLinear nodes are drawn as those; extra edges [to, tensor] and the synthetic integer
  // tensors between a QuantizeLinear and its DequantizeLinear nodes.
  const absorbed = new Set();
  const qdqEdges = [];
  const synthetic = new Map(); // tensor key -> {dtype, dims}
  if (!collapse) for (const n of graph.nodes) for (const q of qdqNodesOf(n).slice(1)) absorbed.add(q);
  const nodesByName = new Map(graph.nodes.map((n) => [n.name, n]));
  const expandQdq = (n) => {
    const qdq = qdqNodesOf(n);
    const c = n.calibration ?? {};
    const x = n.inputs[0];
    const pair = qdq.length > 1;
    // The integer tensor between the QuantizeLinear and its DequantizeLinear nodes: the file's, when
    // a rewritten QOperator node reads or writes it (only the Q/DQ nodes of the file are drawn).
    const key = fileTensorOf.get(n.name) ?? `qdq:${qdq[0]}`;
    const inFile = (name) => !replaced.has(name);
    const paramRows = [
      { kind: 'attribute', name: 'scale', value: formatValue(c.scales?.length > 4 ? `⟨${c.scales.length}⟩` : c.scales) },
      { kind: 'attribute', name: 'zero_point', value: `${c.qtype ?? ''} ${formatValue(c.zero_points?.length > 4 ? `⟨${c.zero_points.length}⟩` : c.zero_points)}`.trim() },
    ];
    const drawn = [];
    const addQdq = (id, op, rows) => {
      const v = { id, kind: 'node', name: id, title: op, opType: op, domain: '', category: categoryOf(op), rows, calibration: true, stands: n.name };
      add(v);
      drawn.push(v);
      return v;
    };
    const initRow = (tensor) => {
      const { dims } = values[tensor] ?? {};
      return { kind: 'initializer', name: 'x', value: `⟨${formatDims(dims)}⟩`, tensor };
    };
    if (pair) {
      if (inFile(qdq[0])) {
        const q = addQdq(qdq[0], 'QuantizeLinear', [...(isInit(x) ? [initRow(x)] : []), ...paramRows]);
        if (!isInit(x)) qdqEdges.push([q.id, x]);
        if (!fileTensorOf.has(n.name)) synthetic.set(key, { dtype: c.qtype ?? '', dims: values[x]?.dims ?? null });
        producerOf.set(key, q.id);
      }
      qdq.slice(1).forEach((name, k) => {
        if (!inFile(name)) return;
        const d = addQdq(name, 'DequantizeLinear', paramRows);
        qdqEdges.push([d.id, key]);
        const out = k === 0 ? n.outputs[0] : nodesByName.get(name)?.outputs[0];
        if (out) producerOf.set(out, d.id);
      });
    } else if (inFile(qdq[0])) {
      const d = addQdq(qdq[0], 'DequantizeLinear', [{ ...initRow(x), value: `${c.qtype ?? ''}⟨${formatDims(values[x]?.dims)}⟩` }, ...paramRows]);
      if (n.outputs[0]) producerOf.set(n.outputs[0], d.id);
    }
    if (drawn.length) byName.set(n.name, drawn[0]);
  };
  for (const n of graph.nodes) {
    if ((collapse && isCalibration(n)) || folded(n) || absorbed.has(n.name) || replaced.has(n.name)) continue;
    if (!collapse && qdqNodesOf(n).length) {
      expandQdq(n);
      continue;
    }
    const rows = [];
    const names = inputNamesOf(n.op_type);
    n.inputs.forEach((t, i) => {
      if (!t) return;
      const r = resolve(t);
      if (r.badges.length) {
        if (!calibrationOf.has(n.name)) calibrationOf.set(n.name, []);
        calibrationOf.get(n.name).push(...r.badges.map((b) => b.node));
      }
      if (!isInit(r.tensor)) return;
      rows.push({ kind: 'initializer', name: names[i] ?? String(i), value: constantText(values[r.tensor]), tensor: r.tensor, badge: r.badges[0] ?? null });
    });
    rows.push(...keyAttributeRows(n));
    const v = {
      id: n.name, kind: 'node', name: n.name, title: n.op_type, opType: n.op_type, domain: n.domain ?? '',
      category: categoryOf(n.op_type), rows, calibration: isCalibration(n), unsupported: Boolean(n.unsupported),
      bodies: bodiesOf(n).map((b) => b.attr),
    };
    add(v);
    for (const t of n.outputs) if (t) producerOf.set(t, v.id);
  }
  // The file's QOperator nodes: constants (scales, zero points, weights, bias) as rows, a weight's
  // calibration node as the badge of its row.
  for (const f of fileNodes) {
    const names = inputNamesOf(f.op_type);
    const rows = [];
    f.inputs.forEach((t, i) => {
      if (!t || !isInit(t)) return;
      const quantizer = nodesByName.get(f.quantizers[t]);
      rows.push({ kind: 'initializer', name: names[i] ?? String(i), value: constantText(values[t]), tensor: t, badge: quantizer ? badgeOf(quantizer) : null });
    });
    rows.push(...keyAttributeRows(f));
    const badged = rows.filter((r) => r.badge).map((r) => r.badge.node);
    if (badged.length) calibrationOf.set(f.name, badged);
    const v = {
      id: f.name, kind: 'node', name: f.name, title: f.op_type, opType: f.op_type, domain: f.domain,
      category: categoryOf(f.op_type), rows, calibration: false, stands: f.stands ?? undefined, bodies: [],
    };
    add(v);
    if (f.stands && !byName.has(f.stands)) byName.set(f.stands, v);
    for (const t of f.outputs) if (t) producerOf.set(t, v.id);
  }
  const outputIds = new Map();
  for (const v of graph.outputs ?? []) {
    const id = `output:${v.name}`;
    outputIds.set(v.name, id);
    add({ id, kind: 'output', name: v.name, title: v.name, opType: '', category: 'output', rows: [], tensor: v.name });
  }

  // Edges: one per (producer, consumer, tensor), the tensor as the consumer reads it after aliasing.
  const edges = [];
  const edgeKeys = new Set();
  const addEdge = (from, to, consumed) => {
    const { tensor, badges } = resolve(consumed);
    const source = producerOf.get(tensor);
    if (!source || isInit(tensor)) return;
    const key = `${source}\u0000${to}\u0000${tensor}`;
    if (edgeKeys.has(key)) return;
    edgeKeys.add(key);
    const info = synthetic.get(tensor) ?? values[tensor] ?? {};
    edges.push({
      id: `edge:${edges.length}`, from: source, to, tensor: synthetic.has(tensor) ? `${source} (${info.dtype})` : tensor, consumed, dtype: info.dtype ?? '', dims: info.dims ?? null,
      label: formatDims(info.dims), badges,
    });
  };
  for (const n of graph.nodes) {
    if ((collapse && isCalibration(n)) || folded(n) || absorbed.has(n.name) || replaced.has(n.name) || (!collapse && qdqNodesOf(n).length)) continue;
    for (const t of n.inputs) if (t) addEdge(null, n.name, t);
  }
  for (const f of fileNodes) for (const t of f.inputs) if (t) addEdge(null, f.name, t);
  for (const [to, t] of qdqEdges) addEdge(null, to, t);
  for (const [name, id] of outputIds) addEdge(null, id, name);

  const calibrationCount = graph.nodes.filter(isCalibration).length;
  return {
    nodes: vnodes, edges, byName, calibrationOf, showCalibration, qdq: hasQdq(graph),
    stats: { nodes: graph.nodes.length, calibration: calibrationCount, shown: vnodes.length, edges: edges.length,
      badges: new Set([...edges.flatMap((e) => e.badges), ...vnodes.flatMap((v) => v.rows.filter((r) => r.badge).map((r) => r.badge))]
        .map((b) => b.node)).size },
  };
}

// The view node that shows a graph node: itself, or (collapsed) the node a calibration badge sits on.
export function viewNodeFor(model, graph, nodeName) {
  if (model.byName.has(nodeName)) return model.byName.get(nodeName);
  const node = graph.nodes.find((n) => n.name === nodeName);
  if (!node || !isCalibration(node)) return null;
  for (const [consumer, calis] of model.calibrationOf) if (calis.includes(nodeName)) return model.byName.get(consumer);
  return null;
}
