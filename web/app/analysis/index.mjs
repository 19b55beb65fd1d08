// Analyses from the page: a pool of Web Workers (web/pipeline) and the "Analyses" dock panel.
import './analysis.css';
import { state } from '../state.mjs';
import { registerPanel } from '../shell.mjs';
import * as pipeline from './pipeline.mjs';
import { spawnWorker } from './spawn.mjs';
import { createAnalysisRunner, queuedRun } from './runner.mjs';
import { mountAnalysesPanel } from './panel.mjs';
import { setChannelRunner } from './charts.mjs';
import { opener } from '../open/page_opener.mjs';

export const runner = createAnalysisRunner({ state, pipeline, spawn: spawnWorker });

// A box plot's channel click (charts.mjs) computes that channel's histogram on this pool, after the
// run in flight if there is one; the answer is folded into state 'results' like any other run, so the
// views redraw with it.
setChannelRunner(queuedRun(runner));

// A float model calibrated in the panel is opened in its place, with the same calibration data.
const useCalibrated = (name, bytes) => opener.replaceModel({ path: name, bytes });
registerPanel({ id: 'analyses', title: 'Analyses', mount: (el, st) => mountAnalysesPanel(el, st, runner, { useCalibrated }) });
