// The compare panel: open two result JSONs (two configurations, two calibrations of the same model,
// before / after a fix), or take the current results or the toolchain report opened beside the model
// (state 'report', web/app/reports/) as one of them; pick a table both hold and a
// metric; see the nodes whose value changed most, the names only one of them has, both curves on one
// chart, and the change as a heat layer on the graph (state 'compare' -> the heat view "compare Δ").
import { el } from '../analysis/forms.mjs';
import { commonSources, compareDocuments, compareFigure, measureMismatch } from './compare.mjs';
import { renderAccError } from '../../charts/acc_error.mjs';
import { formatValue } from '../../charts/format.mjs';
import { nameCell } from '../../charts/name_cell.mjs';
import { SCHEMA as REPORT_SCHEMA } from '../../pipeline/reports/document.mjs';

const TOP_ROWS = 30;

async function readJson(file) {
  let doc;
  try {
    doc = JSON.parse(await file.text());
  } catch (err) {
    throw new Error(`${file.name}: not valid JSON (${err.message})`);
  }
  if (!doc || typeof doc !== 'object' || (doc.schema !== 'ptqscope.result' && doc.schema !== REPORT_SCHEMA)) {
    throw new Error(`${file.name}: not a ptqscope result document ("schema" is ${JSON.stringify(doc?.schema)}, expected "ptqscope.result" or "${REPORT_SCHEMA}")`);
  }
  return doc;
}

/**
 * mountComparePanel(root, state, hooks?) -> {element, setDocuments(a, b, names), dispose()}
 * Writes state 'compare' = {a, b, nameA, nameB, source, metric, comparison} (or null).
 * hooks.focus(node): show a node on the host's graph (default: state 'focus').
 */
export function mountComparePanel(root, state, hooks = {}) {
  const doc = root.ownerDocument;
  const focus = hooks.focus ?? ((node) => state.set('focus', node));
  const docs = { a: null, b: null };
  const names = { a: 'A', b: 'B' };
  const offs = [];

  const side = (key) => {
    const input = el(doc, 'input', { type: 'file', accept: '.json,application/json', class: `ptq-compare-file-${key}`, hidden: true });
    const open = el(doc, 'button', { type: 'button', class: `ptq-compare-open-${key}`, text: `Open ${key.toUpperCase()}…` });
    const current = el(doc, 'button', { type: 'button', class: `ptq-compare-current-${key}`, text: 'current results' });
    const report = el(doc, 'button', { type: 'button', class: `ptq-compare-report-${key}`, text: 'report', title: 'the toolchain report opened beside the model' });
    const label = el(doc, 'span', { class: `ptq-compare-name ptq-compare-name-${key} ptq-name`, text: 'none' });
    open.addEventListener('click', () => input.click());
    input.addEventListener('change', async () => {
      const file = input.files?.[0];
      input.value = '';
      if (!file) return;
      try {
        set(key, await readJson(file), file.name);
      } catch (err) {
        state.set('error', `compare: ${err.message}`);
      }
    });
    current.addEventListener('click', () => {
      const r = state.get('results');
      if (!r) state.set('error', 'compare: there are no results yet');
      else set(key, structuredClone(r), 'current results');
    });
    report.addEventListener('click', () => {
      const rep = state.get('report');
      if (!rep?.document) state.set('error', 'compare: no toolchain report is open (Report… or drop one beside the model)');
      else set(key, rep.document, rep.name);
    });
    return { row: el(doc, 'div', { class: 'ptq-field' }, el(doc, 'label', { text: key.toUpperCase() }), open, current, report, input, label), label };
  };
  const A = side('a');
  const B = side('b');
  const source = el(doc, 'select', { class: 'ptq-compare-source', 'aria-label': 'table to compare' });
  const metric = el(doc, 'select', { class: 'ptq-compare-metric', 'aria-label': 'metric to compare' });
  const summary = el(doc, 'p', { class: 'ptq-compare-summary', 'aria-live': 'polite' });
  const table = el(doc, 'div', { class: 'ptq-compare-table' });
  const unmatched = el(doc, 'div', { class: 'ptq-compare-unmatched' });
  const chart = el(doc, 'div', { class: 'ptq-compare-chart' });
  const element = el(doc, 'div', { class: 'ptq-compare' }, A.row, B.row,
    el(doc, 'div', { class: 'ptq-field' }, el(doc, 'label', { text: 'Table' }), source, metric), summary, table, unmatched, chart);
  root.append(element);

  function set(key, value, name) {
    docs[key] = value;
    names[key] = name;
    (key === 'a' ? A : B).label.textContent = name;
    (key === 'a' ? A : B).label.title = name;
    fillSources();
  }

  function fillSources() {
    const sources = docs.a && docs.b ? commonSources(docs.a, docs.b) : [];
    const keep = source.value;
    source.replaceChildren(...sources.map((s) => el(doc, 'option', { value: s.id, text: s.label, selected: s.id === keep })));
    source.disabled = !sources.length;
    fillMetrics(sources);
  }
  function fillMetrics(sources = docs.a && docs.b ? commonSources(docs.a, docs.b) : []) {
    const s = sources.find((x) => x.id === source.value);
    const keep = metric.value;
    metric.replaceChildren(...(s?.metrics ?? []).map((m) => el(doc, 'option', { value: m, text: m, selected: m === keep })));
    metric.disabled = !s;
    compare();
  }

  function compare() {
    table.replaceChildren();
    unmatched.replaceChildren();
    chart.replaceChildren();
    if (!docs.a || !docs.b) {
      summary.textContent = 'Open two result JSONs (or use the current results or the open report for one of them).';
      state.set('compare', null);
      return;
    }
    if (!source.value) {
      const mismatch = measureMismatch(docs.a, docs.b);
      summary.textContent = `${names.a} and ${names.b} have no per-node table in common.${mismatch ? ` ${mismatch}.` : ''}`;
      state.set('compare', null);
      return;
    }
    let cmp;
    try {
      cmp = compareDocuments(docs.a, docs.b, { source: source.value, metric: metric.value || undefined });
    } catch (err) {
      summary.textContent = err.message;
      state.set('compare', null);
      return;
    }
    const changed = cmp.rows.filter((r) => r.delta !== 0).length;
    summary.textContent = `${cmp.rows.length} matched, ${changed} changed (${cmp.metric}, ${cmp.direction}); only in A: ${cmp.onlyA.length}, only in B: ${cmp.onlyB.length}`;
    const t = el(doc, 'table', { class: 'ptq-compare-rows' });
    t.append(el(doc, 'thead', {}, el(doc, 'tr', {}, ...['node', 'A', 'B', 'B − A'].map((h) => el(doc, 'th', { text: h })))));
    const body = el(doc, 'tbody');
    for (const r of cmp.rows.slice(0, TOP_ROWS)) {
      const tr = el(doc, 'tr', { 'data-item': r.name, class: r.worse > 0 ? 'ptq-worse' : r.worse < 0 ? 'ptq-better' : '' },
        nameCell(doc, r.name, { class: 'ptq-name' }),
        el(doc, 'td', { class: 'num', text: formatValue(r.a) }), el(doc, 'td', { class: 'num', text: formatValue(r.b) }),
        el(doc, 'td', { class: 'num', 'data-value': String(r.delta), text: formatValue(r.delta, 4) }));
      tr.addEventListener('click', () => {
        state.set('selection', r.name);
        focus(r.name);
      });
      body.append(tr);
    }
    t.append(body);
    table.append(el(doc, 'h4', { class: 'ptq-table-title', text: `Most changed (top ${Math.min(TOP_ROWS, cmp.rows.length)} of ${cmp.rows.length})` }), t);
    for (const [key, list] of [['A', cmp.onlyA], ['B', cmp.onlyB]]) {
      if (!list.length) continue;
      unmatched.append(el(doc, 'details', { class: `ptq-compare-only-${key.toLowerCase()}` },
        el(doc, 'summary', { text: `Only in ${key} (${list.length})` }),
        el(doc, 'ul', {}, ...list.map((n) => el(doc, 'li', { class: 'ptq-name', text: n })))));
    }
    const width = Math.max(320, Math.min(900, chart.clientWidth || root.clientWidth || 640));
    renderAccError(chart, compareFigure(docs.a, docs.b, cmp, { nameA: `A: ${names.a}`, nameB: `B: ${names.b}` }), {
      width, height: 340, nodeOf: (t) => state.get('graph')?.values?.[t]?.producer ?? t, onFocus: (node) => {
        state.set('selection', node);
        focus(node);
      },
    });
    state.set('compare', { nameA: names.a, nameB: names.b, source: cmp.source, metric: cmp.metric, comparison: cmp });
    state.set('heatSettings', { ...state.get('heatSettings'), view: 'compare', metric: cmp.metric });
  }
  source.addEventListener('change', () => fillMetrics());
  metric.addEventListener('change', compare);
  compare();

  return {
    element,
    setDocuments(a, b, n = {}) {
      if (a) set('a', a, n.a ?? 'A');
      if (b) set('b', b, n.b ?? 'B');
    },
    dispose() {
      offs.forEach((off) => off());
      element.remove();
    },
  };
}
