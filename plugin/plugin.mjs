// Wires the plugin into a Netron page. Environment-neutral: everything that needs a bundler or a
// browser (worker spawning, the pipeline, chart modules, file readers) comes in through `deps`, so the
// tests run it against the recorded Netron DOM under linkedom with Node workers.
//
// Order of events: probe the page (fail soft: a banner, nothing else) → wrap Netron's metadata asset
// loader → panel → capture the files Netron opens → model bytes + graphJson into the store → the web
// app's heat controller turns results into state 'heat' → every (re-)render of Netron gets the colours.
import { probePage, probeRender, nodesGroup, pageBusy, graphRoot } from './netron/contract.mjs';
import { nodeElementMap, elementNodeName, heatOnQdqNodes, namesWithQdqNodes } from './netron/nodes.mjs';
import { applyHeat, applyCategories, applyPicked, applyUnsupported, applyConfig } from './netron/decorate.mjs';
import { changedCalibrations, effectText, effectTitle } from '../web/app/whatif/in_effect.mjs';
import { observeGraph } from './netron/observe.mjs';
import { followGraphWidth } from './netron/layout.mjs';
import { captureModelFiles } from './netron/capture.mjs';
import { wrapMetadataAsset } from './netron/metadata.mjs';
import { showBanner } from './ui/banner.mjs';
import { mountPanel, PANEL_ID, togglePicked } from './ui/panel.mjs';
import { injectStyle } from './ui/style.mjs';
import { createAnalysisRunner, queuedRun } from '../web/app/analysis/runner.mjs';
import { createHeatController } from '../web/app/heatmap/controller.mjs';
import { mountHeatLegend } from '../web/app/heatmap/legend_overlay.mjs';
import { createReportController } from '../web/app/reports/controller.mjs';
import { setChannelRunner } from '../web/app/analysis/charts.mjs';
import { workerEngine } from './graph_loader.mjs';
import { createOpener } from '../web/app/open/open.mjs';
import { modelScopedState } from '../web/app/state.mjs';

export const LEGEND_ID = 'ptqscope-legend';

// A model Netron starts to open replaces the previous one at once (its graph, results and data).
const resetOnOpen = () => ({ graph: null, summary: null, error: null, externalFiles: [], calibrationFiles: null, samples: null, ...modelScopedState() });

/**
 * installPlugin(win, deps) -> {ok: true, state, panel, dispose} | {ok: false, problems}
 * deps: state (a web/app/state.mjs store), pipeline ({createPool, runAnalysis, runAll}), spawn()
 * (a Worker-like analysis worker), heatScale, sections() (per-node chart sections),
 * readDrop(dataTransfer), readPicked(fileList), poolSize?, save(name, data, type)? (exports; default a
 * browser download).
 */
export function installPlugin(win, deps) {
  const doc = win.document;
  const problems = probePage(win);
  if (problems.length) {
    showBanner(doc, 'this page does not look like the Netron 9.x the plugin was built for, so the plugin is off. Netron itself is unchanged.', problems);
    return { ok: false, problems };
  }
  const { state } = deps;
  const metadataWrapped = wrapMetadataAsset(win.__view__.host);

  const runner = createAnalysisRunner({ state, pipeline: deps.pipeline, spawn: deps.spawn, ...(deps.poolSize ? { size: deps.poolSize } : {}) });
  const heat = createHeatController(state, deps.heatScale);
  // A toolchain report opened in the panel follows the model Netron shows.
  const reports = createReportController(state);
  // A box plot's channel click (the app's channelwise chart) runs that channel's histogram here,
  // after the run in flight if there is one.
  setChannelRunner(queuedRun(runner));
  injectStyle(doc);
  // Netron's graph pane takes the window's width less the dock's (before the dock is mounted, so the
  // graph never renders under it).
  const graphWidth = followGraphWidth(win);
  // A table row or chart point the user clicks: Netron's element of that node scrolled into view.
  const focus = (name) => nodeElementMap(doc, state.get('graph')).get(name)?.scrollIntoView?.({ block: 'center', inline: 'center' });
  // The page's opener over the plugin's workers: the model's graph, and calibration data checked by
  // the core (held until the model is read when it comes first).
  const opener = createOpener(state, workerEngine(deps.spawn, () => state.get('modelName')));
  const panel = mountPanel(doc, {
    state, runner, focus, opener, sections: deps.sections, readDrop: deps.readDrop,
    readPicked: deps.readPicked, save: deps.save, onDockResize: (delta) => graphWidth.keepCentre(delta),
  });
  // The heat legend over Netron's graph pane, beside the dock (ui/style.mjs places it).
  const legendBox = doc.createElement('div');
  legendBox.id = LEGEND_ID;
  doc.body.append(legendBox);
  // Its select's keys and clicks are ours, not Netron's (Netron's document listeners act on them).
  for (const type of ['keydown', 'keyup', 'mousedown', 'click', 'wheel']) legendBox.addEventListener(type, (e) => e.stopPropagation());
  const legend = mountHeatLegend(legendBox, state);

  // --- the model Netron opens ---
  const stopCapture = captureModelFiles(win, async ({ name, file, onnx, others = [] }) => {
    runner.cancel();
    state.setMany({ ...resetOnOpen(), modelName: name, modelBytes: null });
    if (!onnx) {
      state.set('status', `${name} is not an ONNX model: PTQ analyses need a calibrated .onnx.`);
      return;
    }
    const bytes = file.arrayBuffer().then((buffer) => new Uint8Array(buffer));
    // Files opened with the model may hold its external data: the core takes those the model names.
    const candidates = Promise.all(others.map(async (f) => ({ path: f.name, bytes: new Uint8Array(await f.arrayBuffer()) })));
    await opener.openModel({ path: name, bytes }, candidates);
  }, { skip: (e) => !!e.target?.closest?.(`#${PANEL_ID}`) });

  // The panel's relation rules (§1.9): the graph's relations read again under them (the opener drops
  // the results of the former rules with the rest of the model-scoped state).
  const offRelations = state.on('relationRules', (rules, prev) => {
    if (rules !== prev) opener.readRelations();
  });

  // --- colours on every render, selection from Netron's `select` class ---
  let broken = false;
  const decorate = () => {
    if (broken || !nodesGroup(doc)) return;
    const renderProblems = pageBusy(doc) ? [] : probeRender(doc);
    if (renderProblems.length) {
      broken = true;
      showBanner(doc, 'Netron rendered this graph differently from the Netron 9.x the plugin knows, so it stopped colouring nodes. Netron itself is unchanged.', renderProblems);
      return;
    }
    const graph = state.get('graph');
    const elements = nodeElementMap(doc, graph);
    applyHeat(doc, heatOnQdqNodes(state.get('heat'), graph), elements);
    applyPicked(doc, namesWithQdqNodes(state.get('picked'), graph), elements);
    applyUnsupported(doc, state.get('summary'), elements);
    applyConfig(doc, configLabels(graph, state.get('calibrationStates'), elements), elements);
    if (graph && !metadataActive(doc, elements, graph)) {
      applyCategories(elements, new Map(graph.nodes.map((n) => [n.name, n.op_type])));
    }
  };
  const observer = observeGraph(win, {
    onRender: decorate,
    onSelect: (el) => {
      const name = el ? elementNodeName(el, doc, state.get('graph')) : null;
      if (name !== state.get('selection')) state.set('selection', name);
    },
  });
  const offs = ['heat', 'graph', 'picked', 'summary', 'calibrationStates'].map((k) => state.on(k, () => observer.refresh()));
  // A panel asks for another one (Run all's next steps): open that section of the dock and scroll to it.
  offs.push(state.on('showPanel', (id) => {
    const section = doc.querySelector(`#${PANEL_ID} .ptq-section-${id}`);
    if (!section) return;
    section.open = true;
    section.scrollIntoView?.({ block: 'start' });
  }));
  observer.refresh();

  // Ctrl/⌘/Shift+click on a node header picks it (toggles it in state 'picked'), as in the web app's
  // graph view. Netron gets the click as well (it selects the node as usual).
  const onPickClick = (e) => {
    if (!(e.ctrlKey || e.metaKey || e.shiftKey)) return;
    const el = e.target?.closest?.('g.node.graph-node');
    const name = el && e.target.closest('g.node-item') ? elementNodeName(el, doc, state.get('graph')) : null;
    if (name) state.set('picked', togglePicked(state.get('picked'), name));
  };
  const target = graphRoot(doc);
  target.addEventListener('click', onPickClick, true);

  return {
    ok: true,
    state,
    runner,
    panel,
    metadataWrapped,
    decorate,
    dispose() {
      stopCapture();
      offRelations();
      target.removeEventListener('click', onPickClick, true);
      observer.disconnect();
      offs.forEach((off) => off());
      heat.dispose();
      reports.dispose();
      setChannelRunner(null);
      runner.dispose();
      panel.dispose();
      legend.dispose();
      legendBox.remove();
      graphWidth.disconnect();
    },
  };
}

// The labels of the calibration nodes the configuration in effect changes, on each node Netron draws
// for them (a Q/DQ model's QuantizeLinear / DequantizeLinear nodes too), or, for one Netron draws no
// node of (a QOperator model's weight quantizer, inside its QLinearConv), on the nodes it feeds:
// Map<element's node name, {text, title}> (several on one node: their common state, or "mixed").
function configLabels(graph, states, elements) {
  const on = new Map(); // node name -> [[calibration name, state]]
  const add = (node, entry) => on.set(node, [...(on.get(node) ?? []), entry]);
  for (const [name, now] of changedCalibrations(graph, states)) {
    const own = [...namesWithQdqNodes([name], graph)].filter((n) => elements.has(n));
    const feeds = own.length ? own : (graph?.nodes ?? []).filter((n) => n.input_calibrations?.includes(name) && elements.has(n.name)).map((n) => n.name);
    for (const node of feeds) add(node, [name, now]);
  }
  return new Map([...on].map(([node, entries]) => {
    const texts = new Set(entries.map(([, now]) => effectText(now)));
    return [node, { text: texts.size === 1 ? [...texts][0] : 'mixed', title: entries.map(([name, now]) => `${name}\n${effectTitle(now)}`).join('\n') }];
  }));
}

// True when Netron already styles horizon ops from a schema (our metadata entries are installed):
// then the category-class fallback is not needed.
function metadataActive(doc, elements, graph) {
  const hz = graph.nodes.find((n) => n.domain === 'horizon' && elements.has(n.name));
  if (!hz) return true;
  const header = [...elements.get(hz.name).children].find((c) => c.classList?.contains('node-item'));
  return !!header && [...header.classList].some((c) => c.startsWith('node-item-type-') && !header.hasAttribute('data-ptq-category'));
}

// Waits (without blocking Netron) until Netron's load handler created window.__view__, then installs.
// Gives up after `timeoutMs` with the banner.
export function startWhenReady(win, deps, { timeoutMs = 8000, intervalMs = 50 } = {}) {
  return new Promise((resolve) => {
    const started = Date.now();
    const attempt = () => {
      if (win.__view__ || Date.now() - started >= timeoutMs) {
        resolve(installPlugin(win, deps));
        return;
      }
      win.setTimeout(attempt, intervalMs);
    };
    if (win.document.readyState === 'complete') attempt();
    else win.addEventListener('load', attempt, { once: true });
  });
}
