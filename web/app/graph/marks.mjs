// The graph view's SVG marks: a node box with its rows and badges, a calibration badge, an edge with
// its badges and label, and their decoration by the state's selection, picks and heat. Elements are
// built from the view model (model.mjs) and the layout's positions; sizes are computed, never
// measured (getBBox would force a layout per mark).
import { changedState, effectText, effectTitle } from '../whatif/in_effect.mjs';
import { line, curveBasis } from 'd3';
import { HEADER_HEIGHT, ROW_HEIGHT, badgeWidth, textWidth } from './model.mjs';
import { pointsBox } from './cull.mjs';

const SVG_NS = 'http://www.w3.org/2000/svg';
const edgePath = line().x((p) => p.x).y((p) => p.y).curve(curveBasis);

// In the parent's document (the page's, or the picture's in Node: picture.mjs).
function svgElement(name, attrs = {}, parent = null) {
  const e = (parent?.ownerDocument ?? document).createElementNS(SVG_NS, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (parent) parent.appendChild(e);
  return e;
}

// Relative luminance of an 'rgb(...)' or '#rrggbb' colour (null if unparsed), to keep text readable.
function luminance(color) {
  const m = /^rgba?\(\s*([\d.]+)[ ,]+([\d.]+)[ ,]+([\d.]+)/.exec(color) ??
    /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(color)?.slice(0, 4).map((x, i) => (i ? parseInt(x, 16) : x));
  if (!m) return null;
  const [r, g, b] = m.slice(1, 4).map((v) => Number(v) / 255);
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}
const isDark = (color) => (luminance(color) ?? 1) < 0.4;

// Rounded-top rectangle for a node header.
function headerPath(w, h, r, roundBottom) {
  const b = roundBottom ? r : 0;
  return `M0,${r}a${r},${r} 0 0 1 ${r},-${r}h${w - 2 * r}a${r},${r} 0 0 1 ${r},${r}v${h - r - b}` +
    (b ? `a${b},${b} 0 0 1 -${b},${b}h-${w - 2 * b}a${b},${b} 0 0 1 -${b},-${b}z` : `h-${w}z`);
}

// The tooltip of a calibration badge: the node, its stored state and, when a configuration changes
// it, the state in effect.
const badgeTitle = (badge, effect) => `${badge.node}\n${badge.kind || 'calibration'} · stored: ${badge.qtype} · switch ${badge.on ? 'ON' : 'OFF'}` +
  (effect ? `\n${effectTitle(effect)}` : '');

// A calibration badge at (x, y) in `parent` (its stored state; decorateBadge shows the one in effect).
export function badgeMark(parent, badge, x, y) {
  const w = badgeWidth(badge);
  const g = svgElement('g', { class: `badge badge-${badge.kind || 'unknown'}${badge.on ? '' : ' badge-off'}`, transform: `translate(${x},${y})` }, parent);
  g.dataset.calibration = badge.node;
  g.dataset.kind = badge.kind || '';
  g.dataset.qtype = badge.qtype;
  g.dataset.on = String(badge.on);
  g.dataset.text = badge.text;
  svgElement('title', {}, g).textContent = badgeTitle(badge);
  svgElement('rect', { width: w, height: 13, rx: 6.5, ry: 6.5 }, g);
  svgElement('text', { x: w / 2, y: 10 }, g).textContent = badge.text;
  return g;
}

// The state a configuration gives a badge's calibration node when it differs from the stored one
// ({on, qtype}), else null. `states`: state 'calibrationStates' ({name: {on, qtype}} or null).
const stateInEffect = (b, states) => changedState({ on: b.dataset.on === 'true', qtype: b.dataset.qtype }, states?.[b.dataset.calibration]);

// The box of view node `v` centred at `p`, appended to `layer`.
// The classes of view node `v`'s box (also what the overview reads its colours by).
export const nodeClass = (v) =>
  `node node-${v.kind}${v.category ? ` node-cat-${v.category}` : ''}${v.calibration ? ' node-calibration' : ''}${v.unsupported ? ' node-unsupported' : ''}${v.bodies?.length ? ' node-has-body' : ''}`;

export function nodeMark(layer, v, p) {
  const g = svgElement('g', {
    class: nodeClass(v),
    transform: `translate(${p.x - v.width / 2},${p.y - v.height / 2})`,
  }, layer);
  g.dataset.name = v.name;
  g.dataset.id = v.id;
  if (v.stands) g.dataset.stands = v.stands; // a Q/DQ node drawn for its calibration node
  svgElement('title', {}, g).textContent = v.kind === 'node'
    ? `${v.name}\n${v.domain ? `${v.domain}::` : ''}${v.opType}${v.unsupported ? '\nnot supported by ptqscope: the model cannot run' : ''}${
      v.bodies?.length ? `\ndouble-click to open its ${v.bodies.join(' / ')}` : ''}` : v.name;
  svgElement('rect', { class: 'node-body', width: v.width, height: v.height, rx: 5, ry: 5 }, g);
  svgElement('path', { class: 'node-header', d: headerPath(v.width, HEADER_HEIGHT, 5, v.rows.length === 0) }, g);
  svgElement('text', { class: 'node-title', x: 8, y: 15 }, g).textContent = v.title;
  v.rows.forEach((r, i) => {
    const y = HEADER_HEIGHT + 12 + i * ROW_HEIGHT;
    const t = svgElement('text', { class: `node-row node-row-${r.kind}`, x: 8, y }, g);
    svgElement('tspan', { class: 'row-name' }, t).textContent = `${r.name} `;
    svgElement('tspan', {}, t).textContent = r.value;
    if (r.badge) badgeMark(g, r.badge, v.width - badgeWidth(r.badge) - 6, y - 10);
  });
  return g;
}

// Badges and label sit right of an edge's middle point.
const badgesWidth = (e) => e.badges.reduce((x, b) => x + badgeWidth(b) + 3, 4);
export const edgeBox = (e, points) => pointsBox(points, { right: badgesWidth(e) + (e.label ? textWidth(e.label) + 4 : 0), y: 12 });

// Edge `e` along `points`: its path (and a wider invisible hit path) in layers.edges, its badges and
// label in layers.labels. -> every element made, to remove together.
export function edgeMarks(layers, e, points) {
  const d = edgePath(points);
  const title = `${e.tensor}${e.consumed !== e.tensor ? ` → ${e.consumed}` : ''}\n${e.dtype}[${e.dims ? e.dims.join(',') : '?'}]`;
  const hit = svgElement('path', { class: 'edge-hit', d }, layers.edges);
  svgElement('title', {}, hit).textContent = title;
  const parts = [hit, svgElement('path', { class: 'edge', d, 'marker-end': 'url(#ptq-arrow)' }, layers.edges)];
  const mid = points[Math.floor(points.length / 2)];
  let x = mid.x + 4;
  for (const b of e.badges) {
    parts.push(badgeMark(layers.labels, b, x, mid.y - 9));
    x += badgeWidth(b) + 3;
  }
  if (e.label) {
    const t = svgElement('text', { class: 'edge-label', x: x + 2, y: mid.y + 3 }, layers.labels);
    t.textContent = e.label;
    svgElement('title', {}, t).textContent = title;
    parts.push(t);
  }
  return parts;
}

// The heat of the node a view node stands for (a Q/DQ node's calibration node, a QOperator node's
// output quantizer), else of the view node itself (id).
export const nodeHeat = (marks, id, stands) => (stands ? marks.heat?.values.get(stands) : undefined) ?? marks.heat?.values.get(id);
// Whether a view node is selected / picked (a Q/DQ node by the calibration node it stands for).
export const isSelected = (marks, id, stands) => id === marks.selected || (Boolean(stands) && stands === marks.selectedName);
export const isPicked = (marks, id, stands) => marks.picked.has(id) || (Boolean(stands) && Boolean(marks.pickedNames?.has(stands)));

// marks: {selected, picked: Set, heat, selectedName, pickedNames} in view node ids (the last two: the
// state's own names) (heat.values: id or calibration name -> {color, label, value}).
// A Q/DQ node standing for a calibration node (data-stands) takes that node's selection, picks and heat.
export function decorateNode(g, marks) {
  const id = g.dataset.id;
  const stands = g.dataset.stands;
  g.classList.toggle('selected', isSelected(marks, id, stands));
  g.classList.toggle('picked', isPicked(marks, id, stands));
  const h = nodeHeat(marks, id, stands);
  g.querySelector('.node-body').style.fill = h ? h.color : ''; // inline style beats the category CSS
  g.classList.toggle('heated', Boolean(h));
  g.classList.toggle('heat-dark', Boolean(h) && isDark(h.color));
  g.querySelector('title.heat')?.remove();
  if (h) svgElement('title', { class: 'heat' }, g).textContent = `${stands ? `${id} (${stands})` : id}\n${marks.heat.legend?.title ?? 'value'}: ${h.label ?? h.value}`;
}

// A badge is selected by its calibration node's own name (`selection`, the state's). A badge whose node
// the configuration in effect changes (marks.states) reads that state (int16, float) and is marked.
export function decorateBadge(b, marks, selection) {
  const name = b.dataset.calibration;
  const h = marks.heat?.values.get(name);
  b.classList.toggle('selected', name === selection);
  b.querySelector('rect').style.fill = h ? h.color : '';
  b.classList.toggle('heat-dark', Boolean(h) && isDark(h.color));
  const effect = stateInEffect(b, marks.states);
  const text = effect ? effectText(effect) : b.dataset.text;
  if (b.querySelector('text').textContent !== text) {
    const w = badgeWidth({ text });
    b.querySelector('text').textContent = text;
    b.querySelector('text').setAttribute('x', w / 2);
    b.querySelector('rect').setAttribute('width', w);
  }
  b.classList.toggle('badge-changed', Boolean(effect));
  b.classList.toggle('badge-off', effect ? !effect.on : b.dataset.on !== 'true');
  b.querySelector('title').textContent = badgeTitle({ node: name, kind: b.dataset.kind, qtype: b.dataset.qtype, on: b.dataset.on === 'true' }, effect);
}
