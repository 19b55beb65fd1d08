// `ptqscope get-calibration-nodes-stat-info MODEL_OR_FILE CALIBRATED_DATA [-n NODES_LIST] [-s SAVE_DIR]
// [-v BOOL]` — ours: the original has get_calibration_nodes_stat_info in its Python API only (reference
// §8.1). Same arguments as that function; with `-v True` (visualize) the original's table on stdout
// and the two curve charts <weight|feature>_stat_info.svg / .png in SAVE_DIR. The statistics are in
// the --json document (the original pickled them into cali_nodes_stat_info.npy).
import { parseClick, clickUsage } from '../lib/click.mjs';
import { COMMON_OPTIONS, analysisMain, listOption, runWithProgress } from '../lib/analysis.mjs';
import { writeCharts } from '../lib/charts.mjs';
import { asList } from '../lib/keep_list.mjs';

export const SPEC = {
  positionals: ['MODEL_OR_FILE', 'CALIBRATED_DATA'],
  options: [
    listOption('nodes_list', ['-n', '--nodes_list'], 'calibration nodes (default: all)'),
    { name: 'save_dir', flags: ['-s', '--save_dir'], default: './debug_result/', help: 'where the charts go' },
    { name: 'visualize', flags: ['-v', '--visualize'], type: 'bool', default: false, metavar: 'BOOLEAN', help: 'print the table and draw the curves' },
    ...COMMON_OPTIONS,
  ],
};

// The core analysis the command runs (what describe() says of it, e.g. whether it needs execution).
export const analysis = 'stat_info';
export const summary = 'thresholds, scales, max and min non-zero values of calibration nodes (ptqscope; API-only in the original)';
export const usage = clickUsage('get-calibration-nodes-stat-info', SPEC, summary);

export async function main(argv, { log = console.log } = {}) {
  const { options: o, positionals } = parseClick(argv, SPEC);
  await analysisMain(o, positionals, async (ctx) => {
    const doc = await runWithProgress(ctx, 'stat_info', { nodes_list: asList(o.nodes_list) }, {
      progress: ctx.progress, label: 'Start getting calibration nodes statistical info...',
    });
    for (const m of doc.stat_info_messages ?? []) ctx.progress.message(m);
    if (o.visualize) {
      log(doc.stat_info_table); // the original's print_info_dict table, as the core writes it
      await writeCharts(doc, o.save_dir);
    }
    return doc;
  }, { dirs: o.visualize ? ['save_dir'] : [] });
  return 0;
}
