// Every chart of a result document, as {id, title, file (without extension), render(target, options)}.
// Shared by the result views, the sidebar and the exports (SVG/PNG of every chart).
import { accErrorFigures, averagedFigure, renderAccError } from '../../charts/acc_error.mjs';
import { renderHistogram } from '../../charts/histogram.mjs';
import { renderBoxplot } from '../../charts/boxplot.mjs';
import { renderSensitivityAnalysis } from '../../charts/sensitivity_analysis.mjs';
import { renderStatInfo } from '../../charts/stat_info.mjs';
import { safeName } from '../../charts/format.mjs';
import { orderedItems, nodeIndex } from '../heatmap/mapping.mjs';

// A click (or Enter) on a box asks the core for that channel's histogram: a channelwise request with
// `channels: [k]` (docs/wasm-api.md) run by the host's analysis runner. The host registers it:
// run(request, label, onWait?) -> Promise<result document> (the app and the plugin: queuedRun of their
// runner, which waits for a run in flight, telling onWait(label) what it waits for and onWait(null)
// when its own run starts, and folds the answer into state 'results'). One runner per page.
let channelRunner = null;
export function setChannelRunner(run) {
  channelRunner = run ?? null;
}

// The request for channel `channel` of box plot `name`: the options of the run that drew it (axis,
// outlier_cap, sample_selection and its nodes_list, so the merged document keeps its order), only
// that item computed.
export function channelRequest(result, name, channel) {
  const used = result?.options?.channelwise ?? {};
  const options = { nodes_list: used.nodes_list?.includes(name) ? used.nodes_list : [name], channels: [channel] };
  for (const k of ['axis', 'outlier_cap', 'sample_selection']) if (used[k] !== undefined && used[k] !== null) options[k] = used[k];
  return { analysis: 'channelwise', options, items: [name] };
}

// One `channel_histograms` entry as a histogram.mjs plot, titled with the node, its tensor and the channel.
export function channelHistogramPlot(name, entry, { tensor, channels } = {}) {
  const k = Number(entry.channel);
  const of = channels ? ` of ${channels}` : '';
  return {
    title: `${name} channel ${k + 1}${of} (index ${k})${tensor ? `\ntensor ${tensor}` : ''}`,
    threshold: entry.threshold, max_abs: entry.max_abs, histograms: [entry.histogram],
  };
}

// The box plot and, under it, the histograms of the channels asked for (from the document, or fetched
// on a click). Exports (interactive: false) get the box plot alone; chartList gives them each channel
// histogram as a chart of its own.
function renderChannelwise(target, result, tensor, name, plot, options) {
  const doc = target.ownerDocument;
  const boxes = doc.createElement('div');
  const status = doc.createElement('p');
  const histograms = doc.createElement('div');
  status.setAttribute('class', 'ptq-channel-status');
  status.setAttribute('role', 'status');
  histograms.setAttribute('class', 'ptq-channel-histograms');
  target.append(boxes, status, histograms);
  const interactive = options.interactive ?? true;
  let chart = null;
  const draw = (entry) => {
    const shown = entry.channel_histograms ?? [];
    boxes.replaceChildren();
    chart = renderBoxplot(boxes, { name, ...entry }, {
      ...options, selected: shown.length ? Number(shown[shown.length - 1].channel) : undefined,
      onChannel: interactive ? (k) => pick(k) : undefined,
    });
    histograms.replaceChildren();
    if (!interactive) return;
    for (const h of shown) {
      const holder = doc.createElement('div');
      holder.setAttribute('class', 'ptq-channel-histogram');
      holder.setAttribute('data-channel', String(h.channel));
      histograms.append(holder);
      renderHistogram(holder, channelHistogramPlot(name, h, { tensor, channels: entry.channels?.length }),
        { width: options.width ?? 640, height: options.height ?? 360 });
    }
  };
  async function pick(k) {
    if (!channelRunner) {
      status.textContent = `channel ${k + 1}: channel histograms need the page's analysis runner (none here)`;
      return;
    }
    status.textContent = `channel ${k + 1}: computing its histogram…`;
    const onWait = (busy) => {
      status.textContent = busy ? `channel ${k + 1}: waiting for '${busy}' to finish…` : `channel ${k + 1}: computing its histogram…`;
    };
    try {
      const answer = await channelRunner(channelRequest(result, name, k), `histogram of ${name} channel ${k + 1}`, onWait);
      const entry = answer?.channelwise?.[name];
      if (!entry?.channel_histograms?.length) {
        status.textContent = `channel ${k + 1}: cancelled`;
        return;
      }
      status.textContent = '';
      draw(entry);
    } catch (err) {
      status.textContent = `channel ${k + 1}: ${err?.message ?? err}`;
    }
  }
  draw(plot);
  return chart;
}

function stem(fileName) {
  return safeName(String(fileName).replace(/\.png$/i, ''));
}

// kind: 'acc_error' | 'distribution' | 'channelwise' | 'channel_histogram' | 'stat_info' | 'sensitivity_analysis'; `name` is the node/calibration item (or the
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
  // Run order = the request's nodes_list (a channel-histogram request re-runs one item of it, so its
  // channelwise_order names that item alone).
  const channelwiseOrder = result.options?.channelwise?.nodes_list ?? result.channelwise_order;
  for (const key of orderedItems({ rows: result.channelwise ?? {}, order: channelwiseOrder })) {
    const plot = result.channelwise[key];
    const file = `channelwise_distribution/${stem(plot.file_name ?? `${key}_boxplot`)}`;
    const tensor = nodeIndex(graph).get(key)?.inputs?.[0];  // named in the channel histograms' titles
    charts.push({
      kind: 'channelwise', name: key, nodes: [key], title: `${key} box plot`, file,
      render: (target, options = {}) => renderChannelwise(target, result, tensor, key, plot, options),
    });
    // The channel histograms the document holds (box-plot clicks asked for them), for the exports:
    // the views draw them under their box plot, so they name no node (not listed in the sidebar).
    for (const h of plot.channel_histograms ?? []) {
      charts.push({
        kind: 'channel_histogram', name: key, nodes: [], title: `${key} channel ${Number(h.channel) + 1}`,
        file: `${file}_channel_${h.channel}`,
        render: (target, options = {}) =>
          renderHistogram(target, channelHistogramPlot(key, h, { tensor, channels: plot.channels?.length }), options),
      });
    }
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
