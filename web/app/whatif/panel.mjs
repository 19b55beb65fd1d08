// The what-if panel: set the selected node (a normal node or a calibration node, or the set picked on
// the graph) to float or a qtype the core offers (int8, uint8, int16, uint16), or give its quantizers
// new thresholds (a method of the core's, or values typed); the model outputs' five metrics against the float model (per
// output and their mean over the chosen samples) before and after the last change, side by side; the
// list of changes with undo, "as calibrated" and "all float"; save / open the configuration file;
// each node's own and accumulated error (heat layers) and their chart along a path from an input to an
// output, with "go to the first node whose accumulated error crosses X"; export of the configuration
// for the toolchain. "Held-out samples" splits the samples as the searches do (§13.4) and shows the
// held-out samples' numbers beside the tuning ones. Mounted by the app's dock and by the Netron plugin (host-specific: `hooks`).
import { el, selectValue } from '../analysis/forms.mjs';
import { METRICS } from '../analysis/requests.mjs';
import { ACTIONS, BASES, THRESHOLD, changeText, checkDocument } from './config.mjs';
import { THRESHOLD_METHODS, optionDefault } from '../../pipeline/catalog.mjs';
import { findPath, pathSeries, firstCrossing } from './path.mjs';
import { mountConfigExport } from './export.mjs';
import { mountOnnxruntimeCheck } from './onnxruntime_view.mjs';
import { checkOptions } from '../../pipeline/onnxruntime_check.mjs';
import { renderAccError } from '../../charts/acc_error.mjs';
import { formatValue, toNumber } from '../../charts/format.mjs';
import { worseDirection } from '../../charts/heat_scale.mjs';
import { download } from '../export/download.mjs';
import { samplesNote } from '../../pipeline/result.mjs';
import { coreOption } from './defaults.mjs';

// What the measure select shows for the core's choices of node_errors' measure.
const MEASURE_TEXT = { output: 'at node outputs', converter: 'as the Horizon converter log' };

export { selectValue };

// Puts a configuration into the what-if view (put: the controller call) and shows that view; a
// refusal goes to the page's error line. The fix's Apply, a hint's Apply and a method's Open use it.
export async function intoWhatIf(state, show, put) {
  try {
    await put();
    show('whatif');
  } catch (err) {
    state.set('error', err.message);
  }
}

const valueName = (v) => (typeof v === 'string' ? v : v?.name);
const baseName = (state) => String(state.get('modelName') ?? 'model').replace(/\.onnx$/i, '') || 'model';

// "+0.0012" / "-3.1e-5"; '' when either side is missing.
function deltaText(a, b) {
  const x = toNumber(a);
  const y = toNumber(b);
  if (a === undefined || b === undefined || a === null || b === null) return '';
  if (x === y) return '0';
  const d = y - x;
  return Number.isNaN(d) ? 'nan' : `${d > 0 ? '+' : ''}${formatValue(d, 4)}`;
}

// "better" / "worse" class of a change for `metric` (its direction).
function changeClass(metric, a, b) {
  const d = toNumber(b) - toNumber(a);
  if (!Number.isFinite(d) || d === 0) return '';
  let lowerWorse;
  try {
    lowerWorse = worseDirection(metric) === 'lower';
  } catch {
    return '';
  }
  return (d < 0) === lowerWorse ? 'ptq-worse' : 'ptq-better';
}

// The held-out samples of a what_if section ({samples, mean}), or null.
const heldOut = (section) => (section?.held_out?.mean ? section.held_out : null);

/**
 * Before / after table of one what_if section pair: one <table> per output and one for the mean,
 * rows = the five metrics, columns = before (the starting configuration: `startLabel`), after (the
 * current one), change. `samples`: what they were computed on ("6 of 6 samples"), in each caption.
 * With held-out samples (what_if's option held_out), the mean's table also has their before and after
 * beside (data-held-out), and its caption names both sets.
 */
export function renderBeforeAfter(container, before, after, { startLabel = 'as calibrated', samples = '' } = {}) {
  const doc = container.ownerDocument;
  container.replaceChildren();
  if (!after) {
    container.append(el(doc, 'p', { class: 'ptq-empty', text: 'Make a change (or press "As calibrated") to compute the outputs against the float model.' }));
    return;
  }
  const groups = [['mean over outputs', after.mean, before?.mean], ...Object.entries(after.outputs ?? {}).map(([name, m]) => [name, m, before?.outputs?.[name]])];
  const held = heldOut(after);
  const heldBefore = heldOut(before);
  const heldNote = held ? ` · held out: ${held.samples.length} (${held.samples.join(', ')})` : '';
  const numberCells = (metric, was, now) => [
    el(doc, 'td', { class: 'num', 'data-value': String(was?.[metric] ?? ''), text: was ? formatValue(was[metric]) : '–' }),
    el(doc, 'td', { class: 'num', 'data-value': String(now[metric]), text: formatValue(now[metric]) }),
    el(doc, 'td', { class: `num ${changeClass(metric, was?.[metric], now[metric])}`.trim(), text: was ? deltaText(was[metric], now[metric]) : '' }),
  ];
  groups.forEach(([name, now, was], i) => {
    if (!now) return;
    const withHeld = i === 0 && held;
    const table = el(doc, 'table', { class: 'ptq-whatif-table', 'data-output': name });
    const tuning = withHeld ? `tuning: ${samples}` : samples;
    table.append(el(doc, 'caption', { text: `${name}${tuning ? ` · ${tuning}` : ''}${withHeld ? heldNote : ''}`, title: name }));
    const head = el(doc, 'tr', {}, el(doc, 'th', { text: 'metric' }),
      el(doc, 'th', { text: withHeld ? 'before (tuning)' : 'before', title: `the starting configuration: ${startLabel}` }),
      el(doc, 'th', { text: withHeld ? 'after (tuning)' : 'after', title: 'with the changes in effect' }), el(doc, 'th', { text: 'change' }));
    if (withHeld) {
      head.append(el(doc, 'th', { text: 'before (held out)', title: 'the starting configuration on the held-out samples' }),
        el(doc, 'th', { text: 'after (held out)', title: 'the changes in effect on the held-out samples' }), el(doc, 'th', { text: 'change' }));
    }
    table.append(el(doc, 'thead', {}, head));
    const body = el(doc, 'tbody');
    for (const metric of Object.keys(now)) {
      const tr = el(doc, 'tr', { 'data-metric': metric });
      tr.append(el(doc, 'th', { text: metric }), ...numberCells(metric, was, now));
      if (withHeld) {
        const cells = numberCells(metric, heldBefore?.mean ?? null, held.mean);
        cells.forEach((c) => c.setAttribute('data-held-out', 'true'));
        tr.append(...cells);
      }
      body.append(tr);
    }
    table.append(body);
    container.append(table);
  });
}

/**
 * mountWhatIfPanel(root, state, whatIf, runner, hooks?) -> {element, dispose()}
 * whatIf: controller.mjs's controller; runner: the host's analysis runner (exports);
 * hooks.focus(node): show a node on the host's graph (default: state 'focus');
 * hooks.save(name, data, type): files (default: a browser download).
 */
export function mountWhatIfPanel(root, state, whatIf, runner, hooks = {}) {
  const doc = root.ownerDocument;
  const focus = hooks.focus ?? ((node) => state.set('focus', node));
  const save = hooks.save ?? ((name, data, type) => download(doc, name, data, type));
  const offs = [];
  const guard = (fn) => async (...args) => {
    try {
      await fn(...args);
    } catch (err) {
      state.set('error', err.message ?? String(err));
    }
  };

  // --- what to change ---
  const targetText = el(doc, 'span', { class: 'ptq-whatif-targets ptq-name' });
  const usePicked = el(doc, 'input', { type: 'checkbox', class: 'ptq-whatif-use-picked' });
  const usePickedLabel = el(doc, 'label', {}, usePicked, doc.createTextNode(' the picked set'));
  const targets = () => {
    const picked = [...(state.get('picked') ?? [])];
    if (usePicked.checked && picked.length) return picked;
    const sel = state.get('selection');
    return sel ? [sel] : [];
  };
  const showTargets = () => {
    const t = targets();
    targetText.textContent = t.length ? t.join(', ') : 'select a node on the graph';
    targetText.title = t.join('\n');
    usePickedLabel.lastChild.textContent = ` the picked set (${state.get('picked')?.size ?? 0})`;
    for (const b of actionButtons) b.disabled = !t.length;
  };
  const actionButtons = ACTIONS.map((action) => {
    const b = el(doc, 'button', { type: 'button', class: 'ptq-whatif-action', 'data-action': action, text: `→ ${action}` });
    b.addEventListener('click', guard(() => whatIf.add(targets(), action)));
    return b;
  });
  // → threshold: a method of the core's (describe().threshold_methods) or the values typed.
  const thresholdMethod = el(doc, 'select', { class: 'ptq-whatif-threshold-method', 'aria-label': 'how the threshold is chosen' },
    ...THRESHOLD_METHODS.map((m) => el(doc, 'option', { value: m.name, text: m.name, title: m.doc })),
    el(doc, 'option', { value: 'value', text: 'value…', title: 'the thresholds typed: one, one per channel, or min, max of an asymmetric node' }));
  const percentile = el(doc, 'input', { type: 'number', step: 'any', min: 0, max: 100, class: 'ptq-whatif-threshold-percentile', 'aria-label': 'percentile',
    value: String(optionDefault('calibration_methods', 'percentiles')?.[0] ?? 99.99), title: 'percentile of |x|' });
  const perChannel = el(doc, 'input', { type: 'checkbox', class: 'ptq-whatif-threshold-per-channel' });
  const perChannelLabel = el(doc, 'label', { title: 'per channel along the node\'s axis (else the node keeps its granularity)' }, perChannel, doc.createTextNode(' per channel'));
  const thresholdValue = el(doc, 'input', { type: 'text', class: 'ptq-whatif-threshold-value', placeholder: 'e.g. 0.4', 'aria-label': 'threshold values' });
  const thresholdButton = el(doc, 'button', { type: 'button', class: 'ptq-whatif-action', 'data-action': THRESHOLD, text: '→ threshold' });
  const showThresholdFields = () => {
    percentile.hidden = thresholdMethod.value !== 'percentile';
    thresholdValue.hidden = thresholdMethod.value !== 'value';
    perChannelLabel.hidden = thresholdMethod.value === 'value';
  };
  thresholdMethod.addEventListener('change', showThresholdFields);
  const thresholdParams = () => {
    if (thresholdMethod.value === 'value') {
      const parts = thresholdValue.value.split(/[\s,;]+/).filter(Boolean);
      if (!parts.length) throw new Error('what-if: type the threshold value(s) first');
      return { value: parts.map(Number) };
    }
    return { method: thresholdMethod.value, ...(thresholdMethod.value === 'percentile' ? { percentile: Number(percentile.value) } : {}), ...(perChannel.checked ? { per_channel: true } : {}) };
  };
  thresholdButton.addEventListener('click', guard(() => whatIf.add(targets(), THRESHOLD, thresholdParams())));
  actionButtons.push(thresholdButton);
  showThresholdFields();

  // --- options ---
  const metric = el(doc, 'select', { class: 'ptq-whatif-metric', 'aria-label': 'metric of the per-node errors' },
    ...METRICS.map((m) => el(doc, 'option', { value: m, text: m })));
  const dataNum = el(doc, 'input', { type: 'number', min: 1, class: 'ptq-whatif-data-num', placeholder: 'all', 'aria-label': 'number of samples (data_num)', title: 'data_num' });
  const dataCount = el(doc, 'span', { class: 'ptq-hint ptq-whatif-sample-count' });
  const showCount = () => {
    const n = state.get('samples')?.count;
    dataCount.textContent = n ? `empty = all ${n} samples` : 'empty = all samples';
  };
  const initial = state.get('whatIf')?.options ?? {};
  if (initial.metric) selectValue(metric, initial.metric);
  if (initial.data_num) dataNum.value = String(initial.data_num); // 0 = every sample: left empty
  // The samples split into tuning and held-out ones (what_if's held_out): both sets' numbers side by side.
  const heldOutBox = el(doc, 'input', { type: 'checkbox', class: 'ptq-whatif-held-out', checked: Boolean(initial.held_out) });
  const heldOutLabel = el(doc, 'label', { title: 'the 1st, 3rd, ... chosen samples as tuning samples, the 2nd, 4th, ... held out and shown beside' },
    heldOutBox, doc.createTextNode(' held-out samples'));
  heldOutBox.addEventListener('change', guard(() => whatIf.setOptions({ held_out: heldOutBox.checked })));
  metric.addEventListener('change', guard(() => whatIf.setOptions({ metric: metric.value })));
  dataNum.addEventListener('change', guard(() => {
    const v = dataNum.value.trim();
    const n = v === '' ? null : Number(v);
    if (n !== null && !(Number.isInteger(n) && n >= 1)) throw new Error(`what-if: data_num must be a positive integer or empty for all samples (got '${v}')`);
    return whatIf.setOptions({ data_num: n ?? 0 }); // 0: every sample
  }));

  // --- changes ---
  const changes = el(doc, 'ol', { class: 'ptq-whatif-changes' });
  const baseLine = el(doc, 'div', { class: 'ptq-whatif-base' });
  const undo = el(doc, 'button', { type: 'button', class: 'ptq-whatif-undo', text: 'Undo' });
  undo.addEventListener('click', guard(() => whatIf.undo()));
  const resets = Object.entries({ stored: 'As calibrated', all_off: 'All float' }).map(([base, text]) => {
    const b = el(doc, 'button', { type: 'button', class: 'ptq-whatif-reset', 'data-base': base, text });
    b.addEventListener('click', guard(() => whatIf.reset(base)));
    return b;
  });
  const saveBtn = el(doc, 'button', { type: 'button', class: 'ptq-whatif-save', text: 'Save config…' });
  saveBtn.addEventListener('click', guard(() => save(`${baseName(state)}.config.json`, `${JSON.stringify(whatIf.resolvedDocument(), null, 2)}\n`, 'application/json')));
  const openInput = el(doc, 'input', { type: 'file', accept: '.json,application/json', class: 'ptq-whatif-open-input', hidden: true });
  const openBtn = el(doc, 'button', { type: 'button', class: 'ptq-whatif-open', text: 'Open config…' });
  openBtn.addEventListener('click', () => openInput.click());
  openInput.addEventListener('change', guard(async () => {
    const file = openInput.files?.[0];
    openInput.value = '';
    if (!file) return;
    let parsed;
    try {
      parsed = JSON.parse(await file.text());
    } catch (err) {
      throw new Error(`${file.name}: not valid JSON (${err.message})`);
    }
    await whatIf.open(checkDocument(parsed, file.name));
  }));

  // --- numbers ---
  const status = el(doc, 'div', { class: 'ptq-whatif-status', 'aria-live': 'polite' });
  const numbers = el(doc, 'div', { class: 'ptq-whatif-numbers' });

  // --- own / accumulated errors along a path ---
  const errorsBtn = el(doc, 'button', { type: 'button', class: 'ptq-node-errors-run', text: 'Own / accumulated errors' });
  // Where they are measured (node_errors' option measure, the core's choices): at each node's output, or
  // as the Horizon converter log measures its cosine, so that they compare with an opened log.
  const measure = coreOption('node_errors', 'measure');
  const measureSel = el(doc, 'select', { class: 'ptq-node-errors-measure', 'aria-label': 'where the errors are measured' },
    ...(measure?.choices ?? []).map((m) => el(doc, 'option', { value: m, text: MEASURE_TEXT[m] ?? m })));
  if (measure?.default) selectValue(measureSel, measure.default);
  measureSel.hidden = !measure?.choices?.length;
  errorsBtn.addEventListener('click', guard(() => whatIf.nodeErrors(measure ? { measure: measureSel.value } : {})));
  const inputSel = el(doc, 'select', { class: 'ptq-path-input', 'aria-label': 'path input' });
  const outputSel = el(doc, 'select', { class: 'ptq-path-output', 'aria-label': 'path output' });
  const through = el(doc, 'input', { type: 'checkbox', class: 'ptq-path-through' });
  const bound = el(doc, 'input', { type: 'number', step: 'any', class: 'ptq-path-bound', value: '0.999', 'aria-label': 'X' });
  const gotoBtn = el(doc, 'button', { type: 'button', class: 'ptq-path-goto', text: 'Go to the first node crossing X' });
  const pathNote = el(doc, 'div', { class: 'ptq-path-note', 'aria-live': 'polite' });
  const pathChart = el(doc, 'div', { class: 'ptq-path-chart' });
  let series = null;

  function drawPath() {
    pathChart.replaceChildren();
    series = null;
    const graph = state.get('graph');
    const ne = state.get('results')?.node_errors;
    if (!graph || !ne) {
      pathNote.textContent = ne ? '' : 'Press "Own / accumulated errors" to chart the errors along a path.';
      return;
    }
    let path;
    try {
      path = findPath(graph, { input: inputSel.value || undefined, output: outputSel.value || undefined, through: through.checked ? [...(state.get('picked') ?? [])] : [] });
    } catch (err) {
      pathNote.textContent = err.message;
      return;
    }
    series = pathSeries(ne, path);
    pathNote.textContent = `${series.x.length} nodes on the path (${ne.metric})`;
    if (!series.x.length) return;
    const x = Number(bound.value);
    const curves = [{ name: 'accumulated', x: series.x, y: series.accumulated }, { name: 'own', x: series.x, y: series.own }];
    if (Number.isFinite(x)) curves.push({ name: `X = ${x}`, x: series.x, y: series.x.map(() => x) });
    const width = Math.max(320, Math.min(900, pathChart.clientWidth || root.clientWidth || 640));
    renderAccError(pathChart, { title: 'error along the path', metric: ne.metric, average_mode: false, curves }, {
      width, height: 320, onFocus: (node) => {
        state.set('selection', node);
        focus(node);
      },
    });
  }
  gotoBtn.addEventListener('click', guard(() => {
    if (!series) drawPath();
    if (!series?.x.length) throw new Error('path: compute the own / accumulated errors first, then pick a path');
    const x = Number(bound.value);
    if (!Number.isFinite(x)) throw new Error(`path: X must be a number (got '${bound.value}')`);
    const hit = firstCrossing(series, x);
    if (!hit) {
      pathNote.textContent = `No node on this path has an accumulated ${series.metric} past ${x}.`;
      return;
    }
    pathNote.textContent = `First crossing: ${hit.node} (node ${hit.index + 1} of ${series.x.length}, accumulated ${formatValue(hit.value)})`;
    pathNote.setAttribute('data-node', hit.node);
    state.set('selection', hit.node);
    focus(hit.node);
  }));
  for (const c of [inputSel, outputSel, through, bound]) c.addEventListener('change', drawPath);

  function fillPathEnds() {
    const graph = state.get('graph');
    const fill = (sel, list) => {
      const keep = sel.value;
      sel.replaceChildren(...list.map((n) => el(doc, 'option', { value: n, text: n, selected: n === keep })));
    };
    fill(inputSel, (graph?.inputs ?? []).map(valueName).filter((n) => n && !graph.values?.[n]?.initializer));
    fill(outputSel, (graph?.outputs ?? []).map(valueName).filter(Boolean));
  }

  // --- the same numbers by onnxruntime ---
  const checkHost = el(doc, 'div', { class: 'ptq-whatif-check' });
  const check = mountOnnxruntimeCheck(checkHost, state, runner, { getRequest: () => {
    const s = state.get('whatIf');
    return s?.after ? { config: whatIf.resolvedDocument(), options: checkOptions(s.options) } : null;
  } });

  // --- export ---
  const exportHost = el(doc, 'div', { class: 'ptq-whatif-export' });
  const exporter = mountConfigExport(exportHost, state, runner, { getConfig: () => whatIf.resolvedDocument(), save, label: 'Export this configuration' });

  const element = el(doc, 'div', { class: 'ptq-whatif' },
    el(doc, 'div', { class: 'ptq-field' }, el(doc, 'label', { text: 'Change' }), targetText, usePickedLabel),
    el(doc, 'div', { class: 'ptq-field ptq-whatif-actions' }, el(doc, 'label', { text: 'to' }), ...actionButtons.slice(0, -1)),
    el(doc, 'div', { class: 'ptq-field ptq-whatif-threshold' }, el(doc, 'label', { text: 'or', title: 'new thresholds for its quantizers (§13.2)' }),
      thresholdMethod, percentile, perChannelLabel, thresholdValue, thresholdButton),
    el(doc, 'div', { class: 'ptq-field' }, el(doc, 'label', { text: 'Node metric', title: 'metric of the per-node errors (metric)' }), metric),
    el(doc, 'div', { class: 'ptq-field' }, el(doc, 'label', { text: 'Samples', title: 'data_num' }), dataNum, dataCount, heldOutLabel),
    el(doc, 'div', { class: 'ptq-whatif-history' }, baseLine, changes,
      el(doc, 'div', { class: 'ptq-whatif-buttons' }, undo, ...resets, saveBtn, openBtn, openInput)),
    status, numbers, checkHost,
    el(doc, 'details', { class: 'ptq-whatif-path', open: true },
      el(doc, 'summary', { text: 'Where the error starts' }),
      el(doc, 'div', { class: 'ptq-whatif-buttons' }, errorsBtn, measureSel),
      el(doc, 'div', { class: 'ptq-field' }, el(doc, 'label', { text: 'Path' }), inputSel, el(doc, 'span', { text: '→' }), outputSel,
        el(doc, 'label', {}, through, doc.createTextNode(' through the picked nodes'))),
      el(doc, 'div', { class: 'ptq-field' }, el(doc, 'label', { text: 'X' }), bound, gotoBtn),
      pathNote, pathChart),
    exportHost);
  root.append(element);

  function draw() {
    const s = state.get('whatIf');
    if (!s) return;
    baseLine.textContent = `Start: ${BASES[s.base] ?? s.base}${s.changes.length ? '' : ' (no changes)'}`;
    changes.replaceChildren(...s.changes.map((c, i) => el(doc, 'li', { 'data-index': String(i), class: 'ptq-name', title: changeText(c), text: changeText(c) })));
    undo.disabled = !s.canUndo;
    status.textContent = s.busy ? `Computing ${s.busy}…` : s.after ? `Changes in effect: ${s.after.changes}` : '';
    element.setAttribute('data-busy', s.busy ? 'true' : 'false');
    if (s.after !== lastAfter) {
      lastAfter = s.after;
      // data-runs: what-if answers for this model (for scripts and tests); a new model starts at 0.
      runs = s.after ? runs + 1 : 0;
      element.setAttribute('data-runs', String(runs));
      renderBeforeAfter(numbers, s.before?.what_if ?? null, s.after?.what_if ?? null,
        { startLabel: BASES[s.base] ?? s.base, samples: samplesNote(s.after, 'what_if') });
    }
    if (s.options?.metric && metric.value !== s.options.metric) selectValue(metric, s.options.metric);
    heldOutBox.checked = Boolean(s.options?.held_out);
    check.refresh();
  }
  let lastAfter;
  let runs = 0;
  let errorRuns = 0; // node_errors answers for this model (data-node-errors, for scripts and tests)
  renderBeforeAfter(numbers, null, null);
  offs.push(state.on('whatIf', draw));
  offs.push(state.on('selection', showTargets), state.on('picked', showTargets), state.on('samples', showCount));
  showCount();
  usePicked.addEventListener('change', showTargets);
  offs.push(state.on('graph', () => {
    errorRuns = 0;
    element.setAttribute('data-node-errors', '0');
    fillPathEnds();
    drawPath();
  }));
  offs.push(state.on('results', (r, prev) => {
    if (r?.node_errors === prev?.node_errors) return;
    if (r?.node_errors) element.setAttribute('data-node-errors', String(++errorRuns));
    drawPath();
  }));
  fillPathEnds();
  showTargets();
  draw();
  drawPath();

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
