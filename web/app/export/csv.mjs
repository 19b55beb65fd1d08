// CSV of every table in a result document, written with the chart package's table helpers
// (RFC 4180; non-finite as inf/-inf/nan).
import { sensitivityTable, toCsv } from '../../charts/sensitivity_table.mjs';
import { orderedItems } from '../heatmap/mapping.mjs';

// {columns, rows: [{cells}]} from header names and arrays of cell values.
function table(columns, lines) {
  return { columns, rows: lines.map((cells) => ({ cells: Object.fromEntries(columns.map((c, i) => [c, cells[i]])) })) };
}

const joinArrays = (v) => (Array.isArray(v) ? v.join(' ') : v);

// acc_error curves in long form: one line per point.
function accErrorTable(curves) {
  const lines = [];
  for (const [curve, { x = [], y = [] }] of Object.entries(curves)) {
    for (let i = 0; i < Math.max(x.length, y.length); i++) lines.push([curve, i, x[i], y[i]]);
  }
  return table(['curve', 'index', 'tensor', 'value'], lines);
}

function distributionTable(entries, order) {
  const cols = ['name', 'kind', 'tensor', 'threshold', 'max_abs', 'cosine'];
  return table(['key', ...cols], orderedItems({ rows: entries, order }).map((k) => [k, ...cols.map((c) => entries[k][c])]));
}

function channelwiseTable(entries, order) {
  const cols = ['count', 'mean', 'q1', 'median', 'q3', 'whisker_low', 'whisker_high', 'outlier_count'];
  const lines = [];
  for (const name of orderedItems({ rows: entries, order })) {
    (entries[name].channels ?? []).forEach((c, i) => lines.push([name, i + 1, ...cols.map((k) => c[k])]));
  }
  return table(['name', 'channel', ...cols], lines);
}

function statInfoTable(entries, order) {
  const cols = ['tensor_type', 'granularity', 'thresholds', 'scales', 'max_vals', 'min_nz_vals'];
  return table(['node', ...cols], orderedItems({ rows: entries, order }).map((k) => [k, ...cols.map((c) => joinArrays(entries[k][c]))]));
}

// One line per x point: the cumulative curve and (from the second point on) the per-node value.
function sensitivityAnalysisTable(sa) {
  return table(['node', 'cumulative', 'per_node', 'qtype'],
    (sa.x ?? []).map((name, i) => [name, sa.cumulative?.[i], i > 0 ? sa.per_node?.[i - 1] : null, sa.qtype]));
}

// [{name: file name, text}] for each table of the result.
export function resultCsvFiles(result) {
  const files = [];
  const add = (name, t) => files.push({ name, text: toCsv(t) });
  for (const section of ['sensitivity', 'leave_one_out']) {
    for (const [nodeType, rows] of Object.entries(result?.[section] ?? {})) {
      add(`${section}_${nodeType}.csv`, sensitivityTable(rows, result[`${section}_order`]?.[nodeType]));
    }
  }
  if (result?.acc_error) add('acc_error.csv', accErrorTable(result.acc_error));
  if (result?.distribution) add('distribution.csv', distributionTable(result.distribution, result.distribution_order));
  if (result?.channelwise) add('channelwise.csv', channelwiseTable(result.channelwise, result.channelwise_order));
  if (result?.stat_info) add('stat_info.csv', statInfoTable(result.stat_info, result.stat_info_order));
  if (result?.sensitivity_analysis) add('sensitivity_analysis.csv', sensitivityAnalysisTable(result.sensitivity_analysis));
  return files;
}
