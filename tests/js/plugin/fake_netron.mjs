// A stand-in for Netron 9.x built from the recording in tests/fixtures/netron-dom/: the page skeleton
// ids, the rendered #target of horizon_calibrated_tiny.onnx with default options and with "Show
// Names", and the re-render behaviour (body class `welcome spinner` → a new svg#canvas replaces the
// old one inside the same #target → `default`).
// No Netron code: this only reproduces what the recording observed. Runs in Node (linkedom) and in
// Chromium (served as a module next to the fixture page).

// Elements present in Netron's index.html before a model is opened (as recorded).
export const SKELETON = `
<div id="target" class="target" tabindex="0"></div>
<div id="sidebar" class="sidebar"><h1 id="sidebar-title" class="sidebar-title"></h1>
  <a id="sidebar-closebutton" class="sidebar-closebutton" href="#">×</a><div id="sidebar-content" class="sidebar-content"></div></div>
<div id="toolbar" class="toolbar"><button id="zoom-in-button"></button><button id="zoom-out-button"></button>
  <button id="sidebar-model-button"></button><button id="sidebar-target-button"></button>
  <div id="toolbar-path"><button id="toolbar-path-back-button"></button></div><div id="toolbar-navigator"></div>
  <select id="toolbar-target-selector"></select></div>
<div id="menu"></div><button id="menu-button"></button>
<div id="message-text"></div><button id="message-button"></button>
<button id="open-file-button">Open Model…</button>
<input type="file" id="open-file-dialog" class="open-file-dialog" multiple="">
<div id="progress-bar"></div><a id="logo-github" href="#"></a>`;

// Header colours of the recording (extra-report computed_header_styles), as a stylesheet, so the
// browser test checks that our inline fill wins over a class rule as it does in Netron.
export const NETRON_LIKE_CSS = `
.node-item-type path { fill: rgb(51, 51, 51); }
.node-item-type text { fill: #ffffff; }
.node-item-type-layer path { fill: rgb(51, 85, 136); }
.node-item-type-activation path { fill: rgb(112, 41, 33); }
.node-item-type-quantization path { fill: rgb(80, 40, 0); }
.graph-item-input path, .graph-item-output path { fill: rgb(238, 238, 238); }
.node.select > path.node-border { stroke: rgba(220, 0, 0, 0.9); stroke-width: 2px; }
.edge-path { fill: none; stroke: #000; } .edge-paths-hit-test path { fill: none; stroke: none; }
.node-border { fill: none; stroke: #333; } .node-argument-list path { fill: #fff; } .edge-label { font-size: 10px; }
text { font: 11px sans-serif; }`;

// A whole Netron-like page: CSP as Netron's index.html, version 0.0.0 (an unbuilt source/ folder).
export function pageHtml({ head = '', scripts = [], version = '0.0.0' } = {}) {
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="script-src 'self';">
<meta name="version" content="${version}"><title>Netron</title>
<link rel="stylesheet" href="netron-like.css">${head}
${scripts.map((s) => `<script type="module" src="${s}"></script>`).join('\n')}
</head><body class="welcome">${SKELETON}</body></html>`;
}

// window.__view__ with the members the plugin probes, and Netron's open/re-render behaviour.
// renders: {default, names} — the recorded outerHTML of div#target for each option state.
export function installFakeNetron(win, renders) {
  const doc = win.document;
  const options = { names: false, weights: true, attributes: false };
  let opened = false;
  const tick = () => new Promise((resolve) => win.setTimeout(resolve, 0));

  async function render() {
    const body = doc.body;
    body.className = 'welcome spinner';
    const holder = doc.createElement('div');
    holder.innerHTML = options.names ? renders.names : renders.default;
    const svg = holder.firstElementChild.firstElementChild; // div#target > svg#canvas
    const target = doc.getElementById('target');
    target.replaceChildren(svg); // new svg#canvas in the same div#target, as Netron does
    await tick(); // the layout runs in Netron's worker meanwhile
    body.className = 'default';
  }

  const view = {
    host: {
      async asset(file) {
        return file === 'onnx-metadata.json' ? JSON.stringify([{ name: 'Conv', module: 'ai.onnx', version: 1, category: 'Layer' }]) : '';
      },
    },
    options,
    accept: (name) => /\.(onnx|pb|tflite|npy|json)$/i.test(name),
    get target() {
      return opened ? {} : null;
    },
    render,
    async toggle(name) {
      options[name] = !options[name];
      await render();
    },
    async open() {
      opened = true;
      await render();
    },
    // Netron's click on a node header: class `select` on the g.node (same element).
    select(elementId) {
      for (const el of doc.querySelectorAll('#nodes > g.node.select')) el.classList.remove('select');
      if (elementId) doc.getElementById(elementId)?.classList.add('select');
    },
  };
  const openFiles = (files) => {
    const file = Array.from(files ?? []).find((f) => view.accept(f.name));
    if (file) view.lastOpen = view.open();
  };
  doc.getElementById('open-file-dialog').addEventListener('change', (e) => openFiles(e.target.files));
  // A click on a node's header selects it; a click elsewhere in the graph clears the selection.
  doc.getElementById('target').addEventListener('click', (e) => {
    const node = e.target.closest?.('g.node.graph-node');
    view.select(node && e.target.closest('g.node-item') ? node.id : null);
  });
  doc.body.addEventListener('drop', (e) => {
    e.preventDefault();
    openFiles(e.dataTransfer?.files);
  });
  win.__view__ = view;
  return view;
}
