// `ptqscope leave-one-out MODEL_OR_FILE CALIBRATED_DATA [get-sensitivity-of-nodes options]` — ours
// (AIMET's "disable one quantizer at a time"): for every item the saved calibrated model with only
// that item's calibration set switched OFF, compared with the float model. Same options, table and
// result shape as get-sensitivity-of-nodes (section `leave_one_out`).
import { parseClick, clickUsage } from '../lib/click.mjs';
import { analysisMain, runWithProgress } from '../lib/analysis.mjs';
import { asList } from '../lib/keep_list.mjs';
import { formatVerboseTable, orderedRows } from '../../pipeline/tables.mjs';
import { SPEC, requestOptions } from './get-sensitivity-of-nodes.mjs';

export { SPEC };
// The core analysis the command runs (what describe() says of it, e.g. whether it needs execution).
export const analysis = 'leave_one_out';
export const summary = 'leave-one-out: the calibrated model with one item unquantized at a time (ptqscope)';
export const usage = clickUsage('leave-one-out', SPEC, summary);

export async function main(argv, { log = console.log } = {}) {
  const { options: o, positionals } = parseClick(argv, SPEC);
  await analysisMain(o, positionals, async (ctx) => {
    const doc = await runWithProgress(ctx, 'leave_one_out', requestOptions(o), {
      progress: ctx.progress, label: `Start calculating ${o.node_type} leave-one-out sensitivity...`,
    });
    if (o.verbose) {
      const t = o.node_type;
      log(formatVerboseTable(t, orderedRows(doc.leave_one_out[t], doc.leave_one_out_order?.[t]), asList(o.metrics)));
    }
    return doc;
  });
  return 0;
}
