// The analyses panel: one tab per analysis (+ Run all), its form, Run / Cancel, a progress bar with
// ETA, and the analysis' results (tables and charts) as they stream in. Mounted by the app's dock
// ("Analyses", index.mjs) and by the Netron plugin (plugin/ui/panel.mjs): everything host-specific
// comes in through `state`, `runner` and `hooks`.
import { mountCalibrateBox, isFloatModel } from './calibrate_box.mjs';
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

// The node list an analysis needs, filled when left empty (the picked nodes, else the most sensitive
// items of the latest sweep); acc_error's is empty only when non_quantize_node is empty too.
const NODE_LIST_FIELD = { acc_error: 'quantize_node', distribution: 'nodes_list', channelwise: 'nodes_list' };
const DEFAULT_TOP_K = 5;
// The tabs that draw charts (redrawn at the new size when the output is resized).
const CHART_TABS = new Set(['acc_error', 'distribution', 'channelwise', 'stat_info', 'sensitivity_analysis']);

/**
 * mountAnalysesPanel(root, state, runner, hooks?) -> {element, select(id), dispose()}
 * state: a web/app/state.mjs store (reads results, graph, picked; writes error, heatSettings,
 * selection); runner: web/app/analysis/runner.mjs; hooks.focus(nodeName): show a node on the host's
 * graph (default: state 'focus', which the app's graph view centres); hooks.show(panelId): bring
 * another panel of the host into view ('whatif', 'fix': Run all's next steps; default: state
 * 'showPanel', which the app's dock and the plugin's dock follow); hooks.useCalibrated(name, bytes):
 * continue on a float model's calibrated model made in the panel (the page opens it, the plugin saves it).
 */
export function mountAnalysesPanel(root, state, runner, hooks = {}) {
  const doc = root.ownerDocument;
  let current = 'sensitivity';
  const forms = new Map();
  const offs = [];
  const show = hooks.show ?? ((id) => state.set('showPanel', id));
  const renderView = createResultView(state, {
    focus: hooks.focus, show, selectTab: (id) => TABS.some((t) => t.id === id) && select(id), chartSize: () => chartSize(),
  });

  const tabs = el(doc, 'nav', { class: 'ptq-analysis-tabs', role: 'tablist' });
  const formHost = el(doc, 'div', { class: 'ptq-analysis-forms' });
  const runBtn = el(doc, 'button', { type: 'button', class: 'ptq-run', text: 'Run' });
  const cancelBtn = el(doc, 'button', { type: 'button', class: 'ptq-cancel', text: 'Cancel', disabled: true });
  const bar = el(doc, 'progress', { class: 'ptq-progress', max: 1, value: 0 });
  const barText = el(doc, 'span', { class: 'ptq-progress-text', 'aria-live': 'polite' });
  // Beside Run: what a run was given when a node list was left empty, or why it could not start.
  const runNote = el(doc, 'p', { class: 'ptq-run-note', role: 'status', hidden: true });
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
    tabs, formHost, el(doc, 'div', { class: 'ptq-run-row' }, limitNote, runBtn, cancelBtn, bar, barText, runNote, convLabel, relationsLabel), output);
  root.append(element);
  // A float model: what it lacks, first in the panel while it is open, and its calibration made here.
  const calibrateBox = mountCalibrateBox(element, state, runner, { useCalibrated: hooks.useCalibrated ?? (() => {}) });
  element.prepend(calibrateBox.element);

  const actions = (form) => ({
    picked(name) {
      form.querySelector(`[name="${name}"]`).value = [...(state.get('picked') ?? [])].join(', ');
    },
    topk(name) {
      const top = topItems(form.dataset.analysis, Number(form.querySelector('[name="topk"]')?.value) || DEFAULT_TOP_K);
      if (!top) {
        showNote('top-k: run a sensitivity analysis first (its most sensitive items fill this list)', true);
        return;
      }
      form.querySelector(`[name="${name}"]`).value = top.items.join(', ');
    },
  });

  // The k most sensitive items of the latest sweep (results.sensitivity lists the latest request's
  // tables first) -> {type, items} | null. Box plots take calibration nodes: normal nodes become their
  // calibration sets (§1.9), as in runall.
  function topItems(analysis, k) {
    const result = state.get('results');
    const type = Object.keys(result?.sensitivity ?? {}).find((t) => Object.keys(result.sensitivity[t] ?? {}).length);
    if (!type) return null;
    let items = topK(result, type, k);
    if (analysis === 'channelwise' && type === 'node') {
      const setOf = calibrationSetResolver(state.get('graph'));
      items = [...new Set(items.flatMap((n) => setOf(n)))];
    }
    return { type, items };
  }

  // An empty node list: the picked nodes, else the top-k of the latest sweep, written into the field
  // -> what was used (for the note), or null when the list was given. Throws saying what is missing.
  function fillNodeList(analysis, form, values) {
    const field = NODE_LIST_FIELD[analysis];
    const empty = (name) => !String(values[name] ?? '').trim();
    if (!field || !empty(field) || (analysis === 'acc_error' && !empty('non_quantize_node'))) return null;
    const picked = [...(state.get('picked') ?? [])];
    const k = Number(values.topk) || DEFAULT_TOP_K;
    const top = picked.length ? null : topItems(analysis, k);
    const items = picked.length ? picked : top?.items ?? [];
    if (!items.length) {
      throw new Error(`${field} is empty: pick nodes on the graph (Ctrl/Shift+click) or type their names, or run a sensitivity sweep first (its ${k} most sensitive items are then used)`);
    }
    values[field] = items.join(', ');
    form.querySelector(`[name="${field}"]`).value = values[field];
    return `${field} was empty: ${picked.length ? `the ${items.length} picked node${items.length === 1 ? '' : 's'}` : `the ${items.length} most sensitive items of the ${top.type} sweep`}`;
  }

  function showNote(text, problem = false) {
    runNote.hidden = !text;
    runNote.textContent = text ?? '';
    runNote.classList.toggle('ptq-run-note-problem', problem);
    if (problem) {
      // Nothing ran: the progress line must not still report an earlier run.
      bar.value = 0;
      barText.textContent = '';
    }
  }

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
    if (id !== current) showNote(null); // the note was about the other tab's run
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
    if (isFloatModel(state)) return { blocked: true, text: 'Not available: a float model has no calibration nodes to analyse (see above).' };
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
    drawnSize = chartSize();
  }

  // Charts fill the output's visible area when it scrolls on its own (the page's dock, which the user
  // resizes): its width, and its height so that one chart is seen whole. A host where the output grows
  // with its content (the plugin's dock) keeps each chart's default size, scaled to the width by CSS.
  const CHART_MIN = { width: 320, height: 220 };
  function chartSize() {
    const style = doc.defaultView?.getComputedStyle?.(output);
    if (!style || style.overflowY === 'visible' || !output.clientHeight) return null;
    return { width: Math.max(CHART_MIN.width, output.clientWidth - 24), height: Math.max(CHART_MIN.height, output.clientHeight - 16) };
  }
  let drawnSize = null;
  let redraw = 0;
  const RESIZE_STEP = 8; // px: smaller changes keep the charts drawn
  if (typeof doc.defaultView?.ResizeObserver === 'function') {
    const observer = new doc.defaultView.ResizeObserver(() => {
      if (!CHART_TABS.has(current) || redraw) return;
      redraw = doc.defaultView.requestAnimationFrame(() => {
        redraw = 0;
        const size = chartSize();
        const moved = (a, b) => Math.abs((a?.width ?? 0) - (b?.width ?? 0)) >= RESIZE_STEP || Math.abs((a?.height ?? 0) - (b?.height ?? 0)) >= RESIZE_STEP;
        if (moved(size, drawnSize)) drawOutput();
      });
    });
    observer.observe(output);
    offs.push(() => observer.disconnect());
  }

  async function start() {
    const form = forms.get(current);
    const values = readForm(form, FORMS[current]);
    let kind = 'analysis';
    let payload;
    showNote(null);
    try {
      if (current === 'runall') {
        kind = 'runall';
        payload = runAllOptions(values);
      } else {
        showNote(fillNodeList(current, form, values));
        payload = buildRequest(current, values, state.get('picked'));
      }
    } catch (err) {
      // A form the run cannot start from: said beside the Run button, where the user looks.
      showNote(err.message, true);
      return;
    }
    // The heatmap follows the sweep being run (it fills as its items finish).
    if (payload.analysis === 'sensitivity' || payload.analysis === 'leave_one_out') {
      const view = payload.analysis === 'leave_one_out' ? 'leave_one_out' : payload.options.node_type;
      state.set('heatSettings', { ...state.get('heatSettings'), view, metric: payload.options.metrics[0], looType: payload.options.node_type });
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
  let staleRun = false; // the run in flight belongs to a model no longer open
  offs.push(runner.on((ev) => {
    if (ev.type === 'stage') stage = ev.stage;
    if (ev.type === 'start') {
      stage = null;
      staleRun = false;
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
      if (staleRun) {
        staleRun = false;
        return;
      }
      bar.value = ev.type === 'done' && !ev.cancelled ? bar.max : bar.value || 0;
      barText.textContent = ev.type === 'error' ? `${ev.label}: failed`
        : `${ev.label}: ${ev.cancelled ? 'cancelled' : 'done'} in ${formatDuration(ev.elapsedMs)}`;
    }
  }));

  // Another model: the last run's line and note belong to the previous one (a run still in flight is
  // cancelled by the runner; its end is not reported either).
  offs.push(state.on('modelBytes', (bytes, previous) => {
    if (bytes === previous) return;
    staleRun = running;
    showNote(null);
    bar.value = 0;
    barText.textContent = '';
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
      calibrateBox.dispose();
      element.remove();
    },
  };
}
