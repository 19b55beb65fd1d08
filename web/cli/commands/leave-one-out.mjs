// `ptqscope leave-one-out MODEL_OR_FILE CALIBRATED_DATA [get-sensitivity-of-nodes options]` — ours
// (AIMET's "disable one quantizer at a time"): for every item the saved calibrated model with only
// that item's calibration set switched OFF, compared with the float model. Same options, table and
// result shape as get-sensitivity-of-nodes (section `leave_one_out`).
import { clickUsage } from '../lib/click.mjs';
import { runWithProgress, sweepMain } from '../lib/analysis.mjs';
import { SPEC, printTable, requestOptions } from './get-sensitivity-of-nodes.mjs';

// The options of get-sensitivity-of-nodes (--shard included: both analyses are sweeps).
export { SPEC };
// The core analysis the command runs (what describe() says of it, e.g. whether it needs execution).
export const analysis = 'leave_one_out';
export const summary = 'leave-one-out: the calibrated model with one item unquantized at a time (ptqscope)';
export const usage = clickUsage('leave-one-out', SPEC, summary);

// What sweepMain and `merge` need: the folder options (none), the run, the outputs besides --json.
export const outputDirs = [];
export const compute = (ctx, o) => runWithProgress(ctx, analysis, requestOptions(o), {
  progress: ctx.progress, label: `Start calculating ${o.node_type} leave-one-out sensitivity...`,
});
export const present = (doc, o, { log }) => printTable(doc, o, log, analysis);

export const main = (argv, io) => sweepMain('leave-one-out', argv, io);
