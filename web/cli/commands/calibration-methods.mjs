// `ptqscope calibration-methods MODEL_OR_FILE CALIBRATED_DATA [-d N] [--metric M] [--toolchain T]
// [--percentiles P,P] [--per-channel BOOL] [--config-out FILE] [--json FILE]` — ours: the calibration
// methods compared for the whole model (docs/explain.md). Every activation threshold is chosen again
// by each method (max, percentiles, KL, minimum MSE; per tensor and per channel) from the float
// model's values on the tuning samples; the output metrics of each setting on the tuning and held-out
// samples are printed, with the best overall and per toolchain. The best setting (among those
// --toolchain can express) is the result's configuration: --config-out writes it for export-config
// (horizon-quant-config, horizon-yaml, ort-json, rknn-cfg name the setting; calibrated-onnx writes the
// thresholds in).
import { parseClick, clickUsage } from '../lib/click.mjs';
import { COMMON_OPTIONS, analysisMain, clickDefault, runWithProgress } from '../lib/analysis.mjs';
import { writeOutput } from '../lib/outputs.mjs';
import { formatValue } from '../../charts/format.mjs';
import { optionSpec } from '../../pipeline/catalog.mjs';
import { calibrationMethodRows } from '../../pipeline/result.mjs';

const percentiles = (text) => text.split(',').map((s) => {
  const n = Number(s.trim());
  if (s.trim() === '' || !Number.isFinite(n)) throw new Error(`'${text}' is not a list of numbers separated by commas`);
  return n;
});

export const SPEC = {
  positionals: ['MODEL_OR_FILE', 'CALIBRATED_DATA'],
  options: [
    { name: 'data_num', flags: ['-d', '--data_num'], type: 'int', default: clickDefault('calibration_methods', 'data_num'),
      help: 'at most this many samples (0: all), split into tuning and held-out samples' },
    { name: 'sample_selection', flags: ['--sample_selection'], choices: optionSpec('calibration_methods', 'sample_selection').choices,
      default: clickDefault('calibration_methods', 'sample_selection'), help: 'which samples: the last (in file-name order), the first, or all' },
    { name: 'metric', flags: ['-m', '--metric'], choices: optionSpec('calibration_methods', 'metric').choices,
      default: clickDefault('calibration_methods', 'metric'), help: 'metric that ranks the settings (tuning samples)' },
    { name: 'toolchain', flags: ['--toolchain'], choices: optionSpec('calibration_methods', 'toolchain').choices,
      default: clickDefault('calibration_methods', 'toolchain'), help: 'the configuration holds the best setting this toolchain can express' },
    { name: 'percentiles', flags: ['--percentiles'], parse: percentiles, metavar: 'P,P',
      help: `percentiles of |x| compared, in percent (default: ${optionSpec('calibration_methods', 'percentiles').default.join(',')})` },
    { name: 'per_channel', flags: ['--per-channel'], type: 'bool', default: clickDefault('calibration_methods', 'per_channel'),
      metavar: 'BOOLEAN', help: 'also compare every method per channel' },
    { name: 'config_out', flags: ['--config-out'], metavar: 'FILE', help: 'write the best setting as a configuration (docs/config-schema.md)' },
    ...COMMON_OPTIONS,
  ],
};

export const analysis = 'calibration_methods';
export const summary = 'calibration methods compared for the whole model: max, percentiles, KL, MSE (ptqscope)';
export const usage = clickUsage('calibration-methods', SPEC, summary);

// The printed table: one line per setting, then the best overall and per toolchain.
export function formatCalibrationMethods(doc) {
  const section = doc.calibration_methods;
  const { tune, held_out: held } = doc.calibration_methods_samples;
  const metric = section.metric;
  const rows = calibrationMethodRows(doc);
  const width = Math.max(...rows.map((r) => r.label.length), 7);
  const lines = [`calibration methods: ${metric} on ${tune.length} tuning sample(s)` +
    (held.length ? `, ${held.length} held-out` : ', no held-out sample')];
  lines.push(`  ${'setting'.padEnd(width)}  ${'tuning'.padEnd(10)}  ${held.length ? 'held-out  ' : ''}toolchains`);
  for (const r of rows) {
    const mark = r.best ? ' *' : '';
    lines.push(`  ${r.label.padEnd(width)}  ${formatValue(r.tune[metric]).padEnd(10)}  ` +
      `${held.length ? `${formatValue(r.held_out[metric]).padEnd(10)}` : ''}${r.toolchains.join(', ')}${mark}`);
  }
  for (const s of section.skipped) lines.push(`  skipped: ${s}`);
  lines.push(`calibration methods: best ${section.best ?? 'none'}${section.toolchain === 'any' ? '' : ` (for ${section.toolchain})`}; ` +
    Object.entries(section.best_by_toolchain).map(([t, label]) => `${t}: ${label ?? 'none'}`).join(', '));
  for (const w of section.warnings) lines.push(`calibration methods: warning: ${w}`);
  return lines.join('\n');
}

export async function main(argv, { log = console.log } = {}) {
  const { options: o, positionals } = parseClick(argv, SPEC);
  await analysisMain(o, positionals, async (ctx) => {
    const doc = await runWithProgress(ctx, 'calibration_methods', {
      data_num: o.data_num, sample_selection: o.sample_selection, metric: o.metric, toolchain: o.toolchain,
      per_channel: o.per_channel, ...(o.percentiles ? { percentiles: o.percentiles } : {}),
    }, { progress: ctx.progress, label: 'Comparing calibration methods...' });
    log(formatCalibrationMethods(doc));
    if (o.config_out && doc.config) writeOutput(o.config_out, `${JSON.stringify(doc.config, null, 1)}\n`);
    return doc;
  }, { files: [['config_out', '--config-out']] });
  if (o.config_out) log(`calibration methods: configuration written to ${o.config_out}`);
  return 0;
}
