// `ptqscope sensitivity-analysis MODEL_OR_FILE CALIBRATED_DATA [-p PICK_THRESHOLD] [-d DATA_NUM]
// [-sn SENSITIVE_NODES] [-sd SAVE_DIR] [-q QTYPE]` — hmct-debugger's sub-command (§8.2,
// §9.2; note -sd, not -s): the partial-quantization chart partial_quantization.svg / .png.
// -q (the type given to the sensitive nodes, float32 = switched off) is from newer HMCT builds (§11);
// --override_scales (ours) says whether a constant = 2 node keeps its stored step under -q (§1.4).
import { parseClick, clickUsage } from '../lib/click.mjs';
import { optionSpec } from '../../pipeline/catalog.mjs';
import { COMMON_OPTIONS, analysisMain, clickDefault, listOption, runWithProgress } from '../lib/analysis.mjs';
import { writeCharts } from '../lib/charts.mjs';
import { asList } from '../lib/keep_list.mjs';

export const SPEC = {
  positionals: ['MODEL_OR_FILE', 'CALIBRATED_DATA'],
  options: [
    { name: 'pick_threshold', flags: ['-p', '--pick_threshold'], type: 'float', default: clickDefault('sensitivity_analysis', 'pick_threshold'), help: 'nodes with cosine <= this are sensitive' },
    { name: 'data_num', flags: ['-d', '--data_num'], type: 'int', default: clickDefault('sensitivity_analysis', 'data_num'), help: 'number of samples (the last ones in file-name order)' },
    listOption('sensitive_nodes', ['-sn', '--sensitive_nodes'], 'the sensitive nodes (default: ranked and picked)'),
    { name: 'save_dir', flags: ['-sd', '--save_dir'], default: './debug_result/', help: 'where the chart goes' },
    { name: 'qtype', flags: ['-q', '--qtype'], default: clickDefault('sensitivity_analysis', 'qtype'), help: 'type of the sensitive nodes (float32 = not quantized, or e.g. int16)' },
    { name: 'override_scales', flags: ['--override_scales'], choices: optionSpec('sensitivity_analysis', 'override_scales').choices,
      default: clickDefault('sensitivity_analysis', 'override_scales'), help: optionSpec('sensitivity_analysis', 'override_scales').doc },
    ...COMMON_OPTIONS,
  ],
};

// The core analysis the command runs (what describe() says of it, e.g. whether it needs execution).
export const analysis = 'sensitivity_analysis';
export const summary = 'cumulative partial-quantization analysis of sensitive nodes (hmct-debugger compatible)';
export const usage = clickUsage('sensitivity-analysis', SPEC, summary);

export async function main(argv) {
  const { options: o, positionals } = parseClick(argv, SPEC);
  await analysisMain(o, positionals, async (ctx) => {
    const doc = await runWithProgress(ctx, 'sensitivity_analysis', {
      pick_threshold: o.pick_threshold, data_num: o.data_num, sensitive_nodes: asList(o.sensitive_nodes), qtype: o.qtype,
      override_scales: o.override_scales,
    }, { progress: ctx.progress, label: 'Start analyzing node sensitivity...' });
    for (const m of doc.sensitivity_analysis_messages ?? []) if (!m.startsWith('Start analyzing')) ctx.progress.message(m);
    await writeCharts(doc, o.save_dir);
    return doc;
  }, { dirs: ['save_dir'] });
  return 0;
}
