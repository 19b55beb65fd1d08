// The panel's stylesheet (Netron's CSP restricts scripts only, so a <style> element is allowed).
// Scoped under #ptqscope-panel so Netron's own elements are never restyled by it.
export const PANEL_CSS = `
#ptqscope-panel { position: fixed; left: 10px; top: 44px; z-index: 3; width: 300px; max-height: calc(100vh - 100px);
  overflow: auto; background: rgba(255,255,255,0.97); color: #222; border: 1px solid #bbb; border-radius: 6px;
  box-shadow: 0 2px 8px rgba(0,0,0,0.15); font: 12px -apple-system, "Segoe UI", Ubuntu, sans-serif; }
#ptqscope-panel .ptq-header { display: flex; justify-content: space-between; align-items: center; padding: 4px 8px;
  border-bottom: 1px solid #ddd; background: #f3f3f3; }
#ptqscope-panel .ptq-toggle { border: 0; background: none; cursor: pointer; font-size: 14px; }
#ptqscope-panel .ptq-body { padding: 6px 8px; }
#ptqscope-panel section { margin: 6px 0; padding-top: 6px; border-top: 1px solid #eee; }
#ptqscope-panel section:first-of-type { border-top: 0; }
#ptqscope-panel .ptq-drop { border: 1px dashed #999; border-radius: 4px; padding: 6px; margin: 4px 0; text-align: center; }
#ptqscope-panel .ptq-drop.ptq-drag { background: #e8f0fe; border-color: #2e6bd2; }
#ptqscope-panel .ptq-drop button { margin: 4px 2px 0; }
#ptqscope-panel .ptq-metrics { display: flex; flex-wrap: wrap; gap: 2px 8px; margin: 4px 0; }
#ptqscope-panel .ptq-progress { width: 110px; vertical-align: middle; }
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
@media (prefers-color-scheme: dark) {
  #ptqscope-panel { background: rgba(45,45,45,0.97); color: #ddd; border-color: #555; }
  #ptqscope-panel .ptq-header { background: #383838; border-color: #555; }
  #ptqscope-panel .ptq-toggle { color: #ddd; }
}
`;

export function injectStyle(doc) {
  if (doc.getElementById('ptqscope-style')) return;
  const style = doc.createElement('style');
  style.id = 'ptqscope-style';
  style.textContent = PANEL_CSS;
  doc.head.append(style);
}
