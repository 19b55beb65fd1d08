// Click-through from a box of the box plot to that channel's histogram: the box plot's click and
// keyboard callbacks, and the app's channelwise chart (web/app/analysis/charts.mjs) asking the host's
// runner for `channels: [k]` and drawing the answer under the box plot.
import { afterEach, describe, expect, it } from 'vitest';
import { renderBoxplot } from '../../../web/charts/boxplot.mjs';
import { chartList, channelRequest, setChannelRunner } from '../../../web/app/analysis/charts.mjs';
import { createDocument } from '../../../web/charts/node_dom.mjs';
import { chartSvgFiles } from '../../../web/app/export/charts.mjs';
import { renderIn, texts, pointerEvent } from './util.mjs';

const box = (median) => ({ count: 4, mean: median, q1: median - 1, median, q3: median + 1, whisker_low: median - 2,
  whisker_high: median + 2, outlier_count: 0, outliers: [] });
const plot = { kind: 'weight', shape: [3, 4], axis: 0, rotate_labels: false, channels: [box(0), box(5), box(10)] };

function keyEvent(document, key) {
  const Event = document.defaultView?.Event || globalThis.Event;
  const ev = new Event('keydown');
  Object.defineProperty(ev, 'key', { value: key });
  return ev;
}

describe('box plot channel picking', () => {
  it('a click on a box calls onChannel with its 0-based index', () => {
    const got = [];
    const { svg, chart, document } = renderIn(renderBoxplot, plot, { onChannel: (i) => got.push(i) });
    svg.querySelector('rect.overlay').dispatchEvent(pointerEvent(document, 'click', chart.channelWidth * 2.5));
    expect(got).toEqual([2]);
  });

  it('is a keyboard control: arrows move, Enter / Space pick, Home / End jump', () => {
    const got = [];
    const { svg, document } = renderIn(renderBoxplot, plot, { onChannel: (i) => got.push(i) });
    expect(svg.getAttribute('tabindex')).toBe('0');
    expect(svg.getAttribute('role')).toBe('slider');
    for (const key of ['ArrowRight', 'ArrowRight', 'ArrowRight', 'Enter', 'ArrowLeft', ' ', 'Home', 'Enter', 'End', 'Enter', 'x']) {
      svg.dispatchEvent(keyEvent(document, key));
    }
    expect(got).toEqual([2, 1, 0, 2]);  // clamped at the last channel
    expect(svg.getAttribute('aria-valuetext')).toBe('channel 3 of 3, median 10');
  });

  it('marks the selected channel; without onChannel it is not focusable', () => {
    const { svg, chart } = renderIn(renderBoxplot, plot, { selected: 1 });
    const band = svg.querySelector('rect.selected-channel');
    expect(Number(band.getAttribute('x'))).toBeCloseTo(chart.channelWidth, 1);
    expect(svg.getAttribute('tabindex')).toBe(null);
  });
});

// A channelwise result as the core writes it, and the answer of a `channels: [1]` request.
const result = {
  options: { channelwise: { nodes_list: ['b_HzCalibration', 'w_HzCalibration'], axis: null, outlier_cap: 200, sample_selection: 'first' } },
  channelwise: { 'w_HzCalibration': plot, 'b_HzCalibration': plot },
  channelwise_order: ['b_HzCalibration', 'w_HzCalibration'],
};
const graph = { nodes: [{ name: 'w_HzCalibration', op_type: 'HzCalibration', inputs: ['conv.weight'], outputs: ['w_cal'] }] };
const histogram = { channel: 1, count: 4, min: 3, max: 7, max_abs: 7, threshold: 6.5,
  histogram: { label: 'channel 2', color: '#99ffbb', edges: [3, 5, 7], counts: [2, 2], zeros_excluded: 0, non_finite: 0 } };
const answer = { channelwise: { 'w_HzCalibration': { ...plot, channel_histograms: [histogram] } } };

function mountChart(res = result) {
  const document = createDocument();
  const fig = document.createElement('figure');
  document.body.appendChild(fig);
  const chart = chartList(res, graph).find((c) => c.kind === 'channelwise' && c.name === 'w_HzCalibration');
  const out = chart.render(fig, {});
  const click = (k) => fig.querySelector('rect.overlay')
    .dispatchEvent(pointerEvent(document, 'click', out.channelWidth * (k + 0.5)));
  return { document, fig, out, click };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('channelwise chart of the app', () => {
  afterEach(() => setChannelRunner(null));

  it('keeps the run order of the request that drew the box plots', () => {
    expect(chartList(result, graph).map((c) => c.name)).toEqual(['b_HzCalibration', 'w_HzCalibration']);
    // A channel request's document names its one item in channelwise_order: nodes_list still rules.
    expect(chartList({ ...result, channelwise_order: ['w_HzCalibration'] }, graph).map((c) => c.name))
      .toEqual(['b_HzCalibration', 'w_HzCalibration']);
  });

  it('builds the request from the options of the box plot run, one item, one channel', () => {
    expect(channelRequest(result, 'w_HzCalibration', 1)).toEqual({
      analysis: 'channelwise', items: ['w_HzCalibration'],
      options: { nodes_list: ['b_HzCalibration', 'w_HzCalibration'], channels: [1], outlier_cap: 200, sample_selection: 'first' },
    });
    expect(channelRequest({}, 'x', 0)).toEqual({ analysis: 'channelwise', items: ['x'], options: { nodes_list: ['x'], channels: [0] } });
  });

  it('a click runs the request and draws that channel\'s histogram under the box plot', async () => {
    const requests = [];
    setChannelRunner(async (request, label) => {
      requests.push([request, label]);
      return answer;
    });
    const { fig, click } = mountChart();
    expect(fig.querySelector('.ptq-channel-histograms svg')).toBe(null);
    click(1);
    await settle();
    expect(requests).toEqual([[channelRequest(result, 'w_HzCalibration', 1), 'histogram of w_HzCalibration channel 2']]);
    const hist = fig.querySelector('.ptq-channel-histogram[data-channel="1"] svg.histogram');
    expect(hist).not.toBe(null);
    expect(texts(hist, '.title tspan')).toEqual(['w_HzCalibration channel 2 of 3 (index 1)', 'tensor conv.weight']);
    expect(hist.querySelector('line.threshold')).not.toBe(null);  // the channel's threshold
    expect(hist.querySelector('path.bars').getAttribute('fill')).toBe('#99ffbb');
    // The box plot is redrawn with the channel marked.
    expect(fig.querySelectorAll('svg.boxplot')).toHaveLength(1);
    expect(fig.querySelector('svg.boxplot rect.selected-channel')).not.toBe(null);
  });

  it('draws histograms already in the document (after the runner merged the answer into the results)', () => {
    const { fig } = mountChart({ ...result, channelwise: { ...result.channelwise, ...answer.channelwise } });
    expect(fig.querySelectorAll('.ptq-channel-histogram svg')).toHaveLength(1);
    const document = createDocument();
    const holder = document.createElement('div');
    const chart = chartList({ ...result, channelwise: answer.channelwise }, graph)[0];
    const out = chart.render(holder, { interactive: false });
    expect(out.svg.getAttribute('class')).toContain('boxplot');
    expect(holder.querySelectorAll('svg')).toHaveLength(1);  // exports: the box plot alone
  });

  it('exports each channel histogram of the document as its own chart file, beside the box plot', () => {
    const document = createDocument();
    const withHistogram = { ...result, channelwise: { ...result.channelwise, ...answer.channelwise } };
    const files = chartSvgFiles(document, withHistogram, graph);
    expect(files.map((f) => f.name)).toEqual([
      'channelwise_distribution/b_HzCalibration_boxplot.svg',
      'channelwise_distribution/w_HzCalibration_boxplot.svg',
      'channelwise_distribution/w_HzCalibration_boxplot_channel_1.svg',
    ]);
    const holder = document.createElement('div');
    holder.innerHTML = files[2].text;
    const hist = holder.querySelector('svg.histogram');
    expect(texts(hist, '.title tspan')).toEqual(['w_HzCalibration channel 2 of 3 (index 1)', 'tensor conv.weight']);
    expect(hist.querySelector('line.threshold')).not.toBe(null);
    // Not a second copy in the views (they pick kinds) or the sidebar (it picks charts naming a node).
    expect(chartList(withHistogram, graph).filter((c) => c.nodes.includes('w_HzCalibration')).map((c) => c.kind)).toEqual(['channelwise']);
    expect(chartSvgFiles(document, result, graph)).toHaveLength(2);
  });

  it('shows what a click waits for while another run is in flight', async () => {
    let release;
    setChannelRunner(async (request, label, onWait) => {
      onWait('Run all');
      await new Promise((resolve) => { release = resolve; });
      onWait(null);
      return answer;
    });
    const { fig, click } = mountChart();
    click(1);
    await settle();
    const status = fig.querySelector('.ptq-channel-status');
    expect(status.textContent).toBe("channel 2: waiting for 'Run all' to finish…");
    release();
    await settle();
    expect(status.textContent).toBe('');
    expect(fig.querySelector('.ptq-channel-histogram[data-channel="1"] svg.histogram')).not.toBe(null);
  });

  it('says why when there is no runner or the run fails', async () => {
    let { fig, click } = mountChart();
    click(0);
    await settle();
    expect(fig.querySelector('.ptq-channel-status').textContent).toMatch(/channel 1: .*runner/);
    setChannelRunner(async () => { throw new Error("'sensitivity' is still running: cancel it first"); });
    ({ fig, click } = mountChart());
    click(2);
    await settle();
    expect(fig.querySelector('.ptq-channel-status').textContent).toBe("channel 3: 'sensitivity' is still running: cancel it first");
    expect(fig.querySelector('.ptq-channel-histograms svg')).toBe(null);
  });
});
