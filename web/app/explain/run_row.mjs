// One search's Run / Cancel row with its progress, for the Why and Calibration-methods panels: the
// request is built when pressed, run on the analyses' runner, and the final document handed to
// `onResult` (a cancelled run hands nothing). The panel's element carries data-state (idle, running,
// done, cancelled, error) for the host's scripts and tests.
import { el } from '../analysis/forms.mjs';
import { progressText, formatDuration } from '../analysis/runner.mjs';
import { coreOption } from '../whatif/defaults.mjs';

// The samples field of a search (data_num): the page's default is every sample (interactive_default
// 0, left empty), split into tuning and held-out samples by the core (§13.4).
export function dataNumField(doc, analysis) {
  const d = coreOption(analysis, 'data_num')?.default;
  return el(doc, 'input', { name: 'data_num', type: 'number', min: 1, placeholder: 'all', value: d ? String(d) : '', 'aria-label': 'number of samples' });
}

// The field's value as the request's data_num: empty = every sample (0). Throws naming the field.
export function readDataNum(input) {
  const v = input.value.trim();
  if (!v) return 0;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new Error(`data_num must be a positive integer or empty for all samples (got '${v}')`);
  return n;
}

/**
 * mountRunRow(doc, runner, {label, runClass, request(), onStart(), onResult(doc)}) ->
 *   {element, bindState(panelElement), dispose()}
 * request() may throw: its message goes to state 'error' through onError (default: thrown away).
 */
export function mountRunRow(doc, runner, { label, runClass, request, onStart = () => {}, onResult, onError = () => {} }) {
  const runBtn = el(doc, 'button', { type: 'button', class: `ptq-search-run ${runClass}`, text: label });
  const cancelBtn = el(doc, 'button', { type: 'button', class: 'ptq-search-cancel', text: 'Cancel', disabled: true });
  const bar = el(doc, 'progress', { class: 'ptq-search-progress', max: 1, value: 0 });
  const text = el(doc, 'span', { class: 'ptq-search-progress-text', 'aria-live': 'polite' });
  const element = el(doc, 'div', { class: 'ptq-search-row' }, runBtn, cancelBtn, bar, text);
  let panel = null;
  let mine = false;
  const setState = (s) => panel?.setAttribute('data-state', s);

  runBtn.addEventListener('click', async () => {
    let payload;
    try {
      payload = request();
    } catch (err) {
      onError(err);
      return;
    }
    mine = true;
    onStart();
    setState('running');
    try {
      const doc2 = await runner.run('analysis', payload, label);
      if (doc2 && !doc2.cancelled) {
        onResult(doc2);
        setState('done');
      } else setState('cancelled');
    } catch {
      setState('error'); // the runner put the message in state 'error'
    } finally {
      mine = false;
    }
  });
  cancelBtn.addEventListener('click', () => runner.cancel());

  const off = runner.on((ev) => {
    if (ev.type === 'start') runBtn.disabled = true;
    if (ev.type === 'done' || ev.type === 'error') runBtn.disabled = false;
    if (!mine) return;
    if (ev.type === 'start') {
      cancelBtn.disabled = false;
      bar.removeAttribute('value');
      text.textContent = `${label}: starting…`;
    } else if (ev.type === 'progress') {
      bar.max = ev.total || 1;
      bar.value = ev.done;
      text.textContent = `${label}: ${progressText(ev)}`;
    } else if (ev.type === 'done' || ev.type === 'error') {
      cancelBtn.disabled = true;
      if (ev.type === 'done' && !ev.cancelled) {
        bar.max = 1;
        bar.value = 1;
      }
      text.textContent = ev.type === 'error' ? `${label}: failed` : `${label}: ${ev.cancelled ? 'cancelled' : 'done'} in ${formatDuration(ev.elapsedMs)}`;
    }
  });
  return {
    element,
    bindState(p) {
      panel = p;
    },
    dispose: off,
  };
}

// A new model: the panel's last result belonged to the previous one. reset() forgets and redraws it;
// the panel is idle again. Returns the listener's off().
export function onNewModel(state, element, reset) {
  return state.on('graph', (g, prev) => {
    if (g === prev) return;
    reset();
    element.setAttribute('data-state', 'idle');
  });
}
