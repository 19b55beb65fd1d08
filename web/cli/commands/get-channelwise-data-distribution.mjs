// `ptqscope get-channelwise-data-distribution MODEL_OR_FILE CALIBRATED_DATA -n NODES_LIST [-a AXIS]
// [-s SAVE_DIR]` — hmct-debugger's sub-command (§7, §9.2): one box-plot chart per
// calibration node in SAVE_DIR (<name>_boxplot.svg / .png).
import { clickUsage } from '../lib/click.mjs';
import { analysisOptions, listOption, runWithProgress, sweepMain } from '../lib/analysis.mjs';
import { writeCharts } from '../lib/charts.mjs';
import { notRunNote } from '../../pipeline/result.mjs';
import { asList } from '../lib/keep_list.mjs';

// The core analysis the command runs (what describe() says of it, e.g. whether it needs execution).
export const analysis = 'channelwise';

export const SPEC = {
  positionals: ['MODEL_OR_FILE', 'CALIBRATED_DATA'],
  options: [
    { name: 'save_dir', flags: ['-s', '--save_dir'], default: './debug_result/', help: 'where the charts go' },
    listOption('nodes_list', ['-n', '--nodes_list'], 'calibration nodes (name or list)', { required: true }),
    { name: 'axis', flags: ['-a', '--axis'], type: 'int', default: null, help: 'channel axis (default: the node\'s axis / 1)' },
    ...analysisOptions(analysis),
  ],
};

export const summary = 'per-channel box plots of calibration nodes (hmct-debugger compatible)';
export const usage = clickUsage('get-channelwise-data-distribution', SPEC, summary);

// What sweepMain and `merge` need: the folder options, the run, the outputs besides --json.
export const outputDirs = ['save_dir'];
export const compute = (ctx, o) => runWithProgress(ctx, analysis, { nodes_list: asList(o.nodes_list), axis: o.axis }, {
  progress: ctx.progress, label: 'Start getting channelwise data distribution...',
});
export async function present(doc, o, { progress }) {
  const note = notRunNote(doc, analysis);
  if (note) progress.message(note);
  await writeCharts(doc, o.save_dir);
}

export const main = (argv, io) => sweepMain('get-channelwise-data-distribution', argv, io);
