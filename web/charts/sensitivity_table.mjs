// The sensitivity table (§3.5 columns): one row per item, extra columns (node, threshold,
// qtype) then the metrics. Pure helpers (rows, sort, filter, top-k, CSV, static HTML) plus an
// interactive HTML table: click a header to sort by it, filter by text, top-k, click a row to focus.
// Rows keep the core's ranking (§3.4) until a header is clicked; a metric column then sorts worst
// first by the direction the core describes for that metric.
import { escapeHtml, toNumber, formatValue } from './format.mjs';
import { worseDirection } from './heat_scale.mjs';
import { isMetric } from '../pipeline/catalog.mjs';
import { nameCell, nameCellHtml } from './name_cell.mjs';

// 'lower' | 'higher' for a metric column (which side is worse), undefined for other columns.
const worseOf = (column) => (isMetric(column) ? worseDirection(column) : undefined);

export const ITEM_COLUMN = 'Node';
const EXTRA_ORDER = ['node', 'threshold', 'qtype'];
const TEXT_COLUMNS = [ITEM_COLUMN, 'node', 'qtype'];
export const isNumericColumn = (column) => !TEXT_COLUMNS.includes(column);
// Columns holding node names: shortened in the middle on screen (name_cell.mjs), whole in the tooltip.
const NAME_COLUMNS = [ITEM_COLUMN, 'node'];
// Header words on screen; the column's name (the CSV's and the original's table's) is its tooltip.
export const COLUMN_LABELS = { node: 'Consumers' };

// The on-screen order: the item, then the metrics (and stat info's columns), then the extra columns,
// so the numbers stay in view beside a long name (the CSV and the report keep the §3.5 order).
export function displayColumns(columns) {
  const extras = columns.filter((c) => c !== ITEM_COLUMN && EXTRA_ORDER.includes(c));
  return [ITEM_COLUMN, ...columns.filter((c) => c !== ITEM_COLUMN && !EXTRA_ORDER.includes(c)), ...extras];
}

/**
 * sensitivityTable(section, order, {metrics}) -> {columns, rows}
 * section: result.sensitivity[nodeType] (or leave_one_out[...]): {item: {metric: v, node, threshold, qtype}}.
 * order: result.sensitivity_order[nodeType] (the core's ranking; the object's key order otherwise).
 * columns: ["Node", extra columns present, metrics (first-seen order, or options.metrics)];
 * rows: [{item, rank (0-based core order), cells: {column: value}}].
 */
export function sensitivityTable(section, order, { metrics } = {}) {
  const items = order && order.length ? order : Object.keys(section || {});
  const extras = [];
  const seenMetrics = [];
  for (const item of items) {
    for (const key of Object.keys(section[item] || {})) {
      if (EXTRA_ORDER.includes(key)) { if (!extras.includes(key)) extras.push(key); } else if (!seenMetrics.includes(key)) seenMetrics.push(key);
    }
  }
  extras.sort((a, b) => EXTRA_ORDER.indexOf(a) - EXTRA_ORDER.indexOf(b));
  const columns = [ITEM_COLUMN, ...extras, ...(metrics || seenMetrics)];
  const rows = items.map((item, rank) => {
    const r = section[item];
    if (!r) throw new Error(`sensitivity table: item "${item}" of the order list has no row`);
    const cells = { [ITEM_COLUMN]: item };
    for (const c of columns.slice(1)) cells[c] = Array.isArray(r[c]) ? r[c].join(', ') : r[c];
    return { item, rank, cells };
  });
  return { columns, rows };
}

// Sort direction of a column: metrics most sensitive first (descending where higher is worse, §3.4);
// other columns ascending. `descending` flips it.
export function defaultDescending(column) {
  return worseOf(column) === 'higher';
}

// Rows sorted by `column` (NaN and missing values last in either direction; ties keep core order).
export function sortRows(rows, column, descending = defaultDescending(column)) {
  const numeric = isNumericColumn(column);
  const key = (r) => (numeric ? toNumber(r.cells[column]) : r.cells[column]);
  return [...rows].sort((a, b) => {
    const [x, y] = [key(a), key(b)];
    const xMissing = x === undefined || x === null || (numeric && Number.isNaN(x));
    const yMissing = y === undefined || y === null || (numeric && Number.isNaN(y));
    if (xMissing || yMissing) return xMissing === yMissing ? a.rank - b.rank : xMissing ? 1 : -1;
    let c = numeric ? (x < y ? -1 : x > y ? 1 : 0) : String(x).localeCompare(String(y));
    if (descending) c = -c;
    return c || a.rank - b.rank;
  });
}

// Rows whose item or node column contains `text` (case-insensitive).
export function filterRows(rows, text) {
  const t = String(text || '').trim().toLowerCase();
  if (!t) return rows;
  return rows.filter((r) => String(r.item).toLowerCase().includes(t) || String(r.cells.node ?? '').toLowerCase().includes(t));
}

export const topK = (rows, k) => (k > 0 ? rows.slice(0, k) : rows);

// RFC 4180 CSV: header line then one line per row; fields with a comma, quote or line break are
// quoted with doubled quotes; numbers as shortest round-trip text, non-finite as inf/-inf/nan.
export function toCsv({ columns, rows }) {
  const field = (v) => {
    let s;
    if (v === null || v === undefined) s = '';
    else if (typeof v === 'number') s = Number.isFinite(v) ? String(v) : formatValue(v);
    else s = String(v);
    return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
  };
  const lines = [columns.map(field).join(',')];
  for (const r of rows) lines.push(columns.map((c) => field(r.cells[c])).join(','));
  return `${lines.join('\r\n')}\r\n`;
}


// Static HTML text of the table (for the report), in the page's column order (the name, then the
// metrics, then the other columns: displayColumns) with names shortened in the middle (name_cell.mjs,
// whole in their tooltip), so that the numbers stay beside a ~200-character name; numbers shown with
// `digits` significant digits and the exact value in data-value for sorting.
export function tableHtml({ columns: all, rows }, { caption, digits = 6 } = {}) {
  const columns = displayColumns(all);
  const head = columns.map((c) => `<th data-column="${escapeHtml(c)}"${worseOf(c) ? ` data-worse="${worseOf(c)}"` : ''}>${escapeHtml(c)}</th>`).join('');
  const body = rows.map((r) => `<tr data-item="${escapeHtml(r.item)}">${columns.map((c) => {
    const v = r.cells[c];
    if (v === undefined || v === null) return '<td></td>';
    if (NAME_COLUMNS.includes(c)) return nameCellHtml(v);
    if (!isNumericColumn(c)) return `<td>${escapeHtml(v)}</td>`;
    return `<td class="num" data-value="${escapeHtml(String(v))}">${escapeHtml(formatValue(v, digits))}</td>`;
  }).join('')}</tr>`).join('\n');
  return `<table class="ptq-table sensitivity-table">${caption ? `<caption>${escapeHtml(caption)}</caption>` : ''}<thead><tr>${head}</tr></thead>\n<tbody>\n${body}\n</tbody></table>`;
}

/**
 * renderSensitivityTable(container, table, options) -> {element, state(), sortBy(column, descending?),
 *   setFilter(text), setTopK(k), visibleRows(), csv()}
 * table: sensitivityTable(...) output. options: sortBy, descending, filter, topK, digits (6),
 *   onFocus(item, row) on row click, controls (true: filter box and top-k field above the table),
 *   itemLabel (the item column's header: 'Node'; 'Calibration node' for weight / activation items).
 * Columns are shown in displayColumns() order, names shortened in the middle (name_cell.mjs).
 */
export function renderSensitivityTable(container, table, options = {}) {
  const doc = container.ownerDocument;
  const el = (tag, attrs = {}, text) => {
    const e = doc.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== null) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  };
  const st = { sortBy: options.sortBy ?? null, descending: options.descending, filter: options.filter ?? '', topK: options.topK ?? 0 };
  const root = el('div', { class: 'ptq-sensitivity' });
  container.appendChild(root);
  let filterInput = null;
  let topInput = null;
  if (options.controls ?? true) {
    const bar = el('div', { class: 'controls' });
    filterInput = el('input', { type: 'search', placeholder: 'filter nodes', class: 'filter', value: st.filter, 'aria-label': 'filter nodes' });
    // Empty (the placeholder reads "all") shows every row; k shows the first k.
    topInput = el('input', {
      type: 'number', min: '1', class: 'top-k', placeholder: 'all', title: 'show the first k rows (empty: all)',
      'aria-label': 'rows shown', value: st.topK > 0 ? String(st.topK) : '',
    });
    bar.append(filterInput, el('label', {}, ' show '), topInput);
    root.appendChild(bar);
    filterInput.addEventListener('input', () => api.setFilter(filterInput.value));
    topInput.addEventListener('input', () => api.setTopK(Math.max(0, Math.floor(Number(topInput.value))) || 0));
  }
  const tableEl = el('table', { class: 'ptq-table sensitivity-table' });
  const thead = el('thead');
  const headRow = el('tr');
  const columns = displayColumns(table.columns);
  const labels = { ...COLUMN_LABELS, [ITEM_COLUMN]: options.itemLabel ?? ITEM_COLUMN };
  for (const c of columns) {
    const label = labels[c] ?? c;
    const th = el('th', { 'data-column': c, 'data-worse': worseOf(c), tabindex: '0', title: label === c ? undefined : `${label} (column '${c}' of the CSV export)` }, label);
    const sort = () => api.sortBy(c, st.sortBy === c ? !st.descending : undefined);
    th.addEventListener('click', sort);
    th.addEventListener('keydown', (e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault?.(); sort(); } });
    headRow.appendChild(th);
  }
  thead.appendChild(headRow);
  const tbody = el('tbody');
  tableEl.append(thead, tbody);
  root.appendChild(tableEl);

  const visibleRows = () => {
    const sorted = st.sortBy ? sortRows(table.rows, st.sortBy, st.descending) : table.rows;
    return topK(filterRows(sorted, st.filter), st.topK);
  };
  const draw = () => {
    for (const th of headRow.children) {
      const c = th.getAttribute('data-column');
      if (c === st.sortBy) th.setAttribute('aria-sort', st.descending ? 'descending' : 'ascending');
      else th.removeAttribute('aria-sort');
    }
    while (tbody.firstChild) tbody.removeChild(tbody.firstChild);
    for (const r of visibleRows()) {
      const tr = el('tr', { 'data-item': r.item });
      for (const c of columns) {
        const v = r.cells[c];
        const num = isNumericColumn(c) && v !== undefined && v !== null;
        if (NAME_COLUMNS.includes(c) && v !== undefined && v !== null) tr.appendChild(nameCell(doc, formatValue(v)));
        else tr.appendChild(el('td', num ? { class: 'num' } : { title: formatValue(v ?? '') }, num ? formatValue(v, options.digits ?? 6) : formatValue(v ?? '')));
      }
      if (options.onFocus) tr.addEventListener('click', () => options.onFocus(r.item, r));
      tbody.appendChild(tr);
    }
  };
  const api = {
    element: root,
    state: () => ({ ...st }),
    sortBy(column, descending) {
      st.sortBy = column;
      st.descending = descending ?? defaultDescending(column);
      draw();
    },
    setFilter(text) { st.filter = text; draw(); },
    setTopK(k) { st.topK = k; draw(); },
    visibleRows,
    csv: () => toCsv({ columns: table.columns, rows: visibleRows() }),
  };
  if (st.sortBy) st.descending = st.descending ?? defaultDescending(st.sortBy);
  draw();
  return api;
}
