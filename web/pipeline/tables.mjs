// The two text tables of the original, from a result's sensitivity section:
//  - formatSensitivityLog: runall's sensitivity_of_<type>.log (§8.3, save_node_sensitivity);
//  - formatVerboseTable: get_sensitivity_of_nodes(verbose=True) (§3.5, print_info_dict).
// Both: columns left-aligned and padded to width + 2, names longer than 50 shown as "..." + last 47.
import { numpyFloat32Str, pyFloatRepr, pyRound } from './pyformat.mjs';
import { orderedRows, toNumber } from './result.mjs';

const NAME_CAP = 50;
const shortName = (name) => (name.length > NAME_CAP ? `...${name.slice(-47)}` : name);
const pad = (text, width) => text.padEnd(width);

export { orderedRows };

// The metric columns of a row set, in first-seen order (extra columns excluded).
export function metricColumns(rows, metrics) {
  const seen = [];
  for (const [, row] of rows) for (const k of Object.keys(row)) if (metrics.includes(k) && !seen.includes(k)) seen.push(k);
  return seen;
}

// §8.3. Widths use numpy's str of the float32 value, cells Python's repr of it as a double (so long
// values overflow narrow columns, exactly as the original writes them).
export function formatSensitivityLog(title, rows, metrics) {
  const columns = metricColumns(rows, metrics);
  const nameWidth = Math.min(NAME_CAP, Math.max(4, ...rows.map(([k]) => k.length)));
  const widths = columns.map((c) => Math.max(c.length, ...rows.map(([, r]) => numpyFloat32Str(r[c]).length)));
  const headLength = nameWidth + 2 + widths.reduce((a, w) => a + w + 2, 0);
  const e = Math.trunc((headLength - title.length) / 2);
  const lines = [
    '='.repeat(Math.max(0, e)) + title + '='.repeat(Math.max(0, e)),
    pad('Node', nameWidth + 2) + columns.map((c, j) => pad(c, widths[j] + 2)).join(''),
    '-'.repeat(headLength),
  ];
  for (const [k, r] of rows) {
    lines.push(pad(shortName(k), nameWidth + 2) + columns.map((c, j) => pad(pyFloatRepr(Math.fround(toNumber(r[c]))), widths[j] + 2)).join(''));
  }
  return lines.map((l) => `${l}\n`).join('');
}


// §3.5 cell text: metrics as repr(round(float(v), 5)); threshold already rounded; strings as is.
function verboseCell(column, value, metrics) {
  if (metrics.includes(column)) return pyFloatRepr(pyRound(toNumber(value), 5));
  if (typeof value === 'number' || value === 'inf' || value === '-inf' || value === 'nan') return pyFloatRepr(toNumber(value));
  if (value === null || value === undefined) return 'None';
  return String(value);
}

// The original's print_info_dict: description line, title bar (the extra '=' on the right), header
// (first column `keyHeader`, at least 10 wide, at most 50), dashes, rows of cell strings.
export function formatInfoTable({ title, keyHeader, columns, rows, description = '' }) {
  const cells = rows.map(([k, values]) => [shortName(k), ...values]);
  const headers = [keyHeader, ...columns];
  const widths = headers.map((h, j) => (j === 0
    ? Math.min(NAME_CAP, Math.max(10, ...rows.map(([k]) => k.length)))
    : Math.max(h.length, ...cells.map((row) => row[j].length))));
  const headLength = widths.reduce((a, w) => a + w + 2, 0);
  const left = Math.max(0, Math.floor((headLength - title.length) / 2));
  const right = Math.max(0, headLength - title.length - left);
  const line = (row) => row.map((t, j) => pad(t, widths[j] + 2)).join('');
  return [description, '='.repeat(left) + title + '='.repeat(right), line(headers), '-'.repeat(headLength), ...cells.map(line)].join('\n');
}

// §3.5, the verbose sensitivity table: title "node sensitivity", first column named after node_type,
// extra columns node/threshold/qtype first, then the metrics.
export function formatVerboseTable(nodeType, rows, metrics) {
  const extras = ['node', 'threshold', 'qtype'].filter((c) => rows.some(([, r]) => c in r));
  const columns = [...extras, ...metricColumns(rows, metrics)];
  return formatInfoTable({
    title: 'node sensitivity', keyHeader: nodeType, columns,
    rows: rows.map(([k, r]) => [k, columns.map((c) => verboseCell(c, r[c], metrics))]),
  });
}
