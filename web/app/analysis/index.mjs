// Analyses from the page: a pool of Web Workers (web/pipeline) and the "Analyses" dock panel.
import './analysis.css';
import { state } from '../state.mjs';
import { registerPanel } from '../shell.mjs';
import * as pipeline from './pipeline.mjs';
import { spawnWorker } from './spawn.mjs';
import { createAnalysisRunner } from './runner.mjs';
import { mountAnalysesPanel } from './panel.mjs';

export const runner = createAnalysisRunner({ state, pipeline, spawn: spawnWorker });

registerPanel({ id: 'analyses', title: 'Analyses', mount: (el, st) => mountAnalysesPanel(el, st, runner) });
