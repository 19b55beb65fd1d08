// Analyses from the page: a pool of Web Workers (web/pipeline) and the "Analyses" dock panel.
import './analysis.css';
import { state } from '../state.mjs';
import { registerPanel } from '../shell.mjs';
import * as pipeline from './pipeline.mjs';
import { spawnWorker } from './spawn.mjs';
import { createAnalysisRunner } from './runner.mjs';
import { mountAnalysesPanel } from './panel.mjs';
import { setChannelRunner } from './charts.mjs';

export const runner = createAnalysisRunner({ state, pipeline, spawn: spawnWorker });

// A box plot's channel click (charts.mjs) computes that channel's histogram on this pool; the answer
// is folded into state 'results' like any other run, so the views redraw with it.
setChannelRunner((request, label) => runner.run('analysis', request, label));

registerPanel({ id: 'analyses', title: 'Analyses', mount: (el, st) => mountAnalysesPanel(el, st, runner) });
