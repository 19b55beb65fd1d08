// Node properties sidebar (Netron's "Node Properties"): type, name, attributes, inputs/outputs with
// shapes, calibration parameters, then the sections other modules registered (results, charts).
import { changedState, effectState, storedState } from '../whatif/in_effect.mjs';
import { registeredSections, onRegister } from '../shell.mjs';
import { formatDims, formatValue, isCalibration } from '../graph/model.mjs';

const MAX_LIST = 64; // thresholds/scales shown inline; the rest behind "show all"

function h(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'class') e.className = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const c of children.flat()) if (c != null) e.append(c instanceof Node ? c : String(c));
  return e;
}

function section(title, ...rows) {
  return h('section', { class: 'sidebar-section' }, h('h3', {}, title), ...rows);
}

function row(name, value, cls = '') {
  return h('div', { class: `sidebar-row ${cls}` }, h('span', { class: 'sidebar-key' }, name), h('span', { class: 'sidebar-value' }, value));
}

function numberList(values) {
  const list = values ?? [];
  const fmt = (xs) => xs.map((x) => formatValue(x)).join(', ');
  if (list.length <= MAX_LIST) return h('span', { class: 'number-list' }, `[${fmt(list)}]`);
  const span = h('span', { class: 'number-list' }, `[${fmt(list.slice(0, MAX_LIST))}, …] (${list.length} values) `);
  span.append(h('button', { type: 'button', class: 'link', onclick: () => { span.textContent = `[${fmt(list)}]`; } }, 'show all'));
  return span;
}

function tensorRow(label, tensor, graph, onTensor) {
  if (!tensor) return row(label, '(absent)', 'muted');
  const info = graph.values?.[tensor] ?? {};
  const type = info.dtype ? `${info.dtype}[${info.dims ? formatDims(info.dims) : '?'}]` : '';
  const link = h('button', { type: 'button', class: 'link tensor-link', title: 'show in the graph', onclick: () => onTensor(tensor, info) }, tensor);
  return h('div', { class: 'sidebar-row' }, h('span', { class: 'sidebar-key' }, label),
    h('span', { class: 'sidebar-value' }, link, ' ', h('span', { class: 'tensor-type' }, type), info.initializer ? h('span', { class: 'tag' }, 'initializer') : null));
}

// `effect`: the state the configuration in effect gives this node (state 'calibrationStates'), shown
// when it differs from the stored one.
function calibrationRows(c, effect) {
  const stored = storedState(c);
  const { on, qtype } = stored;
  const now = changedState(stored, effect);
  return [
    row('kind', c.kind || '(unknown)'),
    row('qtype', qtype),
    row('switch', on ? 'ON' : 'OFF', on ? '' : 'warn'),
    now ? row('in effect (what-if)', effectState(now), 'warn') : null,
    row('axis', c.axis ?? ''),
    row('tensor', c.tensor ?? ''),
    row(`thresholds (${c.thresholds?.length ?? 0})`, numberList(c.thresholds)),
    row(`scales (${c.scales?.length ?? 0})`, numberList(c.scales)),
    c.consumers?.length ? row('consumers', c.consumers.join('; ')) : null,
  ];
}

export function createSidebar(container, state) {
  container.classList.add('sidebar');
  const byName = () => new Map((state.get('graph')?.nodes ?? []).map((n) => [n.name, n]));
  let index = new Map();

  // Centres the tensor's producer; a graph input's own box; an initializer's first consumer.
  function onTensor(tensor, info) {
    const isInput = (state.get('graph')?.inputs ?? []).some((v) => v.name === tensor);
    const target = info.producer ?? (isInput ? tensor : info.consumers?.[0]);
    if (target) state.set('focus', target);
  }

  function renderNode(name) {
    const graph = state.get('graph');
    const node = index.get(name);
    container.replaceChildren();
    if (!graph || !node) {
      container.hidden = true;
      return;
    }
    container.hidden = false;
    const close = h('button', { type: 'button', class: 'sidebar-close', title: 'Close (Esc)', onclick: () => state.set('selection', null) }, '×');
    container.append(h('header', { class: 'sidebar-header' }, h('h2', {}, 'Node Properties'), close));
    container.append(section('Node',
      row('type', `${node.domain ? `${node.domain}::` : ''}${node.op_type}`),
      row('name', node.name, 'node-name')));
    const attrs = Object.entries(node.attributes ?? {});
    if (attrs.length) container.append(section('Attributes', ...attrs.map(([k, v]) => row(k, formatValue(v)))));
    container.append(section('Inputs', ...node.inputs.map((t, i) => tensorRow(String(i), t, graph, onTensor))));
    container.append(section('Outputs', ...node.outputs.map((t, i) => tensorRow(String(i), t, graph, onTensor))));
    if (node.calibration) container.append(section('Calibration', ...calibrationRows(node.calibration, state.get('calibrationStates')?.[node.calibration.item ?? node.name])));
    // A normal node lists the calibration nodes on its inputs (collapsed into badges in the graph).
    const feeding = node.inputs.map((t) => graph.values?.[t]?.producer).filter((p) => p && isCalibration(index.get(p)));
    if (!isCalibration(node) && feeding.length) {
      container.append(section('Quantized inputs', ...feeding.map((p) => {
        const c = index.get(p).calibration ?? {};
        const link = h('button', { type: 'button', class: 'link', onclick: () => state.set('selection', p) }, p);
        return h('div', { class: 'sidebar-row' }, h('span', { class: 'sidebar-key' }, c.kind || 'calibration'),
          h('span', { class: 'sidebar-value' }, link, ` ${c.qtype ?? ''} ${c.switch === false || c.switch === 'OFF' ? 'OFF' : 'ON'}`));
      })));
    }
    for (const s of registeredSections()) {
      const el = h('section', { class: 'sidebar-section sidebar-plugin', 'data-section': s.id });
      if (s.title) el.append(h('h3', {}, s.title));
      const body = h('div', { class: 'sidebar-plugin-body' });
      el.append(body);
      container.append(el);
      try {
        s.render(body, name, state);
      } catch (err) {
        body.textContent = `${s.id}: ${err.message}`;
        body.classList.add('error');
      }
    }
  }

  state.on('graph', () => {
    index = byName();
    renderNode(state.get('selection'));
  });
  state.on('selection', (name) => renderNode(name));
  state.on('results', () => renderNode(state.get('selection')));
  state.on('report', () => renderNode(state.get('selection')));
  state.on('calibrationStates', () => renderNode(state.get('selection')));
  onRegister((kind) => {
    if (kind === 'section') renderNode(state.get('selection'));
  });
  container.hidden = true;
  return { render: renderNode };
}
