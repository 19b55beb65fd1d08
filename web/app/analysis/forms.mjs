// The panels' form fields per analysis (option names of the python API) and a tiny DOM form builder.
// Choices and initial values are the core's (its describe() document, web/pipeline/catalog.mjs).
import { optionDefault, optionSpec } from '../../pipeline/catalog.mjs';
import { interactiveDataNum } from './requests.mjs';
import { DEFAULT_RUNALL_OPTIONS } from '../../pipeline/runall.mjs';
import { METRICS, NODE_TYPES } from './requests.mjs';

const text = (v) => (v === null || v === undefined ? '' : String(v));
// Fields are labelled in words; `option` is the python API's / CLI's name, shown as the label's tooltip.
const metric = (name = 'metric', label = 'Metric', value = optionDefault('acc_error', 'metric')) => ({ name, option: name, label, type: 'select', options: METRICS, value });
const dataNum = (analysis) => ({
  name: 'data_num', option: 'data_num', label: 'Number of samples', type: 'number', value: text(interactiveDataNum(analysis) || null), min: 1, placeholder: 'all', hint: 'empty = all samples',
});
const nodes = (name, label, extra = {}) => ({ name, option: name, label, type: 'nodes', ...extra });

const sweep = (analysis) => [
  { name: 'node_type', option: 'node_type', label: 'Node type', type: 'select', options: NODE_TYPES, value: optionDefault(analysis, 'node_type') },
  { name: 'metrics', option: 'metrics', label: 'Metrics', type: 'multi', options: METRICS, value: optionDefault(analysis, 'metrics') },
  dataNum(analysis),
  {
    name: 'sample_selection', option: 'sample_selection', label: 'Which samples', type: 'select', options: optionSpec(analysis, 'sample_selection').choices,
    value: optionDefault(analysis, 'sample_selection'), hint: 'last = the original\'s rule: the last files in name order', // §2.3
  },
  nodes('output_node', 'Output nodes', { hint: 'empty = graph outputs' }),
  { name: 'use_picked', option: 'interested_nodes', label: 'Only the nodes picked on the graph', type: 'checkbox' },
];

export const FORMS = {
  sensitivity: sweep('sensitivity'),
  leave_one_out: sweep('leave_one_out'),
  acc_error: [
    nodes('quantize_node', 'Quantized nodes', { topk: true, hint: 'names, or weight / activation' }),
    nodes('non_quantize_node', 'Float nodes', { topk: true }),
    { name: 'topk', label: 'k (top-k of the sensitivity table)', type: 'number', value: '5', min: 1 },
    metric(),
    { name: 'average_mode', option: 'average_mode', label: 'Running mean', type: 'checkbox', value: optionDefault('acc_error', 'average_mode') },
  ],
  distribution: [nodes('nodes_list', 'Nodes', { topk: true })],
  channelwise: [
    nodes('nodes_list', 'Calibration nodes', { topk: true }),
    { name: 'axis', option: 'axis', label: 'Channel axis', type: 'number', placeholder: 'node default' },
  ],
  stat_info: [nodes('nodes_list', 'Nodes', { hint: 'empty = every calibration node' })],
  sensitivity_analysis: [
    { name: 'pick_threshold', option: 'pick_threshold', label: 'Sensitive below (cosine)', type: 'number', value: text(optionDefault('sensitivity_analysis', 'pick_threshold')), step: 'any' },
    dataNum('sensitivity_analysis'),
    nodes('sensitive_nodes', 'Sensitive nodes', { hint: 'empty = pick from the node ranking' }),
  ],
  runall: [
    { name: 'node_type', option: 'node_type', label: 'Node type', type: 'select', options: ['', ...NODE_TYPES], labels: { '': 'weight + activation' } },
    { name: 'ns_metrics', option: 'ns_metrics', label: 'Sweep metrics', type: 'multi', options: METRICS, value: DEFAULT_RUNALL_OPTIONS.ns_metrics },
    dataNum('sensitivity'),
    metric('ae_metric', 'Accumulated-error metric', DEFAULT_RUNALL_OPTIONS.ae_metric),
    { name: 'average_mode', option: 'average_mode', label: 'Running mean', type: 'checkbox', value: DEFAULT_RUNALL_OPTIONS.average_mode },
    { name: 'pick_threshold', option: 'pick_threshold', label: 'Sensitive below (cosine)', type: 'number', value: text(DEFAULT_RUNALL_OPTIONS.pick_threshold), step: 'any' },
  ],
};

function el(doc, tag, attrs = {}, ...children) {
  const e = doc.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'text') e.textContent = v;
    else if (k === 'class') e.className = v;
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) if (c) e.append(c);
  return e;
}
export { el };

// Sets a <select>'s value: a browser's own setter; on a DOM without one (linkedom, whose option
// `selected` setter toggles the attribute) through the options' selected attribute, which it reads.
export function selectValue(select, value) {
  if (select.selectedOptions) {
    select.value = value;
    return;
  }
  for (const o of select.querySelectorAll('option')) {
    if (o.value === value) o.setAttribute('selected', '');
    else o.removeAttribute('selected');
  }
}


// Builds the fields into `form`; `actions.picked(name)` / `actions.topk(name)` fill node lists.
export function buildForm(form, fields, actions) {
  const doc = form.ownerDocument;
  for (const f of fields) {
    const id = `ptq-${form.dataset.analysis}-${f.name}`;
    const row = el(doc, 'div', { class: `ptq-field ptq-field-${f.type}` });
    if (f.type === 'checkbox') {
      row.append(el(doc, 'label', { for: id, title: f.option }, el(doc, 'input', { type: 'checkbox', id, name: f.name, checked: f.value }), doc.createTextNode(` ${f.label}`)));
    } else {
      row.append(el(doc, 'label', { for: id, text: f.label, title: f.option }));
      if (f.type === 'select') {
        const sel = el(doc, 'select', { id, name: f.name });
        for (const o of f.options) sel.append(el(doc, 'option', { value: o, text: f.labels?.[o] ?? o, selected: o === (f.value ?? f.options[0]) }));
        row.append(sel);
      } else if (f.type === 'multi') {
        const box = el(doc, 'span', { class: 'ptq-multi', id });
        for (const o of f.options) {
          box.append(el(doc, 'label', {}, el(doc, 'input', { type: 'checkbox', name: f.name, value: o, checked: f.value?.includes(o) }), doc.createTextNode(` ${o} `)));
        }
        row.append(box);
      } else {
        row.append(el(doc, 'input', {
          id, name: f.name, type: f.type === 'number' ? 'number' : 'text', value: f.value ?? '',
          placeholder: f.placeholder, min: f.min, step: f.step,
        }));
        if (f.type === 'nodes') {
          const pick = el(doc, 'button', { type: 'button', class: 'ptq-use-picked', text: '← picked', title: 'the nodes picked on the graph (Ctrl/Shift+click)' });
          pick.addEventListener('click', () => actions.picked(f.name));
          row.append(pick);
          if (f.topk) {
            const top = el(doc, 'button', { type: 'button', class: 'ptq-use-topk', text: '← top-k', title: 'the k most sensitive items of the sensitivity table' });
            top.addEventListener('click', () => actions.topk(f.name));
            row.append(top);
          }
        }
      }
    }
    if (f.hint) row.append(el(doc, 'small', { class: 'ptq-hint', text: f.hint }));
    form.append(row);
  }
}

// The form's values: multi → array of checked values, checkbox → boolean, others → string.
export function readForm(form, fields) {
  const out = {};
  for (const f of fields) {
    if (f.type === 'multi') out[f.name] = [...form.querySelectorAll(`input[name="${f.name}"]:checked`)].map((i) => i.value);
    else if (f.type === 'checkbox') out[f.name] = Boolean(form.querySelector(`input[name="${f.name}"]`)?.checked);
    else out[f.name] = form.querySelector(`[name="${f.name}"]`)?.value ?? '';
  }
  return out;
}
