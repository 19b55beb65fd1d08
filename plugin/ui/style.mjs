// The panel's stylesheet (Netron's CSP restricts scripts only, so a <style> element is allowed).
// The web app's panel styles (web/app/analysis/analysis.css, whatif/whatif.css, reports/reports.css, explain/explain.css:
// only .ptq-* classes, which Netron does not use) come first; the plugin's rules are scoped under
// #ptqscope-panel so Netron's own elements are never restyled, but for the outline of the nodes we mark data-ptq-picked or data-ptq-unsupported and, while the
// dock is open (html[data-ptq-docked], dock.mjs), the left offset of Netron's graph (#target) and toolbar so
// that the dock sits beside the graph instead of over it, and the graph's width: the width Netron
// writes inline on #target (copied into --ptq-netron-width, netron/layout.mjs) minus the dock's, with
// !important because Netron's inline width would otherwise win. The app's panels are laid out as one column
// sized to the dock; a table's long node names are shortened in the middle (at most 20em: the name and
// its numbers fit the dock; the table scrolls sideways for the rest), whole in their tooltip and in the
// Selected node section; other names wrap. The heat
// legend (#ptqscope-legend, web/app/heatmap/legend_overlay.mjs) sits over Netron's graph pane, at its
// bottom left beside the dock.
// (Under Vitest the ?inline import is an empty string.)
import APP_CSS from '../../web/app/analysis/analysis.css?inline';
import WHATIF_CSS from '../../web/app/whatif/whatif.css?inline';
import REPORTS_CSS from '../../web/app/reports/reports.css?inline';
import EXPLAIN_CSS from '../../web/app/explain/explain.css?inline';

export const PANEL_CSS = `
#ptqscope-panel { --accent: #2e6bd2; --muted: #666; --mono: ui-monospace, Menlo, Consolas, monospace;
  position: fixed; left: 0; top: 0; bottom: 0; z-index: 1; box-sizing: border-box; width: 460px;
  display: flex; flex-direction: column; background: #fafafa; color: #222; border-right: 1px solid #ccc;
  font: 12px -apple-system, "Segoe UI", Ubuntu, sans-serif; }
html[data-ptq-docked] > body > #target { box-sizing: border-box; margin-left: var(--ptq-dock-width, 460px);
  width: max(120px, calc(var(--ptq-netron-width, 100%) - var(--ptq-dock-width, 460px))) !important; }
html[data-ptq-docked] > body > #toolbar { left: calc(var(--ptq-dock-width, 460px) + 10px); }
#ptqscope-panel .ptq-header { display: flex; justify-content: space-between; align-items: center; padding: 6px 8px 6px 38px;
  min-height: 20px; border-bottom: 1px solid #ddd; background: #ececec; flex: none; }
#ptqscope-panel.ptq-collapsed .ptq-header { flex-direction: column; padding: 40px 2px 6px; gap: 8px; border: 0; }
#ptqscope-panel.ptq-collapsed .ptq-title { writing-mode: vertical-rl; }
#ptqscope-panel .ptq-toggle { border: 0; background: none; cursor: pointer; font-size: 14px; color: inherit; }
#ptqscope-panel .ptq-resize { position: absolute; top: 0; right: -4px; width: 8px; height: 100%; cursor: col-resize; z-index: 2; }
#ptqscope-panel .ptq-resize:hover, #ptqscope-panel .ptq-resize:focus, #ptqscope-panel.ptq-resizing .ptq-resize { background: rgba(46,107,210,0.35); outline: none; }
#ptqscope-panel.ptq-resizing { user-select: none; }
#ptqscope-panel .ptq-body { flex: 1 1 auto; overflow: auto; min-height: 0; }
#ptqscope-panel .ptq-body table { max-width: 100%; }
#ptqscope-panel .ptq-body th, #ptqscope-panel .ptq-body td { overflow-wrap: anywhere; }
#ptqscope-panel .ptq-body [data-item], #ptqscope-panel .ptq-body .ptq-name { overflow-wrap: anywhere; white-space: normal; }
#ptqscope-panel .ptq-body { padding: 6px 8px; }
#ptqscope-panel .ptq-section { margin: 6px 0; padding-top: 4px; border-top: 1px solid #eee; }
#ptqscope-panel .ptq-section > summary { cursor: pointer; font-weight: bold; margin-bottom: 4px; }
#ptqscope-panel .ptq-analyses { display: block; height: auto; padding: 0; }
#ptqscope-panel .ptq-analysis-tabs, #ptqscope-panel .ptq-run-row { margin: 4px 0; }
#ptqscope-panel .ptq-analysis-output { max-height: none; overflow: visible; }
#ptqscope-panel { --ptq-name-width: 20em; }
#ptqscope-panel .ptq-sensitivity { overflow-x: auto; }
#ptqscope-panel .ptq-analysis-output .sensitivity-table { width: auto; }
#ptqscope-panel .ptq-analysis-output .sensitivity-table td { white-space: nowrap; overflow-wrap: normal; }
#ptqscope-panel .ptq-field > label:first-child { min-width: 90px; }
#ptqscope-panel .ptq-hint { margin-left: 0; }
#ptqscope-panel .ptq-export { padding: 0; }
#ptqscope-panel .ptq-export + .ptq-hint { margin: 4px 0; }
#ptqscope-panel .ptq-drop { border: 1px dashed #999; border-radius: 4px; padding: 6px; margin: 4px 0; text-align: center; }
#ptqscope-panel .ptq-drop.ptq-drag { background: #e8f0fe; border-color: #2e6bd2; }
#ptqscope-panel .ptq-drop button { margin: 4px 2px 0; }
#ptqscope-panel .ptq-progress { width: 110px; vertical-align: middle; }
#ptqscope-panel .ptq-progress-text { color: var(--muted); }
#ptqscope-panel .ptq-error { color: #a40000; white-space: pre-wrap; }
#ptqscope-panel .ptq-status, #ptqscope-panel .ptq-run-status { color: #555; }
#ptqscope-panel .ptq-node-title { font-weight: bold; word-break: break-all; }
#ptqscope-panel .ptq-node-rows { border-collapse: collapse; width: 100%; }
#ptqscope-panel .ptq-node-rows th { text-align: left; padding-top: 4px; word-break: break-all; }
#ptqscope-panel .ptq-node-rows td { padding: 0 4px; font-variant-numeric: tabular-nums; }
#ptqscope-panel svg { max-width: 100%; height: auto; }
#ptqscope-panel .ptq-node-actions { margin: 4px 0; display: flex; gap: 4px; }
#ptqscope-panel .ptq-node-body h4 { margin: 6px 0 2px; font-size: 12px; }
#ptqscope-panel dl.ptq-node-row { display: grid; grid-template-columns: auto 1fr; gap: 0 8px; margin: 0; }
#ptqscope-panel dl.ptq-node-row dt { color: #666; }
#ptqscope-panel dl.ptq-node-row dd { margin: 0; font-variant-numeric: tabular-nums; word-break: break-all; }
#ptqscope-panel figure { margin: 4px 0; }
#ptqscope-legend { position: fixed; left: calc(var(--ptq-dock-width, 460px) + 12px); bottom: 12px; z-index: 1;
  background: rgba(255,255,255,0.94); color: #222; border: 1px solid #ccc; border-radius: 6px; padding: 4px 6px;
  font: 12px -apple-system, "Segoe UI", Ubuntu, sans-serif; --muted: #666; }
#ptqscope-legend[hidden] { display: none; }
#nodes > g.node[data-ptq-picked] > path.node-border { stroke: #2e6bd2; stroke-width: 3px; stroke-dasharray: 5 2; }
#nodes > g.node[data-ptq-unsupported] > path.node-border { stroke: #b00020; stroke-width: 3px; stroke-dasharray: 5 3; }
#nodes > g.node[data-ptq-config] > path.node-border { stroke: #b00020; stroke-width: 2px; }
#nodes > g.node > g.ptq-config-label rect { fill: #fff3f3; stroke: #b00020; stroke-width: 1px; }
#nodes > g.node > g.ptq-config-label text { font: bold 9px -apple-system, "Segoe UI", Ubuntu, sans-serif; fill: #b00020; }
@media (prefers-color-scheme: dark) {
  #ptqscope-panel { background: #2d2d2d; color: #ddd; border-color: #555; --muted: #aaa; }
  #ptqscope-panel .ptq-header { background: #383838; border-color: #555; }
  #ptqscope-panel .ptq-toggle { color: #ddd; }
}
`;

export function injectStyle(doc) {
  if (doc.getElementById('ptqscope-style')) return;
  const style = doc.createElement('style');
  style.id = 'ptqscope-style';
  style.textContent = `${APP_CSS}\n${WHATIF_CSS}\n${REPORTS_CSS}\n${EXPLAIN_CSS}\n${PANEL_CSS}`;
  doc.head.append(style);
}
