// `ptqscope get-sensitivity-of-nodes MODEL_OR_FILE CALIBRATED_DATA [-m METRICS] [-o OUTPUT_NODE]
//   [-n node|weight|activation] [-d DATA_NUM] [-v BOOL] [-i INTERESTED_NODES]` — hmct-debugger's
// sub-command (§3, §9.2): prints nothing unless `-v True` (then the §3.5 table), writes no
// file except with --json.
import { clickUsage } from '../lib/click.mjs';
import { analysisOptions, clickDefault, listOption, runWithProgress, sweepMain } from '../lib/analysis.mjs';
import { METRICS, ORIGINAL_NODE_TYPES, optionSpec } from '../../pipeline/catalog.mjs';
import { asList } from '../lib/keep_list.mjs';
import { formatVerboseTable, orderedRows } from '../../pipeline/tables.mjs';

// The core analysis the command runs (what describe() says of it, e.g. whether it needs execution).
export const analysis = 'sensitivity';

export const SPEC = {
  positionals: ['MODEL_OR_FILE', 'CALIBRATED_DATA'],
  options: [
    listOption('metrics', ['-m', '--metrics'], `metric or list: ${METRICS.join(', ')}`, { default: clickDefault('sensitivity', 'metrics') }),
    listOption('output_node', ['-o', '--output_node'], 'compare the outputs of this node (or list) instead of the model outputs'),
    { name: 'node_type', flags: ['-n', '--node_type'], aliases: ['-nt'], choices: ORIGINAL_NODE_TYPES, default: clickDefault('sensitivity', 'node_type'), help: 'items to measure (-nt as in runall)' },
    { name: 'data_num', flags: ['-d', '--data_num'], type: 'int', default: clickDefault('sensitivity', 'data_num'), help: 'number of samples (the last ones in file-name order)' },
    { name: 'verbose', flags: ['-v', '--verbose'], type: 'bool', default: false, metavar: 'BOOLEAN', help: 'print the sensitivity table' },
    listOption('interested_nodes', ['-i', '--interested_nodes'], 'only these nodes (names, calibration-node names or nested lists)'),
    { name: 'sample_selection', flags: ['--sample_selection'], choices: optionSpec('sensitivity', 'sample_selection').choices,
      default: clickDefault('sensitivity', 'sample_selection'),
      help: 'which data_num samples: the last (as the original), the first, or all' },
    ...analysisOptions(analysis),
  ],
};

export const summary = 'sensitivity of every node / weight / activation calibration node (hmct-debugger compatible)';
export const usage = clickUsage('get-sensitivity-of-nodes', SPEC, summary);

export function requestOptions(o) {
  return {
    node_type: o.node_type, metrics: asList(o.metrics), output_node: asList(o.output_node), data_num: o.data_num,
    sample_selection: o.sample_selection, interested_nodes: o.interested_nodes,
  };
}

// What sweepMain and `merge` need: the folder options (none), the run, the outputs besides --json.
export const outputDirs = [];
export const compute = (ctx, o) => runWithProgress(ctx, analysis, requestOptions(o), {
  progress: ctx.progress, label: `Start calculating ${o.node_type} sensitivity...`,
});

// -v True: the §3.5 table of `section` on stdout.
export function printTable(doc, o, log, section = analysis) {
  if (!o.verbose) return;
  const t = o.node_type;
  log(formatVerboseTable(t, orderedRows(doc[section][t], doc[`${section}_order`]?.[t]), asList(o.metrics)));
}
export const present = (doc, o, { log }) => printTable(doc, o, log);

export const main = (argv, io) => sweepMain('get-sensitivity-of-nodes', argv, io);
