// Sidebar section for the selected node: every result row about it (the node itself, the calibration
// nodes feeding it, or the consumers of a calibration node) and its charts.
import { el } from '../analysis/forms.mjs';
import { chartList } from '../analysis/charts.mjs';
import { formatValue, nodeIndex, targetsOfItem } from './mapping.mjs';

// [{section, nodeType, item, rank, row}] of the result that concern `nodeName`.
export function rowsForNode(result, graph, nodeName) {
  const out = [];
  for (const section of ['sensitivity', 'leave_one_out']) {
    for (const [nodeType, rows] of Object.entries(result?.[section] ?? {})) {
      const order = result[`${section}_order`]?.[nodeType] ?? Object.keys(rows);
      for (const [item, row] of Object.entries(rows)) {
        if (item === nodeName || targetsOfItem(item, row, graph).includes(nodeName)) {
          out.push({ section, nodeType, item, rank: order.indexOf(item) + 1, total: order.length, row });
        }
      }
    }
  }
  return out;
}

// The charts about the node or its calibration nodes (inputs and, for a calibration node, itself).
export function chartsForNode(result, graph, nodeName) {
  const node = nodeIndex(graph).get(nodeName);
  const related = new Set([nodeName]);
  for (const t of node?.inputs ?? []) {
    const producer = graph?.values?.[t]?.producer;
    if (producer && nodeIndex(graph).get(producer)?.calibration) related.add(producer);
  }
  return chartList(result, graph).filter((c) => c.nodes.some((n) => related.has(n)));
}

export function renderNodeSection(root, nodeName, state) {
  const doc = root.ownerDocument;
  const result = state.get('results');
  const graph = state.get('graph');
  root.replaceChildren();
  const rows = rowsForNode(result, graph, nodeName);
  const charts = chartsForNode(result, graph, nodeName);
  if (!rows.length && !charts.length) {
    root.append(el(doc, 'p', { class: 'ptq-empty', text: 'No analysis results for this node yet.' }));
    return;
  }
  for (const r of rows) {
    const title = `${r.section === 'leave_one_out' ? 'leave-one-out' : 'sensitivity'} (${r.nodeType})` +
      `${r.item === nodeName ? '' : ` via ${r.item}`} · rank ${r.rank} of ${r.total}`;
    const dl = el(doc, 'dl', { class: 'ptq-node-row' });
    for (const [k, v] of Object.entries(r.row)) dl.append(el(doc, 'dt', { text: k }), el(doc, 'dd', { text: formatValue(v) }));
    root.append(el(doc, 'h4', { text: title }), dl);
  }
  for (const c of charts) {
    const fig = el(doc, 'figure', { class: 'ptq-chart-figure', 'data-kind': c.kind });
    root.append(fig);
    c.render(fig, { width: 320, height: 240 });
  }
}
