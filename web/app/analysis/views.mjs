// The results of one analysis in the Analyses panel: tables for the sweeps and stat info, the
// chart modules for curves, histograms and box plots.
import { el } from './forms.mjs';
import { renderSectionTable } from './table.mjs';
import { chartList } from './charts.mjs';
import { formatValue } from '../heatmap/mapping.mjs';

const CHART_KINDS = { acc_error: 'acc_error', distribution: 'distribution', channelwise: 'channelwise' };

export function renderResultView(container, analysis, result, state) {
  const doc = container.ownerDocument;
  const empty = (text) => container.append(el(doc, 'p', { class: 'ptq-empty', text }));
  if (!result) return empty('No results yet: choose options and press Run.');
  if (analysis === 'sensitivity' || analysis === 'leave_one_out') {
    const sections = Object.entries(result[analysis] ?? {});
    if (!sections.length) return empty(`No ${analysis.replace(/_/g, '-')} results yet.`);
    for (const [nodeType, rows] of sections) {
      renderSectionTable(container, {
        title: `${analysis === 'leave_one_out' ? 'leave-one-out' : 'sensitivity'}: ${nodeType}${result.cancelled ? ' (cancelled)' : ''}`,
        keyHeader: nodeType, rows, order: result[`${analysis}_order`]?.[nodeType],
      }, state);
    }
    return;
  }
  if (analysis === 'stat_info') {
    if (!result.stat_info) return empty('No stat info yet.');
    const rows = Object.fromEntries(Object.entries(result.stat_info).map(([k, r]) => [k, statInfoRow(r)]));
    renderSectionTable(container, { title: 'calibration nodes stat info', keyHeader: 'Node', rows, order: result.stat_info_order }, state);
    return;
  }
  if (analysis === 'sensitivity_analysis') {
    const sa = result.sensitivity_analysis;
    if (!sa) return empty('No sensitivity analysis yet.');
    const rows = {};
    (sa.x ?? []).forEach((x, i) => {
      rows[x] = { cumulative: sa.cumulative?.[i], 'per-node': i > 0 ? sa.per_node?.[i - 1] : null, qtype: sa.qtype };
    });
    renderSectionTable(container, { title: 'partial quantization (cumulative / per node, cosine)', keyHeader: 'node', rows, order: sa.x }, state);
    return;
  }
  if (analysis === 'runall') {
    const parts = ['sensitivity', 'distribution', 'channelwise', 'acc_error', 'sensitivity_analysis'].filter((k) => result[k]);
    return empty(parts.length ? `Results: ${parts.join(', ')} (see each tab; export them from the Export panel).` : 'No results yet.');
  }
  const kind = CHART_KINDS[analysis];
  const charts = chartList(result, state.get('graph')).filter((c) => c.kind === kind);
  if (!charts.length) return empty('No charts yet.');
  for (const chart of charts) {
    const fig = el(doc, 'figure', { class: 'ptq-chart-figure', 'data-kind': chart.kind, 'data-name': chart.name });
    container.append(fig);
    chart.render(fig, {
      onFocus: (node) => { state.set('selection', node); state.set('focus', node); },
      onChannel: () => {},
    });
  }
}

// The visualize=True cells when present (the original's table), else the raw lists shortened.
function statInfoRow(r) {
  const names = ['Tensor_type', 'Granularity', 'Thresholds', 'Scales', 'Max_vals', 'Min_nz_vals'];
  if (Array.isArray(r.cells)) return Object.fromEntries(names.map((n, i) => [n, r.cells[i]]));
  const short = (v) => (Array.isArray(v) ? `${formatValue(v[0])}${v.length > 1 ? ',...' : ''}` : v);
  return {
    Tensor_type: r.tensor_type, Granularity: r.granularity, Thresholds: short(r.thresholds), Scales: short(r.scales),
    Max_vals: short(r.max_vals), Min_nz_vals: short(r.min_nz_vals),
  };
}
