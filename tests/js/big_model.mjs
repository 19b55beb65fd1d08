// The 1 GiB model of scripts/fixtures/big_models.py (four WIDTH x WIDTH MatMul layers, weights in
// external data) and the bound its wasm heaps keep, shared by the CLI test and the page's (e2e).
import { expect } from 'vitest';

export const BIG_MODEL = 'big_matmul_calibrated_external';
export const WIDTH = 8192;
export const LAYERS = 4;
// What the memory budget does not count: the module, the calibration samples, the graph, and one
// packing of a weight built for a single call when the budget has no room to keep it (256 MiB here).
export const MARGIN = 512 * 2 ** 20;
const HEAP_LIMIT = 4 * 2 ** 30;

// A heap holds the model's bytes, at most one fake-quantized copy of its weights and one packing of
// them for the GEMM (each the size of the weights), the activations (small here) and MARGIN.
export const heapBound = (weightBytes) => 3 * weightBytes + MARGIN;

// "ptqscope: <who>: wasm heap H bytes, at most P bytes counted against the memory budget of B" lines.
export function memoryLines(stderr) {
  return [...stderr.matchAll(/ptqscope: ([\w ]+): wasm heap (\d+) bytes, at most (\d+) bytes counted against the memory budget of (\d+)/g)]
    .map(([, who, heap, peak, budget]) => ({ who, heap: Number(heap), peak: Number(peak), budget: Number(budget) }));
}

// The bound every heap keeps: under the 4 GB limit and heapBound, at most what the budget counted
// plus MARGIN, and the budget counted at least the model's weights (they stay views into its bytes).
export function expectBoundedHeap(m, weightBytes) {
  expect(m.peak, m.who).toBeGreaterThanOrEqual(weightBytes);
  expect(m.peak, m.who).toBeLessThanOrEqual(m.budget);
  expect(m.heap, m.who).toBeLessThanOrEqual(m.peak + MARGIN);
  expect(m.heap, m.who).toBeLessThanOrEqual(Math.min(heapBound(weightBytes), HEAP_LIMIT));
}
