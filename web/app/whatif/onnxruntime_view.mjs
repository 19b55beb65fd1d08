// "Check with onnxruntime" in the what-if and fix panels (page and plugin): the configuration the
// panel shows, run by onnxruntime-web in the analysis worker (web/pipeline/onnxruntime_check.mjs),
// its output metrics beside ptqscope's with the difference and onnxruntime's own float spread, and a
// plain sentence saying whether onnxruntime agrees. onnxruntime-web is loaded only when the button
// is pressed, from the folder the host ships it in (state 'onnxruntime': {url} or {unavailable}).
import { el } from '../analysis/forms.mjs';
import { formatValue } from '../../charts/format.mjs';
import { samplesNote } from '../../pipeline/result.mjs';
import { FLOAT32_ULPS, judgeCheck, ORT_SETTINGS } from '../../pipeline/onnxruntime_check.mjs';

const UNAVAILABLE = 'onnxruntime-web is not available in this build.';

// "1.0e-3": a difference or spread, two significant digits.
const small = (v) => (v === 0 ? '0' : formatValue(v, 2));

// The sentence under the button: does onnxruntime agree with ptqscope (mean over outputs)?
export function verdictText(judged) {
  if (judged.agrees) {
    const largest = judged.rows.reduce((a, b) => (b.difference > a.difference ? b : a), judged.rows[0]);
    return 'onnxruntime agrees with ptqscope: every metric lies within the float spread' +
      (largest?.difference ? ` (largest difference: ${largest.metric} ${small(largest.difference)})` : ' (identical values)') + '.';
  }
  const ratio = (r) => (r.allowed > 0 ? r.difference / r.allowed : Infinity);
  const worst = judged.beyond.reduce((a, b) => (ratio(b) > ratio(a) ? b : a));
  return `onnxruntime's numbers differ from ptqscope's beyond the float spread on ${judged.beyond.map((r) => r.metric).join(', ')}: ` +
    `${worst.metric} is ${formatValue(worst.ptqscope)} here and ${formatValue(worst.onnxruntime)} by onnxruntime, ` +
    `${small(worst.difference)} apart, where float32 evaluations that round alike lie ${small(worst.allowed)} apart.`;
}

const WHY_BEYOND = 'Two float32 evaluations of a quantized model part where a value lies within float rounding of a ' +
  'quantizer\'s rounding boundary: one rounds up, the other down, and the step grows through the network. A difference ' +
  'beyond the spread comes from such a flip or from a difference in what the two engines compute.';

// metric | ptqscope | onnxruntime | difference | onnxruntime's spread, for the mean or one output.
function checkTable(doc, result, scope, caption) {
  const judged = judgeCheck(result, scope);
  const table = el(doc, 'table', { class: 'ptq-whatif-table ptq-ort-table', 'data-output': scope },
    el(doc, 'caption', { text: caption, title: caption }));
  const [first, ...others] = ORT_SETTINGS;
  table.append(el(doc, 'thead', {}, el(doc, 'tr', {}, el(doc, 'th', { text: 'metric' }), el(doc, 'th', { text: 'ptqscope' }),
    el(doc, 'th', { text: 'onnxruntime', title: `onnxruntime-web, ${first.label}` }),
    el(doc, 'th', { text: 'difference' }),
    el(doc, 'th', { text: 'float spread', title: `how far valid float32 evaluations of this metric lie apart where no quantizer rounds differently: onnxruntime ${first.label} and ${others.map((s) => s.label).join(', ')}, and onnxruntime's quantized outputs measured against ptqscope's float outputs (counted for both runs); at least ${FLOAT32_ULPS} units in the last place of the float32 metric` }))));
  const body = el(doc, 'tbody');
  for (const r of judged.rows) {
    body.append(el(doc, 'tr', { 'data-metric': r.metric, 'data-within': String(r.within) },
      el(doc, 'th', { text: r.metric }),
      el(doc, 'td', { class: 'num', 'data-value': String(r.ptqscope), text: formatValue(r.ptqscope) }),
      el(doc, 'td', { class: 'num', 'data-value': String(r.onnxruntime), text: formatValue(r.onnxruntime),
        title: Object.entries(r.settings).map(([k, v]) => `${ORT_SETTINGS.find((s) => s.name === k)?.label ?? k}: ${formatValue(v)}`).join('\n') }),
      el(doc, 'td', { class: `num ${r.within ? '' : 'ptq-worse'}`.trim(), 'data-value': String(r.difference), text: small(r.difference) }),
      el(doc, 'td', { class: 'num', 'data-value': String(r.allowed), text: small(r.allowed),
        title: r.allowed > r.spread ? `the evaluations' spread is ${small(r.spread)}; a float32 metric resolves no better than ${FLOAT32_ULPS} units in its last place` : '' })));
  }
  table.append(body);
  return { table, judged };
}

/**
 * mountOnnxruntimeCheck(root, state, runner, {getRequest}) -> {element, refresh(), dispose()}
 * getRequest(): {config, options} of the configuration the panel shows (options: data_num,
 * sample_selection), or null when there is nothing to check yet. refresh(): call when that changes
 * (a shown result of another configuration is withdrawn).
 */
export function mountOnnxruntimeCheck(root, state, runner, { getRequest }) {
  const doc = root.ownerDocument;
  const button = el(doc, 'button', { type: 'button', class: 'ptq-ort-check', text: 'Check with onnxruntime',
    title: 'Run the float model and this configuration (exported as a Q/DQ model) in onnxruntime-web and compare its output metrics with ptqscope\'s' });
  const status = el(doc, 'span', { class: 'ptq-ort-status ptq-hint', 'aria-live': 'polite' });
  const verdict = el(doc, 'p', { class: 'ptq-ort-verdict' });
  const why = el(doc, 'p', { class: 'ptq-ort-why ptq-hint', text: WHY_BEYOND, hidden: true });
  const tables = el(doc, 'div', { class: 'ptq-whatif-numbers ptq-ort-tables' });
  const perOutput = el(doc, 'details', { class: 'ptq-ort-outputs', hidden: true }, el(doc, 'summary', { text: 'Per output' }));
  const element = el(doc, 'div', { class: 'ptq-ort', 'data-state': 'idle' },
    el(doc, 'div', { class: 'ptq-whatif-buttons ptq-ort-row' }, button, status), verdict, why, tables, perOutput);
  root.append(element);
  let shownKey = null;
  let running = false;
  const offs = [];

  const keyOf = (request) => (request ? JSON.stringify(request) : null);
  const availability = () => state.get('onnxruntime') ?? { unavailable: UNAVAILABLE };

  function clear(note = '') {
    verdict.textContent = note;
    verdict.className = 'ptq-ort-verdict';
    why.hidden = true;
    tables.replaceChildren();
    perOutput.hidden = true;
    perOutput.replaceChildren(perOutput.firstChild);
    shownKey = null;
  }

  function refresh() {
    const where = availability();
    const request = getRequest();
    button.disabled = running || !where.url || !request;
    if (!where.url) status.textContent = where.unavailable ?? UNAVAILABLE;
    else if (!running) status.textContent = request ? '' : 'Nothing to check yet.';
    if (shownKey && shownKey !== keyOf(request)) {
      clear('The configuration or its samples changed since this check: check again.');
      element.setAttribute('data-state', 'stale');
    }
  }

  function show(result, key) {
    clear();
    shownKey = key;
    const samples = samplesNote({ what_if: { samples: result.samples }, calibration_samples: result.calibration_samples }, 'what_if');
    const engine = `onnxruntime-web ${result.version}`.trim();
    const { table, judged } = checkTable(doc, result, 'mean', `mean over outputs · ${samples} · ${engine}`);
    tables.append(table);
    verdict.textContent = verdictText(judged);
    verdict.className = `ptq-ort-verdict ${judged.agrees ? 'ptq-better' : 'ptq-worse'}`;
    why.hidden = judged.agrees;
    if (result.outputs.length > 1) {
      for (const name of result.outputs) perOutput.append(checkTable(doc, result, name, `${name} · ${samples}`).table);
      perOutput.hidden = false;
    }
    element.setAttribute('data-state', judged.agrees ? 'agrees' : 'beyond');
  }

  button.addEventListener('click', async () => {
    const request = getRequest();
    const where = availability();
    if (!request || !where.url) return;
    running = true;
    clear();
    refresh();
    element.setAttribute('data-state', 'running');
    status.textContent = 'onnxruntime: loading…';
    const onEvent = (ev) => {
      const setting = ORT_SETTINGS.find((s) => s.name === ev.stage);
      status.textContent = ev.stage === 'ptqscope' ? 'onnxruntime: ptqscope\'s numbers…'
        : setting ? `onnxruntime: ${setting.label}, sample ${ev.done % (ev.total / ORT_SETTINGS.length) + 1} of ${ev.total / ORT_SETTINGS.length}…`
          : 'onnxruntime: comparing…';
    };
    try {
      const result = await runner.call('checkOnnxruntime', { ...request, onnxruntime: where.url }, { onEvent });
      show(result, keyOf(request));
      status.textContent = 'onnxruntime: done';
    } catch (err) {
      element.setAttribute('data-state', 'error');
      status.textContent = 'onnxruntime: failed';
      verdict.textContent = `The check could not run: ${err?.message ?? err}`;
      verdict.className = 'ptq-ort-verdict ptq-worse';
    } finally {
      running = false;
      refresh();
    }
  });

  offs.push(state.on('onnxruntime', refresh));
  offs.push(state.on('graph', (g, prev) => {
    if (g === prev) return;
    clear();
    element.setAttribute('data-state', 'idle');
    refresh();
  }));
  refresh();

  return {
    element,
    refresh,
    dispose() {
      offs.forEach((off) => off());
      element.remove();
    },
  };
}
