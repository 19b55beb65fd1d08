// The benchmark scripts' FLOP count (scripts/bench-common.mjs graphFlops, from the graph JSON's
// static shapes), against counts made by hand for a small model.
import { describe, it, expect } from 'vitest';
import { loadPtqModule } from './helpers.mjs';
import { buildModel } from './onnx_builder.mjs';
import { graphFlops, nodeFlops } from '../../scripts/bench-common.mjs';

const floats = (n) => Array.from({ length: n }, (_, i) => (i % 7) / 10);

describe('bench-common FLOP count', () => {
  it('counts 2 per multiply-add of Conv, MatMul and Gemm and one per output element elsewhere', async () => {
    const ptq = await loadPtqModule();
    const bytes = buildModel({
      opsets: [['', 17]],
      nodes: [
        // 1x3x8x8 -> 1x4x8x8 (3x3, pads 1): 256 outputs x 27 multiply-adds
        { name: 'conv', op: 'Conv', inputs: ['x', 'w'], outputs: ['c'], attrs: [{ name: 'kernel_shape', ints: [3, 3] }, { name: 'pads', ints: [1, 1, 1, 1] }] },
        { name: 'relu', op: 'Relu', inputs: ['c'], outputs: ['r'] }, // 256
        { name: 'flat', op: 'Reshape', inputs: ['r', 'shape'], outputs: ['f'] }, // 256 (1x256)
        { name: 'mm', op: 'MatMul', inputs: ['f', 'm'], outputs: ['y'] }, // 1x5 outputs x 256
        { name: 'gemm', op: 'Gemm', inputs: ['y', 'g'], outputs: ['z'] }, // 1x2 outputs x 5
      ],
      initializers: [
        { name: 'w', dims: [4, 3, 3, 3], floats: floats(108) },
        { name: 'shape', dims: [2], int64s: [1, 256] },
        { name: 'm', dims: [256, 5], floats: floats(1280) },
        { name: 'g', dims: [5, 2], floats: floats(10) },
      ],
      inputs: [{ name: 'x', dims: [1, 3, 8, 8] }],
      outputs: [{ name: 'z', dims: [1, 2] }],
    });
    const session = new ptq.Session();
    session.loadModel(bytes);
    const graph = JSON.parse(session.graphJson());
    session.delete();
    const byName = Object.fromEntries(graph.nodes.map((n) => [n.name, nodeFlops(graph, n)]));
    expect(byName).toEqual({ conv: 2 * 256 * 27, relu: 256, flat: 256, mm: 2 * 5 * 256, gemm: 2 * 2 * 5 });
    expect(graphFlops(graph)).toBe(2 * 256 * 27 + 256 + 256 + 2 * 5 * 256 + 2 * 2 * 5);
  });
});
