// Keeps state 'heat' in step with state 'results', state 'compare' (two compared results) and the
// heatmap settings (state 'heatSettings': {view, metric, looType}). Env-neutral: heatScale
// (web/charts/heat_scale.mjs) is passed in.
import { VIEWS, buildHeat, metricColumns, viewTable } from './mapping.mjs';

// `context`: {compare} (state 'compare'), for the compare view.
export function availableViews(result, context = {}) {
  return VIEWS.filter((v) => viewTable(result, v, undefined, context));
}

export function metricsOfView(result, view, looType, context = {}) {
  const table = viewTable(result, view, looType, context);
  return table ? metricColumns(table.rows) : [];
}

// The settings actually used: the requested view if the result has it, else the first it has;
// the requested metric if that view has it, else its first metric (the sort key); the heat scale as
// asked (heat_scale.mjs resolves 'auto' per metric).
export function resolveSettings(result, { view, metric, looType, scale } = {}, context = {}) {
  const views = availableViews(result, context);
  const v = views.includes(view) ? view : views[0] ?? null;
  const metrics = v ? metricsOfView(result, v, looType, context) : [];
  return { view: v, metric: metrics.includes(metric) ? metric : metrics[0] ?? null, looType, scale };
}

export function createHeatController(state, heatScale) {
  function refresh() {
    const result = state.get('results');
    const context = heatContext(state);
    const settings = resolveSettings(result, state.get('heatSettings') ?? {}, context);
    if (!settings.view || !settings.metric) {
      if (state.get('heat')) state.set('heat', null);
      return;
    }
    state.set('heat', buildHeat(result, state.get('graph'), settings, heatScale, context));
  }
  const offs = ['results', 'heatSettings', 'graph', 'compare', 'report'].map((k) => state.on(k, refresh));
  refresh();
  return { refresh, dispose: () => offs.forEach((off) => off()) };
}

// What the views read besides the results: the comparison of two results (state 'compare') and the
// toolchain report opened beside the model (state 'report': its result-shaped document).
export const heatContext = (state) => ({
  compare: state.get('compare')?.comparison ?? null,
  report: state.get('report')?.document ?? null,
});
