// What the plugin relies on in Netron's page (recorded for Netron 9.x, see docs/plugin.md). Every
// other plugin module goes through these helpers, so a Netron release that moves things breaks in one
// place, and `probePage` reports it before the plugin touches anything.

export const SUPPORTED_MAJOR = 9;

// Elements present from page load on (Netron's index.html).
export const PAGE_IDS = ['target', 'sidebar', 'open-file-dialog'];

// `window.__view__` members the plugin calls or reads (it only reads; see observe.mjs).
const VIEW_MEMBERS = ['render', 'toggle', 'host'];

// <meta name="version">: "0.0.0" for an unbuilt source/ folder, "9.x.y" for a release build.
export function netronVersion(doc) {
  return doc.querySelector('meta[name="version"]')?.getAttribute('content') ?? null;
}

// Problems with the page skeleton and globals, [] when it looks like a supported Netron.
// `view` may be undefined before Netron's load handler ran; pass `requireView: false` then.
export function probePage(win, { requireView = true } = {}) {
  const doc = win.document;
  const problems = [];
  for (const id of PAGE_IDS) {
    if (!doc.getElementById(id)) problems.push(`element #${id} is missing`);
  }
  const dialog = doc.getElementById('open-file-dialog');
  if (dialog && (dialog.tagName.toLowerCase() !== 'input' || dialog.getAttribute('type') !== 'file')) {
    problems.push('#open-file-dialog is not an <input type=file>');
  }
  if (requireView) {
    const view = win.__view__;
    if (!view || typeof view !== 'object') problems.push('window.__view__ is missing');
    else {
      for (const m of VIEW_MEMBERS) if (!(m in view)) problems.push(`window.__view__.${m} is missing`);
    }
  }
  const version = netronVersion(doc);
  if (version && version !== '0.0.0') {
    const major = Number(version.split('.')[0]);
    if (major !== SUPPORTED_MAJOR) problems.push(`Netron ${version} is not supported (tested with ${SUPPORTED_MAJOR}.x)`);
  }
  return problems;
}

// The rendered graph (replaced on every re-render: never cache these elements).
export const graphRoot = (doc) => doc.getElementById('target');

// The width Netron asks for its graph container: it writes it inline on #target ('100%', or
// 'max(40vw, calc(100vw - 42em))' while its own sidebar is open), so a stylesheet cannot simply
// override it; the dock subtracts its own width from whatever Netron asked (layout.mjs).
export const graphWidthRequest = (doc) => graphRoot(doc)?.style?.width || '100%';
export const nodesGroup = (doc) => doc.querySelector('#target > svg#canvas > g#origin > g#nodes');

// Problems with a rendered graph: its group structure and the node element shape.
export function probeRender(doc) {
  const problems = [];
  const nodes = nodesGroup(doc);
  if (!nodes) return ['#target > svg#canvas > g#origin > g#nodes is missing after a render'];
  const graphNodes = [...nodes.children].filter((el) => hasClass(el, 'graph-node'));
  if (nodes.children.length && !graphNodes.length) problems.push('no g.node.graph-node elements under g#nodes');
  for (const el of graphNodes) {
    if (!/^node-(name|id)-/.test(el.id ?? '')) {
      problems.push(`node element id '${el.id}' is neither node-name-<name> nor node-id-<n>`);
      break;
    }
    if (!headerPath(el)) {
      problems.push(`node ${el.id} has no header g.node-item > path`);
      break;
    }
  }
  return problems;
}

export function hasClass(el, name) {
  return !!el.classList && el.classList.contains(name);
}

// The header of an operator node: its first g.node-item child (op type text + <title>).
export function headerGroup(nodeEl) {
  for (const child of nodeEl.children) if (child.tagName.toLowerCase() === 'g' && hasClass(child, 'node-item')) return child;
  return null;
}

// The header's background <path>; the stylesheet fills it, so colour it with an inline style.
export function headerPath(nodeEl) {
  const header = headerGroup(nodeEl);
  if (!header) return null;
  for (const child of header.children) if (child.tagName.toLowerCase() === 'path') return child;
  return null;
}

export function headerText(nodeEl) {
  const header = headerGroup(nodeEl);
  if (!header) return null;
  for (const child of header.children) if (child.tagName.toLowerCase() === 'text') return child;
  return null;
}

// Operator node elements of the current render, in document order.
export function graphNodeElements(doc) {
  const nodes = nodesGroup(doc);
  return nodes ? [...nodes.children].filter((el) => hasClass(el, 'graph-node')) : [];
}

// The node Netron marks as selected (class `select`), or null.
export function selectedNodeElement(doc) {
  return graphNodeElements(doc).find((el) => hasClass(el, 'select')) ?? null;
}

// Netron is busy (opening, laying out) while body has `spinner`; `default` once a graph is shown.
export function pageBusy(doc) {
  return hasClass(doc.body, 'spinner');
}
