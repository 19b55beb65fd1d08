// The results of one analysis in the Analyses panel: the chart package's sensitivity table for the
// sweeps and stat info, its chart modules for curves, histograms and box plots.
import { el } from './forms.mjs';
import { chartList } from './charts.mjs';
import { notRunNote, samplesNote } from '../../pipeline/result.mjs';
import { renderSensitivityTable, sensitivityTable } from '../../charts/sensitivity_table.mjs';
import { targetsOfItem } from '../heatmap/mapping.mjs';

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

/**
 * createResultView(state, { focus }) -> render(container, analysis, result)
 * One per mounted panel: it remembers the last table drawn per key (its sort / filter / top-k carry
 * over when rows stream in) and the view toggles, so two mounted panels do not share them.
 */
export function createResultView(state, { focus = defaultFocus(state) } = {}) {
  const tables = new Map();
  const toggles = { average: false };

  function table(container, key, title, rows, order) {
    const doc = container.ownerDocument;
    container.append(el(doc, 'h4', { class: 'ptq-table-title', text: title }));
    const kept = tables.get(key)?.state();
    tables.set(key, renderSensitivityTable(container, sensitivityTable(rows, order), {
      ...kept, onFocus: (item) => focusItem(state, item, rows[item], focus),
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
        table(container, `${analysis}:${nodeType}`, `${name}: ${nodeType}${on ? ` · ${on}` : ''}${result.cancelled ? ' (cancelled: items finished so far)' : ''}`, rows, result[`${analysis}_order`]?.[nodeType]);
      }
      return;
    }
    if (analysis === 'stat_info' && result.stat_info) {
      const names = ['Tensor_type', 'Granularity', 'Thresholds', 'Scales', 'Max_vals', 'Min_nz_vals'];
      const rows = Object.fromEntries(Object.entries(result.stat_info).map(([k, r]) =>
        [k, Array.isArray(r.cells) ? Object.fromEntries(names.map((n, i) => [n, r.cells[i]])) : r]));
      const on = samplesNote(result, 'stat_info');
      table(container, 'stat_info', `calibration nodes stat info${on ? ` · ${on}` : ''}`, rows, result.stat_info_order);
      for (const m of result.stat_info_messages ?? []) container.append(el(doc, 'p', { class: 'ptq-note', text: m }));
    }
    if (analysis === 'runall') {
      const parts = ['sensitivity', 'distribution', 'channelwise', 'acc_error', 'sensitivity_analysis'].filter((k) => result[k]);
      return empty(parts.length ? `Results: ${parts.join(', ')} (see each tab; export them from the Export panel).` : 'No results yet.');
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
      for (const chart of charts) {
        const fig = el(doc, 'figure', { class: 'ptq-chart-figure', 'data-kind': chart.kind, 'data-name': chart.name });
        figures.append(fig);
        chart.render(fig, { average: toggles.average, onFocus });
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
