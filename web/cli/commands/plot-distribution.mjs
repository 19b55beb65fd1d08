// `ptqscope plot-distribution MODEL_OR_FILE CALIBRATED_DATA -n NODES_LIST [-s SAVE_DIR]` — hmct-debugger's
// sub-command (§6, §9.2): one histogram chart per name in SAVE_DIR (.svg and .png).
import { clickUsage } from '../lib/click.mjs';
import { analysisOptions, listOption, runWithProgress, sweepMain } from '../lib/analysis.mjs';
import { writeCharts } from '../lib/charts.mjs';
import { notRunNote } from '../../pipeline/result.mjs';
import { asList } from '../lib/keep_list.mjs';

// The core analysis the command runs (what describe() says of it, e.g. whether it needs execution).
export const analysis = 'distribution';

export const SPEC = {
  positionals: ['MODEL_OR_FILE', 'CALIBRATED_DATA'],
  options: [
    { name: 'save_dir', flags: ['-s', '--save_dir'], default: './debug_result/', help: 'where the charts go' },
    listOption('nodes_list', ['-n', '--nodes_list'], 'calibration nodes or nodes to plot (name or list)', { required: true }),
    ...analysisOptions(analysis),
  ],
};

export const summary = 'data distribution histograms of calibration nodes / node outputs (hmct-debugger compatible)';
export const usage = clickUsage('plot-distribution', SPEC, summary);

// What sweepMain and `merge` need: the folder options, the run, the outputs besides --json.
export const outputDirs = ['save_dir'];
export const compute = (ctx, o) => runWithProgress(ctx, analysis, { nodes_list: asList(o.nodes_list) }, {
  progress: ctx.progress, label: 'Start getting data distribution...',
});
export async function present(doc, o, { progress }) {
  const note = notRunNote(doc, analysis);
  if (note) progress.message(note);
  await writeCharts(doc, o.save_dir);
}

export const main = (argv, io) => sweepMain('plot-distribution', argv, io);
