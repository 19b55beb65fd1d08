// Sortable, filterable HTML table of one sensitivity / leave-one-out section. Click a row → the graph
// centres the node (state 'focus') and the sidebar shows it (state 'selection').
import { el } from './forms.mjs';
import { formatValue, orderedItems, targetsOfItem, toNumber, worseIsLower } from '../heatmap/mapping.mjs';

export function renderSectionTable(container, { title, keyHeader, rows, order }, state, { topk = 0 } = {}) {
  const doc = container.ownerDocument;
  const items = orderedItems({ rows, order });
  const cols = [];
  for (const item of items) for (const k of Object.keys(rows[item])) if (!cols.includes(k)) cols.push(k);
  let sort = null; // {col, dir}
  let filter = '';
  let limit = topk;

  const wrap = el(doc, 'div', { class: 'ptq-table-wrap' });
  const tools = el(doc, 'div', { class: 'ptq-table-tools' },
    el(doc, 'strong', { text: title }),
    el(doc, 'input', { type: 'search', class: 'ptq-table-filter', placeholder: 'filter', 'aria-label': `filter ${title}` }),
    el(doc, 'label', {}, doc.createTextNode(' top-k '), el(doc, 'input', { type: 'number', class: 'ptq-table-topk', min: 0, value: limit || '', placeholder: 'all' })));
  const table = el(doc, 'table', { class: 'ptq-table', 'data-section': keyHeader });
  wrap.append(tools, table);
  container.append(wrap);
  tools.querySelector('.ptq-table-filter').addEventListener('input', (e) => { filter = e.target.value.toLowerCase(); draw(); });
  tools.querySelector('.ptq-table-topk').addEventListener('input', (e) => { limit = Number(e.target.value) || 0; draw(); });

  function sortedItems() {
    let list = items.filter((i) => !filter || i.toLowerCase().includes(filter) || String(rows[i].node ?? '').toLowerCase().includes(filter));
    if (sort) {
      const { col, dir } = sort;
      const key = (i) => (col === keyHeader ? i : rows[i][col]);
      list = [...list].sort((a, b) => {
        const x = toNumber(key(a));
        const y = toNumber(key(b));
        if (!Number.isNaN(x) || !Number.isNaN(y)) {
          if (Number.isNaN(x)) return 1; // NaN last either way
          if (Number.isNaN(y)) return -1;
          return dir * (x - y);
        }
        return dir * String(key(a)).localeCompare(String(key(b)));
      });
    }
    return limit ? list.slice(0, limit) : list;
  }

  function draw() {
    table.replaceChildren();
    const head = el(doc, 'tr', {});
    for (const col of [keyHeader, ...cols]) {
      const mark = sort?.col === col ? (sort.dir > 0 ? ' ▲' : ' ▼') : '';
      const th = el(doc, 'th', { text: col + mark, title: 'sort' });
      th.addEventListener('click', () => {
        // First click: most sensitive first for metrics (their "worse" end), ascending otherwise.
        const first = worseIsLower(col) || !cols.includes(col) || col === 'node' || col === 'qtype' ? 1 : -1;
        sort = sort?.col === col ? { col, dir: -sort.dir } : { col, dir: first };
        draw();
      });
      head.append(th);
    }
    table.append(el(doc, 'thead', {}, head));
    const body = el(doc, 'tbody', {});
    for (const item of sortedItems()) {
      const tr = el(doc, 'tr', { 'data-item': item });
      tr.append(el(doc, 'td', { text: item }));
      for (const col of cols) tr.append(el(doc, 'td', { text: formatValue(rows[item][col]) }));
      tr.addEventListener('click', () => {
        // A calibration item: the sidebar shows it, the view centres its (first) consumer, which is
        // drawn even when calibration nodes are edge badges.
        const [self, consumer] = targetsOfItem(item, rows[item], state.get('graph'));
        state.set('selection', self ?? item);
        state.set('focus', consumer ?? self ?? item);
      });
      body.append(tr);
    }
    table.append(body);
  }
  draw();
  return wrap;
}
