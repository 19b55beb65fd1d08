// The panel's stylesheet (Netron's CSP restricts scripts only, so a <style> element is allowed).
// The web app's analyses / export styles (web/app/analysis/analysis.css, only .ptq-* classes, which
// Netron does not use) come first; the plugin's rules are scoped under #ptqscope-panel so Netron's own
// elements are never restyled (but for the outline of the nodes we mark data-ptq-picked), and lay the
// app's two-column dock panel out as one narrow column.
// (Under Vitest the ?inline import is an empty string.)
import APP_CSS from '../../web/app/analysis/analysis.css?inline';

export const PANEL_CSS = `
#ptqscope-panel { --accent: #2e6bd2; --muted: #666; --mono: ui-monospace, Menlo, Consolas, monospace;
  position: fixed; left: 10px; top: 44px; z-index: 3; width: 460px; min-width: 300px; max-width: calc(100vw - 40px);
  max-height: calc(100vh - 100px); resize: horizontal; overflow: auto; background: rgba(255,255,255,0.97); color: #222; border: 1px solid #bbb; border-radius: 6px;
  box-shadow: 0 2px 8px rgba(0,0,0,0.15); font: 12px -apple-system, "Segoe UI", Ubuntu, sans-serif; }
#ptqscope-panel .ptq-header { display: flex; justify-content: space-between; align-items: center; padding: 4px 8px;
  border-bottom: 1px solid #ddd; background: #f3f3f3; }
#ptqscope-panel .ptq-toggle { border: 0; background: none; cursor: pointer; font-size: 14px; }
#ptqscope-panel .ptq-body { padding: 6px 8px; }
#ptqscope-panel .ptq-section { margin: 6px 0; padding-top: 4px; border-top: 1px solid #eee; }
#ptqscope-panel .ptq-section > summary { cursor: pointer; font-weight: bold; margin-bottom: 4px; }
#ptqscope-panel .ptq-analyses { display: block; height: auto; padding: 0; }
#ptqscope-panel .ptq-analysis-tabs, #ptqscope-panel .ptq-run-row { margin: 4px 0; }
#ptqscope-panel .ptq-analysis-output { max-height: 60vh; }
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
#nodes > g.node[data-ptq-picked] > path.node-border { stroke: #2e6bd2; stroke-width: 3px; stroke-dasharray: 5 2; }
@media (prefers-color-scheme: dark) {
  #ptqscope-panel { background: rgba(45,45,45,0.97); color: #ddd; border-color: #555; --muted: #aaa; }
  #ptqscope-panel .ptq-header { background: #383838; border-color: #555; }
  #ptqscope-panel .ptq-toggle { color: #ddd; }
}
`;

export function injectStyle(doc) {
  if (doc.getElementById('ptqscope-style')) return;
  const style = doc.createElement('style');
  style.id = 'ptqscope-style';
  style.textContent = `${APP_CSS}\n${PANEL_CSS}`;
  doc.head.append(style);
}
