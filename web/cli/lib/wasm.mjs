// Loads the CLI's engine in Node: the native addon (build/native-release/ptqscope.node, the core built
// natively with the host's vector units: bind/node_addon.cpp) where it was built and loads, else the
// wasm core (build/wasm/ptqscope.mjs, a SINGLE_FILE ES module, the page's engine). PTQSCOPE_ENGINE=wasm
// or =native forces one (native then fails when the addon is missing); docs/wasm-api.md, "Engines".
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { SetupError } from './errors.mjs';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

// PTQSCOPE_WASM overrides the module path (e.g. a debug build).
export function wasmModulePath() {
  return process.env.PTQSCOPE_WASM || path.join(REPO_ROOT, 'build/wasm/ptqscope.mjs');
}

// The native addon; PTQSCOPE_NATIVE overrides its path.
export function nativeAddonPath() {
  return process.env.PTQSCOPE_NATIVE || path.join(REPO_ROOT, 'build/native-release/ptqscope.node');
}

// The ES module whose default export creates the native engine (native_engine.mjs), as
// build/wasm/ptqscope.mjs's creates the wasm one: what a worker thread imports.
const NATIVE_MODULE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'native_engine.mjs');

// 'native' or 'wasm': PTQSCOPE_ENGINE, else native when its addon exists.
export function engineName() {
  const forced = process.env.PTQSCOPE_ENGINE;
  if (forced === 'native' || forced === 'wasm') return forced;
  if (forced) throw new SetupError(`PTQSCOPE_ENGINE='${forced}': expected 'native' or 'wasm'`);
  return fs.existsSync(nativeAddonPath()) ? 'native' : 'wasm';
}

// The module a worker thread loads for `engine` (default: the chosen one; web/pipeline/node_worker.mjs).
export function engineModulePath(engine = engineName()) {
  const file = engine === 'native' ? nativeAddonPath() : wasmModulePath();
  if (!fs.existsSync(file)) {
    throw new SetupError(engine === 'native'
      ? `${file} not found: build the native engine with \`bash scripts/build.sh release\`, or run the wasm engine (PTQSCOPE_ENGINE=wasm)`
      : `${file} not found: build it first with \`npm run build\` (or scripts/build.sh wasm)`);
  }
  return engine === 'native' ? NATIVE_MODULE : file;
}

// The engines this checkout has built: wasm, and native where its addon is.
export const builtEngines = () => ['wasm', ...(fs.existsSync(nativeAddonPath()) ? ['native'] : [])];

const modules = new Map(); // engine -> the promise of its module
export function loadEngine(engine) {
  if (!modules.has(engine)) {
    modules.set(engine, (async () => {
      const { default: createPtqModule } = await import(pathToFileURL(engineModulePath(engine)).href);
      return createPtqModule();
    })());
  }
  return modules.get(engine);
}

export const loadPtqModule = () => loadEngine(engineName());
