// `--memory`: what the wasm heaps held, on stderr once the command's work is done. A wasm heap only
// grows, so its size is its peak; `peakInUse` is the most the core counted against its memory budget
// at once (model bytes, tensors, packed weights; docs/wasm-api.md memoryUsage()).
export const MEMORY_OPTION = { name: 'memory', flags: ['--memory'], flag: true,
  help: 'print each wasm heap\'s size (its peak) and the most bytes counted against the memory budget at once, on stderr' };

// `usages`: [ptq.memoryUsage()] of the main thread's module or of each worker, in order.
export function reportMemory(usages, label, write = (text) => process.stderr.write(text)) {
  usages.forEach((u, i) => {
    const who = usages.length > 1 ? `${label} ${i + 1}` : label;
    // The native engine has no wasm heap (heapBytes null): its budget counts the same bytes.
    const heap = u.heapBytes === null ? 'native engine' : `wasm heap ${u.heapBytes} bytes`;
    write(`ptqscope: ${who}: ${heap}, at most ${u.peakInUse} bytes counted against the memory budget of ${u.budget}\n`);
  });
}
