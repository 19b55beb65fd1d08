// The calibration-methods view: every activation threshold chosen again by each method of the core
// (max, percentiles, KL, minimum MSE; per tensor and per channel), the model outputs' metrics of each
// setting on the tuning samples and on the held-out ones (`calibration_methods`, docs/explain.md),
// the best setting marked (overall and per toolchain), and the best setting exported for the
// toolchain or opened in the what-if view. Mounted by the page's dock and by the Netron plugin.
import { el } from '../analysis/forms.mjs';
import { METRICS } from '../analysis/requests.mjs';
import { calibrationMethodRows, samplesNote } from '../../pipeline/result.mjs';
import { formatValue } from '../../charts/format.mjs';
import { coreOption } from '../whatif/defaults.mjs';
import { mountConfigExport } from '../whatif/export.mjs';
import { intoWhatIf } from '../whatif/panel.mjs';
import { mountRunRow, dataNumField, onNewModel, readDataNum } from './run_row.mjs';
import { download } from '../export/download.mjs';

/**
 * mountMethodsPanel(root, state, runner, whatIf, hooks?) -> {element, dispose()}
 * hooks.save(name, data, type): the export's save (default a browser download); hooks.show(panelId):
 * bring the what-if panel into view after "Open in what-if" (default state 'showPanel').
 */
export function mountMethodsPanel(root, state, runner, whatIf, hooks = {}) {
  const doc = root.ownerDocument;
  const save = hooks.save ?? ((name, data, type) => download(doc, name, data, type));
  const show = hooks.show ?? ((id) => state.set('showPanel', id));
  let last = null;

  const metric = el(doc, 'select', { name: 'metric', 'aria-label': 'metric that ranks the settings' },
    ...METRICS.map((m) => el(doc, 'option', { value: m, text: m, selected: m === coreOption('calibration_methods', 'metric')?.default })));
  const toolchain = el(doc, 'select', { name: 'toolchain', 'aria-label': 'toolchain of the best setting' },
    ...(coreOption('calibration_methods', 'toolchain')?.choices ?? []).map((t) => el(doc, 'option', { value: t, text: t, selected: t === coreOption('calibration_methods', 'toolchain')?.default })));
  const dataNum = dataNumField(doc, 'calibration_methods');
  const summary = el(doc, 'p', { class: 'ptq-methods-summary', text: 'Press Compare: each calibration method for the whole model, measured.' });
  const table = el(doc, 'table', { class: 'ptq-methods-table' });
  const openBtn = el(doc, 'button', { type: 'button', class: 'ptq-methods-open', text: 'Open the best in what-if', disabled: true });
  const run = mountRunRow(doc, runner, {
    label: 'Compare', runClass: 'ptq-methods-run',
    request: () => ({ analysis: 'calibration_methods', options: { metric: metric.value, toolchain: toolchain.value, data_num: readDataNum(dataNum) } }),
    onStart: () => {
      last = null;
      draw();
    },
    onResult: (result) => {
      last = result;
      draw();
    },
    onError: (err) => state.set('error', err.message),
  });
  const exportHost = el(doc, 'div', { class: 'ptq-methods-export' });
  const exporter = mountConfigExport(exportHost, state, runner, { getConfig: () => last?.config ?? null, save, label: 'Export the best setting' });
  const field = (label, title, control) => el(doc, 'div', { class: 'ptq-field' }, el(doc, 'label', { text: label, title }), control);
  const element = el(doc, 'div', { class: 'ptq-methods', 'data-state': 'idle' },
    field('Metric', 'metric: ranks the settings on the tuning samples', metric),
    field('Toolchain', 'toolchain: the best setting is one this toolchain can express', toolchain),
    field('Samples', 'data_num: split into tuning and held-out samples (§13.4)', dataNum),
    run.element, summary, el(doc, 'div', { class: 'ptq-why-scroll' }, table), el(doc, 'div', { class: 'ptq-whatif-buttons' }, openBtn), exportHost);
  root.append(element);
  run.bindState(element);

  openBtn.addEventListener('click', () => {
    if (last?.config) intoWhatIf(state, show, () => whatIf.open(last.config));
  });

  function draw() {
    table.replaceChildren();
    openBtn.disabled = !last?.config;
    if (!last) {
      summary.textContent = 'Press Compare: each calibration method for the whole model, measured.';
      return;
    }
    const section = last.calibration_methods;
    const rows = calibrationMethodRows(last);
    const s = last.calibration_methods_samples ?? {};
    const bestFor = Object.entries(section.best_by_toolchain ?? {}).map(([t, label]) => `${t}: ${label}`).join(', ');
    summary.textContent = `Best by ${section.metric}: ${section.best ?? 'none'}${bestFor ? ` (${bestFor})` : ''} · tuning ${s.tune?.length ?? 0} sample${s.tune?.length === 1 ? '' : 's'}` +
      `${s.held_out?.length ? `, held out ${s.held_out.length} (${s.held_out.join(', ')})` : ', none held out'} · ${samplesNote(last, 'calibration_methods') || ''}`.replace(/ · $/, '');
    for (const w of section.warnings ?? []) summary.append(el(doc, 'span', { class: 'ptq-worse', role: 'alert', text: ` Warning: ${w}` }));
    const metrics = METRICS.filter((m) => rows.some((r) => r.tune && m in r.tune));
    const heldOut = rows.some((r) => r.held_out);
    const top = el(doc, 'tr', {}, el(doc, 'th', { rowspan: 2, text: 'setting' }), el(doc, 'th', { rowspan: 2, text: 'toolchains' }),
      ...metrics.map((m) => el(doc, 'th', { colspan: heldOut ? 2 : 1, text: m, class: m === section.metric ? 'ptq-methods-ranked' : '' })));
    const sub = el(doc, 'tr', {}, ...metrics.flatMap(() => [el(doc, 'th', { text: 'tuning' }), ...(heldOut ? [el(doc, 'th', { text: 'held out' })] : [])]));
    table.append(el(doc, 'thead', {}, top, sub));
    const body = el(doc, 'tbody');
    for (const r of rows) {
      const mark = r.best ? ' ★ best' : r.best_for.length ? ` ★ ${r.best_for.join(', ')}` : '';
      body.append(el(doc, 'tr', { 'data-setting': r.label, class: r.best ? 'ptq-methods-best' : '', 'data-best': String(r.best) },
        el(doc, 'th', { text: `${r.label}${mark}` }),
        el(doc, 'td', { text: (r.toolchains ?? []).join(', ') }),
        ...metrics.flatMap((m) => [
          el(doc, 'td', { class: 'num', 'data-metric': m, 'data-value': String(r.tune?.[m] ?? ''), text: formatValue(r.tune?.[m]) }),
          ...(heldOut ? [el(doc, 'td', { class: 'num', 'data-metric': m, 'data-held-out': 'true', text: r.held_out ? formatValue(r.held_out[m]) : '–' })] : []),
        ])));
    }
    table.append(body);
  }

  const off = onNewModel(state, element, () => {
    last = null;
    draw();
  });
  return {
    element,
    dispose() {
      off();
      run.dispose();
      exporter.dispose();
      element.remove();
    },
  };
}
