// The analyses panel: one tab per analysis (+ Run all), its form, Run / Cancel, a progress bar with
// ETA, and the analysis' results (tables and charts) as they stream in. Mounted by the app's dock
// ("Analyses", index.mjs) and by the Netron plugin (plugin/ui/panel.mjs): everything host-specific
// comes in through `state`, `runner` and `hooks`.
import { ANALYSES, buildRequest, runAllOptions, topK } from './requests.mjs';
import { FORMS, buildForm, el, readForm } from './forms.mjs';
import { progressText, formatDuration } from './runner.mjs';
import { createResultView } from './views.mjs';
import { calibrationSetResolver } from '../../pipeline/relations.mjs';
import { CONVOLUTION_MODES, RELATION_RULES, needsExecution } from '../../pipeline/catalog.mjs';

const TABS = [...ANALYSES, { id: 'runall', title: 'Run all' }];
// The core's convolution modes (the CLI's --conv values), the default first.
const CONV_TITLE = `${CONVOLUTION_MODES.map((m) => `${m.name}: ${m.doc}`).join('. ')} (docs/compatibility.md)`;
// The core's relation rules (the CLI's --relations values), the default first.
const RELATIONS_TITLE = `By the toolchain version that made the model. ${RELATION_RULES.map((r) => `${r.name}: ${r.doc}`).join('. ')}`;

/**
 * mountAnalysesPanel(root, state, runner, hooks?) -> {element, select(id), dispose()}
 * state: a web/app/state.mjs store (reads results, graph, picked; writes error, heatSettings,
 * selection); runner: web/app/analysis/runner.mjs; hooks.focus(nodeName): show a node on the host's
 * graph (default: state 'focus', which the app's graph view centres).
 */
export function mountAnalysesPanel(root, state, runner, hooks = {}) {
  const doc = root.ownerDocument;
  let current = 'sensitivity';
  const forms = new Map();
  const offs = [];
  const renderView = createResultView(state, { focus: hooks.focus });

  const tabs = el(doc, 'nav', { class: 'ptq-analysis-tabs', role: 'tablist' });
  const formHost = el(doc, 'div', { class: 'ptq-analysis-forms' });
  const runBtn = el(doc, 'button', { type: 'button', class: 'ptq-run', text: 'Run' });
  const cancelBtn = el(doc, 'button', { type: 'button', class: 'ptq-cancel', text: 'Cancel', disabled: true });
  const bar = el(doc, 'progress', { class: 'ptq-progress', max: 1, value: 0 });
  const barText = el(doc, 'span', { class: 'ptq-progress-text', 'aria-live': 'polite' });
  const output = el(doc, 'div', { class: 'ptq-analysis-output' });
  // Why the current analysis cannot run, or what it can do, on a model with unsupported ops.
  const limitNote = el(doc, 'p', { class: 'ptq-limited', hidden: true });
  // The workers' convolution kernels (state 'convolutionMode'; a change makes a new worker pool).
  const convSelect = el(doc, 'select', { class: 'ptq-conv-mode', name: 'convolution', title: CONV_TITLE });
  for (const { name: value } of CONVOLUTION_MODES) {
    convSelect.append(el(doc, 'option', { value, text: value, selected: value === (state.get('convolutionMode') ?? CONVOLUTION_MODES[0].name) }));
  }
  convSelect.addEventListener('change', () => state.set('convolutionMode', convSelect.value));
  const convLabel = el(doc, 'label', { class: 'ptq-conv-label' }, doc.createTextNode('Convolutions '), convSelect);
  // How calibration nodes relate to the nodes reading them (state 'relationRules': the host reads the
  // graph again and the runner makes a new worker pool when it changes).
  const relationsSelect = el(doc, 'select', { class: 'ptq-relations', name: 'relations', title: RELATIONS_TITLE });
  for (const { name: value } of RELATION_RULES) {
    relationsSelect.append(el(doc, 'option', { value, text: value, selected: value === (state.get('relationRules') ?? RELATION_RULES[0].name) }));
  }
  relationsSelect.addEventListener('change', () => state.set('relationRules', relationsSelect.value));
  const relationsLabel = el(doc, 'label', { class: 'ptq-relations-label' }, doc.createTextNode('Relations '), relationsSelect);
  const element = el(doc, 'div', { class: 'ptq-analyses' },
    tabs, formHost, el(doc, 'div', { class: 'ptq-run-row' }, limitNote, runBtn, cancelBtn, bar, barText, convLabel, relationsLabel), output);
  root.append(element);

  const actions = (form) => ({
    picked(name) {
      form.querySelector(`[name="${name}"]`).value = [...(state.get('picked') ?? [])].join(', ');
    },
    topk(name) {
      const k = Number(form.querySelector('[name="topk"]')?.value) || 5;
      const result = state.get('results');
      const type = ['activation', 'weight', 'node'].find((t) => result?.sensitivity?.[t]);
      if (!type) {
        state.set('error', 'top-k: run a sensitivity analysis first (its most sensitive items fill this list)');
        return;
      }
      let items = topK(result, type, k);
      // Box plots take calibration nodes: normal nodes become their calibration sets (§1.9), as in runall.
      if (form.dataset.analysis === 'channelwise' && type === 'node') {
        const setOf = calibrationSetResolver(state.get('graph'));
        items = [...new Set(items.flatMap((n) => setOf(n)))];
      }
      form.querySelector(`[name="${name}"]`).value = items.join(', ');
    },
  });

  for (const tab of TABS) {
    const b = el(doc, 'button', { type: 'button', role: 'tab', 'data-analysis': tab.id, text: tab.title });
    b.addEventListener('click', () => select(tab.id));
    tabs.append(b);
    const form = el(doc, 'form', { class: 'ptq-analysis-form', 'data-analysis': tab.id, hidden: true });
    form.addEventListener('submit', (e) => { e.preventDefault(); start(); });
    buildForm(form, FORMS[tab.id], actions(form));
    formHost.append(form);
    forms.set(tab.id, form);
  }

  function select(id) {
    current = id;
    for (const b of tabs.children) b.setAttribute('aria-selected', String(b.dataset.analysis === id));
    for (const [fid, f] of forms) f.hidden = fid !== id;
    showLimits();
    drawOutput();
  }

  // A model with ops the core cannot run (summary.unsupported): the analyses describe() says need a
  // run (needs_execution 'always', and Run all) are disabled with the reason; the others work on
  // weight calibration nodes.
  let running = false;
  function limitOf(id) {
    const unsupported = state.get('summary')?.unsupported ?? [];
    if (!unsupported.length) return null;
    const ops = [...new Set(unsupported.map((u) => u.op_type))].join(', ');
    if (id === 'runall' || needsExecution(id) === 'always') {
      return { blocked: true, text: `Not available: this analysis runs the model, which uses ops ptqscope does not support (${ops}).` };
    }
    return { blocked: false, text: `The model uses ops ptqscope does not support (${ops}): without running it, this analysis works on weight calibration nodes only (name them in nodes_list).` };
  }
  function showLimits() {
    for (const b of tabs.children) {
      const limit = limitOf(b.dataset.analysis);
      b.classList.toggle('ptq-tab-blocked', Boolean(limit?.blocked));
      if (limit?.blocked) b.title = limit.text;
      else b.removeAttribute('title');
    }
    const limit = limitOf(current);
    limitNote.hidden = !limit;
    limitNote.textContent = limit?.text ?? '';
    limitNote.classList.toggle('ptq-limited-blocked', Boolean(limit?.blocked));
    runBtn.disabled = running || Boolean(limit?.blocked);
  }

  function drawOutput() {
    const top = output.scrollTop; // rows streaming in must not scroll the user back up
    output.replaceChildren();
    renderView(output, current, state.get('results'));
    output.scrollTop = top;
  }

  async function start() {
    const form = forms.get(current);
    const values = readForm(form, FORMS[current]);
    let kind = 'analysis';
    let payload;
    try {
      if (current === 'runall') {
        kind = 'runall';
        payload = runAllOptions(values);
      } else {
        payload = buildRequest(current, values, state.get('picked'));
      }
    } catch (err) {
      state.set('error', err.message);
      return;
    }
    // The heatmap follows the sweep being run (it fills as its items finish).
    if (payload.analysis === 'sensitivity' || payload.analysis === 'leave_one_out') {
      const view = payload.analysis === 'leave_one_out' ? 'leave_one_out' : payload.options.node_type;
      state.set('heatSettings', { view, metric: payload.options.metrics[0], looType: payload.options.node_type });
    }
    try {
      await runner.run(kind, payload, TABS.find((t) => t.id === current).title);
    } catch {
      // runner put the message in state 'error' (the banner)
    }
  }

  runBtn.addEventListener('click', start);
  cancelBtn.addEventListener('click', () => runner.cancel());

  let stage = null;
  offs.push(runner.on((ev) => {
    if (ev.type === 'stage') stage = ev.stage;
    if (ev.type === 'start') {
      stage = null;
      running = true;
      runBtn.disabled = true;
      cancelBtn.disabled = false;
      bar.removeAttribute('value'); // indeterminate until the first progress
      barText.textContent = `${ev.label}: starting…`;
    } else if (ev.type === 'stage') {
      bar.removeAttribute('value');
      barText.textContent = `${ev.label}: ${ev.stage}${ev.detail ? ` (${ev.detail})` : ''}…`;
    } else if (ev.type === 'progress') {
      bar.max = ev.total || 1;
      bar.value = ev.done;
      barText.textContent = `${stage ? `${stage}: ` : ''}${progressText(ev)}`;
    } else if (ev.type === 'done' || ev.type === 'error') {
      running = false;
      showLimits();
      cancelBtn.disabled = true;
      bar.value = ev.type === 'done' && !ev.cancelled ? bar.max : bar.value || 0;
      barText.textContent = ev.type === 'error' ? `${ev.label}: failed`
        : `${ev.label}: ${ev.cancelled ? 'cancelled' : 'done'} in ${formatDuration(ev.elapsedMs)}`;
    }
  }));

  offs.push(state.on('results', () => drawOutput()));
  offs.push(state.on('summary', showLimits));
  const showPicked = () => {
    const n = state.get('picked')?.size ?? 0;
    for (const b of root.querySelectorAll('.ptq-use-picked')) b.textContent = `← picked (${n})`;
  };
  offs.push(state.on('picked', showPicked));
  showPicked();
  select(current);
  return {
    element,
    select,
    dispose() {
      offs.forEach((off) => off());
      element.remove();
    },
  };
}
