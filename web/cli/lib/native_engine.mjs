// The native engine as an ES module shaped like the wasm build's (build/wasm/ptqscope.mjs): its default
// export creates the module object (Session, describe, mergeResults...: docs/wasm-api.md), here the
// Node-API addon (bind/node_addon.cpp). worker_threads load it by path like the wasm module.
// PTQSCOPE_SIMD=portable|avx2|avx512 picks the GEMM's instruction set (default: the best the CPU has).
import { createRequire } from 'node:module';
import { nativeAddonPath } from './wasm.mjs';

const require = createRequire(import.meta.url);

export default async function createPtqModule() {
  const addon = require(nativeAddonPath());
  if (process.env.PTQSCOPE_SIMD) addon.setSimd(process.env.PTQSCOPE_SIMD);
  return addon;
}
