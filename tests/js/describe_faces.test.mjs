// Every face reads its facts from the core's describe() document: the CLI's flag defaults and
// choices, the page's forms and requests, runall's defaults, the heat scale's and the table's
// direction, and the sweep splitter. The expected values are the wasm module's own describe(),
// asked here independently of web/pipeline/catalog.mjs (which the faces import).
import { describe, expect, it } from 'vitest';
import { parseHTML } from 'linkedom';
import { loadPtqModule } from './helpers.mjs';
import { parseClick } from '../../web/cli/lib/click.mjs';
import { keepListFormat } from '../../web/cli/lib/keep_list.mjs';
import * as sensitivityCmd from '../../web/cli/commands/get-sensitivity-of-nodes.mjs';
import * as accErrorCmd from '../../web/cli/commands/plot-acc-error.mjs';
import * as sensitivityAnalysisCmd from '../../web/cli/commands/sensitivity-analysis.mjs';
import * as runallCmd from '../../web/cli/commands/runall.mjs';
import * as nodeErrorsCmd from '../../web/cli/commands/node-errors.mjs';
import { ANALYSES as PAGE_ANALYSES, buildRequest, runAllOptions } from '../../web/app/analysis/requests.mjs';
import { FORMS, buildForm, readForm } from '../../web/app/analysis/forms.mjs';
import { DEFAULT_RUNALL_OPTIONS } from '../../web/pipeline/runall.mjs';
import { isSplittable } from '../../web/pipeline/sweep.mjs';
import { worseDirection } from '../../web/charts/heat_scale.mjs';
import { defaultDescending } from '../../web/charts/sensitivity_table.mjs';
import { categoryOf, inputNamesOf } from '../../web/app/graph/categories.mjs';
import { horizonCategory, horizonSchemas } from '../../plugin/netron/metadata.mjs';

const ptq = await loadPtqModule();
const doc = JSON.parse(ptq.describe());
const spec = (analysis) => doc.analyses.find((a) => a.name === analysis);
const def = (analysis, option) => spec(analysis).options.find((o) => o.name === option).default;
const POS = ['model.onnx', 'calibration_data'];

describe('the command line reads its defaults from describe()', () => {
  // [command module, flag option name, analysis, analysis option]
  const cases = [
    [sensitivityCmd, 'metrics', 'sensitivity', 'metrics'],
    [sensitivityCmd, 'node_type', 'sensitivity', 'node_type'],
    [sensitivityCmd, 'data_num', 'sensitivity', 'data_num'],
    [sensitivityCmd, 'sample_selection', 'sensitivity', 'sample_selection'],
    [accErrorCmd, 'metric', 'acc_error', 'metric'],
    [accErrorCmd, 'average_mode', 'acc_error', 'average_mode'],
    [sensitivityAnalysisCmd, 'pick_threshold', 'sensitivity_analysis', 'pick_threshold'],
    [sensitivityAnalysisCmd, 'data_num', 'sensitivity_analysis', 'data_num'],
    [sensitivityAnalysisCmd, 'qtype', 'sensitivity_analysis', 'qtype'],
    [sensitivityAnalysisCmd, 'override_scales', 'sensitivity_analysis', 'override_scales'],
    [nodeErrorsCmd, 'measure', 'node_errors', 'measure'],
    [runallCmd, 'ns_metrics', 'sensitivity', 'metrics'],
    [runallCmd, 'data_num', 'sensitivity', 'data_num'],
    [runallCmd, 'ae_metric', 'acc_error', 'metric'],
    [runallCmd, 'average_mode', 'acc_error', 'average_mode'],
    [runallCmd, 'pick_threshold', 'sensitivity_analysis', 'pick_threshold'],
  ];
  for (const [mod, flag, analysis, option] of cases) {
    it(`${flag} -> ${analysis}.${option}`, () => {
      const { options } = parseClick(POS, mod.SPEC);
      // A list option holds click's string; as a request it is that list (keep_list_format + asList).
      const value = options[flag];
      const asRequest = Array.isArray(def(analysis, option)) && !Array.isArray(value) ? [keepListFormat(value)].flat() : value;
      expect(asRequest).toEqual(def(analysis, option));
    });
  }
  it('--relations takes the core\'s relation rules, the default first', () => {
    const { options } = parseClick(POS, sensitivityCmd.SPEC);
    expect(options.relations).toBe(doc.relation_rules[0].name);
    expect(sensitivityCmd.SPEC.options.find((o) => o.name === 'relations').choices).toEqual(doc.relation_rules.map((r) => r.name));
    expect(nodeErrorsCmd.SPEC.options.find((o) => o.name === 'measure').choices).toEqual(['output', 'converter']);
  });
  it('-n choices are the core\'s node types the original\'s command line accepts', () => {
    const choices = sensitivityCmd.SPEC.options.find((o) => o.name === 'node_type').choices;
    expect(choices.every((t) => doc.node_types.includes(t))).toBe(true);
    expect(choices).toEqual(['node', 'weight', 'activation']); // §3.1: the CLI restricts to the first three
  });
});

// What the page and the plugin start with: the core's interactive_default where it has one (data_num:
// 0 = every sample), else its default.
function pageDef(analysis, option) {
  const o = spec(analysis).options.find((e) => e.name === option);
  return o.interactive_default ?? o.default;
}

describe('the page reads its forms and requests from describe()', () => {
  it('data_num starts at every sample in the page and the plugin, at the original\'s one in the CLI (a search\'s at 4: tuning and held-out samples, §13.4)', () => {
    for (const analysis of ['sensitivity', 'leave_one_out', 'sensitivity_analysis', 'what_if', 'node_errors', 'fix']) {
      const o = spec(analysis).options.find((e) => e.name === 'data_num');
      expect([o.default, o.interactive_default], analysis).toEqual([analysis === 'fix' ? 4 : 1, 0]);
    }
  });
  it('requests built from an empty form carry the core\'s defaults', () => {
    for (const analysis of ['sensitivity', 'leave_one_out']) {
      const { options } = buildRequest(analysis, {});
      for (const o of ['node_type', 'metrics', 'data_num', 'sample_selection']) expect(options[o], o).toEqual(pageDef(analysis, o));
    }
    expect(buildRequest('acc_error', { quantize_node: 'weight' }).options.metric).toBe(def('acc_error', 'metric'));
    const sa = buildRequest('sensitivity_analysis', {}).options;
    expect([sa.pick_threshold, sa.data_num]).toEqual([def('sensitivity_analysis', 'pick_threshold'), pageDef('sensitivity_analysis', 'data_num')]);
  });
  it('a form as drawn reads back as the core\'s defaults', () => {
    const { document } = parseHTML('<!DOCTYPE html><html><body></body></html>');
    for (const analysis of ['sensitivity', 'leave_one_out']) {
      const form = document.createElement('form');
      form.dataset.analysis = analysis;
      buildForm(form, FORMS[analysis], { picked() {}, topk() {} });
      const { options } = buildRequest(analysis, readForm(form, FORMS[analysis]));
      for (const o of ['node_type', 'metrics', 'data_num', 'sample_selection']) expect(options[o], o).toEqual(pageDef(analysis, o));
      const choices = [...form.querySelectorAll('select[name="sample_selection"] option')].map((e) => e.value);
      expect(choices).toEqual(spec(analysis).options.find((o) => o.name === 'sample_selection').choices);
    }
  });
  it('runall\'s defaults are those of the analyses it runs', () => {
    expect(DEFAULT_RUNALL_OPTIONS).toMatchObject({
      ns_metrics: def('sensitivity', 'metrics'), data_num: def('sensitivity', 'data_num'), ae_metric: def('acc_error', 'metric'),
      average_mode: def('acc_error', 'average_mode'), pick_threshold: def('sensitivity_analysis', 'pick_threshold'),
    });
    expect(runAllOptions({})).toMatchObject({ ns_metrics: def('sensitivity', 'metrics'), pick_threshold: def('sensitivity_analysis', 'pick_threshold') });
  });
  it('every analysis tab is an analysis of the core', () => {
    for (const { id } of PAGE_ANALYSES) expect(spec(id), id).toBeDefined();
  });
});

describe('direction and splitting come from describe()', () => {
  it('the heat scale and the table sort worst first by the metric\'s better direction', () => {
    for (const m of doc.metrics) {
      expect(worseDirection(m.name), m.name).toBe(m.better === 'higher' ? 'lower' : 'higher');
      expect(defaultDescending(m.name), m.name).toBe(m.better === 'lower');
    }
    expect(defaultDescending('node')).toBe(false);
  });
  it('the sweep splitter splits exactly the analyses the core splits', () => {
    for (const a of doc.analyses) expect(isSplittable(a.name), a.name).toBe(a.splittable);
    expect(isSplittable('no_such_analysis')).toBe(false);
  });
});

describe('the viewers\' op categories and input names come from describe()', () => {
  // The newest entry of each op type, as a viewer without a node's opset picks it.
  const newest = new Map();
  for (const op of doc.ops) if (!newest.has(op.op_type) || op.since > newest.get(op.op_type).since) newest.set(op.op_type, op);
  it('the core describes the ops it runs and those the viewers only show', () => {
    expect(newest.get('Conv')).toMatchObject({ domain: '', since: 1, until: null, executed: true, category: 'layer' });
    expect(newest.get('HzLut')).toMatchObject({ domain: 'horizon', executed: false, category: 'activation' });
    const squeeze = doc.ops.filter((op) => op.op_type === 'Squeeze').map((op) => [op.since, op.until, op.inputs.map((i) => i.name)]);
    expect(squeeze).toEqual([[1, 12, ['data']], [13, null, ['data', 'axes']]]);
  });
  it('the page\'s node categories and input rows', () => {
    for (const [opType, op] of newest) {
      expect(categoryOf(opType), opType).toBe(op.category);
      expect(inputNamesOf(opType), opType).toEqual(op.inputs.map((i) => (i.variadic ? null : i.name)));
    }
    expect(categoryOf('NoSuchOp')).toBe('');
    expect(inputNamesOf('NoSuchOp')).toEqual([]);
  });
  it('the plugin\'s horizon schemas (Netron\'s capitalised category names)', () => {
    const horizon = [...newest.values()].filter((op) => op.domain === 'horizon');
    expect(horizonSchemas().map((s) => s.name).sort()).toEqual(horizon.map((op) => op.op_type).sort());
    for (const op of horizon) {
      const schema = horizonSchemas().find((s) => s.name === op.op_type);
      expect(schema.category.toLowerCase(), op.op_type).toBe(op.category);
      expect(horizonCategory(op.op_type)?.toLowerCase(), op.op_type).toBe(op.category);
      expect(schema.inputs.map((i) => [i.name, i.option === 'optional', i.list === true]), op.op_type)
        .toEqual(op.inputs.map((i) => [i.name, i.optional, i.variadic]));
    }
  });
});
