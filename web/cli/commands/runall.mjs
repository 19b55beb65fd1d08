// `ptqscope runall MODEL_OR_FILE CALIBRATED_DATA [options]` — hmct-debugger's runall (§8.4,
// §9.2): node sensitivity, data distribution, channel-wise box plots, accumulated error and the
// sensitivity analysis, in that order, into the original's tree under SAVE_DIR:
//   node_sensitivity/sensitivity_of_<type>.log   (§8.3 text)
//   data_distribution/, channelwise_distribution/, accumulate_error/, sensitivity_analysis/  (.svg + .png)
// plus SAVE_DIR/results.json (every section, docs/result-schema.md) and SAVE_DIR/report.html.
// Sub-directories are joined as paths (the original concatenates strings, so its save_dir needed a
// trailing '/').
import path from 'node:path';
import { parseClick, clickUsage } from '../lib/click.mjs';
import { COMMON_OPTIONS, analysisMain, clickDefault, listOption, writeJson } from '../lib/analysis.mjs';
import { writeCharts } from '../lib/charts.mjs';
import { makeOutputDir, writeOutput } from '../lib/outputs.mjs';
import { checkRunallOptions, runAll, STAGE_DIRS } from '../../pipeline/runall.mjs';
import { formatVerboseTable } from '../../pipeline/tables.mjs';
import { asList } from '../lib/keep_list.mjs';
import { calibrationSetResolver } from '../../pipeline/relations.mjs';

export const SPEC = {
  positionals: ['MODEL_OR_FILE', 'CALIBRATED_DATA'],
  options: [
    { name: 'save_dir', flags: ['-s', '--save_dir'], default: './debug_result/', help: 'the result tree' },
    listOption('ns_metrics', ['-nm', '--ns_metrics'], 'node sensitivity metric(s)', { default: clickDefault('sensitivity', 'metrics') }),
    listOption('output_node', ['-o', '--output_node'], 'compare the outputs of this node (or list)'),
    listOption('node_type', ['-nt', '--node_type'], 'node, weight or activation; a list such as [weight,activation] (default) runs each'),
    { name: 'data_num', flags: ['-dn', '--data_num'], type: 'int', default: clickDefault('sensitivity', 'data_num'), help: 'number of samples for the sensitivities' },
    { name: 'verbose', flags: ['-v', '--verbose'], type: 'bool', default: false, metavar: 'BOOLEAN', help: 'print the sensitivity tables' },
    listOption('interested_nodes', ['-i', '--interested_nodes'], 'only these nodes in the sensitivity step'),
    listOption('dis_nodes_list', ['-dnl', '--dis_nodes_list'], 'nodes for the distribution plots (default: the top-5 of each ranking)'),
    listOption('cw_nodes_list', ['-cn', '--cw_nodes_list'], 'calibration nodes for the box plots (default: the same)'),
    { name: 'axis', flags: ['-a', '--axis'], type: 'int', default: null, help: 'channel axis of the box plots' },
    listOption('quantize_node', ['-qn', '--quantize_node'], "accumulated error: nodes to quantize (default ['weight','activation'])"),
    listOption('non_quantize_node', ['-nqn', '--non_quantize_node'], 'accumulated error: nodes to leave unquantized'),
    { name: 'ae_metric', flags: ['-am', '--ae_metric'], default: clickDefault('acc_error', 'metric'), help: 'accumulated error metric' },
    { name: 'average_mode', flags: ['-avm', '--average_mode'], type: 'bool', default: clickDefault('acc_error', 'average_mode'), metavar: 'BOOLEAN', help: 'running mean of the curves' },
    { name: 'pick_threshold', flags: ['-pt', '--pick_threshold'], type: 'float', default: clickDefault('sensitivity_analysis', 'pick_threshold'), help: 'sensitive nodes: cosine <= this' },
    listOption('sensitive_nodes', ['-sn', '--sensitive_nodes'], 'the sensitive nodes of the sensitivity analysis'),
    { name: 'png', flags: ['--png'], type: 'bool', default: true, metavar: 'BOOLEAN', help: 'also write each chart as .png' },
    ...COMMON_OPTIONS,
  ],
};

export const summary = 'every analysis in the original order, into the debug_result/ tree (hmct-debugger compatible)';
export const usage = clickUsage('runall', SPEC, summary);

const STAGE_LABELS = {
  sensitivity: (t) => `Start calculating ${t} sensitivity...`,
  distribution: () => 'Start getting data distribution...',
  channelwise: () => 'Start getting channelwise data distribution...',
  acc_error: () => 'Start ploting accumulate error...',
  sensitivity_analysis: () => 'Start analyzing node sensitivity...',
};

// SAVE_DIR/report.html: the self-contained report of web/report, charts drawn on a linkedom document,
// with the picture of the graph the page draws (web/app/graph/picture.mjs: its view model, layout and
// marks run in Node on linkedom), coloured by the heat view the page opens these results with.
async function writeReport(result, graph, saveDir, modelFile) {
  const [{ buildReport }, { createDocument }, { reportGraph }, { buildHeat }, { resolveSettings }, { heatScale }] = await Promise.all([
    import('../../report/report.mjs'), import('../../charts/node_dom.mjs'), import('../../app/graph/picture.mjs'),
    import('../../app/heatmap/mapping.mjs'), import('../../app/heatmap/controller.mjs'), import('../../charts/heat_scale.mjs')]);
  const document = createDocument();
  const heat = buildHeat(result, graph, resolveSettings(result, {}), heatScale);
  const file = path.join(saveDir, 'report.html');
  writeOutput(file, buildReport(result, { title: `ptqscope runall — ${modelFile}`, document, graph: reportGraph({ graph, heat, document }) }));
  return file;
}

export async function main(argv, { log = console.log } = {}) {
  const { options: o, positionals } = parseClick(argv, SPEC);
  const saveDir = o.save_dir;
  checkRunallOptions(o); // before loading anything, as the original
  await analysisMain(o, positionals, async (ctx) => {
    const { progress } = ctx;
    // The node_type=node path maps nodes to their calibration nodes (§8.4 step 1); the report draws it.
    const graph = JSON.parse((await ctx.pool.request({ type: 'graph' })).json);
    const out = await runAll(ctx.pool, o, {
      modelFile: ctx.modelFile,
      config: ctx.config,
      calibrationSetOf: o.node_type === 'node' ? calibrationSetResolver(graph) : undefined,
      onStage: (stage, t) => progress.stage(STAGE_LABELS[stage](t)),
      onProgress: (done, total, eta) => progress.update(done, total, eta),
    });
    progress.end();
    for (const m of out.messages) progress.message(m);
    const dir = (stage) => path.join(saveDir, STAGE_DIRS[stage]);
    makeOutputDir(dir('sensitivity'));
    for (const l of out.logs) {
      writeOutput(path.join(dir('sensitivity'), l.file_name), l.text);
      if (o.verbose) log(formatVerboseTable(l.nodeType, l.rows, asList(o.ns_metrics)));
    }
    for (const stage of ['distribution', 'channelwise', 'acc_error', 'sensitivity_analysis']) {
      if (out.docs[stage]) await writeCharts(out.docs[stage], dir(stage), { png: o.png });
    }
    writeJson(path.join(saveDir, 'results.json'), out.result);
    await writeReport(out.result, graph, saveDir, ctx.modelFile);
    return out.result;
  }, { dirs: ['save_dir'] });
  return 0;
}
