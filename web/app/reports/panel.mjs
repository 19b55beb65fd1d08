// The report panel (the app's dock tab "Report", the Netron plugin's section "Toolchain report": the
// same code): open a toolchain report beside the model (button, or drop it on the panel), see how
// its rows were placed on the model's nodes (the rule per row), the rows placed on no node with the
// reason, the lines that could not be read, and pick the metric the graph is coloured by (heat view
// "report"). State 'report' is written by controller.mjs; this panel only shows it.
import { el } from '../analysis/forms.mjs';
import { formatValue } from '../../charts/format.mjs';
import { nameCell } from '../../charts/name_cell.mjs';
import { REPORT_FORMATS } from '../../pipeline/reports/index.mjs';
import { openReport } from './controller.mjs';

const MAX_ROWS = 300;
const readBytes = async (file) => new Uint8Array(await file.arrayBuffer());

/**
 * mountReportPanel(root, state, hooks?) -> {element, open(file), dispose()}
 * hooks.focus(node): show a node on the host's graph (default: state 'focus').
 */
export function mountReportPanel(root, state, hooks = {}) {
  const doc = root.ownerDocument;
  const focus = hooks.focus ?? ((node) => state.set('focus', node));
  const input = el(doc, 'input', { type: 'file', accept: '.txt,.log,.json', class: 'ptq-report-file', hidden: true });
  const openButton = el(doc, 'button', { type: 'button', class: 'ptq-report-open', text: 'Open report…' });
  const format = el(doc, 'select', { class: 'ptq-report-format', 'aria-label': 'report format' },
    el(doc, 'option', { value: '', text: 'format: detect' }),
    ...REPORT_FORMATS.map((f) => el(doc, 'option', { value: f.id, text: f.label })));
  const name = el(doc, 'span', { class: 'ptq-report-name ptq-name', text: 'none' });
  const drop = el(doc, 'div', { class: 'ptq-drop ptq-report-drop', tabindex: 0, text: 'Drop a toolchain report here: rknn error_analysis.txt, Horizon hb_mapper / hb_compile log, onnxruntime qdq_loss_debug JSON, AIMET per_layer_*.json, Netron metrics JSON' });
  const summary = el(doc, 'p', { class: 'ptq-report-summary', 'aria-live': 'polite' });
  const metrics = el(doc, 'div', { class: 'ptq-report-metrics', role: 'radiogroup', 'aria-label': 'report metric' });
  const table = el(doc, 'div', { class: 'ptq-report-table' });
  const unmatched = el(doc, 'div', { class: 'ptq-report-unmatched' });
  const problems = el(doc, 'div', { class: 'ptq-report-problems' });
  const element = el(doc, 'div', { class: 'ptq-report' },
    el(doc, 'div', { class: 'ptq-field' }, openButton, format, input, name), drop, summary, metrics, table, unmatched, problems);
  root.append(element);

  async function open(file) {
    try {
      openReport(state, { path: file.name, bytes: await readBytes(file) }, { format: format.value || undefined });
    } catch (err) {
      state.set('error', `report: ${err.message}`);
    }
  }
  openButton.addEventListener('click', () => input.click());
  input.addEventListener('change', () => {
    const file = input.files?.[0];
    input.value = '';
    if (file) open(file);
  });
  drop.addEventListener('dragover', (e) => {
    e.preventDefault();
    e.stopPropagation();
  });
  drop.addEventListener('drop', (e) => {
    e.preventDefault();
    e.stopPropagation(); // the page's own drop handler would open it a second time
    const file = e.dataTransfer?.files?.[0];
    if (file) open(file);
  });

  function draw() {
    const rep = state.get('report');
    for (const box of [metrics, table, unmatched, problems]) box.replaceChildren();
    name.textContent = rep?.name ?? 'none';
    if (!rep) {
      summary.textContent = 'No report open.';
      return;
    }
    const { report, mapped } = rep;
    const nodes = mapped.order.length;
    summary.textContent = `${report.label}: ${report.rows.length} rows, ${mapped.matched} placed on ${nodes} nodes, ` +
      `${mapped.unmatched.length} not placed, ${report.problems.length} unreadable` +
      (state.get('graph') ? '' : ' (open the model to place the rows on its nodes)');
    const settings = state.get('heatSettings') ?? {};
    metrics.replaceChildren(...report.metrics.map((m) => {
      const b = el(doc, 'button', {
        type: 'button', role: 'radio', 'data-metric': m.name, text: `${m.name} (${m.better} is better)`,
        'aria-checked': String(settings.view === 'report' && settings.metric === m.name),
      });
      b.addEventListener('click', () => state.set('heatSettings', { ...state.get('heatSettings'), view: 'report', metric: m.name }));
      return b;
    }));
    const cols = report.metrics.map((m) => m.name);
    const t = el(doc, 'table', { class: 'ptq-report-rows' });
    t.append(el(doc, 'thead', {}, el(doc, 'tr', {}, ...['line', 'layer', 'node', 'rule', ...cols].map((h) => el(doc, 'th', { text: h })))));
    const body = el(doc, 'tbody');
    for (const r of mapped.rows.slice(0, MAX_ROWS)) {
      const tr = el(doc, 'tr', { 'data-layer': r.layer, 'data-node': r.node ?? '', class: r.node ? (r.used ? '' : 'ptq-report-shadowed') : 'ptq-report-unplaced' },
        el(doc, 'td', { class: 'num', text: r.line ?? '' }),
        nameCell(doc, r.layer, { class: 'ptq-name' }),
        r.node ? nameCell(doc, r.node, { class: 'ptq-name' }) : el(doc, 'td', { class: 'ptq-name', text: '—' }),
        el(doc, 'td', { text: r.rule ?? '' }),
        ...cols.map((c) => el(doc, 'td', { class: 'num', text: c in (r.values ?? {}) ? formatValue(r.values[c]) : '' })));
      if (r.node) {
        tr.addEventListener('click', () => {
          state.set('selection', r.node);
          focus(r.node);
        });
      }
      body.append(tr);
    }
    t.append(body);
    const more = mapped.rows.length > MAX_ROWS ? ` (first ${MAX_ROWS} of ${mapped.rows.length})` : '';
    table.append(el(doc, 'h4', { class: 'ptq-table-title', text: `Rows and the nodes they were placed on${more}` }), t);
    if (mapped.unmatched.length) {
      unmatched.append(el(doc, 'details', { class: 'ptq-report-unmatched-list', open: true },
        el(doc, 'summary', { text: `Not placed on a node (${mapped.unmatched.length})` }),
        el(doc, 'ul', {}, ...mapped.unmatched.map((u) => el(doc, 'li', { class: 'ptq-name', 'data-layer': u.layer, text: `${u.line ? `line ${u.line}: ` : ''}${u.layer} — ${u.reason}` })))));
    }
    if (report.problems.length) {
      problems.append(el(doc, 'details', { class: 'ptq-report-problem-list', open: true },
        el(doc, 'summary', { text: `Unreadable (${report.problems.length})` }),
        el(doc, 'ul', {}, ...report.problems.map((p) => el(doc, 'li', { text: `${p.line ? `line ${p.line}: ` : ''}${p.reason}` })))));
    }
  }
  const offs = ['report', 'heatSettings', 'graph'].map((k) => state.on(k, draw));
  draw();
  return {
    element,
    open,
    dispose() {
      offs.forEach((off) => off());
      element.remove();
    },
  };
}
