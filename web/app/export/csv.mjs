// CSV of every table in a result document (RFC 4180: comma, CRLF, quotes doubled).
import { orderedItems } from '../heatmap/mapping.mjs';

function cell(v) {
  if (v === null || v === undefined) return '';
  const s = Array.isArray(v) ? v.join(' ') : typeof v === 'object' ? JSON.stringify(v) : String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function toCsv(header, rows) {
  return [header, ...rows].map((r) => r.map(cell).join(',')).join('\r\n') + '\r\n';
}

// rows: {item: {col: value}}; the first column is named after the table's key kind (node_type).
export function rowsTableCsv(keyHeader, rows, order) {
  const items = orderedItems({ rows, order });
  const cols = [];
  for (const item of items) for (const k of Object.keys(rows[item])) if (!cols.includes(k)) cols.push(k);
  return toCsv([keyHeader, ...cols], items.map((item) => [item, ...cols.map((c) => rows[item][c])]));
}

// acc_error curves in long form: one line per point.
function accErrorCsv(curves) {
  const out = [];
  for (const [curve, { x = [], y = [] }] of Object.entries(curves)) {
    for (let i = 0; i < Math.max(x.length, y.length); i++) out.push([curve, i, x[i], y[i]]);
  }
  return toCsv(['curve', 'index', 'tensor', 'value'], out);
}

function channelwiseCsv(entries, order) {
  const cols = ['count', 'mean', 'q1', 'median', 'q3', 'whisker_low', 'whisker_high', 'outlier_count'];
  const out = [];
  for (const name of orderedItems({ rows: entries, order })) {
    (entries[name].channels ?? []).forEach((c, i) => out.push([name, i, ...cols.map((k) => c[k])]));
  }
  return toCsv(['name', 'channel', ...cols], out);
}

function distributionCsv(entries, order) {
  const cols = ['name', 'kind', 'tensor', 'threshold', 'max_abs', 'cosine'];
  const keys = orderedItems({ rows: entries, order });
  return toCsv(['key', ...cols], keys.map((k) => [k, ...cols.map((c) => entries[k][c])]));
}

// One line per x point: the cumulative curve and (from the second point on) the per-node value.
function sensitivityAnalysisCsv(sa) {
  const x = sa.x ?? [];
  return toCsv(['node', 'cumulative', 'per_node', 'qtype'],
    x.map((name, i) => [name, sa.cumulative?.[i], i > 0 ? sa.per_node?.[i - 1] : '', sa.qtype]));
}

// [{name: file name, text}] for each table of the result.
export function resultCsvFiles(result) {
  const files = [];
  for (const section of ['sensitivity', 'leave_one_out']) {
    for (const [nodeType, rows] of Object.entries(result?.[section] ?? {})) {
      files.push({ name: `${section}_${nodeType}.csv`, text: rowsTableCsv(nodeType, rows, result[`${section}_order`]?.[nodeType]) });
    }
  }
  if (result?.acc_error) files.push({ name: 'acc_error.csv', text: accErrorCsv(result.acc_error) });
  if (result?.distribution) files.push({ name: 'distribution.csv', text: distributionCsv(result.distribution, result.distribution_order) });
  if (result?.channelwise) files.push({ name: 'channelwise.csv', text: channelwiseCsv(result.channelwise, result.channelwise_order) });
  if (result?.stat_info) {
    files.push({ name: 'stat_info.csv', text: rowsTableCsv('node', result.stat_info, result.stat_info_order) });
  }
  if (result?.sensitivity_analysis) {
    files.push({ name: 'sensitivity_analysis.csv', text: sensitivityAnalysisCsv(result.sensitivity_analysis) });
  }
  return files;
}
