// runAll's orchestration (§8.4) on a recording fake pool: the stage order, the top-5
// selection (weights first, no de-dup on the default path; calibration sets of the top-5 nodes on the
// node path), the default quantize_node, the pick_threshold rule, the .log files; and the §1.9
// calibration-set relation used for the node path, on hand-built graphs.
import { describe, expect, it } from 'vitest';
import { runAll } from '../../web/pipeline/runall.mjs';
import { calibrationSetResolver } from '../../web/pipeline/relations.mjs';

// Rankings the fake core returns (already in sorted order, as the core sorts).
const RANKING = {
  weight: ['w3', 'w1', 'w6', 'w2', 'w5', 'w4', 'w0'],
  activation: ['a2', 'a0', 'a1'],
  node: ['Conv_2', 'Gemm_9', 'Conv_5', 'Relu_3', 'Conv_7', 'Conv_8'],
};
const COSINE = { Conv_2: 0.95, Gemm_9: 0.998, Conv_5: 0.999, Relu_3: 0.9995, Conv_7: 0.99995, Conv_8: 1 };

function fakePool() {
  const calls = [];
  const doc = (request) => {
    const { analysis, options } = request;
    if (analysis === 'sensitivity') {
      const t = options.node_type;
      const rows = Object.fromEntries(RANKING[t].map((k, i) => [k, { 'cosine-similarity': COSINE[k] ?? 1 - i / 100 }]));
      return { schema: 'ptqscope.result', sensitivity: { [t]: rows }, sensitivity_order: { [t]: RANKING[t] }, options: { sensitivity: options } };
    }
    return { schema: 'ptqscope.result', [analysis]: { requested: options }, options: { [analysis]: options } };
  };
  return {
    calls,
    size: 1,
    async request(msg) {
      if (msg.type === 'listItems') return { type: 'items', items: ['x', 'y'] };
      calls.push({ analysis: msg.request.analysis, options: msg.request.options });
      return { type: 'result', json: JSON.stringify(doc(msg.request)) };
    },
  };
}

describe('runAll (§8.4)', () => {
  it('default: weight then activation sensitivity, top-5 of each (weights first), then the four stages in order', async () => {
    const pool = fakePool();
    const stages = [];
    const out = await runAll(pool, {}, { onStage: (s, t) => stages.push(t ? `${s}:${t}` : s) });
    expect(stages).toEqual(['sensitivity:weight', 'sensitivity:activation', 'distribution', 'channelwise', 'acc_error', 'sensitivity_analysis']);
    const top = ['w3', 'w1', 'w6', 'w2', 'w5', 'a2', 'a0', 'a1'];
    expect(pool.calls).toEqual([
      { analysis: 'sensitivity', options: { node_type: 'weight', metrics: ['cosine-similarity'], data_num: 1 } },
      { analysis: 'sensitivity', options: { node_type: 'activation', metrics: ['cosine-similarity'], data_num: 1 } },
      { analysis: 'distribution', options: { nodes_list: top } },
      { analysis: 'channelwise', options: { nodes_list: top } },
      { analysis: 'acc_error', options: { quantize_node: ['weight', 'activation'], metric: 'cosine-similarity', average_mode: false } },
      { analysis: 'sensitivity_analysis', options: { pick_threshold: 0.999, data_num: 1 } },
    ]);
    expect(out.logs.map((l) => l.file_name)).toEqual(['sensitivity_of_weight.log', 'sensitivity_of_activation.log']);
    expect(out.logs[0].text.split('\n')[0]).toMatch(/^=+weight=+$/);
    expect(Object.keys(out.result.sensitivity)).toEqual(['weight', 'activation']);
    expect(out.result.acc_error).toBeDefined();
  });

  it('node_type node: calibration sets of the top-5 nodes (de-duplicated), sensitive nodes = cosine <= pick_threshold in ranking order', async () => {
    const pool = fakePool();
    const sets = { Conv_2: ['a0', 'w0'], Gemm_9: ['a1', 'w1'], Conv_5: ['a0', 'w2'], Relu_3: ['a0'], Conv_7: ['a2', 'w3'] };
    const out = await runAll(pool, { node_type: 'node', ns_metrics: ['cosine-similarity', 'mse'], data_num: 3 },
      { calibrationSetOf: (n) => sets[n] ?? [n] });
    expect(pool.calls.map((c) => c.analysis)).toEqual(['sensitivity', 'distribution', 'channelwise', 'acc_error', 'sensitivity_analysis']);
    expect(pool.calls[1].options.nodes_list).toEqual(['a0', 'w0', 'a1', 'w1', 'w2', 'a2', 'w3']);
    expect(pool.calls[4].options).toEqual({ pick_threshold: 0.999, data_num: 3, sensitive_nodes: ['Conv_2', 'Gemm_9', 'Conv_5'] });
    expect(out.logs.map((l) => l.file_name)).toEqual(['sensitivity_of_node.log']);
  });

  it('node_type node with nothing under pick_threshold: the original message, the analysis ranks by itself', async () => {
    const pool = fakePool();
    const out = await runAll(pool, { node_type: 'node', pick_threshold: 0.5 }, {});
    expect(out.messages).toEqual(['pick_threshold is too small, there is no sensitive node that meets the requirements, please increase pick_threshold.']);
    expect(pool.calls.at(-1).options).toEqual({ pick_threshold: 0.5, data_num: 1 });
  });

  it('a bracketed node_type list takes the multi-type path; the user lists and metric replace the defaults', async () => {
    const pool = fakePool();
    await runAll(pool, {
      node_type: ['activation'], dis_nodes_list: ['Conv_2'], cw_nodes_list: ['w1'], axis: 0,
      non_quantize_node: [['Conv_2']], ae_metric: 'mse', average_mode: true, sensitive_nodes: ['Conv_5'],
    }, {});
    expect(pool.calls.slice(1)).toEqual([
      { analysis: 'distribution', options: { nodes_list: ['Conv_2'] } },
      { analysis: 'channelwise', options: { nodes_list: ['w1'], axis: 0 } },
      { analysis: 'acc_error', options: { non_quantize_node: [['Conv_2']], metric: 'mse', average_mode: true } },
      { analysis: 'sensitivity_analysis', options: { pick_threshold: 0.999, data_num: 1, sensitive_nodes: ['Conv_5'] } },
    ]);
  });

  it('checks first: no request is made for a bad node_type or weight/activation in non_quantize_node', async () => {
    const pool = fakePool();
    await expect(runAll(pool, { non_quantize_node: ['Conv_2', 'weight'] }, {}))
      .rejects.toThrow("In acc_error section, cannot set 'non_quantize_node' to 'weight' or 'activation'.");
    await expect(runAll(pool, { node_type: 'tae' }, {})).rejects.toThrow('node_type:tae is unavailable.');
    expect(pool.calls).toEqual([]);
  });
});

// The relation comes from the core (graph document `input_calibrations`; §1.9 is tested in
// tests/cpp/quant/relations_test.cpp and on a real model in pipeline_node.test.mjs).
describe('calibration sets (§1.9 get_calibration_by_node)', () => {
  it("reads the core's input_calibrations; a name without any selects itself", () => {
    const set = calibrationSetResolver({ nodes: [
      { name: 'x_HzCalibration', op_type: 'HzCalibration', input_calibrations: [] },
      { name: 'Conv_0', op_type: 'Conv', input_calibrations: ['w_HzCalibration', 'x_HzCalibration'] },
      { name: 'Sub_6', op_type: 'Sub', input_calibrations: [] },
    ] });
    expect(set('Conv_0')).toEqual(['w_HzCalibration', 'x_HzCalibration']);
    expect(set('Sub_6')).toEqual(['Sub_6']);
    expect(set('x_HzCalibration')).toEqual(['x_HzCalibration']);
    expect(set('Unknown')).toEqual(['Unknown']);
  });
});
