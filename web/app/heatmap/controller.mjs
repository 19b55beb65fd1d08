// Keeps state 'heat' in step with state 'results' and the heatmap settings (state 'heatSettings':
// {view, metric, looType}). Env-neutral: heatScale (web/charts/heat_scale.mjs) is passed in.
import { VIEWS, buildHeat, metricColumns, viewTable } from './mapping.mjs';

export function availableViews(result) {
  return VIEWS.filter((v) => viewTable(result, v));
}

export function metricsOfView(result, view, looType) {
  const table = viewTable(result, view, looType);
  return table ? metricColumns(table.rows) : [];
}

// The settings actually used: the requested view if the result has it, else the first it has;
// the requested metric if that view has it, else its first metric (the sort key).
export function resolveSettings(result, { view, metric, looType } = {}) {
  const views = availableViews(result);
  const v = views.includes(view) ? view : views[0] ?? null;
  const metrics = v ? metricsOfView(result, v, looType) : [];
  return { view: v, metric: metrics.includes(metric) ? metric : metrics[0] ?? null, looType };
}

export function createHeatController(state, heatScale) {
  function refresh() {
    const result = state.get('results');
    const settings = resolveSettings(result, state.get('heatSettings') ?? {});
    if (!settings.view || !settings.metric) {
      if (state.get('heat')) state.set('heat', null);
      return;
    }
    state.set('heat', buildHeat(result, state.get('graph'), settings, heatScale));
  }
  const offs = ['results', 'heatSettings', 'graph'].map((k) => state.on(k, refresh));
  refresh();
  return { refresh, dispose: () => offs.forEach((off) => off()) };
}
