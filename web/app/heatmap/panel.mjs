// The heatmap's controls as a mountable component (the app's dock tab "Heatmap" and the Netron
// plugin's "Heatmap" section mount this same code): the view (node / weight / activation /
// leave-one-out), the metric and the legend of state 'heat' with its direction and range. It only
// writes state 'heatSettings'; the host's heat controller (controller.mjs) turns that into 'heat'.
// Side-effect free on import (no app store, no shell), so a host with its own store can use it.
import { renderHeatLegend } from '../../charts/legend.mjs';
import { distinctDigits } from '../../charts/heat_scale.mjs';
import { scaleSelect } from './legend_overlay.mjs';
import { availableViews, metricsOfView, resolveSettings, heatContext } from './controller.mjs';
import { el } from '../analysis/forms.mjs';
import { formatValue } from './mapping.mjs';

const VIEW_LABELS = {
  node: 'node', weight: 'weight', activation: 'activation', leave_one_out: 'leave-one-out',
  what_if: 'what-if', own: 'own error', accumulated: 'accumulated error', hints: 'hints', compare: 'compare Δ', report: 'report',
};

/**
 * mountHeatPanel(root, state, { legendWidth }) -> { element, dispose() }
 * state: a web/app/state.mjs store (reads 'results', 'heatSettings', 'heat'; writes 'heatSettings').
 * legendWidth: the legend's width in px (default: the legend module's).
 */
export function mountHeatPanel(root, state, { legendWidth } = {}) {
  const doc = root.ownerDocument;
  const views = el(doc, 'div', { class: 'ptq-heat-views', role: 'radiogroup', 'aria-label': 'heatmap view' });
  const metric = el(doc, 'select', { class: 'ptq-heat-metric', 'aria-label': 'heatmap metric' });
  const scale = scaleSelect(doc, state);
  const legend = el(doc, 'div', { class: 'ptq-heat-legend' });
  const summary = el(doc, 'p', { class: 'ptq-heat-summary' });
  const element = el(doc, 'div', { class: 'ptq-heat' }, views, metric, scale.element, legend, summary);
  root.append(element);
  const choose = (change) => state.set('heatSettings', { ...state.get('heatSettings'), ...change });

  function draw() {
    const result = state.get('results');
    const context = heatContext(state);
    const settings = resolveSettings(result, state.get('heatSettings') ?? {}, context);
    const has = availableViews(result, context);
    views.replaceChildren(...Object.entries(VIEW_LABELS).map(([v, label]) => {
      const b = el(doc, 'button', {
        type: 'button', 'data-view': v, text: label, disabled: !has.includes(v), role: 'radio',
        'aria-checked': String(settings.view === v),
      });
      b.addEventListener('click', () => choose({ view: v }));
      return b;
    }));
    metric.replaceChildren(...metricsOfView(result, settings.view, settings.looType, context).map((m) =>
      el(doc, 'option', { value: m, text: m, selected: m === settings.metric })));
    metric.disabled = !settings.view;
    legend.replaceChildren();
    const heat = state.get('heat');
    scale.sync(heat);
    if (heat?.legend) renderHeatLegend(legend, heat.legend, legendWidth ? { width: legendWidth } : {});
    const [lo, hi] = heat?.legend?.domain ?? [];
    const digits = distinctDigits(lo, hi, 6);
    summary.textContent = heat
      ? `${heat.values.size} nodes coloured · ${heat.legend.title} · ${heat.legend.direction} · range ${formatValue(lo, digits)} … ${formatValue(hi, digits)}` +
        `${heat.legend.note ? ` · ${heat.legend.note}` : ''}`
      : 'Run an analysis to colour the graph.';
  }
  metric.addEventListener('change', () => choose({ metric: metric.value }));
  // 'heat' alone is not enough: a result without a heat view leaves 'heat' null and unannounced.
  const offs = ['results', 'heatSettings', 'heat', 'compare', 'report'].map((k) => state.on(k, draw));
  draw();
  return {
    element,
    dispose() {
      offs.forEach((off) => off());
      element.remove();
    },
  };
}
