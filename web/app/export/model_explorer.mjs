// Google Model Explorer node-data JSON (one graph; Model Explorer's "custom node data" format):
//   { "results": { key: {"value": number} }, "gradient": [{"stop", "bgColor"}] }
// Keys are each node's first output tensor name: Model Explorer matches them against the node's
// outputsMetadata tensor_name, which is stable across ONNX adapters, whereas node ids are not
// (unnamed nodes get adapter-specific ids). Non-finite values are left out (the format takes
// numbers; a string would switch the whole file to categorical colouring).
import { nodeIndex, nodeValues, worseIsLower } from '../heatmap/mapping.mjs';

// Cold → hot; stop 0 is the minimum value, so similarity metrics (worse when low) run reversed.
const COLD_TO_HOT = ['#2c7bb6', '#abd9e9', '#ffffbf', '#fdae61', '#d7191c'];

export function modelExplorerNodeData(result, graph, { view = 'node', metric, looType } = {}) {
  const values = nodeValues(result, graph, { view, metric, looType });
  const idx = nodeIndex(graph);
  const results = {};
  for (const [name, { value }] of values) {
    if (!Number.isFinite(value)) continue;
    const node = idx.get(name);
    // Calibration nodes are not model-explorer nodes worth colouring twice: their consumers carry the value.
    if (view !== 'node' && node?.calibration) continue;
    const key = node?.outputs?.find((t) => t) ?? name;
    results[key] = { value };
  }
  const m = metric ?? firstMetric(result, view);
  const colors = worseIsLower(m) ? [...COLD_TO_HOT].reverse() : COLD_TO_HOT;
  const gradient = colors.map((bgColor, i) => ({ stop: i / (colors.length - 1), bgColor }));
  return { results, gradient };
}

function firstMetric(result, view) {
  const opts = result?.options?.[view === 'leave_one_out' ? 'leave_one_out' : 'sensitivity'] ?? result?.options?.sensitivity;
  return opts?.metrics?.[0] ?? 'cosine-similarity';
}
