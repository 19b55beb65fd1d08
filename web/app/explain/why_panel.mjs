// The "Why" panel: the cause hints of `explain` (docs/explain.md), ranked by the share of the output
// loss their cure recovers. Each row says the cause in words, the calibration node and the node it
// feeds, the evidence numbers, the suggested cure and its measured effect (before → after on the tuning
// samples and on the held-out ones). Selecting a row selects its node on the host's graph and draws
// the quantizer's histogram with its thresholds, the clipped part and the levels used
// (web/charts/hint_histogram.mjs); "Apply" puts the suggestion into the what-if view as one undoable
// change. The hints also colour the graph (the heat layer `hints`). Mounted by the page's dock and by
// the Netron plugin (host-specific: `hooks`). Causes, cut-offs and numbers are the core's.
import { el } from '../analysis/forms.mjs';
import { METRICS } from '../analysis/requests.mjs';
import { CAUSES } from '../../pipeline/catalog.mjs';
import { coreOption } from '../whatif/defaults.mjs';
import { intoWhatIf } from '../whatif/panel.mjs';
import { explainRows, hintEvidence } from '../../pipeline/result.mjs';
import { formatValue } from '../../charts/format.mjs';
import { nameElement } from '../../charts/name_cell.mjs';
import { renderHintHistogram, percent } from '../../charts/hint_histogram.mjs';
import { mountRunRow, dataNumField, onNewModel, readDataNum } from './run_row.mjs';

// The evidence numbers a row shows, in this order, when the core gave them (docs/explain.md "The
// evidence"); shares as percentages.
const EVIDENCE = [
  ['clipped', 'clipped', 'share'], ['occupied', 'occupied', 'number'], ['levels_used', 'levels used', 'share'],
  ['zero_rounded', 'rounded to 0', 'share'], ['negative', 'negative', 'share'], ['channel_spread', 'channel spread', 'number'],
  ['branch_ratio', 'branch ratio', 'number'], ['own', 'own', 'number'], ['accumulated', 'accumulated', 'number'],
];

// "clipped 48.8% · occupied 10 · …": a hint's evidence in one line.
export function evidenceText(evidence) {
  return EVIDENCE.filter(([k]) => evidence?.[k] !== undefined && evidence[k] !== null && !(k === 'branch_ratio' && !evidence.branch_op))
    .map(([k, label, kind]) => `${label} ${kind === 'share' ? percent(evidence[k]) : formatValue(evidence[k], 3)}`).join(' · ');
}

// "0.972887 → 0.999999 (recovers 100%)": a hint's measured effect.
export const effectText = (e) => `${formatValue(e.before)} → ${formatValue(e.after)} (recovers ${percent(e.recovered)})`;

/**
 * mountWhyPanel(root, state, runner, whatIf, hooks?) -> {element, select(index), dispose()}
 * whatIf: web/app/whatif/controller.mjs (applyIntent); hooks.focus(node): show a node on the host's
 * graph (default state 'focus'); hooks.show(panelId): bring the what-if panel into view after "Apply"
 * (default state 'showPanel').
 */
export function mountWhyPanel(root, state, runner, whatIf, hooks = {}) {
  const doc = root.ownerDocument;
  const focus = hooks.focus ?? ((node) => state.set('focus', node));
  const show = hooks.show ?? ((id) => state.set('showPanel', id));
  const offs = [];
  let last = null; // the last explain document
  let chosen = -1;

  const metric = el(doc, 'select', { name: 'metric', class: 'ptq-why-metric', 'aria-label': 'metric of the effects' },
    ...METRICS.map((m) => el(doc, 'option', { value: m, text: m, selected: m === coreOption('explain', 'metric')?.default })));
  const dataNum = dataNumField(doc, 'explain');
  const summary = el(doc, 'p', { class: 'ptq-why-summary', text: 'Press Explain: every quantizer\'s evidence, and the cures measured.' });
  const table = el(doc, 'table', { class: 'ptq-why-table' });
  const detail = el(doc, 'div', { class: 'ptq-why-detail' });
  const run = mountRunRow(doc, runner, {
    label: 'Explain', runClass: 'ptq-why-run',
    request: () => ({ analysis: 'explain', options: { metric: metric.value, data_num: readDataNum(dataNum) } }),
    onResult: (result) => {
      last = result;
      chosen = -1;
      draw();
      // The graph coloured by the hints: where a cure recovers most of the loss is hottest.
      if (result.hints?.length) state.set('heatSettings', { ...state.get('heatSettings'), view: 'hints' });
    },
    onStart: () => {
      last = null;
      draw();
    },
    onError: (err) => state.set('error', err.message),
  });
  const element = el(doc, 'div', { class: 'ptq-why', 'data-state': 'idle' },
    el(doc, 'div', { class: 'ptq-field' }, el(doc, 'label', { text: 'Metric', title: 'metric (the effects\' before and after)' }), metric),
    el(doc, 'div', { class: 'ptq-field' }, el(doc, 'label', { text: 'Samples', title: 'data_num: split into tuning and held-out samples (§13.4)' }), dataNum),
    run.element, summary, el(doc, 'div', { class: 'ptq-why-scroll' }, table), detail);
  root.append(element);
  run.bindState(element);

  function draw() {
    table.replaceChildren();
    detail.replaceChildren();
    if (!last) {
      summary.textContent = 'Press Explain: every quantizer\'s evidence, and the cures measured.';
      return;
    }
    const rows = explainRows(last);
    const s = last.hints_samples ?? {};
    const start = last.hints_start ?? {};
    const held = s.held_out?.length ? `, ${s.held_out.length} held out (${s.held_out.join(', ')})` : ', none held out';
    summary.textContent = `${rows.length} hint${rows.length === 1 ? '' : 's'}, the most effective cure first · ${start.metric ?? ''} on ${s.tune?.length ?? 0} tuning sample${s.tune?.length === 1 ? '' : 's'} (${(s.tune ?? []).join(', ')})${held}` +
      ` · as calibrated ${formatValue(start.tune)}${start.held_out !== undefined && start.held_out !== null ? ` (held out ${formatValue(start.held_out)})` : ''}`;
    if (!rows.length) return;
    table.append(el(doc, 'thead', {}, el(doc, 'tr', {}, ...['#', 'cause', 'quantizer → node', 'evidence', 'cure', 'effect (tuning)', 'held out', ''].map((t) => el(doc, 'th', { text: t })))));
    const body = el(doc, 'tbody');
    rows.forEach((h, i) => {
      const cause = CAUSES.find((c) => c.name === h.cause);
      const apply = el(doc, 'button', { type: 'button', class: 'ptq-why-apply', text: 'Apply', title: `put "${h.suggestion.text}" into the what-if view` });
      apply.addEventListener('click', (e) => {
        e.stopPropagation();
        applyHint(h);
      });
      const tr = el(doc, 'tr', { 'data-index': String(i), 'data-cause': h.cause, 'data-calibration': h.calibration_node, 'data-node': h.node ?? '', tabindex: 0, 'aria-selected': 'false' },
        el(doc, 'td', { class: 'num', text: String(i + 1) }),
        el(doc, 'td', { class: 'ptq-why-cause', text: h.cause, title: cause ? `${cause.doc}. Rule: ${cause.rule}. Cure: ${cause.cure}.` : '' }),
        el(doc, 'td', { class: 'ptq-name-cell', title: `${h.calibration_node} → ${h.node ?? ''}` }, nameElement(doc, h.calibration_node),
          el(doc, 'div', { class: 'ptq-why-feeds' }, doc.createTextNode('→ '), nameElement(doc, h.node ?? ''))),
        el(doc, 'td', { class: 'ptq-why-evidence', text: evidenceText(h.evidence) }),
        el(doc, 'td', { class: 'ptq-why-suggestion', text: h.suggestion.text ?? h.suggestion.action }),
        el(doc, 'td', { class: 'num ptq-why-effect', 'data-before': String(h.effect.before), 'data-after': String(h.effect.after), text: effectText(h.effect) }),
        el(doc, 'td', { class: 'num ptq-why-held-out', text: h.effect.held_out ? `${formatValue(h.effect.held_out.before)} → ${formatValue(h.effect.held_out.after)}` : '–' }),
        el(doc, 'td', {}, apply));
      tr.addEventListener('click', () => select(i));
      tr.addEventListener('keydown', (e) => { if (e.key === 'Enter') select(i); });
      body.append(tr);
    });
    table.append(body);
    if (chosen >= 0) drawDetail(rows[chosen]);
  }

  // The hint's quantizer selected (the sidebar shows it), the node it feeds centred, its histogram.
  function select(i) {
    const rows = last ? explainRows(last) : [];
    if (!rows[i]) return;
    chosen = i;
    for (const tr of table.querySelectorAll('tbody tr')) tr.setAttribute('aria-selected', String(tr.dataset.index === String(i)));
    state.set('selection', rows[i].calibration_node);
    focus(rows[i].node ?? rows[i].calibration_node);
    drawDetail(rows[i]);
  }

  function drawDetail(h) {
    detail.replaceChildren();
    const evidence = hintEvidence(last, h.calibration_node);
    detail.setAttribute('data-calibration', h.calibration_node);
    detail.append(el(doc, 'h4', { class: 'ptq-table-title ptq-name', text: `${h.cause}: ${h.calibration_node} → ${h.node ?? ''}` }));
    if (!evidence?.bins?.length) {
      detail.append(el(doc, 'p', { class: 'ptq-empty', text: 'The core gave no histogram of this quantizer.' }));
      return;
    }
    const fig = el(doc, 'figure', { class: 'ptq-chart-figure ptq-why-chart' });
    detail.append(fig);
    renderHintHistogram(fig, { ...evidence, name: h.calibration_node }, chartSize());
  }

  // The chart fits the area its panel scrolls in (the page's dock is a few hundred pixels high): seen
  // whole once scrolled to; the chart's own size where nothing scrolls (Node, a tall host).
  function chartSize() {
    const view = doc.defaultView;
    let box = element.parentElement;
    while (box && !(view?.getComputedStyle && /auto|scroll/.test(view.getComputedStyle(box).overflowY) && box.clientHeight)) box = box.parentElement;
    if (!box) return {};
    return { width: Math.max(360, Math.min(720, detail.clientWidth || 640)), height: Math.max(240, Math.min(380, box.clientHeight - 24)) };
  }

  const applyHint = (h) => intoWhatIf(state, show, () => whatIf.applyIntent(h.suggestion, 'hint'));

  // A new model: the hints belonged to the previous one.
  offs.push(onNewModel(state, element, () => {
    last = null;
    draw();
  }));
  return {
    element,
    select,
    dispose() {
      offs.forEach((off) => off());
      run.dispose();
      element.remove();
    },
  };
}
