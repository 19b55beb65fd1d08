// The plugin's dock on the recorded Netron page (linkedom): beside the graph (Netron's #target and
// toolbar move aside by the dock's width), resizable by its edge with the keyboard, collapsible to a
// strip and back, its width and state kept in localStorage for the next page load, and gone without a
// trace on dispose. (Pointer dragging and the real layout are checked in Chromium: plugin_e2e.)
import { describe, it, expect } from 'vitest';
import { parseHTML } from 'linkedom';
import { createDock, DEFAULT_WIDTH, MIN_WIDTH, COLLAPSED_WIDTH, DOCK_ATTRIBUTE, clampWidth } from '../../../plugin/ui/dock.mjs';
import { pageHtml } from './fake_netron.mjs';

function page() {
  const { window } = parseHTML(pageHtml({}));
  const store = new Map();
  window.localStorage = { getItem: (k) => store.get(k) ?? null, setItem: (k, v) => store.set(k, String(v)) };
  window.innerWidth = 1280;
  return { window, doc: window.document, store };
}

const key = (doc, k) => Object.assign(new doc.defaultView.Event('keydown', { bubbles: true }), { key: k });

describe('plugin dock', () => {
  it('opens at the default width beside the graph and moves Netron aside by that width', () => {
    const { doc } = page();
    const body = doc.createElement('div');
    const dock = createDock(doc, { id: 'ptqscope-panel', title: 'PTQ', body });
    expect(dock.element.parentNode).toBe(doc.body);
    expect(dock.width).toBe(DEFAULT_WIDTH);
    expect(dock.element.getAttribute('data-width')).toBe(String(DEFAULT_WIDTH));
    expect(doc.documentElement.hasAttribute(DOCK_ATTRIBUTE)).toBe(true);
    expect(doc.documentElement.style.getPropertyValue('--ptq-dock-width')).toBe(`${DEFAULT_WIDTH}px`);
    expect(dock.element.querySelector('[role="separator"]')).not.toBeNull();
    dock.dispose();
    expect(doc.documentElement.hasAttribute(DOCK_ATTRIBUTE)).toBe(false);
    expect(doc.documentElement.style.getPropertyValue('--ptq-dock-width')).toBe('');
    expect(doc.getElementById('ptqscope-panel')).toBeNull();
  });

  it('resizes with the arrow keys within [min, window - 200], collapses and expands, remembers both', () => {
    const { window, doc, store } = page();
    const body = doc.createElement('div');
    const dock = createDock(doc, { id: 'ptqscope-panel', title: 'PTQ', body });
    const handle = dock.element.querySelector('.ptq-resize');
    handle.dispatchEvent(key(doc, 'ArrowRight'));
    expect(dock.width).toBe(DEFAULT_WIDTH + 20);
    for (let i = 0; i < 100; i++) handle.dispatchEvent(key(doc, 'ArrowLeft'));
    expect(dock.width).toBe(MIN_WIDTH);
    dock.setWidth(5000);
    expect(dock.width).toBe(1280 - 200);
    expect(clampWidth(window, 'x')).toBe(DEFAULT_WIDTH);
    dock.setWidth(600);
    dock.element.querySelector('.ptq-toggle').dispatchEvent(new window.Event('click'));
    expect(dock.collapsed).toBe(true);
    expect(body.hidden).toBe(true);
    expect(doc.documentElement.style.getPropertyValue('--ptq-dock-width')).toBe(`${COLLAPSED_WIDTH}px`);
    expect(JSON.parse(store.get('ptqscope.dock'))).toEqual({ width: 600, collapsed: true });
    dock.dispose();
    // The next page load starts as the user left it.
    const again = createDock(doc, { id: 'ptqscope-panel', title: 'PTQ', body: doc.createElement('div') });
    expect([again.width, again.collapsed]).toEqual([600, true]);
    again.element.querySelector('.ptq-toggle').dispatchEvent(new window.Event('click'));
    expect(again.collapsed).toBe(false);
    expect(doc.documentElement.style.getPropertyValue('--ptq-dock-width')).toBe('600px');
    again.dispose();
  });
});
