// Requests built from the panels' form values, and combining documents of different analyses.
import { describe, it, expect } from 'vitest';
import { buildRequest, runAllOptions, topK } from '../../../web/app/analysis/requests.mjs';
import { applyItemEvent, combineResults } from '../../../web/app/analysis/results.mjs';

describe('buildRequest', () => {
  it('sensitivity: python option names, data_num empty = all, picked nodes only when asked', () => {
    const picked = new Set(['Conv_0', 'Gemm_5']);
    expect(buildRequest('sensitivity', { node_type: 'weight', metrics: ['mse', 'sqnr'], data_num: '', output_node: '' }, picked))
      .toEqual({ analysis: 'sensitivity', options: { node_type: 'weight', metrics: ['mse', 'sqnr'], data_num: 0, sample_selection: 'last', output_node: null, interested_nodes: null } });
    const r = buildRequest('leave_one_out', { metrics: [], data_num: '4', use_picked: true, output_node: 'Relu_3, Gemm_5' }, picked);
    expect(r.options).toMatchObject({ metrics: ['cosine-similarity'], data_num: 4, interested_nodes: ['Conv_0', 'Gemm_5'], output_node: ['Relu_3', 'Gemm_5'] });
    expect(() => buildRequest('sensitivity', { data_num: '0' })).toThrow(/data_num/);
  });

  it('acc_error needs a node set; lists accept commas, semicolons and spaces', () => {
    expect(() => buildRequest('acc_error', {})).toThrow(/quantize_node/);
    expect(buildRequest('acc_error', { quantize_node: 'weight, activation', metric: 'mse', average_mode: true }).options)
      .toEqual({ quantize_node: ['weight', 'activation'], non_quantize_node: null, metric: 'mse', average_mode: true });
    expect(buildRequest('acc_error', { non_quantize_node: 'a;b c' }).options.non_quantize_node).toEqual(['a', 'b', 'c']);
  });

  it('distribution / channelwise need nodes, stat_info does not; axis only when given', () => {
    expect(() => buildRequest('distribution', { nodes_list: '' })).toThrow(/pick nodes/);
    expect(buildRequest('channelwise', { nodes_list: 'x_HzCalibration', axis: '0' }).options).toEqual({ nodes_list: ['x_HzCalibration'], axis: 0 });
    expect(buildRequest('channelwise', { nodes_list: 'x', axis: '' }).options).toEqual({ nodes_list: ['x'] });
    expect(buildRequest('stat_info', { nodes_list: '' }).options).toEqual({ nodes_list: null });
    expect(buildRequest('distribution', {}, new Set(['n1'])).options.nodes_list).toEqual(['n1']);
  });

  it('top-k follows the sensitivity ranking; runall options', () => {
    const result = { sensitivity: { activation: { a: {}, b: {}, c: {} } }, sensitivity_order: { activation: ['c', 'a', 'b'] } };
    expect(topK(result, 'activation', 2)).toEqual(['c', 'a']);
    expect(runAllOptions({ node_type: '', ns_metrics: [], data_num: '2', pick_threshold: '0.99' }))
      .toMatchObject({ node_type: null, ns_metrics: ['cosine-similarity'], data_num: 2, pick_threshold: 0.99 });
    // An empty form judges every sample (0: a null would be dropped as "absent" on the way to the core).
    expect(runAllOptions({}).data_num).toBe(0);
  });
});

describe('combining documents', () => {
  it('keeps the tables of other node types and analyses and replaces a re-run one', () => {
    const act = { schema: 'ptqscope.result', sensitivity: { activation: { a: { x: 1 } } }, sensitivity_order: { activation: ['a'] }, timings_ms: { sensitivity: 3 } };
    const w = { schema: 'ptqscope.result', sensitivity: { weight: { w: { x: 2 } } }, sensitivity_order: { weight: ['w'] }, distribution: { a: {} }, distribution_order: ['a'] };
    const both = combineResults(act, w);
    // The latest request's sections first (the panel draws its tables in this order).
    expect(Object.keys(both.sensitivity)).toEqual(['weight', 'activation']);
    expect(both.distribution_order).toEqual(['a']);
    const again = combineResults(both, { sensitivity: { activation: { b: { x: 3 } } }, sensitivity_order: { activation: ['b'] } });
    expect(again.sensitivity.activation).toEqual({ b: { x: 3 } });
    expect(again.sensitivity.weight).toEqual({ w: { x: 2 } });
    expect(Object.keys(again.sensitivity)).toEqual(['activation', 'weight']);
  });

  it('folds item events into a streaming document that a finished one replaces', () => {
    let doc = applyItemEvent(null, { type: 'item', analysis: 'sensitivity', section: 'node', item: 'Conv_0', row: { m: 1 }, done: 1, total: 2 });
    doc = applyItemEvent(doc, { type: 'item', analysis: 'distribution', item: 'x', row: { kind: 'activation' }, done: 1, total: 1 });
    expect(doc).toMatchObject({ partial: true, sensitivity: { node: { Conv_0: { m: 1 } } }, sensitivity_order: { node: ['Conv_0'] }, distribution: { x: { kind: 'activation' } } });
    // Progress-only events (row null) leave the document as it is.
    expect(applyItemEvent(doc, { type: 'item', analysis: 'distribution', section: 'distribution', item: 'y', row: null, done: 2, total: 2 })).toBe(doc);
    expect(applyItemEvent(null, { type: 'item', analysis: 'acc_error', section: 'acc_error', item: null, row: null, done: 1, total: 2 })).toBe(null);
    // acc_error streams one curve per item, stored under its key as in the finished document.
    const curve = { label: 'only_weight_calibrated', x: ['t0'], y: [0.99] };
    const streamed = applyItemEvent(doc, { type: 'item', analysis: 'acc_error', section: 'acc_error', item: 'only_weight_calibrated', row: curve, done: 1, total: 3 });
    expect(streamed.acc_error).toEqual({ only_weight_calibrated: curve });
    const done = combineResults(doc, { sensitivity: { node: { Conv_0: { m: 1 }, Relu_1: { m: 2 } } }, cancelled: false });
    expect(done.partial).toBeUndefined();
    expect(Object.keys(done.sensitivity.node)).toEqual(['Conv_0', 'Relu_1']);
  });
});
