// A box plot click end to end: the app's channelwise chart, the page's analysis runner on the real
// pipeline pool (Node worker threads, real wasm module) and the calibrated digits example. The host
// wiring is the one line an app / plugin host adds: setChannelRunner((r, label) => runner.run('analysis', r, label)).
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { calibratedDigits, WASM_PATH } from '../cli_fixture.mjs';
import { readCalibrationFolder } from '../helpers.mjs';
import { spawnNodeWorker } from '../../../web/pipeline/node_worker.mjs';
import * as pipeline from '../../../web/app/analysis/pipeline.mjs';
import { createAnalysisRunner } from '../../../web/app/analysis/runner.mjs';
import { createStore } from '../../../web/app/state.mjs';
import { chartList, setChannelRunner } from '../../../web/app/analysis/charts.mjs';
import { createDocument } from '../../../web/charts/node_dom.mjs';
import { pointerEvent } from './util.mjs';

let state;
let runner;
let pending = null;

beforeAll(() => {
  const { model, data } = calibratedDigits();
  state = createStore({ modelBytes: new Uint8Array(fs.readFileSync(model)), calibrationFiles: readCalibrationFolder(data), results: null, error: null });
  runner = createAnalysisRunner({ state, pipeline, spawn: () => spawnNodeWorker(WASM_PATH), size: 1 });
  setChannelRunner((request, label) => (pending = runner.run('analysis', request, label)));
});

afterAll(() => {
  setChannelRunner(null);
  runner?.dispose();
});

function mount(name) {
  const document = createDocument();
  const fig = document.createElement('figure');
  document.body.appendChild(fig);
  const chart = chartList(state.get('results')).find((c) => c.kind === 'channelwise' && c.name === name);
  const out = chart.render(fig, {});
  return { fig, click: (k) => fig.querySelector('rect.overlay').dispatchEvent(pointerEvent(document, 'click', out.channelWidth * (k + 0.5))) };
}

describe('box plot click -> channel histogram through the runner', () => {
  it('draws the clicked channel and folds it into the results without reordering the box plots', async () => {
    const summary = await runner.run('analysis', { analysis: 'stat_info' });
    const weights = Object.entries(summary.stat_info).filter(([, r]) => r.tensor_type === 'weight').map(([k]) => k);
    expect(weights.length).toBeGreaterThanOrEqual(2);
    const items = weights.slice(0, 2);
    await runner.run('analysis', { analysis: 'channelwise', options: { nodes_list: items } });
    const name = items[1];
    const before = state.get('results').channelwise[name];
    expect(before.channel_histograms).toBeUndefined();

    const { fig, click } = mount(name);
    click(1);
    await pending;
    await new Promise((resolve) => setTimeout(resolve, 0));
    const svg = fig.querySelector('.ptq-channel-histogram[data-channel="1"] svg.histogram');
    expect(svg).not.toBe(null);
    expect(svg.querySelector('.title tspan').textContent).toBe(`${name} channel 2 of ${before.channels.length} (index 1)`);
    expect(fig.querySelector('.ptq-channel-status').textContent).toBe('');

    const results = state.get('results');
    const [h] = results.channelwise[name].channel_histograms;
    expect(h.channel).toBe(1);
    expect(h.histogram.counts.reduce((a, b) => a + b, 0)).toBe(h.count - h.histogram.zeros_excluded - h.histogram.non_finite);
    expect(results.channelwise[name].channels).toEqual(before.channels);  // same box statistics
    expect(chartList(results).filter((c) => c.kind === 'channelwise').map((c) => c.name)).toEqual(items);
    // A redraw from the results (what the views do when 'results' changes) keeps the histogram.
    expect(mount(name).fig.querySelectorAll('.ptq-channel-histogram svg')).toHaveLength(1);
  }, 120_000);
});
