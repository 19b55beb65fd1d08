// Netron's graph beside the dock. Netron sizes its graph container (#target) with an inline width
// that it rewrites when its own sidebar opens or closes (contract.mjs graphWidthRequest); a
// stylesheet rule (ui/style.mjs) gives #target that width minus the dock's, so the graph pane always
// ends at the window's right edge (or at Netron's sidebar) whatever the window size. This module
// copies Netron's request into the CSS variable that rule reads, after every rewrite, and keeps the
// part of the graph a user was looking at in the middle when the dock's width changes.
import { graphRoot, graphWidthRequest } from './contract.mjs';

export const NETRON_WIDTH_VARIABLE = '--ptq-netron-width';

// Starts following Netron's width requests -> {keepCentre(delta), disconnect()}.
export function followGraphWidth(win) {
  const doc = win.document;
  const target = graphRoot(doc);
  const copy = () => doc.documentElement.style.setProperty(NETRON_WIDTH_VARIABLE, graphWidthRequest(doc));
  copy();
  const mo = new win.MutationObserver(copy);
  mo.observe(target, { attributes: true, attributeFilter: ['style'] });
  return {
    // The graph pane's left edge moved right by `delta` px and its width shrank by as much (negative:
    // the dock shrank or collapsed): scroll by half of it so the same point stays in the middle.
    keepCentre(delta) {
      if (!delta) return;
      target.scrollLeft = Math.max(0, target.scrollLeft + delta / 2);
    },
    disconnect() {
      mo.disconnect();
      doc.documentElement.style.removeProperty(NETRON_WIDTH_VARIABLE);
    },
  };
}
