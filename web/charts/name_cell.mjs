// Long node names in tables (tf2onnx writes ~200-character names: `StatefulPartitionedCall/model/
// block_3_expand/Conv2D;...`): shown shortened in the middle, the start and the distinctive end kept,
// the full name in the tooltip and in the element's text (copy, find in page and tests read it whole).
// The head is cut by CSS (text-overflow: ellipsis, NAME_CELL_CSS below), so the name takes the room
// its column has, up to a maximum width (--ptq-name-width, 26em); the tail never shrinks. The same
// structure is an element (nameElement, nameCell: the page, the plugin) or HTML text (nameHtml: the
// HTML report), and NAME_CELL_CSS is its one stylesheet: added to a document's head with its first
// name element, written into the report.

// A long name's start cut with an ellipsis, its end kept, at most --ptq-name-width wide, so the
// numbers beside it stay in view; the cell's tooltip has it whole.
export const NAME_CELL_CSS = `
.ptq-mid { display: inline-flex; max-width: var(--ptq-name-width, 26em); min-width: 0; overflow: hidden; vertical-align: bottom; white-space: nowrap; }
.ptq-mid-head { flex: 0 1 auto; min-width: 2em; overflow: hidden; text-overflow: ellipsis; }
.ptq-mid-tail { flex: none; max-width: calc(100% - 2em); overflow: hidden; text-overflow: ellipsis; }
`;

const styled = new WeakSet();
function addStyle(doc) {
  if (styled.has(doc) || !doc.head) return;
  styled.add(doc);
  const style = doc.createElement('style');
  style.setAttribute('data-ptq', 'name-cell');
  style.textContent = NAME_CELL_CSS;
  doc.head.append(style);
}

import { escapeHtml } from './format.mjs';

const SEPARATORS = /[/;]/g; // path segments (torch, tf2onnx) and tf2onnx's fused-op lists
const TAIL_MAX = 32; // the end kept whole: as many last path segments as fit
const SEGMENT_MAX = 40; // ... or the last segment alone, when it is longer
const TAIL_CHARS = 20; // ... or the last characters, when even that is longer
const SPLIT_FROM = 40; // shorter names are shown as they are (cut at the end if their column is narrow)

// {head, tail}: tail = the end of `name` from a path separator ('/' or ';'): the last segments that fit
// in TAIL_MAX characters, else the last one if it fits in SEGMENT_MAX, else the last TAIL_CHARS
// characters; '' for a short name.
export function nameParts(name) {
  const text = String(name ?? '');
  if (text.length <= SPLIT_FROM) return { head: text, tail: '' };
  const starts = [...text.matchAll(SEPARATORS)].map((m) => m.index).filter((i) => i > 0).reverse();
  let cut = starts.find((i, k) => text.length - i <= TAIL_MAX && !(text.length - (starts[k + 1] ?? -Infinity) <= TAIL_MAX));
  if (cut === undefined) cut = starts.length && text.length - starts[0] <= SEGMENT_MAX ? starts[0] : text.length - TAIL_CHARS;
  return { head: text.slice(0, cut), tail: text.slice(cut) };
}

/**
 * nameElement(doc, name, {tag = 'span', className}) -> element
 * `<tag class="ptq-mid" title=name><span class="ptq-mid-head">…</span><span class="ptq-mid-tail">…</span></tag>`.
 */
export function nameElement(doc, name, { tag = 'span', className } = {}) {
  addStyle(doc);
  const { head, tail } = nameParts(name);
  const outer = doc.createElement(tag);
  outer.setAttribute('class', className ? `ptq-mid ${className}` : 'ptq-mid');
  outer.setAttribute('title', String(name ?? ''));
  const part = (cls, text) => {
    const span = doc.createElement('span');
    span.setAttribute('class', cls);
    span.textContent = text;
    return span;
  };
  outer.append(part('ptq-mid-head', head));
  if (tail) outer.append(part('ptq-mid-tail', tail));
  return outer;
}

// A table cell holding a shortened name (its title the full name).
export function nameCell(doc, name, attributes = {}) {
  const td = doc.createElement('td');
  for (const [k, v] of Object.entries(attributes)) if (v !== undefined && v !== null) td.setAttribute(k, v);
  td.classList.add('ptq-name-cell');
  td.setAttribute('title', String(name ?? ''));
  td.append(nameElement(doc, name));
  return td;
}

// nameElement as HTML text (the HTML report).
export function nameHtml(name) {
  const { head, tail } = nameParts(name);
  return `<span class="ptq-mid" title="${escapeHtml(name ?? '')}"><span class="ptq-mid-head">${escapeHtml(head)}</span>` +
    `${tail ? `<span class="ptq-mid-tail">${escapeHtml(tail)}</span>` : ''}</span>`;
}

// nameCell as HTML text.
export const nameCellHtml = (name) => `<td class="ptq-name-cell" title="${escapeHtml(name ?? '')}">${nameHtml(name)}</td>`;
