// Loads the wasm core (build/wasm/ptqscope.mjs, a SINGLE_FILE ES module) in Node.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { SetupError } from './errors.mjs';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

// PTQSCOPE_WASM overrides the module path (e.g. a debug build).
export function wasmModulePath() {
  return process.env.PTQSCOPE_WASM || path.join(REPO_ROOT, 'build/wasm/ptqscope.mjs');
}

let modulePromise;
export function loadPtqModule() {
  modulePromise ??= (async () => {
    const file = wasmModulePath();
    if (!fs.existsSync(file)) {
      throw new SetupError(`${file} not found: build it first with \`npm run build\` (or scripts/build.sh wasm)`);
    }
    const { default: createPtqModule } = await import(pathToFileURL(file).href);
    return createPtqModule();
  })();
  return modulePromise;
}
