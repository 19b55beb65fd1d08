// Sidebar section for the selected node (the app's node sidebar and the plugin's "Selected node"): the
// rows of the open toolchain report placed on it, with the rule that placed them and their values.
import { el } from '../analysis/forms.mjs';
import { formatValue } from '../../charts/format.mjs';

export function renderReportSection(root, nodeName, state) {
  const rep = state.get('report');
  if (!rep) return;
  const doc = root.ownerDocument;
  const rows = rep.mapped.rows.filter((r) => r.node === nodeName);
  if (!rows.length) {
    root.append(el(doc, 'p', { class: 'ptq-report-none', text: `${rep.name}: no row on this node.` }));
    return;
  }
  for (const r of rows) {
    const dl = el(doc, 'dl', { class: 'ptq-report-node', 'data-layer': r.layer });
    const add = (k, v) => dl.append(el(doc, 'dt', { text: k }), el(doc, 'dd', { text: v }));
    add('row', `${r.layer}${r.line ? ` (line ${r.line})` : ''}`);
    add('placed by', `${r.rule}${r.used || !Object.keys(r.values ?? {}).length ? '' : ' (the node shows another row)'}`);
    for (const [k, v] of Object.entries(r.values ?? {})) add(k, formatValue(v));
    for (const [k, v] of Object.entries(r.info ?? {})) if (typeof v !== 'object' && k !== 'whole') add(k, String(v));
    root.append(el(doc, 'h4', { text: rep.report.label }), dl);
  }
}
