// The result module (web/pipeline/result.mjs): what every face does with a result document. The
// documents here are written by hand; the real ones are drawn and compared in the CLI, chart and
// app tests, which all go through this module.
import { describe, expect, it } from 'vitest';
import { asList, chartsOf, combineDocuments, orderedKeys, orderedRows, safeName, toNumber } from '../../web/pipeline/result.mjs';

describe('result module', () => {
  it('reads the schema numbers, non-finite strings included', () => {
    expect([toNumber(0.5), toNumber('inf'), toNumber('-inf'), toNumber(' NaN '), toNumber('1e-3'), toNumber(null), toNumber('')])
      .toEqual([0.5, Infinity, -Infinity, NaN, 0.001, NaN, NaN]);
  });

  it('walks a map in the order list (integer-like keys included), then the keys it does not name', () => {
    const map = { b: 1, 21: 2, a: 3 }; // JS puts "21" first
    expect(Object.keys(map)).toEqual(['21', 'b', 'a']);
    expect(orderedKeys(map, ['a', 'b', '21'])).toEqual(['a', 'b', '21']);
    expect(orderedKeys(map, ['a', 'gone'])).toEqual(['a', '21', 'b']);
    expect(orderedKeys(map, undefined)).toEqual(['21', 'b', 'a']);
    expect(orderedKeys(undefined, ['x'])).toEqual([]);
    expect(orderedRows(map, ['a', 'b', '21'])).toEqual([['a', 3], ['b', 1], ['21', 2]]);
  });

  it('combines documents of several analyses: node types side by side, options and timings merged, cancelled if any', () => {
    const w = { schema: 'ptqscope.result', sensitivity: { weight: { x: {} } }, options: { sensitivity: { node_type: 'weight' } }, timings_ms: { sensitivity: 2 }, cancelled: false, sweep: { total: 1 } };
    const a = { schema: 'ptqscope.result', sensitivity: { activation: { y: {} } }, acc_error: { k: {} }, timings_ms: { acc_error: 3 }, cancelled: true };
    const c = combineDocuments([w, a]);
    expect(c.sensitivity).toEqual({ weight: { x: {} }, activation: { y: {} } });
    expect(c.timings_ms).toEqual({ sensitivity: 2, acc_error: 3 });
    expect(c.options).toEqual({ sensitivity: { node_type: 'weight' } });
    expect(c.cancelled).toBe(true);
    expect('sweep' in c).toBe(false);
  });

  it('lists the charts of a document in the original order with their file names', () => {
    const doc = {
      acc_error: { c1: { label: 'only_weight', x: ['t'], y: [1] } },
      acc_error_figures: [{ prefix: 'p', file_name: 'p_mse.png', curves: ['c1'] }],
      distribution: { 'activation_a/b': { name: 'a/b', file_name: 'activation_a_b.png' }, w: { name: 'w', file_name: 'weight_w.png' } },
      distribution_order: ['w', 'activation_a/b'],
      channelwise: { n1: { file_name: 'n1_boxplot.png' }, n0: { file_name: 'n0_boxplot.png' } },
      options: { channelwise: { nodes_list: ['n0', 'n1'] } },
      stat_info_curves: { feature: { nodes: ['f'] }, weight: { nodes: ['w'] } },
      sensitivity_analysis: { x: ['none'] },
    };
    const charts = chartsOf(doc);
    expect(charts.map((c) => [c.kind, c.key, c.file_name])).toEqual([
      ['acc_error', 'p', 'p_mse.png'],
      ['distribution', 'w', 'weight_w.png'],
      ['distribution', 'activation_a/b', 'activation_a_b.png'],
      ['channelwise', 'n0', 'n0_boxplot.png'],
      ['channelwise', 'n1', 'n1_boxplot.png'],
      ['stat_info', 'weight', 'weight_stat_info.png'],
      ['stat_info', 'feature', 'feature_stat_info.png'],
      ['sensitivity_analysis', 'partial_quantization', 'partial_quantization.png'],
    ]);
    expect(charts[0].data.curves).toEqual([{ label: 'only_weight', name: 'only_weight', key: 'c1', x: ['t'], y: [1] }]);
    expect(charts[2].data.name).toBe('a/b');
    expect(charts[3].data).toEqual({ name: 'n0', file_name: 'n0_boxplot.png' });
    expect(chartsOf(null)).toEqual([]);
    expect(() => chartsOf({ acc_error_figures: [{ prefix: 'p', curves: ['nope'] }] })).toThrow(/curve "nope" of figure "p"/);
  });

  it('list options and file names', () => {
    expect([asList(null), asList('a'), asList(['a', 'b'])]).toEqual([null, ['a'], ['a', 'b']]);
    expect(safeName('a/b\\c.png')).toBe('a_b_c.png');
    // Names Windows refuses: torch's '::', the other reserved characters, a trailing dot or space, a device name.
    expect(safeName('activation_onnx::Conv_41_HzCalibration.png')).toBe('activation_onnx__Conv_41_HzCalibration.png');
    expect(safeName('node_output_:/x/y_of_a|b?*"<c>')).toBe('node_output___x_y_of_a_b____c_');
    expect(safeName('name. ')).toBe('name__');
    expect(safeName('CON')).toBe('_CON');
    expect(safeName('lpt1.svg')).toBe('_lpt1.svg');
    expect(safeName('CONV_1')).toBe('CONV_1');
  });
});
