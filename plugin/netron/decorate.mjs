// Restyles Netron's rendered nodes (never relayouts them): heat colour on the header path, a
// readable text colour, a tooltip, the picked mark, and the category class of horizon ops whose
// schema Netron lacks.
// Netron's fill comes from its stylesheet, so only an inline `style.fill` wins over it (recorded).
// Every change is marked with data-ptq-* attributes so it is idempotent and can be undone.
import { color as d3color } from 'd3';
import { headerGroup, headerPath, headerText, hasClass, graphNodeElements } from './contract.mjs';
import { horizonCategory } from './metadata.mjs';

const MARK = 'data-ptq-heat';
const CATEGORY_MARK = 'data-ptq-category';
export const PICKED_MARK = 'data-ptq-picked';
export const UNSUPPORTED_MARK = 'data-ptq-unsupported';
const TITLE_CLASS = 'ptq-heat-title';

// Black or white, whichever reads better on `fill` (WCAG relative luminance).
export function textColorFor(fill) {
  const c = d3color(fill)?.rgb();
  if (!c) return null;
  const lin = (v) => {
    const s = v / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  };
  const l = 0.2126 * lin(c.r) + 0.7152 * lin(c.g) + 0.0722 * lin(c.b);
  return l > 0.179 ? '#000000' : '#ffffff';
}

function setTitle(path, label) {
  const doc = path.ownerDocument;
  let title = [...path.children].find((c) => hasClass(c, TITLE_CLASS));
  if (!label) {
    title?.remove();
    return;
  }
  if (!title) {
    title = doc.createElementNS('http://www.w3.org/2000/svg', 'title');
    title.setAttribute('class', TITLE_CLASS);
    path.appendChild(title);
  }
  title.textContent = label;
}

function clearNode(el) {
  const path = headerPath(el);
  if (path) {
    path.style.removeProperty('fill');
    setTitle(path, null);
  }
  headerText(el)?.style.removeProperty('fill');
  el.removeAttribute(MARK);
}

// Colours the nodes of `heat.values` (Map<name, {color, label}>) found in `elements`
// (Map<name, element>, nodes.mjs) and clears our colour from every other node. Returns the count
// of coloured nodes. Cheap when nothing changed (each node compares its mark first).
export function applyHeat(doc, heat, elements) {
  const wanted = new Map();
  for (const [name, entry] of heat?.values ?? []) {
    const el = elements.get(name);
    if (el && entry?.color) wanted.set(el, entry);
  }
  for (const el of graphNodeElements(doc)) {
    if (el.hasAttribute(MARK) && !wanted.has(el)) clearNode(el);
  }
  for (const [el, entry] of wanted) {
    const key = `${entry.color}|${entry.label ?? ''}`;
    if (el.getAttribute(MARK) === key) continue;
    const path = headerPath(el);
    if (!path) continue;
    path.style.setProperty('fill', entry.color);
    const text = textColorFor(entry.color);
    if (text) headerText(el)?.style.setProperty('fill', text);
    setTitle(path, entry.label);
    el.setAttribute(MARK, key);
  }
  return wanted.size;
}

export const clearHeat = (doc) => applyHeat(doc, null, new Map());

// Fallback for a Netron whose onnx-metadata.json lacks our horizon schemas: give the header of each
// horizon op the category class its schema would have produced. `opTypes`: Map<name, op_type>.
export function applyCategories(elements, opTypes) {
  let n = 0;
  for (const [name, el] of elements) {
    const category = horizonCategory(opTypes.get(name));
    const header = category && headerGroup(el);
    if (!header || [...header.classList].some((c) => c.startsWith('node-item-type-'))) continue;
    header.classList.add(`node-item-type-${category.toLowerCase()}`);
    header.setAttribute(CATEGORY_MARK, '');
    n++;
  }
  return n;
}

// Sets the boolean attribute `mark` on the elements of `names` (iterable of node names) and removes it
// from every other node. Returns the count marked.
function applyMark(doc, mark, names, elements) {
  const wanted = new Set([...(names ?? [])].map((name) => elements.get(name)).filter(Boolean));
  for (const el of graphNodeElements(doc)) {
    if (wanted.has(el)) el.setAttribute(mark, '');
    else if (el.hasAttribute(mark)) el.removeAttribute(mark);
  }
  return wanted.size;
}

// Marks the picked nodes (state 'picked': the node lists the analyses read) with data-ptq-picked,
// outlined by the plugin's stylesheet, and unmarks the others. Returns the count marked.
export const applyPicked = (doc, picked, elements) => applyMark(doc, PICKED_MARK, picked, elements);

// Marks the nodes the core cannot run (the model summary's `unsupported`) with data-ptq-unsupported,
// outlined by the plugin's stylesheet as the web app's graph marks them. Returns the count marked.
export const applyUnsupported = (doc, summary, elements) =>
  applyMark(doc, UNSUPPORTED_MARK, (summary?.unsupported ?? []).map((u) => u.node), elements);

// The configuration in effect (what-if) on Netron's calibration nodes: a node whose state it changes
// gets data-ptq-config="<int16 | float>" (outlined by the plugin's stylesheet) and a small label
// above its top-right corner with the state and a tooltip; the others lose both. `changed`:
// Map<name, {text, title}>. Returns the count marked.
export const CONFIG_MARK = 'data-ptq-config';
const CONFIG_LABEL = 'ptq-config-label';
export function applyConfig(doc, changed, elements) {
  const wanted = new Map();
  for (const [name, label] of changed ?? []) {
    const el = elements.get(name);
    if (el) wanted.set(el, label);
  }
  for (const el of graphNodeElements(doc)) {
    if (wanted.has(el) || !el.hasAttribute(CONFIG_MARK)) continue;
    el.removeAttribute(CONFIG_MARK);
    [...el.children].find((c) => hasClass(c, CONFIG_LABEL))?.remove();
  }
  for (const [el, label] of wanted) {
    if (el.getAttribute(CONFIG_MARK) === label.text && [...el.children].some((c) => hasClass(c, CONFIG_LABEL))) continue;
    [...el.children].find((c) => hasClass(c, CONFIG_LABEL))?.remove();
    el.setAttribute(CONFIG_MARK, label.text);
    el.appendChild(configLabel(doc, el, label));
  }
  return wanted.size;
}

// <g class="ptq-config-label"><title/><rect/><text/></g> above the node's top-right corner (its
// header's box where the browser measures it).
function configLabel(doc, el, { text, title }) {
  const ns = 'http://www.w3.org/2000/svg';
  const make = (tag, attrs) => {
    const e = doc.createElementNS(ns, tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
    return e;
  };
  const width = Math.ceil(text.length * 6.2) + 10;
  const box = headerPath(el)?.getBBox?.() ?? { x: 0, y: 0, width };
  const g = make('g', { class: CONFIG_LABEL, transform: `translate(${box.x + box.width - width},${box.y - 15})` });
  const tip = make('title', {});
  tip.textContent = title;
  const label = make('text', { x: width / 2, y: 10, 'text-anchor': 'middle' });
  label.textContent = text;
  g.append(tip, make('rect', { width, height: 13, rx: 6.5, ry: 6.5 }), label);
  return g;
}

// How many of this render's nodes carry our colour (tests, status line).
export function coloredCount(doc) {
  return graphNodeElements(doc).filter((el) => el.hasAttribute(MARK)).length;
}
