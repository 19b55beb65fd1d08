// `ptqscope plot-acc-error MODEL_OR_FILE CALIBRATED_DATA [-q QUANTIZE_NODE] [-nq NON_QUANTIZE_NODE]
// [-m METRIC] [-a BOOL] [-s SAVE_DIR]` — hmct-debugger's sub-command (§5, §9.2): one chart
// per model set (<prefix>_<metric>.svg / .png, average_ prefixed in average mode).
import { clickUsage } from '../lib/click.mjs';
import { analysisOptions, clickDefault, listOption, runWithProgress, sweepMain } from '../lib/analysis.mjs';
import { writeCharts } from '../lib/charts.mjs';

// The core analysis the command runs (what describe() says of it, e.g. whether it needs execution).
export const analysis = 'acc_error';

export const SPEC = {
  positionals: ['MODEL_OR_FILE', 'CALIBRATED_DATA'],
  options: [
    { name: 'save_dir', flags: ['-s', '--save_dir'], default: './debug_result/', help: 'where the charts go' },
    listOption('quantize_node', ['-q', '--quantize_node'], "nodes to quantize alone (list, nested list, or 'weight' / 'activation')"),
    listOption('non_quantize_node', ['-nq', '--non_quantize_node'], 'nodes to leave unquantized (list or nested list)'),
    { name: 'metric', flags: ['-m', '--metric'], default: clickDefault('acc_error', 'metric'), help: 'metric of the curves' },
    { name: 'average_mode', flags: ['-a', '--average_mode'], type: 'bool', default: clickDefault('acc_error', 'average_mode'), metavar: 'BOOLEAN', help: 'running mean of the curves' },
    ...analysisOptions(analysis),
  ],
};

export const summary = 'accumulated error curves of partially quantized models (hmct-debugger compatible)';
export const usage = clickUsage('plot-acc-error', SPEC, summary);

// What sweepMain and `merge` need: the folder options, the run, the outputs besides --json.
export const outputDirs = ['save_dir'];
export const compute = (ctx, o) => runWithProgress(ctx, analysis, {
  quantize_node: o.quantize_node, non_quantize_node: o.non_quantize_node, metric: o.metric, average_mode: o.average_mode,
}, {
  progress: ctx.progress, label: 'Start ploting accumulate error...',
});
export async function present(doc, o, { progress }) {
  for (const m of doc.acc_error_messages ?? []) if (!m.startsWith('Start ')) progress.message(m);
  await writeCharts(doc, o.save_dir);
}

export const main = (argv, io) => sweepMain('plot-acc-error', argv, io);
