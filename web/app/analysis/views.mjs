// The results of one analysis in the Analyses panel: the chart package's sensitivity table for the
// sweeps and stat info, its chart modules for curves, histograms and box plots.
import { el } from './forms.mjs';
import { chartList } from './charts.mjs';
import { notRunNote, orderedKeys, samplesNote } from '../../pipeline/result.mjs';
import { ANALYSES as CORE_ANALYSES, METRICS } from '../../pipeline/catalog.mjs';
import { renderSensitivityTable, sensitivityTable } from '../../charts/sensitivity_table.mjs';
import { formatValue } from '../../charts/format.mjs';
import { nameCell, nameElement } from '../../charts/name_cell.mjs';
import { targetsOfItem } from '../heatmap/mapping.mjs';

// Node types whose items are calibration nodes (a sweep's other node types are normal nodes).
const CALIBRATION_ITEMS = ['weight', 'activation'];

// Sweep / chart kinds shown under each analysis tab.
const CHART_KINDS = {
  acc_error: ['acc_error'], distribution: ['distribution'], channelwise: ['channelwise'],
  stat_info: ['stat_info'], sensitivity_analysis: ['sensitivity_analysis'],
};

// A calibration item: the sidebar shows it, the view centres its (first) consumer, which is drawn
// even when calibration nodes are edge badges. `focus(node)` is the host's: the app centres its graph
// view (state 'focus'), the Netron plugin scrolls Netron's element into view.
export function focusItem(state, item, row, focus = defaultFocus(state)) {
  const [self, consumer] = targetsOfItem(item, row, state.get('graph'));
  state.set('selection', self ?? item);
  focus(consumer ?? self ?? item);
}

export const defaultFocus = (state) => (node) => state.set('focus', node);

const RUNALL_SECTIONS = ['sensitivity', 'distribution', 'channelwise', 'acc_error', 'sensitivity_analysis'];
const WORST_SHOWN = 3;

/**
 * createResultView(state, { focus, show, selectTab }) -> render(container, analysis, result)
 * One per mounted panel: it remembers the last table drawn per key (its sort / filter / top-k carry
 * over when rows stream in) and the view toggles, so two mounted panels do not share them.
 * show(panelId): bring the host's What-if / Fix panel into view; selectTab(id): an analyses tab (Run
 * all's next steps); chartSize() -> {width, height} | null: the size to draw charts at (the page's
 * dock: its visible area), null for each chart's own default.
 */
export function createResultView(state, { focus = defaultFocus(state), show = () => {}, selectTab = () => {}, chartSize = () => null } = {}) {
  const tables = new Map();
  const toggles = { average: false };

  // itemLabel: what the rows are, 'Node' or 'Calibration node' (weight / activation items, stat info).
  function table(container, key, title, rows, order, itemLabel) {
    const doc = container.ownerDocument;
    container.append(el(doc, 'h4', { class: 'ptq-table-title', text: title }));
    const kept = tables.get(key)?.state();
    tables.set(key, renderSensitivityTable(container, sensitivityTable(rows, order), {
      ...kept, itemLabel, onFocus: (item) => focusItem(state, item, rows[item], focus),
    }));
  }

  return function render(container, analysis, result) {
    const doc = container.ownerDocument;
    const empty = (text) => container.append(el(doc, 'p', { class: 'ptq-empty', text }));
    if (!result) return empty('No results yet: choose options and press Run.');
    if (analysis === 'sensitivity' || analysis === 'leave_one_out') {
      const sections = Object.entries(result[analysis] ?? {});
      if (!sections.length) return empty(`No ${analysis.replace(/_/g, '-')} results yet.`);
      for (const [nodeType, rows] of sections) {
        const name = analysis === 'leave_one_out' ? 'leave-one-out' : 'sensitivity';
        const on = samplesNote(result, analysis);
        table(container, `${analysis}:${nodeType}`, `${name}: ${nodeType}${on ? ` · ${on}` : ''}${result.cancelled ? ' (cancelled: items finished so far)' : ''}`, rows,
          result[`${analysis}_order`]?.[nodeType], CALIBRATION_ITEMS.includes(nodeType) ? 'Calibration node' : 'Node');
      }
      return;
    }
    if (analysis === 'stat_info' && result.stat_info) {
      const names = ['Tensor_type', 'Granularity', 'Thresholds', 'Scales', 'Max_vals', 'Min_nz_vals'];
      const rows = Object.fromEntries(Object.entries(result.stat_info).map(([k, r]) =>
        [k, Array.isArray(r.cells) ? Object.fromEntries(names.map((n, i) => [n, r.cells[i]])) : r]));
      const on = samplesNote(result, 'stat_info');
      table(container, 'stat_info', `calibration nodes stat info${on ? ` · ${on}` : ''}`, rows, result.stat_info_order, 'Calibration node');
      for (const m of result.stat_info_messages ?? []) container.append(el(doc, 'p', { class: 'ptq-note', text: m }));
    }
    if (analysis === 'runall') {
      const parts = RUNALL_SECTIONS.filter((k) => result[k]);
      if (!parts.length) return empty('No results yet.');
      runAllSummary(container, result, { state, focus, show });
      return container.append(el(doc, 'p', { class: 'ptq-runall-parts', text: `Results: ${parts.join(', ')} (see each tab; export them from the Export panel).` }));
    }
    const note = notRunNote(result, analysis);
    if (note) container.append(el(doc, 'p', { class: 'ptq-empty', text: note }));
    const kinds = CHART_KINDS[analysis] ?? [];
    const charts = chartList(result, state.get('graph')).filter((c) => kinds.includes(c.kind));
    if (!charts.length && !(analysis === 'stat_info' && result.stat_info)) return empty('No charts yet.');
    const on = samplesNote(result, analysis);
    if (on) container.append(el(doc, 'p', { class: 'ptq-samples-note', text: `Computed on ${on}.` }));
    const figures = el(doc, 'div', { class: 'ptq-figures' });
    const onFocus = (node) => {
      state.set('selection', node);
      focus(node);
    };
    const draw = () => {
      figures.replaceChildren();
      const size = chartSize() ?? {};
      for (const chart of charts) {
        const fig = el(doc, 'figure', { class: 'ptq-chart-figure', 'data-kind': chart.kind, 'data-name': chart.name });
        figures.append(fig);
        chart.render(fig, { average: toggles.average, onFocus, ...size });
      }
    };
    if (analysis === 'acc_error') {
      const box = el(doc, 'input', { type: 'checkbox', class: 'ptq-average-toggle', checked: toggles.average });
      box.addEventListener('change', () => {
        toggles.average = box.checked;
        draw();
      });
      container.append(el(doc, 'label', { class: 'ptq-view-toggle' }, box, doc.createTextNode(' running mean (average_mode) of the curves')));
    }
    container.append(figures);
    draw();
  };
}

// Run all's summary: the model's outputs as calibrated (the what_if of the stored configuration Run
// all ends with), the worst items of each sweep, and the next steps (what-if, fix; explain when the
// core has it).
function runAllSummary(container, result, { state, focus, show }) {
  const doc = container.ownerDocument;
  const box = el(doc, 'section', { class: 'ptq-runall-summary', 'aria-label': 'Run all summary' });
  container.append(box);
  const wi = result.what_if;
  if (wi?.outputs) {
    const samples = wi.samples?.length;
    box.append(el(doc, 'h4', { class: 'ptq-table-title', text: `Model outputs as calibrated, against the float model${samples ? ` (${samples} sample${samples === 1 ? '' : 's'})` : ''}` }));
    const metrics = METRICS.filter((m) => Object.values(wi.outputs).some((o) => m in o));
    const t = el(doc, 'table', { class: 'ptq-node-table ptq-runall-outputs' });
    t.append(el(doc, 'thead', {}, el(doc, 'tr', {}, ...['output', ...metrics].map((h) => el(doc, 'th', { text: h })))));
    const body = el(doc, 'tbody');
    const rows = orderedKeys(wi.outputs, wi.output_order).map((o) => [o, wi.outputs[o]]);
    if (rows.length > 1 && wi.mean) rows.push(['mean over outputs', wi.mean]);
    for (const [name, values] of rows) {
      body.append(el(doc, 'tr', { 'data-output': name }, nameCell(doc, name),
        ...metrics.map((m) => el(doc, 'td', { class: 'num', 'data-metric': m, text: formatValue(values[m]) }))));
    }
    t.append(body);
    box.append(el(doc, 'div', { class: 'ptq-runall-scroll' }, t));
  }
  const worst = [];
  for (const [nodeType, rows] of Object.entries(result.sensitivity ?? {})) {
    const metric = result.options?.sensitivity?.metrics?.[0] ?? Object.keys(Object.values(rows)[0] ?? {}).find((k) => METRICS.includes(k));
    const items = orderedKeys(rows, result.sensitivity_order?.[nodeType]).slice(0, WORST_SHOWN);
    if (items.length) worst.push({ nodeType, metric, items: items.map((item) => ({ item, value: rows[item]?.[metric] })) });
  }
  if (worst.length) {
    box.append(el(doc, 'h4', { class: 'ptq-table-title', text: 'Most sensitive (quantized alone; the rest float)' }));
    const list = el(doc, 'ul', { class: 'ptq-runall-worst' });
    for (const w of worst) {
      const items = el(doc, 'ul');
      for (const { item, value } of w.items) {
        const link = el(doc, 'button', { type: 'button', class: 'ptq-runall-node', 'data-item': item, title: item });
        link.append(nameElement(doc, item));
        link.addEventListener('click', () => focusItem(state, item, result.sensitivity[w.nodeType][item], focus));
        items.append(el(doc, 'li', {}, link, el(doc, 'span', { class: 'ptq-runall-value', text: `${w.metric} ${formatValue(value)}` })));
      }
      list.append(el(doc, 'li', { 'data-node-type': w.nodeType }, doc.createTextNode(w.nodeType), items));
    }
    box.append(list);
  }
  const first = worst[0]?.items[0]?.item;
  const next = el(doc, 'p', { class: 'ptq-runall-next' }, doc.createTextNode('Next: '));
  const step = (id, label, title, act) => {
    const b = el(doc, 'button', { type: 'button', class: 'ptq-runall-step', 'data-step': id, text: label, title });
    b.addEventListener('click', act);
    next.append(b, doc.createTextNode(' '));
  };
  const selectFirst = () => {
    if (first) state.set('selection', targetsOfItem(first, null, state.get('graph'))[0] ?? first);
  };
  step('whatif', first ? 'What-if on the most sensitive' : 'What-if', 'Set nodes to float / int16 and see the outputs\' metrics before and after', () => {
    selectFirst();
    show('whatif');
  });
  step('fix', 'Find a fix', 'Search the fewest nodes to raise until the outputs reach a target', () => show('fix'));
  // The cause hints: why the quantizers lose accuracy, with cures measured (the Why panel).
  if (CORE_ANALYSES.includes('explain')) {
    step('why', 'Why? (cause hints)', 'Why the quantizers lose accuracy, and the cheapest cures measured', () => show('why'));
  }
  box.append(next);
}
