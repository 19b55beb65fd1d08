// The heat legend over a graph (as Google's Model Explorer puts its legend on the graph): the legend of
// state 'heat' (web/charts/legend.mjs: direction, colour ramp, the ends or the fixed scale's
// reference values and where the values shown lie), what the colours mean, and the scale to colour by.
// Mounted over the page's graph view (main.mjs) and over Netron's graph pane by the plugin
// (plugin/plugin.mjs); hidden while nothing is coloured. Side-effect free on import.
import { renderHeatLegend } from '../../charts/legend.mjs';
import { FIXED_SCALES } from '../../charts/heat_scale.mjs';
import { el } from '../analysis/forms.mjs';

// The scales a user can choose (state heatSettings.scale); 'fixed' only where the metric has one.
export const SCALE_CHOICES = [
  ['fixed', 'fixed reference'],
  ['range', 'range of the values shown'],
  ['log', 'range, log axis'],
];

// A <select> of the heat scale, in step with state 'heat' -> {element, sync(heat)}.
export function scaleSelect(doc, state) {
  const select = el(doc, 'select', { class: 'ptq-heat-scale', 'aria-label': 'heat scale' });
  select.append(...SCALE_CHOICES.map(([value, text]) => el(doc, 'option', { value, text })));
  select.addEventListener('change', () => state.set('heatSettings', { ...state.get('heatSettings'), scale: select.value }));
  return {
    element: select,
    sync(heat) {
      const legend = heat?.legend;
      select.disabled = !legend || legend.view === 'compare';
      for (const o of select.querySelectorAll('option')) {
        o.disabled = o.value === 'fixed' && !FIXED_SCALES[legend?.metric];
        if (legend) o.selected = o.value === legend.scale;
      }
    },
  };
}

/**
 * mountHeatLegend(root, state, {width}) -> {element, dispose()}
 * root: the element over the graph to fill (the page's `.graph-legend`, the plugin's overlay).
 */
export function mountHeatLegend(root, state, { width = 250 } = {}) {
  const doc = root.ownerDocument;
  // The title in HTML, wrapping over the legend's width (the SVG leaves it out).
  const title = el(doc, 'div', { class: 'ptq-legend-title' });
  const picture = el(doc, 'div', { class: 'ptq-legend-picture' });
  const note = el(doc, 'p', { class: 'ptq-legend-note' });
  const scale = scaleSelect(doc, state);
  const element = el(doc, 'div', { class: 'ptq-graph-legend', role: 'group', 'aria-label': 'heat legend' },
    title, picture, el(doc, 'label', { class: 'ptq-legend-scale' }, doc.createTextNode('Scale '), scale.element), note);
  root.append(element);
  function draw() {
    const heat = state.get('heat');
    root.hidden = !heat?.legend;
    picture.replaceChildren();
    scale.sync(heat);
    if (!heat?.legend) return;
    title.textContent = `${heat.legend.title} (${heat.legend.direction})`;
    renderHeatLegend(picture, heat.legend, { width, title: false });
    note.textContent = heat.legend.note ?? '';
  }
  const off = state.on('heat', draw);
  draw();
  return {
    element,
    dispose() {
      off();
      element.remove();
    },
  };
}
