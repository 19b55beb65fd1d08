// `ptqscope explain MODEL_OR_FILE CALIBRATED_DATA [-d N] [--metric M] [--min-recovery R]
// [--config FILE] [--json FILE]` — ours: why quantizers lose accuracy (docs/explain.md). For every
// calibration node the evidence a run sees, causes from a fixed vocabulary (clipping,
// coarse-resolution, channel-spread, range-mismatch, one-sided, inherited), each with a cure measured
// on the tuning and held-out samples; the hints whose cure recovers enough of the output loss are
// printed ranked by that. The result section `hints` (and `hints_evidence`: every node's numbers and
// histogram) is in --json; a hint's `suggestion` is a configuration intent (docs/config-schema.md).
import { parseClick, clickUsage } from '../lib/click.mjs';
import { COMMON_OPTIONS, analysisMain, clickDefault, runWithProgress } from '../lib/analysis.mjs';
import { formatValue } from '../../charts/format.mjs';
import { optionSpec } from '../../pipeline/catalog.mjs';
import { explainRows } from '../../pipeline/result.mjs';

// Defaults and choices are the core's (describe()).
export const SPEC = {
  positionals: ['MODEL_OR_FILE', 'CALIBRATED_DATA'],
  options: [
    { name: 'data_num', flags: ['-d', '--data_num'], type: 'int', default: clickDefault('explain', 'data_num'),
      help: 'at most this many samples (0: all), split into tuning and held-out samples' },
    { name: 'sample_selection', flags: ['--sample_selection'], choices: optionSpec('explain', 'sample_selection').choices,
      default: clickDefault('explain', 'sample_selection'), help: 'which samples: the last (in file-name order), the first, or all' },
    { name: 'metric', flags: ['-m', '--metric'], choices: optionSpec('explain', 'metric').choices,
      default: clickDefault('explain', 'metric'), help: 'metric of the cures\' effects and of the node errors' },
    { name: 'min_recovery', flags: ['--min-recovery'], type: 'float', default: clickDefault('explain', 'min_recovery'),
      metavar: 'SHARE', help: 'keep a hint when its cure recovers at least this share of the output loss (0: every hint)' },
    { name: 'inherited_top', flags: ['--inherited-top'], type: 'int', default: clickDefault('explain', 'inherited_top'),
      metavar: 'N', help: 'inherited hints among the N nodes with the largest accumulated loss (0: none)' },
    ...COMMON_OPTIONS,
  ],
};

// The core analysis the command runs (what describe() says of it, e.g. whether it needs execution).
export const analysis = 'explain';
export const summary = 'why quantizers lose accuracy: causes with evidence and measured cures (ptqscope)';
export const usage = clickUsage('explain', SPEC, summary);

const percent = (v) => `${formatValue(v * 100, 3)}%`;

// The printed report: the samples and start, one line per hint, the count.
export function formatExplain(doc) {
  const { tune, held_out: held } = doc.hints_samples;
  const start = doc.hints_start;
  const lines = [`explain: ${start.metric} on ${tune.length} tuning sample(s) (${tune.join(', ')})` +
    (held.length ? `, ${held.length} held-out (${held.join(', ')})` : ', no held-out sample') +
    `; start ${formatValue(start.tune)}${held.length ? ` (held-out ${formatValue(start.held_out)})` : ''}`];
  const rows = explainRows(doc);
  rows.forEach((h, i) => {
    const held = h.effect.held_out ? `  held-out ${formatValue(h.effect.held_out.after)}` : '';
    lines.push(`  ${String(i + 1).padStart(3)}. ${h.cause.padEnd(17)} ${h.calibration_node}` +
      `${h.node ? ` -> ${h.node}` : ''}: ${h.suggestion.text}; ${formatValue(h.effect.before)} -> ${formatValue(h.effect.after)}` +
      ` (recovers ${percent(h.effect.recovered)})${held}`);
  });
  lines.push(`explain: ${rows.length} hint(s)${rows.length ? ', most effective cure first' : ''}; ` +
    `evidence of ${doc.hints_evidence_order.length} calibration node(s) in the result document (hints_evidence)`);
  return lines.join('\n');
}

export async function main(argv, { log = console.log } = {}) {
  const { options: o, positionals } = parseClick(argv, SPEC);
  await analysisMain(o, positionals, async (ctx) => {
    const doc = await runWithProgress(ctx, 'explain', {
      data_num: o.data_num, sample_selection: o.sample_selection, metric: o.metric,
      min_recovery: o.min_recovery, inherited_top: o.inherited_top,
    }, { progress: ctx.progress, label: 'Explaining the quantizers...' });
    log(formatExplain(doc));
    return doc;
  });
  return 0;
}
