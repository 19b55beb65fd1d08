// `ptqscope fix MODEL CALIBRATION_DATA --target "cosine-similarity>=0.999" [--prefer int16,float]
// [--max-nodes N] [--candidates sensitivity|leave_one_out|own_error|NODE,...] [--export FORMAT] [--json OUT]
// [--config-out CONFIG]`
// — ours: the automatic fix search (analysis `fix`, docs/fix-workflow.md). Finds a small set of nodes
// to raise (int16 first, then float) so that the model outputs meet the target, prints the path and
// the result, writes the found configuration (docs/config-schema.md) and the path chart fix_path.svg/.png.
import { parseClick, clickUsage } from '../lib/click.mjs';
import { COMMON_OPTIONS, analysisMain, runWithProgress } from '../lib/analysis.mjs';
import { writeCharts } from '../lib/charts.mjs';
import { writeOutput } from '../lib/outputs.mjs';
import { formatValue } from '../../charts/format.mjs';
import { stepLabel, actionCounts } from '../../charts/fix_path.mjs';
import { samplesNote } from '../../pipeline/result.mjs';
import { optionDefault, optionSpec } from '../../pipeline/catalog.mjs';

const commaList = (text) => {
  const items = text.split(',').map((s) => s.trim());
  if (items.some((s) => s === '')) throw new Error(`'${text}' has an empty entry (give names separated by commas)`);
  return items;
};

const positive = (n) => {
  if (!(n >= 1)) throw new Error(`must be at least 1 (got ${n})`);
  return n;
};

// No defaults here: an absent option is left to the core, whose defaults describe() lists.
export const SPEC = {
  positionals: ['MODEL_OR_FILE', 'CALIBRATED_DATA'],
  options: [
    { name: 'target', flags: ['-t', '--target'], metavar: 'TARGET',
      help: 'what the model outputs must reach, e.g. "cosine-similarity>=0.999" or "mse<=1e-4" (default: the core\'s)' },
    { name: 'prefer', flags: ['--prefer'], parse: commaList, metavar: 'A,B',
      help: 'allowed actions from the least to the most costly, e.g. threshold,int16,float (default: int16,float)' },
    { name: 'max_nodes', flags: ['--max-nodes'], type: 'int', parse: positive, metavar: 'N', help: 'raise at most N nodes (default: no limit)' },
    { name: 'candidates', flags: ['--candidates'], metavar: 'RANKING',
      help: 'sensitivity (default), leave_one_out, own_error, or node names separated by commas, tried in that order' },
    { name: 'data_num', flags: ['-d', '--data_num'], type: 'int', metavar: 'N',
      help: `at most N samples (0 = all; default: ${optionDefault('fix', 'data_num')}): the 1st, 3rd, ... are tuned on, the others held out` },
    { name: 'export', flags: ['--export'], choices: optionSpec('fix', 'export').choices, metavar: 'FORMAT',
      help: 'the export the fix is for: threshold is tried only on nodes whose thresholds it can carry' },
    { name: 'sample_selection', flags: ['--sample-selection'], choices: ['last', 'first', 'all'], help: 'which samples in file-name order (default: last)' },
    { name: 'config_out', flags: ['--config-out'], metavar: 'FILE', help: 'write the found configuration (docs/config-schema.md) to FILE' },
    { name: 'save_dir', flags: ['-s', '--save_dir'], default: './debug_result/', help: 'where the path chart fix_path.svg / .png goes' },
    ...COMMON_OPTIONS,
  ],
};

// The core analysis the command runs (what describe() says of it, e.g. whether it needs execution).
export const analysis = 'fix';
export const summary = 'automatic fix search: the fewest nodes to raise (int16, float) to reach a target (ptqscope)';
export const usage = clickUsage('fix', SPEC, summary);

// The request options of the command line (absent flags left out).
export function requestOptions(o) {
  const out = {};
  if (o.target != null) out.target = o.target;
  if (o.prefer != null) out.prefer = o.prefer;
  if (o.max_nodes != null) out.max_nodes = o.max_nodes;
  if (o.candidates != null) out.candidates = ['sensitivity', 'leave_one_out', 'own_error'].includes(o.candidates) ? o.candidates : commaList(o.candidates);
  if (o.export != null) out.export = o.export;
  if (o.data_num != null) out.data_num = o.data_num;
  if (o.sample_selection != null) out.sample_selection = o.sample_selection;
  return out;
}

// The printed report: the path, then the outcome with the final set (each node, its action and the
// metric without it). `samples`: what it was judged on ("1 of 6 samples (9.npy)").
export function formatFix(fix, samples = '') {
  const on = samples ? ` on ${samples}` : '';
  const lines = [`fix: target ${fix.target.text}; start ${formatValue(fix.start)}${on}`];
  fix.steps.forEach((s, i) => lines.push(`  ${String(i + 1).padStart(3)}. ${s.phase.padEnd(8)} ${stepLabel(s).padEnd(40)} ${formatValue(s.value)}`));
  if (fix.pruned.length) lines.push(`  pruned: ${fix.pruned.join(', ')}`);
  if (fix.reached && !fix.steps.length) {
    lines.push(`fix: ${fix.message}`);
  } else if (fix.reached) {
    // A threshold re-calibrates a node without raising its precision.
    const verb = fix.nodes.some((n) => n.action === 'threshold') ? 'changed' : 'raised';
    lines.push(`fix: target reached: ${formatValue(fix.final)} with ${fix.nodes.length} node(s) ${verb} (${actionCounts(fix.nodes)}):`);
    const width = Math.max(4, ...fix.nodes.map((n) => n.node.length));
    lines.push(`  ${'node'.padEnd(width)}  ${'action'.padEnd(9)} ${'without it'.padStart(12)}`);
    for (const n of fix.nodes) lines.push(`  ${n.node.padEnd(width)}  ${n.action.padEnd(9)} ${formatValue(n.without).padStart(12)}`);
  } else {
    lines.push(`fix: TARGET NOT REACHED. ${fix.message}`);
  }
  if (fix.held_out) {
    lines.push(`fix: held-out samples (${fix.held_out.samples.join(', ')}): start ${formatValue(fix.held_out.start)}, ` +
      `final ${formatValue(fix.held_out.final)}, target ${fix.held_out.met ? 'met' : 'MISSED'}`);
  }
  for (const w of fix.warnings ?? []) lines.push(`fix: warning: ${w}`);
  return lines.join('\n');
}


export async function main(argv, { log = console.log } = {}) {
  const { options: o, positionals } = parseClick(argv, SPEC);
  // Every output (--json, --config-out, the chart folder) is checked before the search and written
  // only when the whole run succeeded (lib/outputs.mjs).
  await analysisMain(o, positionals, async (ctx) => {
    const result = await runWithProgress(ctx, 'fix', requestOptions(o), {
      progress: ctx.progress, label: 'Searching for a fix...',
    });
    log(formatFix(result.fix, samplesNote(result, 'fix')));
    if (o.config_out) writeOutput(o.config_out, `${JSON.stringify(result.config, null, 1)}\n`);
    if (!result.cancelled) await writeCharts(result, o.save_dir);
    return result;
  }, { dirs: ['save_dir'], files: [['config_out', '--config-out']] });
  if (o.config_out) log(`fix: configuration written to ${o.config_out}`);
  return 0;
}
