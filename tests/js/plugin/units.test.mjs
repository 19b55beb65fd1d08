// Pure parts of the plugin: node-id mapping rules, contrast colour, horizon schemas and the metadata
// asset wrapper, render probe.
import { describe, it, expect } from 'vitest';
import { parseHTML } from 'linkedom';
import { unnamedNodeNames, nodeElementMap, elementNodeName, heatOnQdqNodes, namesWithQdqNodes } from '../../../plugin/netron/nodes.mjs';
import { textColorFor, applyHeat, clearHeat, coloredCount, applyPicked } from '../../../plugin/netron/decorate.mjs';
import { horizonSchemas, mergeSchemas, removeSchemas, wrapMetadataAsset, horizonCategory } from '../../../plugin/netron/metadata.mjs';
import { probeRender, headerPath } from '../../../plugin/netron/contract.mjs';

// A render with two unnamed nodes and a named one that looks generated (old exporters).
function render(ids) {
  const nodes = ids.map((id) => `<g id="${id}" class="node graph-node"><g class="node-item node-item-type"><path d="M0,0"></path><text>x</text></g><path class="node node-border"></path></g>`).join('');
  const { document } = parseHTML(`<html><body><div id="target"><svg id="canvas"><g id="origin"><g id="nodes">${nodes}</g></g></svg></div></body></html>`);
  return document;
}

const graph = {
  nodes: [
    { name: 'Conv_0', op_type: 'Conv' }, // named in the file (node-name-Conv_0)
    { name: 'c', op_type: 'Constant' },
    { name: 'Add_7', op_type: 'Add' }, // unnamed, file index 7
    { name: 'Relu_3', op_type: 'Relu' }, // unnamed, file index 3 (listed later: topological order)
  ],
};

describe('node ids', () => {
  it('orders unnamed nodes by their file index and skips real names and Constants', () => {
    expect(unnamedNodeNames(graph, new Map([['Conv_0', null]]))).toEqual(['Relu_3', 'Add_7']);
  });

  it('maps node-name-* and node-id-* elements both ways', () => {
    const doc = render(['node-name-Conv_0', 'node-id-0', 'node-id-1']);
    const map = nodeElementMap(doc, graph);
    expect([...map].map(([n, el]) => [n, el.id])).toEqual([['Conv_0', 'node-name-Conv_0'], ['Relu_3', 'node-id-0'], ['Add_7', 'node-id-1']]);
    expect(elementNodeName(doc.getElementById('node-id-1'), doc, graph)).toBe('Add_7');
    expect(nodeElementMap(doc, null).size).toBe(1); // without graphJson only named nodes
  });

  it("maps a Q/DQ model's calibration nodes to the QuantizeLinear/DequantizeLinear Netron draws", () => {
    // The core turned the file's x -> QuantizeLinear_1 -> DequantizeLinear_2 (unnamed) and the named
    // weight DequantizeLinear 'w_dq' into calibration nodes 'x' and 'w' (behaviour.md §1.11).
    const qdqGraph = {
      nodes: [
        { name: 'x', op_type: 'HzCalibration', calibration: { qdq_nodes: ['QuantizeLinear_1', 'DequantizeLinear_2'] } },
        { name: 'w', op_type: 'HzCalibration', calibration: { qdq_nodes: ['w_dq'] } },
        { name: 'Conv_4', op_type: 'Conv' },
      ],
    };
    const doc = render(['node-id-0', 'node-id-1', 'node-name-w_dq', 'node-id-2']);
    const map = nodeElementMap(doc, qdqGraph);
    expect(map.get('QuantizeLinear_1').id).toBe('node-id-0');
    expect(map.get('DequantizeLinear_2').id).toBe('node-id-1');
    expect(map.get('Conv_4').id).toBe('node-id-2'); // the file's third unnamed node
    expect(map.get('x').id).toBe('node-id-0');
    expect(map.get('w').id).toBe('node-name-w_dq');
    expect(elementNodeName(doc.getElementById('node-id-1'), doc, qdqGraph)).toBe('x');
    expect(elementNodeName(doc.getElementById('node-name-w_dq'), doc, qdqGraph)).toBe('w');
    expect(elementNodeName(doc.getElementById('node-id-2'), doc, qdqGraph)).toBe('Conv_4');
  });

  it("colours and outlines every QuantizeLinear/DequantizeLinear node of a Q/DQ model's quantizer", () => {
    // x -> Q -> DQ read by two consumers: the further DequantizeLinear 'dq_b' became an Identity of
    // the calibration node's output under its own name (behaviour.md §1.11).
    const qdqGraph = {
      nodes: [
        { name: 'x', op_type: 'HzCalibration', calibration: { qdq_nodes: ['q', 'dq_a', 'dq_b'] } },
        { name: 'dq_b', op_type: 'Identity' },
        { name: 'conv', op_type: 'Conv' },
      ],
    };
    const doc = render(['node-name-q', 'node-name-dq_a', 'node-name-dq_b', 'node-name-conv']);
    const elements = nodeElementMap(doc, qdqGraph);
    const heat = { values: new Map([['x', { color: '#d7191c', label: '0.9' }], ['conv', { color: '#2c7bb6', label: '1' }]]) };
    expect(applyHeat(doc, heatOnQdqNodes(heat, qdqGraph), elements)).toBe(4);
    for (const id of ['node-name-q', 'node-name-dq_a', 'node-name-dq_b']) expect(headerPath(doc.getElementById(id)).style.fill, id).toBe('#d7191c');
    expect(headerPath(doc.getElementById('node-name-conv')).style.fill).toBe('#2c7bb6');
    expect(heatOnQdqNodes(heat, { nodes: [] })).toBe(heat); // a calibrated model: unchanged
    expect(applyPicked(doc, namesWithQdqNodes(new Set(['x']), qdqGraph), elements)).toBe(3);
    expect(doc.getElementById('node-name-conv').hasAttribute('data-ptq-picked')).toBe(false);
  });

  it("maps a QOperator model's quantizers to the QLinear* nodes Netron draws (the file's nodes)", () => {
    // The core rewrote the file's QLinearAdd 'add2' into Add between Q/DQ nodes, which became the
    // calibration node 'add2_out'; the unnamed QLinearConv (file index 1) into Conv 'QLinearConv_1'
    // and calibration node 'c'; the file's QuantizeLinear stays part of calibration node 'input'.
    const qopGraph = {
      nodes: [
        { name: 'input', op_type: 'HzCalibration', calibration: { qdq_nodes: ['input_QuantizeLinear', 'input_quantized_DequantizeLinear'] } },
        { name: 'QLinearConv_1', op_type: 'Conv' },
        { name: 'c', op_type: 'HzCalibration', calibration: { qdq_nodes: ['QLinearConv_1_QuantizeLinear', 'c_quantized_DequantizeLinear'] } },
        { name: 'add2', op_type: 'Add' },
        { name: 'add2_out', op_type: 'HzCalibration', calibration: { qdq_nodes: ['add2_QuantizeLinear', 'add2_out_quantized_DequantizeLinear'] } },
      ],
      file_nodes: [
        { name: 'QLinearConv_1', op_type: 'QLinearConv', stands: 'c' },
        { name: 'add2', op_type: 'QLinearAdd', stands: 'add2_out' },
      ],
    };
    const doc = render(['node-name-input_QuantizeLinear', 'node-id-0', 'node-name-add2']);
    const map = nodeElementMap(doc, qopGraph);
    expect(map.get('QLinearConv_1').id).toBe('node-id-0');
    expect(map.get('c').id).toBe('node-id-0');
    expect(map.get('add2_out').id).toBe('node-name-add2');
    expect(map.get('input').id).toBe('node-name-input_QuantizeLinear');
    expect(elementNodeName(doc.getElementById('node-name-add2'), doc, qopGraph)).toBe('add2_out');
    expect(elementNodeName(doc.getElementById('node-id-0'), doc, qopGraph)).toBe('c');
    // The quantizer's heat on its QLinearAdd, over the Add's own.
    const heat = { values: new Map([['add2_out', { color: '#d7191c', label: '0.9' }], ['add2', { color: '#2c7bb6', label: '1' }]]) };
    applyHeat(doc, heatOnQdqNodes(heat, qopGraph), map);
    expect(headerPath(doc.getElementById('node-name-add2')).style.fill).toBe('#d7191c');
  });

  it('probeRender accepts the recorded shape and names what differs', () => {
    expect(probeRender(render(['node-name-a', 'node-id-0']))).toEqual([]);
    expect(probeRender(render(['a']))[0]).toContain("node element id 'a'");
    const { document } = parseHTML('<html><body><div id="target"><svg id="canvas"></svg></div></body></html>');
    expect(probeRender(document)[0]).toContain('g#nodes is missing');
  });
});

describe('decoration', () => {
  it('picks a readable text colour', () => {
    expect(textColorFor('#ffffcc')).toBe('#000000');
    expect(textColorFor('rgb(128, 0, 38)')).toBe('#ffffff');
    expect(textColorFor('not a colour')).toBeNull();
  });

  it('applies, updates and clears inline fills idempotently', () => {
    const doc = render(['node-name-a', 'node-name-b']);
    const map = nodeElementMap(doc, null);
    const heat = { values: new Map([['a', { color: '#ff0000', label: 'cos 0.5' }], ['b', { color: null, label: 'nan' }], ['zz', { color: '#00ff00' }]]) };
    expect(applyHeat(doc, heat, map)).toBe(1);
    const path = headerPath(map.get('a'));
    expect(path.style.getPropertyValue('fill')).toBe('#ff0000');
    expect(path.querySelector('title').textContent).toBe('cos 0.5');
    applyHeat(doc, heat, map);
    expect(path.querySelectorAll('title')).toHaveLength(1);
    clearHeat(doc);
    expect(path.style.getPropertyValue('fill')).toBe('');
    expect(path.querySelector('title')).toBeNull();
    expect(coloredCount(doc)).toBe(0);
  });
});

describe('horizon metadata', () => {
  it('schemas in onnx-metadata.json form, merged once and removed exactly', () => {
    const list = [{ name: 'Conv', module: 'ai.onnx' }, { name: 'HzCalibration', module: 'horizon', category: 'Custom' }];
    const added = mergeSchemas(list);
    expect(added).toBe(horizonSchemas().length - 1); // the existing entry is kept as is
    expect(list[1].category).toBe('Custom');
    expect(mergeSchemas(list)).toBe(0);
    expect(removeSchemas(list)).toBe(horizonSchemas().length);
    expect(list).toEqual([{ name: 'Conv', module: 'ai.onnx' }]);
    expect(() => mergeSchemas({})).toThrow('expected a JSON array');
    expect(horizonCategory('HzCalibration')).toBe('Quantization');
    expect(horizonCategory('Conv')).toBeNull();
  });

  it('wraps host.asset for onnx-metadata.json only and passes anything unexpected through', async () => {
    const host = { asset: async (file) => (file === 'onnx-metadata.json' ? '[]' : file === 'x.json' ? '[1]' : new Uint8Array(2)) };
    expect(wrapMetadataAsset(host)).toBe(true);
    expect(wrapMetadataAsset(host)).toBe(false); // once
    expect(JSON.parse(await host.asset('onnx-metadata.json')).map((e) => e.name)).toContain('HzPreprocess');
    expect(await host.asset('x.json')).toBe('[1]');
    expect(await host.asset('bin')).toBeInstanceOf(Uint8Array);
    const broken = { asset: async () => 'not json' };
    wrapMetadataAsset(broken);
    expect(await broken.asset('onnx-metadata.json')).toBe('not json');
    expect(wrapMetadataAsset({})).toBe(false);
  });
});
