// Extension points of the app shell for other modules (the analysis panels, heatmap, export).
//   registerPanel({ id, title, mount(el, state) })            a tab in the bottom dock
//   registerSidebarSection({ id, title?, render(el, nodeName, state) })  a block in the node sidebar
// Modules register at import time; main.mjs imports web/app/{analysis,heatmap,export}/index.mjs when
// they exist, so registering before or after the shell is mounted both work.

const panels = [];
const sections = [];
const listeners = new Set();

function notify(kind, item) {
  for (const fn of listeners) fn(kind, item);
}

function checkId(list, item, what) {
  if (!item || typeof item.id !== 'string' || !item.id) throw new Error(`${what}: an id is required`);
  if (list.some((p) => p.id === item.id)) throw new Error(`${what}: id '${item.id}' is already registered`);
}

export function registerPanel(panel) {
  checkId(panels, panel, 'registerPanel');
  if (typeof panel.mount !== 'function') throw new Error(`registerPanel '${panel.id}': mount(el, state) is required`);
  panels.push(panel);
  notify('panel', panel);
}

export function registerSidebarSection(section) {
  checkId(sections, section, 'registerSidebarSection');
  if (typeof section.render !== 'function') {
    throw new Error(`registerSidebarSection '${section.id}': render(el, nodeName, state) is required`);
  }
  sections.push(section);
  notify('section', section);
}

export const registeredPanels = () => [...panels];
export const registeredSections = () => [...sections];

// The shell listens to late registrations; returns an unsubscribe function.
export function onRegister(fn) {
  listeners.add(fn);
  return () => listeners.delete(fn);
}
