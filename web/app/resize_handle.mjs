// A handle on a panel's edge that resizes it (the page's dock, the Netron plugin's dock): dragged with
// the pointer (captured, so the drag survives leaving the handle) or moved by arrow keys when focused
// (20 px a press, 80 px with Shift). The host turns positions and steps into its own size.

const STEP = 20;
const BIG_STEP = 80;

/**
 * bindResizeHandle(handle, panel, {resizingClass, onDrag(pointerEvent), keys: {key: ±1}, onStep(px)})
 * panel gets `resizingClass` while dragged (no text selection meanwhile); keys maps the arrow keys that
 * grow (+1) or shrink (−1) the panel.
 */
export function bindResizeHandle(handle, panel, { resizingClass, onDrag, keys, onStep }) {
  handle.addEventListener('pointerdown', (e) => {
    e.preventDefault();
    handle.setPointerCapture?.(e.pointerId);
    panel.classList.add(resizingClass);
    const up = () => {
      panel.classList.remove(resizingClass);
      handle.removeEventListener('pointermove', onDrag);
      handle.removeEventListener('pointerup', up);
      handle.removeEventListener('pointercancel', up);
    };
    handle.addEventListener('pointermove', onDrag);
    handle.addEventListener('pointerup', up);
    handle.addEventListener('pointercancel', up);
  });
  handle.addEventListener('keydown', (e) => {
    const sign = keys[e.key];
    if (!sign) return;
    e.preventDefault();
    onStep(sign * (e.shiftKey ? BIG_STEP : STEP));
  });
}
