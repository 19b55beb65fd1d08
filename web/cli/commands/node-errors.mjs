// `ptqscope node-errors MODEL_OR_FILE CALIBRATED_DATA [--metric M] [-d DATA_NUM] [--sample_selection S]
// [--measure output|converter] [--config FILE] [-v BOOL] [--json FILE]` — ours: for every node with
// calibrated inputs (graph order), its own error (only its calibration nodes quantized, as the
// configuration has them) and its accumulated error (the whole configuration, default: as calibrated),
// both at its output against the float model (docs/config-schema.md); --measure converter measures them
// as the Horizon converter log does its cosine (§12.3). The numbers are in the `node_errors` section of
// --json; `-v True` prints them as a table.
import { parseClick, clickUsage } from '../lib/click.mjs';
import { COMMON_OPTIONS, analysisMain, clickDefault, runWithProgress } from '../lib/analysis.mjs';
import { formatInfoTable } from '../../pipeline/tables.mjs';
import { pyFloatRepr, pyRound } from '../../pipeline/pyformat.mjs';
import { toNumber } from '../../pipeline/result.mjs';
import { optionSpec } from '../../pipeline/catalog.mjs';

// Defaults and choices are the core's (describe()).
export const SPEC = {
  positionals: ['MODEL_OR_FILE', 'CALIBRATED_DATA'],
  options: [
    { name: 'metric', flags: ['-m', '--metric'], choices: optionSpec('node_errors', 'metric').choices,
      default: clickDefault('node_errors', 'metric'), help: 'metric of the own and accumulated errors' },
    { name: 'data_num', flags: ['-d', '--data_num'], type: 'int', default: clickDefault('node_errors', 'data_num'),
      help: 'number of samples (0: all)' },
    { name: 'sample_selection', flags: ['--sample_selection'], choices: optionSpec('node_errors', 'sample_selection').choices,
      default: clickDefault('node_errors', 'sample_selection'),
      help: 'which data_num samples: the last (in file-name order), the first, or all' },
    { name: 'measure', flags: ['--measure'], choices: optionSpec('node_errors', 'measure').choices,
      default: clickDefault('node_errors', 'measure'), help: optionSpec('node_errors', 'measure').doc },
    { name: 'verbose', flags: ['-v', '--verbose'], type: 'bool', default: false, metavar: 'BOOLEAN', help: 'print the table' },
    ...COMMON_OPTIONS,
  ],
};

// The core analysis the command runs (what describe() says of it, e.g. whether it needs execution).
export const analysis = 'node_errors';
export const summary = "each node's own and accumulated quantization error at its output (ptqscope)";
export const usage = clickUsage('node-errors', SPEC, summary);

const cell = (v) => pyFloatRepr(pyRound(toNumber(v), 5));

export async function main(argv, { log = console.log } = {}) {
  const { options: o, positionals } = parseClick(argv, SPEC);
  await analysisMain(o, positionals, async (ctx) => {
    const doc = await runWithProgress(ctx, 'node_errors', { metric: o.metric, data_num: o.data_num, sample_selection: o.sample_selection, measure: o.measure }, {
      progress: ctx.progress, label: 'Start calculating node errors...',
    });
    if (o.verbose) {
      const { nodes, order, metric } = doc.node_errors;
      log(formatInfoTable({ title: `node errors (${metric})`, keyHeader: 'node', columns: ['own', 'accumulated'],
        rows: order.map((n) => [n, [cell(nodes[n].own), cell(nodes[n].accumulated)]]) }));
    }
    return doc;
  });
  return 0;
}
