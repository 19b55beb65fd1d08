// Netron attachment JSON (Netron's metrics attachment format): opened while the model is shown in Netron
// (>= 9.2), its `metrics` appear in each node's sidebar. Items: {kind, target, name, value}; target is
// the node name as Netron shows it (first line). One item per node and column, for every table.
import { nodeIndex, orderedItems, targetsOfItem } from '../heatmap/mapping.mjs';

const TABLES = ['sensitivity', 'leave_one_out'];

export function netronAttachment(result, graph) {
  const metrics = [];
  const seen = new Set();
  const idx = nodeIndex(graph);
  for (const section of TABLES) {
    for (const [nodeType, rows] of Object.entries(result?.[section] ?? {})) {
      const order = result[`${section}_order`]?.[nodeType];
      orderedItems({ rows, order }).forEach((item, rank) => {
        const row = rows[item];
        const prefix = section === 'leave_one_out' ? `leave-one-out ${nodeType}` : `${nodeType} sensitivity`;
        // The item itself (calibration nodes are ordinary nodes in Netron) and its consumers.
        for (const target of targetsOfItem(item, row, graph)) {
          if (idx.size && !idx.has(target)) continue;
          const via = target === item ? '' : ` (${item})`;
          const add = (name, value) => {
            const key = `${target}\u0000${name}`;
            if (seen.has(key)) return; // Netron keeps the first item of a (target, name) pair
            seen.add(key);
            metrics.push({ kind: 'node', target, name, value });
          };
          add(`${prefix} rank${via}`, rank + 1);
          for (const [col, v] of Object.entries(row)) if (col !== 'node') add(`${prefix} ${col}${via}`, v);
        }
      });
    }
  }
  const metadata = [{ kind: 'model', target: '', name: 'ptqscope samples', value: (result?.samples ?? []).join(', ') }];
  return { signature: 'netron:attachment', metadata, metrics };
}
