// The page's one opener (open.mjs) over its engine worker: the shell opens files with it, the analyses
// panel opens a model it calibrated.
import { state } from '../state.mjs';
import { createOpener } from './open.mjs';
import { loadModel, loadCalibration } from '../graph/workers.mjs';

export const opener = createOpener(state, { loadModel, loadCalibration });
