// Follows Netron's rendering without hooking its code: one MutationObserver on #target (Netron swaps
// svg#canvas for a new one on every re-render: option toggles, re-open, navigation) and on body's
// class (`spinner` while opening / laying out, `default` when done). Decorations are re-applied on
// every batch that added or removed elements; they are idempotent, so re-applying while Netron is
// still laying out (nodes exist but are not positioned yet) is harmless, and the final batch
// (body → `default`) applies them once more. Class changes on a g.node are selection changes.
import { graphRoot, selectedNodeElement, hasClass } from './contract.mjs';

const OWN_MARKS = ['ptq-heat-title', 'ptq-config-label'];

export function observeGraph(win, { onRender, onSelect }) {
  const doc = win.document;
  const target = graphRoot(doc);
  let pendingRender = false;
  let pendingSelect = false;
  let scheduled = false;
  let selected = null;

  const flush = () => {
    scheduled = false;
    if (pendingRender) {
      pendingRender = false;
      onRender();
    }
    if (pendingSelect) {
      pendingSelect = false;
      const el = selectedNodeElement(doc);
      if (el !== selected) {
        selected = el;
        onSelect(el);
      }
    }
  };
  const schedule = () => {
    if (scheduled) return;
    scheduled = true;
    queueMicrotask(flush);
  };

  const mo = new win.MutationObserver((records) => {
    for (const r of records) {
      if (r.type === 'childList') {
        // Our own marks (a <title> under a header path, the configuration label of a node: added,
        // removed or their text changed) are not a render.
        const own = (n) => OWN_MARKS.some((c) => hasClass(n, c));
        const ours = own(r.target) || [...r.addedNodes, ...r.removedNodes].every(own);
        if (!ours) {
          pendingRender = true;
          pendingSelect = true;
        }
      } else if (r.target === doc.body) {
        pendingRender = true;
      } else if (hasClass(r.target, 'node')) {
        pendingSelect = true;
      }
    }
    if (pendingRender || pendingSelect) schedule();
  });
  mo.observe(target, { childList: true, subtree: true, attributes: true, attributeFilter: ['class'] });
  mo.observe(doc.body, { attributes: true, attributeFilter: ['class'] });
  return {
    disconnect: () => mo.disconnect(),
    // For callers that changed what should be drawn (new heat, new graph).
    refresh: () => {
      pendingRender = true;
      pendingSelect = true;
      schedule();
    },
  };
}
