// `ptqscope plot-distribution MODEL_OR_FILE CALIBRATED_DATA -n NODES_LIST [-s SAVE_DIR]` — hmct-debugger's
// sub-command (§6, §9.2): one histogram chart per name in SAVE_DIR (.svg and .png).
import { parseClick, clickUsage } from '../lib/click.mjs';
import { COMMON_OPTIONS, analysisMain, listOption, runWithProgress } from '../lib/analysis.mjs';
import { writeCharts } from '../lib/charts.mjs';
import { asList } from '../lib/keep_list.mjs';

export const SPEC = {
  positionals: ['MODEL_OR_FILE', 'CALIBRATED_DATA'],
  options: [
    { name: 'save_dir', flags: ['-s', '--save_dir'], default: './debug_result/', help: 'where the charts go' },
    listOption('nodes_list', ['-n', '--nodes_list'], 'calibration nodes or nodes to plot (name or list)', { required: true }),
    ...COMMON_OPTIONS,
  ],
};

// The core analysis the command runs (what describe() says of it, e.g. whether it needs execution).
export const analysis = 'distribution';
export const summary = 'data distribution histograms of calibration nodes / node outputs (hmct-debugger compatible)';
export const usage = clickUsage('plot-distribution', SPEC, summary);

export async function main(argv) {
  const { options: o, positionals } = parseClick(argv, SPEC);
  await analysisMain(o, positionals, async (ctx) => {
    const doc = await runWithProgress(ctx, 'distribution', { nodes_list: asList(o.nodes_list) }, {
      progress: ctx.progress, label: 'Start getting data distribution...',
    });
    await writeCharts(doc, o.save_dir);
    return doc;
  }, { dirs: ['save_dir'] });
  return 0;
}
