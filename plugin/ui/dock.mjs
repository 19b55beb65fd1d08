// The plugin's dock: a full-height column on the left of Netron's graph, the way Netron docks its own
// sidebar on the right. While it is open, Netron's graph (#target) and toolbar move right by the dock's
// width (attribute `data-ptq-docked` and CSS variable --ptq-dock-width on <html>: Netron rewrites
// <body>'s class on every render), so the dock never covers the graph. Its right edge is a drag handle (pointer or keyboard arrows) for the width, kept in
// localStorage; the header's button collapses it to a narrow strip and back.
import { h } from './dom.mjs';
import { bindResizeHandle } from '../../web/app/resize_handle.mjs';

export const DOCK_ATTRIBUTE = 'data-ptq-docked';
export const MIN_WIDTH = 280;
export const DEFAULT_WIDTH = 460;
export const COLLAPSED_WIDTH = 28;
const STORE_KEY = 'ptqscope.dock';

// The widest the dock may be: the graph keeps at least 200 px.
const maxWidth = (win) => Math.max(MIN_WIDTH, (win.innerWidth || 1280) - 200);
export const clampWidth = (win, w) => Math.round(Math.min(maxWidth(win), Math.max(MIN_WIDTH, Number(w) || DEFAULT_WIDTH)));

function readSaved(win) {
  try {
    const saved = JSON.parse(win.localStorage?.getItem(STORE_KEY) ?? 'null');
    return saved && typeof saved === 'object' ? saved : {};
  } catch {
    return {};
  }
}
function save(win, value) {
  try {
    win.localStorage?.setItem(STORE_KEY, JSON.stringify(value));
  } catch {
    // storage may be disabled: the dock still works for this page
  }
}

/**
 * createDock(doc, {id, title, body, onResize?}) -> {element, setWidth(px), collapse(bool), get width, get collapsed, dispose}
 * `body`: the dock's content element. The dock is appended to <body>. `onResize(delta)`: the space the
 * dock takes changed by `delta` px (dragged, keys, collapsed or expanded).
 */
export function createDock(doc, { id, title, body, className = 'ptq-panel', onResize = () => {} }) {
  const win = doc.defaultView;
  const saved = readSaved(win);
  let width = clampWidth(win, saved.width ?? DEFAULT_WIDTH);
  let collapsed = Boolean(saved.collapsed);

  const toggle = h(doc, 'button', { type: 'button', class: 'ptq-toggle' });
  const handle = h(doc, 'div', {
    class: 'ptq-resize', role: 'separator', 'aria-orientation': 'vertical', tabindex: 0,
    'aria-label': 'resize the PTQ panel', title: 'Drag to resize (← → with the keyboard)',
  });
  const element = h(doc, 'div', { id, class: className, role: 'complementary', 'aria-label': title },
    h(doc, 'div', { class: 'ptq-header' }, h(doc, 'strong', { class: 'ptq-title', text: title }), toggle), body, handle);

  let shownBefore = null;
  function apply() {
    const shown = collapsed ? COLLAPSED_WIDTH : width;
    element.style.setProperty('width', `${shown}px`);
    element.classList.toggle('ptq-collapsed', collapsed);
    element.setAttribute('data-collapsed', String(collapsed));
    element.setAttribute('data-width', String(shown));
    body.hidden = collapsed;
    handle.hidden = collapsed;
    toggle.textContent = collapsed ? '»' : '«';
    toggle.setAttribute('aria-label', collapsed ? 'expand the PTQ panel' : 'collapse the PTQ panel');
    toggle.title = collapsed ? 'Show the PTQ panel' : 'Collapse the PTQ panel';
    doc.documentElement.setAttribute(DOCK_ATTRIBUTE, '');
    doc.documentElement.style.setProperty('--ptq-dock-width', `${shown}px`);
    save(win, { width, collapsed });
    if (shownBefore !== null && shown !== shownBefore) onResize(shown - shownBefore);
    shownBefore = shown;
    // Netron reads its container's size on demand; tell listeners the space changed.
    if (typeof win.Event === 'function') win.dispatchEvent?.(new win.Event('resize'));
  }

  toggle.addEventListener('click', () => {
    collapsed = !collapsed;
    apply();
  });

  // Dragging the handle: the pointer's x is the new width (the dock starts at the left edge).
  const resize = (w) => {
    width = clampWidth(win, w);
    apply();
  };
  bindResizeHandle(handle, element, {
    resizingClass: 'ptq-resizing', keys: { ArrowRight: 1, ArrowLeft: -1 },
    onDrag: (e) => resize(e.clientX), onStep: (px) => resize(width + px),
  });
  const onWindowResize = (e) => {
    if (e.isTrusted === false) return; // our own notification
    const w = clampWidth(win, width);
    if (w !== width) {
      width = w;
      apply();
    }
  };
  win.addEventListener?.('resize', onWindowResize);

  doc.body.append(element);
  apply();

  return {
    element,
    setWidth(px) {
      width = clampWidth(win, px);
      apply();
    },
    collapse(value = true) {
      collapsed = Boolean(value);
      apply();
    },
    get width() {
      return width;
    },
    get collapsed() {
      return collapsed;
    },
    dispose() {
      win.removeEventListener?.('resize', onWindowResize);
      element.remove();
      doc.documentElement.removeAttribute(DOCK_ATTRIBUTE);
      doc.documentElement.style.removeProperty('--ptq-dock-width');
    },
  };
}
