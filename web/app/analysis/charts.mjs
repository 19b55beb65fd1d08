// Every chart of a result document, as {id, title, file (without extension), render(target, options)}.
// Shared by the result views, the sidebar and the exports (SVG/PNG of every chart).
import { averagedFigure, renderAccError } from '../../charts/acc_error.mjs';
import { renderHistogram } from '../../charts/histogram.mjs';
import { renderBoxplot } from '../../charts/boxplot.mjs';
import { renderSensitivityAnalysis } from '../../charts/sensitivity_analysis.mjs';
import { renderStatInfo } from '../../charts/stat_info.mjs';
import { safeName } from '../../charts/format.mjs';
import { nodeIndex } from '../heatmap/mapping.mjs';
import { CHART_DIRS, chartsOf } from '../../pipeline/result.mjs';

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

// Per kind of the result module's chartsOf: {name, nodes, title} and how the page draws it.
const PAGE_CHARTS = {
  acc_error: (c, graph) => {
    const producer = (t) => graph?.values?.[t]?.producer ?? t;
    return {
      name: c.key, nodes: [], title: c.key,
      // options.average: show a raw figure as running means (the original's average_mode) without re-running.
      render: (target, { average, ...options } = {}) =>
        renderAccError(target, average ? averagedFigure(c.data) : c.data, { nodeOf: producer, ...options }),
    };
  },
  distribution: (c) => ({
    name: c.data.name, nodes: [c.data.name], title: c.data.title ?? c.key,
    render: (target, options = {}) => renderHistogram(target, c.data, options),
  }),
  channelwise: (c, graph, result) => {
    const tensor = nodeIndex(graph).get(c.key)?.inputs?.[0];  // named in the channel histograms' titles
    return {
      name: c.key, nodes: [c.key], title: `${c.key} box plot`, tensor,
      render: (target, options = {}) => renderChannelwise(target, result, tensor, c.key, c.data, options),
    };
  },
  stat_info: (c) => ({
    name: c.key, nodes: [], title: `${c.key} calibration nodes`,
    render: (target, options = {}) => renderStatInfo(target, c.data.curves, { tensorType: c.key, ...options }),
  }),
  sensitivity_analysis: (c) => ({
    name: c.key, nodes: [], title: 'Partial Quantization Analysis',
    render: (target, options = {}) => renderSensitivityAnalysis(target, c.data, options),
  }),
};

// The result module's charts of `result` (chartsOf) as the page draws and exports them:
// {kind, name, nodes, title, file (<folder>/<name> without extension), render(target, options)}.
// kind: 'acc_error' | 'distribution' | 'channelwise' | 'channel_histogram' | 'stat_info' | 'sensitivity_analysis'; `name` is the node/calibration item (or the
// figure prefix) the chart belongs to, `nodes` the graph nodes it is about (for the sidebar).
export function chartList(result, graph) {
  const charts = [];
  for (const c of chartsOf(result)) {
    if (c.kind === 'sensitivity_analysis' && !c.data.x?.length) continue;
    const { tensor, ...chart } = PAGE_CHARTS[c.kind](c, graph, result);
    const file = `${CHART_DIRS[c.kind]}/${stem(c.file_name)}`;
    charts.push({ kind: c.kind, ...chart, file });
    // The channel histograms the document holds (box-plot clicks asked for them), for the exports:
    // the views draw them under their box plot, so they name no node (not listed in the sidebar).
    for (const h of c.kind === 'channelwise' ? c.data.channel_histograms ?? [] : []) {
      charts.push({
        kind: 'channel_histogram', name: c.key, nodes: [], title: `${c.key} channel ${Number(h.channel) + 1}`,
        file: `${file}_channel_${h.channel}`,
        render: (target, options = {}) =>
          renderHistogram(target, channelHistogramPlot(c.key, h, { tensor, channels: c.data.channels?.length }), options),
      });
    }
  }
  return charts;
}
