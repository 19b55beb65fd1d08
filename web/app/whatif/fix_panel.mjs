// The fix panel: the core's `fix` analysis (find a configuration that reaches a target on the model
// outputs) from the page or the plugin, cancellable, with the phase and its progress while it runs.
// The outcome shows the final set first (each node, its action, the metric without it and its gain),
// the start and final metric and the samples judged on; the search steps and the path chart (the
// metric after each step, the fix_path chart the CLI draws as fix_path.svg) are behind a disclosure.
// The found configuration is applied to the what-if view in one click (one change per node) and
// exported for the toolchain. A cancelled search shows no result: nothing to apply or export.
// "Export for" is the search's `export` option: `threshold` is tried only where that format can carry
// thresholds, and Prefer starts at the cheapest cures, threshold, int16, float, when it can carry them
// at all (describe().export_formats[].thresholds), at the core's default otherwise. The held-out
// samples' numbers and the search's warnings stand beside the final set.
import { el } from '../analysis/forms.mjs';
import { METRICS } from '../analysis/requests.mjs';
import { formatValue, toNumber } from '../../charts/format.mjs';
import { samplesNote } from '../../pipeline/result.mjs';
import { nameCell } from '../../charts/name_cell.mjs';
import { renderFixPath, actionCounts } from '../../charts/fix_path.mjs';
import { EXPORT_FORMATS, betterDirection, exportCarriesThresholds, interactiveDefault } from '../../pipeline/catalog.mjs';
import { mountConfigExport, preferredFormat } from './export.mjs';
import { coreOption, parseTarget } from './defaults.mjs';
import { intoWhatIf, selectValue } from './panel.mjs';
import { mountOnnxruntimeCheck } from './onnxruntime_view.mjs';
import { checkOptions } from '../../pipeline/onnxruntime_check.mjs';
import { download } from '../export/download.mjs';

const list = (v) => String(v ?? '').split(/[,;\s]+/).filter(Boolean);

// The fix request from the form's values (throws naming the field).
export function fixRequest(values) {
  const bound = Number(values.bound);
  if (values.bound === '' || values.bound === undefined || !Number.isFinite(bound)) throw new Error(`fix: the target bound must be a number (got '${values.bound ?? ''}')`);
  const options = { target: `${values.metric}${values.comparison}${values.bound}` };
  const prefer = list(values.prefer);
  if (prefer.length) options.prefer = prefer;
  if (values.candidates) options.candidates = values.candidates;
  if (values.max_nodes !== '' && values.max_nodes !== undefined) {
    const n = Number(values.max_nodes);
    if (!Number.isInteger(n) || n < 1) throw new Error(`fix: max_nodes must be a positive integer or empty for no limit (got '${values.max_nodes}')`);
    options.max_nodes = n;
  }
  if (values.data_num !== '' && values.data_num !== undefined) {
    const n = Number(values.data_num);
    if (!Number.isInteger(n) || n < 1) throw new Error(`fix: data_num must be a positive integer or empty for all samples (got '${values.data_num}')`);
    options.data_num = n;
  } else options.data_num = 0; // every sample
  if (values.sample_selection) options.sample_selection = values.sample_selection;
  if (values.export) options.export = values.export;
  return { analysis: 'fix', options };
}

// The cheapest cures first (the issue's order): a threshold costs nothing at run time.
export const CHEAPEST_FIRST = ['threshold', 'int16', 'float'];

// What Prefer offers for the export the fix is for: the cheapest cures first where that export can
// carry thresholds, else the core's default (null: the core's, unknown here).
export function preferFor(exportName, coreDefault) {
  if (exportCarriesThresholds(exportName)) return CHEAPEST_FIRST;
  return Array.isArray(coreDefault) ? coreDefault.filter((a) => a !== 'threshold') : coreDefault ?? null;
}

// Text of one progress event of the fix search.
export function stepText(ev) {
  const row = ev?.row ?? ev ?? {};
  const phase = row.phase ? `${row.phase} ` : '';
  const node = row.node ?? ev?.item ?? '';
  const action = row.action ? `${node ? ' → ' : ''}${row.action}` : '';
  const value = row.value !== undefined ? `: ${formatValue(row.value)}` : '';
  const accepted = row.accepted === false && row.phase !== 'check' ? ' (not kept)' : '';
  return `${phase}${node}${action}${value}${accepted}`;
}

// What the search is doing, from one of its events: {text, done, total} for the progress line and bar
// (done / total within the phase; the search's add / escalate / prune steps have no known total).
const PHASES = {
  rank: 'ranking the candidates', check: 'checking the target can be reached', add: 'searching', escalate: 'searching',
  prune: 'pruning the nodes not needed', without: 'measuring each node without it',
};
export function phaseProgress(ev) {
  const phase = ev?.row?.phase ?? 'rank';
  const counted = phase === 'rank' || phase === 'prune' || phase === 'without';
  const done = ev?.done ?? 0;
  const total = ev?.total ?? 0;
  return { text: `${PHASES[phase] ?? phase}${counted && total ? `: ${done} of ${total}` : ''}`, done: counted ? done : null, total: counted ? total : null };
}

/**
 * mountFixPanel(root, state, runner, whatIf, hooks?) -> {element, dispose()}
 * hooks.save(name, data, type): exports (default a browser download); hooks.focus(node): show a node
 * on the host's graph (default: state 'focus'), from a click on a step of the path chart;
 * hooks.show(panel): bring the host's 'whatif' panel into view after "Apply to what-if" (default: state
 * 'showPanel', which the app's dock and the plugin's dock follow).
 */
export function mountFixPanel(root, state, runner, whatIf, hooks = {}) {
  const doc = root.ownerDocument;
  const save = hooks.save ?? ((name, data, type) => download(doc, name, data, type));
  const focus = hooks.focus ?? ((node) => state.set('focus', node));
  const show = hooks.show ?? ((id) => state.set('showPanel', id));
  const offs = [];
  let last = null; // the last fix document
  let mine = false; // the runner's run in flight is ours

  const field = (label, ...controls) => el(doc, 'div', { class: 'ptq-field' }, el(doc, 'label', { text: label }), ...controls);
  const metric = el(doc, 'select', { name: 'metric', 'aria-label': 'target metric' }, ...METRICS.map((m) => el(doc, 'option', { value: m, text: m })));
  const comparison = el(doc, 'select', { name: 'comparison', 'aria-label': 'comparison' }, el(doc, 'option', { value: '>=', text: '≥' }), el(doc, 'option', { value: '<=', text: '≤' }));
  // Defaults and choices from the core's describe() (empty when the core does not describe fix).
  const target = parseTarget(coreOption('fix', 'target')?.default);
  const preferDefault = coreOption('fix', 'prefer')?.default;
  const candidateSpec = coreOption('fix', 'candidates');
  // Every sample in the page and the plugin (the catalogue's interactive default; the CLI keeps -d 4).
  const dataNumDefault = interactiveDefault('fix', 'data_num');
  const bound = el(doc, 'input', { name: 'bound', type: 'number', step: 'any', value: target?.bound, 'aria-label': 'target bound' });
  const prefer = el(doc, 'input', { name: 'prefer', placeholder: 'core default', 'aria-label': 'prefer' });
  // The export the fix is for (fix's option export): any, or one of the core's formats; by default what
  // the export below starts at (a Q/DQ model: its own model, qdq-onnx).
  const exportFor = el(doc, 'select', { name: 'export', class: 'ptq-fix-export-for', 'aria-label': 'the export the fix is for' },
    el(doc, 'option', { value: '', text: 'any format' }), ...EXPORT_FORMATS.map((f) => el(doc, 'option', { value: f.name, text: f.label })));
  const exportNote = el(doc, 'span', { class: 'ptq-hint ptq-fix-export-note' });
  let preferEdited = false;
  prefer.addEventListener('input', () => { preferEdited = true; });
  const offerPrefer = () => {
    const carries = exportCarriesThresholds(exportFor.value);
    exportNote.textContent = carries ? 'can carry thresholds: threshold is tried first' : 'cannot carry thresholds: only qtypes and float';
    if (preferEdited) return;
    const list = preferFor(exportFor.value, preferDefault);
    prefer.value = Array.isArray(list) ? list.join(', ') : list ?? '';
  };
  exportFor.addEventListener('change', () => {
    offerPrefer();
    exporter.select(exportFor.value || null);
  });
  const maxNodes = el(doc, 'input', { name: 'max_nodes', type: 'number', min: 1, placeholder: 'no limit', 'aria-label': 'max_nodes' });
  const candidates = el(doc, 'select', { name: 'candidates', 'aria-label': 'candidates' },
    ...(candidateSpec?.choices ?? []).map((c) => el(doc, 'option', { value: c, text: c, selected: c === candidateSpec.default })));
  if (!candidateSpec?.choices?.length) candidates.append(el(doc, 'option', { value: '', text: 'core default' }));
  const dataNum = el(doc, 'input', { name: 'data_num', type: 'number', min: 1, value: dataNumDefault || undefined, placeholder: 'all', 'aria-label': 'data_num' });
  if (target) {
    selectValue(metric, target.metric);
    selectValue(comparison, target.op);
  }
  // The comparison follows the metric's direction by default (cosine ≥, mse ≤); the user may change it.
  metric.addEventListener('change', () => {
    selectValue(comparison, betterDirection(metric.value) === 'higher' ? '>=' : '<=');
  });

  const runBtn = el(doc, 'button', { type: 'button', class: 'ptq-fix-run', text: 'Find a fix' });
  const cancelBtn = el(doc, 'button', { type: 'button', class: 'ptq-fix-cancel', text: 'Cancel', disabled: true });
  const bar = el(doc, 'progress', { class: 'ptq-fix-progress', max: 1, value: 0 });
  const progress = el(doc, 'span', { class: 'ptq-fix-progress-text', 'aria-live': 'polite' });
  const steps = el(doc, 'ol', { class: 'ptq-fix-steps' });
  const outcome = el(doc, 'div', { class: 'ptq-fix-outcome' });
  const chart = el(doc, 'div', { class: 'ptq-fix-chart' });
  const stepsSummary = el(doc, 'summary', { text: 'Search steps' });
  const stepsTable = el(doc, 'div', { class: 'ptq-fix-path' });
  const details = el(doc, 'details', { class: 'ptq-fix-details' }, stepsSummary, stepsTable, chart, steps);
  const applyBtn = el(doc, 'button', { type: 'button', class: 'ptq-fix-apply', text: 'Apply to what-if', disabled: true });
  const exportHost = el(doc, 'div', { class: 'ptq-fix-export' });
  const exporter = mountConfigExport(exportHost, state, runner, { getConfig: () => last?.config ?? null, save, label: 'Export the fix' });

  // The found configuration by onnxruntime, on the samples the search judged.
  const checkHost = el(doc, 'div', { class: 'ptq-fix-check' });
  const check = mountOnnxruntimeCheck(checkHost, state, runner, {
    getRequest: () => (last?.config ? { config: last.config, options: checkOptions(last.options) } : null),
  });

  const element = el(doc, 'div', { class: 'ptq-fix', 'data-state': 'idle' },
    field('Target', metric, comparison, bound),
    field('Export for', exportFor, exportNote),
    field('Prefer', prefer, el(doc, 'span', { class: 'ptq-hint', text: 'actions tried in this order' })),
    field('max_nodes', maxNodes),
    field('Candidates', candidates),
    field('data_num', dataNum),
    el(doc, 'div', { class: 'ptq-fix-run-row' }, runBtn, cancelBtn, bar, progress),
    outcome, el(doc, 'div', { class: 'ptq-whatif-buttons' }, applyBtn), checkHost, details, exportHost);
  root.append(element);
  // Export for: what the export below starts at (the model's kind), until the user chooses.
  const followModel = (graph) => {
    selectValue(exportFor, preferredFormat(graph, exportFor.value || EXPORT_FORMATS[0]?.name));
    offerPrefer();
    exporter.select(exportFor.value || null);
  };
  followModel(state.get('graph'));
  offs.push(state.on('graph', (g, prev) => { if (g !== prev) followModel(g); }));

  // The path chart: one dot per point (the start, then each step of the core's path).
  function drawPath(fix) {
    chart.replaceChildren();
    chart.removeAttribute('data-points');
    if (!fix) return;
    const width = Math.max(320, Math.min(900, chart.clientWidth || root.clientWidth || 640));
    const { points } = renderFixPath(chart, fix, {
      width, height: 360, fit: true, onFocus: (node) => {
        state.set('selection', node);
        focus(node);
      },
    });
    chart.setAttribute('data-points', String(points.length));
  }

  // The outcome: what was reached on which samples, then the final set (each node's action, the metric
  // without it and its gain, most needed first; a node whose absence still meets the target is marked),
  // then the search steps behind the disclosure.
  function showOutcome(result) {
    outcome.replaceChildren();
    stepsTable.replaceChildren();
    const fix = result?.fix ?? null;
    drawPath(fix);
    details.hidden = !fix;
    if (!fix) return;
    const t = fix.target ?? {};
    const targetText = typeof t === 'string' ? t : t.text ?? `${t.metric ?? ''}${t.op ?? t.comparison ?? ''}${t.bound ?? ''}`;
    const samples = samplesNote(result, 'fix');
    const raised = fix.nodes?.length ?? 0;
    outcome.append(el(doc, 'p', { class: `ptq-fix-summary ${fix.reached ? 'ptq-better' : 'ptq-worse'}`,
      text: `${fix.reached ? 'Reached' : 'Not reached'} ${targetText}${samples ? ` on ${samples}` : ''}: ` +
        `${formatValue(fix.start)} → ${formatValue(fix.final)} with ${raised} node${raised === 1 ? '' : 's'} raised` +
        `${raised ? ` (${actionCounts(fix.nodes)})` : ''}` }));
    if (fix.message) outcome.append(el(doc, 'p', { class: 'ptq-fix-message', text: fix.message }));
    outcome.append(heldOutLine(fix, targetText));
    for (const w of fix.warnings ?? []) outcome.append(el(doc, 'p', { class: 'ptq-fix-warning ptq-worse', role: 'alert', text: `Warning: ${w}` }));
    if (raised) outcome.append(finalSetTable(fix));
    stepsSummary.textContent = `Search steps (${fix.steps?.length ?? 0} accepted of ${fix.evaluations ?? 0} evaluations) and the path chart`;
    if (fix.steps?.length) {
      const table = el(doc, 'table', { class: 'ptq-fix-table ptq-fix-steps-table' }, el(doc, 'thead', {}, el(doc, 'tr', {},
        el(doc, 'th', { text: 'step' }), el(doc, 'th', { text: 'node' }), el(doc, 'th', { text: 'action' }), el(doc, 'th', { text: 'value after' }))));
      const body = el(doc, 'tbody');
      fix.steps.forEach((s, i) => {
        body.append(el(doc, 'tr', { 'data-node': s.node, 'data-phase': s.phase }, el(doc, 'td', { class: 'num', text: `${i + 1}. ${s.phase}` }),
          nameCell(doc, s.node, { class: 'ptq-name' }),
          el(doc, 'td', { text: s.action }), el(doc, 'td', { class: 'num', text: formatValue(s.value) })));
      });
      table.append(body);
      stepsTable.append(table);
    }
    if (fix.pruned?.length) stepsTable.append(el(doc, 'p', { class: 'ptq-fix-pruned ptq-name', text: `Pruned (not needed): ${fix.pruned.join(', ')}` }));
  }

  // The held-out samples: the target metric there for the start and the configuration found, and
  // whether it meets the target; a visible warning when it misses (also among the core's warnings).
  function heldOutLine(fix, targetText) {
    const h = fix.held_out;
    if (!h) return el(doc, 'p', { class: 'ptq-fix-held-out', 'data-met': 'none', text: 'Held out: none (one sample chosen: nothing to check the fix on)' });
    const names = `${h.samples.length} held-out sample${h.samples.length === 1 ? '' : 's'} (${h.samples.join(', ')})`;
    return el(doc, 'p', { class: `ptq-fix-held-out ${h.met ? 'ptq-better' : 'ptq-worse'}`, 'data-met': String(Boolean(h.met)),
      'data-start': String(h.start), 'data-final': String(h.final),
      text: `On ${names}: ${formatValue(h.start)} → ${formatValue(h.final)}, ${h.met ? 'meets' : 'misses'} ${targetText}` });
  }

  // node | action | without it | gain: the final set, the nodes whose removal costs most first.
  function finalSetTable(fix) {
    const final = toNumber(fix.final);
    const rows = fix.nodes.map((n) => ({ ...n, gain: final - toNumber(n.without) }))
      .sort((a, b) => (Number.isFinite(b.gain) ? b.gain : -Infinity) - (Number.isFinite(a.gain) ? a.gain : -Infinity));
    const higher = betterDirection(fix.target?.metric ?? 'cosine-similarity') === 'higher';
    const table = el(doc, 'table', { class: 'ptq-fix-table ptq-fix-final' }, el(doc, 'caption', { text: 'The nodes raised' }),
      el(doc, 'thead', {}, el(doc, 'tr', {}, el(doc, 'th', { text: 'node' }), el(doc, 'th', { text: 'action' }),
        el(doc, 'th', { text: 'without it', title: 'the final configuration with only this node left as it started' }),
        el(doc, 'th', { text: 'its gain', title: 'the final metric minus the metric without it' }))));
    const body = el(doc, 'tbody');
    for (const r of rows) {
      const needed = r.needed !== false;
      const gain = higher ? r.gain : -r.gain;
      body.append(el(doc, 'tr', { 'data-node': r.node, 'data-action': r.action, class: needed ? '' : 'ptq-fix-unneeded' },
        nameCell(doc, r.node, { class: 'ptq-name' }), el(doc, 'td', { text: r.action }),
        el(doc, 'td', { class: 'num', 'data-value': String(r.without ?? ''), text: formatValue(r.without) }),
        el(doc, 'td', { class: `num ${needed ? '' : 'ptq-worse'}`.trim(), title: needed ? '' : 'the target holds without it too',
          text: Number.isFinite(gain) ? `${gain >= 0 ? '+' : ''}${formatValue(gain, 3)}${needed ? '' : ' (not needed)'}` : '' })));
    }
    table.append(body);
    return table;
  }

  runBtn.addEventListener('click', async () => {
    let request;
    try {
      request = fixRequest({ metric: metric.value, comparison: comparison.value, bound: bound.value, prefer: prefer.value,
        max_nodes: maxNodes.value, candidates: candidates.value, data_num: dataNum.value, export: exportFor.value });
    } catch (err) {
      state.set('error', err.message);
      return;
    }
    // A new search replaces the last one's result, whatever its outcome.
    steps.replaceChildren();
    last = null;
    check.refresh();
    applyBtn.disabled = true;
    showOutcome(null);
    details.hidden = false;
    stepsSummary.textContent = 'Search steps (running)';
    mine = true;
    element.setAttribute('data-state', 'running');
    try {
      const doc2 = await runner.run('analysis', request, 'Fix');
      // Cancelled (null: the worker was stopped; or the core's "cancelled": true): no result to show.
      if (doc2?.fix && !doc2.cancelled) {
        last = { fix: doc2.fix, config: doc2.config ?? null, options: doc2.options?.fix };
        showOutcome(doc2);
        applyBtn.disabled = !last.config;
        check.refresh();
        element.setAttribute('data-state', doc2.fix.reached ? 'reached' : 'not-reached');
      } else {
        outcome.append(el(doc, 'p', { class: 'ptq-fix-message', text: 'Cancelled: no configuration was found. Press "Find a fix" to search again.' }));
        element.setAttribute('data-state', 'cancelled');
      }
    } catch {
      element.setAttribute('data-state', 'error'); // the runner put the message in state 'error'
    } finally {
      mine = false;
    }
  });
  cancelBtn.addEventListener('click', () => runner.cancel());
  applyBtn.addEventListener('click', () => {
    if (last?.config) intoWhatIf(state, show, () => whatIf.applyFix(last.config, last.fix.nodes ?? null));
  });

  // A new model: the last fix belonged to the previous one.
  offs.push(state.on('graph', (g, prev) => {
    if (g === prev) return;
    last = null;
    check.refresh();
    applyBtn.disabled = true;
    steps.replaceChildren();
    showOutcome(null);
    details.open = false;
    element.setAttribute('data-state', 'idle');
  }));
  offs.push(runner.on((ev) => {
    if (ev.type === 'start') runBtn.disabled = true;
    if (!mine) {
      if (ev.type === 'done' || ev.type === 'error') runBtn.disabled = false;
      return;
    }
    if (ev.type === 'start') {
      cancelBtn.disabled = false;
      bar.removeAttribute('value');
      progress.textContent = 'Fix: starting…';
    } else if (ev.type === 'item') {
      // The phase and its share done (the ranking, the pruning and the "without" runs have a known
      // count; the search steps do not: the bar then runs without a value).
      const p = phaseProgress(ev.event);
      if (p.total) {
        bar.max = p.total;
        bar.value = p.done;
      } else bar.removeAttribute('value');
      progress.textContent = `Fix: ${p.text}…`;
      // The evaluations, listed under "Search steps" (the ranking's candidates are not steps).
      if (ev.event?.row) steps.append(el(doc, 'li', { class: 'ptq-name', text: stepText(ev.event) }));
    } else if (ev.type === 'done' || ev.type === 'error') {
      runBtn.disabled = false;
      cancelBtn.disabled = true;
      if (ev.type === 'done' && !ev.cancelled) {
        bar.max = 1;
        bar.value = 1;
      }
      const secs = ev.elapsedMs !== undefined ? ` in ${Math.max(1, Math.round(ev.elapsedMs / 1000))} s` : '';
      progress.textContent = ev.type === 'error' ? 'Fix: failed' : ev.cancelled ? 'Fix: cancelled' : `Fix: done${secs}`;
    }
  }));

  return {
    element,
    dispose() {
      offs.forEach((off) => off());
      exporter.dispose();
      check.dispose();
      element.remove();
    },
  };
}
