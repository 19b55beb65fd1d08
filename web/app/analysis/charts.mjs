// Every chart of a result document, as {id, title, file (without extension), render(target, options)}.
// Shared by the result views, the sidebar and the exports (SVG/PNG of every chart).
import { accErrorFigures, renderAccError } from '../../charts/acc_error.mjs';
import { renderHistogram } from '../../charts/histogram.mjs';
import { renderBoxplot } from '../../charts/boxplot.mjs';
import { safeName } from '../../charts/format.mjs';
import { orderedItems } from '../heatmap/mapping.mjs';

function stem(fileName) {
  return safeName(String(fileName).replace(/\.png$/i, ''));
}

// kind: 'acc_error' | 'distribution' | 'channelwise'; `name` is the node/calibration item (or the
// figure prefix) the chart belongs to, `nodes` the graph nodes it is about (for the sidebar).
export function chartList(result, graph) {
  const charts = [];
  if (!result) return charts;
  if (result.acc_error_figures?.length) {
    const producer = (t) => graph?.values?.[t]?.producer ?? t;
    for (const fig of accErrorFigures(result)) {
      charts.push({
        kind: 'acc_error', name: fig.prefix, nodes: [], title: fig.prefix, file: `accumulate_error/${stem(fig.file_name)}`,
        render: (target, options = {}) => renderAccError(target, fig, { nodeOf: producer, ...options }),
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
  return charts;
}
