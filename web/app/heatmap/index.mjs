// Heatmap overlay: keeps state 'heat' in step with the results, a dock panel to choose the view
// (node / weight / activation / leave-one-out) and metric with its legend, and the node sidebar
// section with that node's rows and charts.
import { state } from '../state.mjs';
import { registerPanel, registerSidebarSection } from '../shell.mjs';
import { heatScale } from '../../charts/heat_scale.mjs';
import { renderHeatLegend } from '../../charts/legend.mjs';
import { createHeatController, availableViews, metricsOfView, resolveSettings } from './controller.mjs';
import { renderNodeSection } from './sidebar.mjs';
import { el } from '../analysis/forms.mjs';
import { formatValue } from './mapping.mjs';

const VIEW_LABELS = { node: 'node', weight: 'weight', activation: 'activation', leave_one_out: 'leave-one-out' };

export const heatController = createHeatController(state, heatScale);

function mountHeatPanel(root, st) {
  const doc = root.ownerDocument;
  const views = el(doc, 'div', { class: 'ptq-heat-views', role: 'radiogroup', 'aria-label': 'heatmap view' });
  const metric = el(doc, 'select', { class: 'ptq-heat-metric', 'aria-label': 'heatmap metric' });
  const legend = el(doc, 'div', { class: 'ptq-heat-legend' });
  const summary = el(doc, 'p', { class: 'ptq-heat-summary' });
  root.append(el(doc, 'div', { class: 'ptq-heat' }, views, metric, legend, summary));

  function draw() {
    const result = st.get('results');
    const settings = resolveSettings(result, st.get('heatSettings') ?? {});
    views.replaceChildren();
    for (const v of Object.keys(VIEW_LABELS)) {
      const has = availableViews(result).includes(v);
      const b = el(doc, 'button', {
        type: 'button', 'data-view': v, text: VIEW_LABELS[v], disabled: !has, role: 'radio',
        'aria-checked': String(settings.view === v),
      });
      b.addEventListener('click', () => st.set('heatSettings', { ...st.get('heatSettings'), view: v }));
      views.append(b);
    }
    metric.replaceChildren(...metricsOfView(result, settings.view, settings.looType).map((m) =>
      el(doc, 'option', { value: m, text: m, selected: m === settings.metric })));
    metric.disabled = !settings.view;
    legend.replaceChildren();
    const heat = st.get('heat');
    if (heat?.legend) renderHeatLegend(legend, heat.legend);
    const [lo, hi] = heat?.legend?.domain ?? [];
    summary.textContent = heat
      ? `${heat.values.size} nodes coloured · ${heat.legend.title} · ${heat.legend.direction} · range ${formatValue(lo, 8)} … ${formatValue(hi, 8)}`
      : 'Run an analysis to colour the graph.';
  }
  metric.addEventListener('change', () => st.set('heatSettings', { ...st.get('heatSettings'), metric: metric.value }));
  st.on('heat', draw);
  draw();
}

registerPanel({ id: 'heatmap', title: 'Heatmap', mount: mountHeatPanel });
registerSidebarSection({ id: 'analysis-results', title: 'Analysis results', render: renderNodeSection });
