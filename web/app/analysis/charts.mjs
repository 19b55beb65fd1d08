// Every chart of a result document, as {id, title, file (without extension), render(target, options)}.
// Shared by the result views, the sidebar and the exports (SVG/PNG of every chart).
import { accErrorFigures, averagedFigure, renderAccError } from '../../charts/acc_error.mjs';
import { renderHistogram } from '../../charts/histogram.mjs';
import { renderBoxplot } from '../../charts/boxplot.mjs';
import { renderSensitivityAnalysis } from '../../charts/sensitivity_analysis.mjs';
import { renderStatInfo } from '../../charts/stat_info.mjs';
import { safeName } from '../../charts/format.mjs';
import { orderedItems } from '../heatmap/mapping.mjs';

function stem(fileName) {
  return safeName(String(fileName).replace(/\.png$/i, ''));
}

// kind: 'acc_error' | 'distribution' | 'channelwise' | 'stat_info' | 'sensitivity_analysis'; `name` is the node/calibration item (or the
// figure prefix) the chart belongs to, `nodes` the graph nodes it is about (for the sidebar).
export function chartList(result, graph) {
  const charts = [];
  if (!result) return charts;
  if (result.acc_error_figures?.length) {
    const producer = (t) => graph?.values?.[t]?.producer ?? t;
    for (const fig of accErrorFigures(result)) {
      charts.push({
        kind: 'acc_error', name: fig.prefix, nodes: [], title: fig.prefix, file: `accumulate_error/${stem(fig.file_name)}`,
        // options.average: show a raw figure as running means (the original's average_mode) without re-running.
        render: (target, { average, ...options } = {}) =>
          renderAccError(target, average ? averagedFigure(fig) : fig, { nodeOf: producer, ...options }),
      });
    }
  }
  for (const key of orderedItems({ rows: result.distribution ?? {}, order: result.distribution_order })) {
    const plot = result.distribution[key];
    charts.push({
      kind: 'distribution', name: plot.name ?? key, nodes: [plot.name ?? key], title: plot.title ?? key,
      file: `data_distribution/${stem(plot.file_name ?? key)}`,
      render: (target, options = {}) => renderHistogram(target, plot, options),
    });
  }
  for (const key of orderedItems({ rows: result.channelwise ?? {}, order: result.channelwise_order })) {
    const plot = result.channelwise[key];
    charts.push({
      kind: 'channelwise', name: key, nodes: [key], title: `${key} box plot`,
      file: `channelwise_distribution/${stem(plot.file_name ?? `${key}_boxplot`)}`,
      render: (target, options = {}) => renderBoxplot(target, { name: key, ...plot }, options),
    });
  }
  for (const type of ['weight', 'feature']) {
    const curves = result.stat_info_curves?.[type];
    if (!curves?.nodes?.length) continue;
    charts.push({
      kind: 'stat_info', name: type, nodes: [], title: `${type} calibration nodes`, file: `stat_info/${type}_stat_info`,
      render: (target, options = {}) => renderStatInfo(target, curves, { tensorType: type, ...options }),
    });
  }
  const sa = result.sensitivity_analysis;
  if (sa?.x?.length) {
    charts.push({
      kind: 'sensitivity_analysis', name: 'partial_quantization', nodes: [], title: 'Partial Quantization Analysis',
      file: `sensitivity_analysis/${stem(sa.file_name ?? 'partial_quantization')}`,
      render: (target, options = {}) => renderSensitivityAnalysis(target, sa, options),
    });
  }
  return charts;
}
