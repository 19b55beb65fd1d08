// Google Model Explorer node-data JSON (one graph; Model Explorer's "custom node data" format, the
// single-graph form applied to the graph shown):
//   { "results": { key: {"value": number} }, "gradient": [{"stop", "bgColor"}] }
// Keys are ONNX node names. Model Explorer takes a key as a node id unless it equals an output's
// `tensor_name` metadata; its ONNX adapter (model-explorer-onnx) ids each node by its ONNX node name
// and tags outputs with `__tensor_tag`, not `tensor_name`, so output tensor names would match
// nothing there (docs/web-app.md lists the versions read). A node with no name in the file is not
// drawn by that adapter: the reader's generated name (`<op_type>_<index>`) matches nothing and is
// ignored by Model Explorer.
// A weight / activation item (a calibration node) is written on the nodes that read the quantized
// tensor (as the heatmap colours them) and on the quantizer's own nodes: the HzCalibration node of a
// calibrated model, the QuantizeLinear / DequantizeLinear nodes of a Q/DQ model (§1.11:
// `calibration.qdq_nodes`), which the adapter draws. The calibration node made at load, named after
// the tensor, is not a node of the file and is not written. A QOperator model (§1.12) is drawn there
// as the file holds it: a node the load made of a file node (its float operator, a Relu, the Q/DQ
// nodes of its quantizers: `file_nodes[].became`) is written as that file node (a QLinearAdd gets
// its output quantizer's value and those of the quantizers it reads). Non-finite values are left out
// (the format takes numbers; a string would switch the whole file to categorical colouring).
import { nodeIndex, nodeValues, worseIsLower } from '../heatmap/mapping.mjs';

// Cold → hot; stop 0 is the minimum value, so similarity metrics (worse when low) run reversed.
const COLD_TO_HOT = ['#2c7bb6', '#abd9e9', '#ffffbf', '#fdae61', '#d7191c'];

// The file's node names a graph node stands for: a Q/DQ quantizer's QuantizeLinear/DequantizeLinear
// nodes, otherwise the node itself.
export function fileNodeNames(node, name) {
  const qdq = node?.calibration?.qdq_nodes;
  return qdq?.length ? qdq : [name];
}

// A QOperator model's loaded node name -> the names of the file's nodes it was made of.
function madeFrom(graph) {
  const map = new Map();
  for (const f of graph?.file_nodes ?? []) {
    for (const n of f.became) map.set(n, [...(map.get(n) ?? []), f.name]);
  }
  return map;
}

export function modelExplorerNodeData(result, graph, { view = 'node', metric, looType } = {}) {
  const m = metric ?? firstMetric(result, view);
  const values = nodeValues(result, graph, { view, metric: m, looType });
  const idx = nodeIndex(graph);
  const made = madeFrom(graph);
  const results = {};
  const worse = worseIsLower(m) ? (a, b) => a < b : (a, b) => a > b;
  for (const [name, { value }] of values) {
    if (!Number.isFinite(value)) continue;
    for (const key of fileNodeNames(idx.get(name), name).flatMap((k) => made.get(k) ?? [k])) {
      // Two items on one node (a node's several quantizers): the worse value, as the heatmap shows.
      if (!(key in results) || worse(value, results[key].value)) results[key] = { value };
    }
  }
  const colors = worseIsLower(m) ? [...COLD_TO_HOT].reverse() : COLD_TO_HOT;
  const gradient = colors.map((bgColor, i) => ({ stop: i / (colors.length - 1), bgColor }));
  return { results, gradient };
}

function firstMetric(result, view) {
  const opts = result?.options?.[view === 'leave_one_out' ? 'leave_one_out' : 'sensitivity'] ?? result?.options?.sensitivity;
  return opts?.metrics?.[0] ?? 'cosine-similarity';
}
