// Vite plugin for the page's static build and the Netron plugin: ships onnxruntime-web's wasm build
// beside the bundle, in the folder `dir`, for "Check with onnxruntime" (onnxruntime_check.mjs, which
// loads it only when asked): its JS as published (the glue inside, source map comment dropped) and
// its .wasm as an ES module exporting the bytes in base64. A module is a script: a page whose CSP
// forbids connections (connect-src 'none') can import it from its own origin where it could not
// fetch the .wasm. Nothing of it enters the bundle itself.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { ORT_FILES } from './onnxruntime_check.mjs';

const require = createRequire(import.meta.url);

// onnxruntime-web's dist/ folder and version.
function onnxruntimeDist() {
  const dist = path.dirname(require.resolve('onnxruntime-web/wasm'));
  const script = fs.readFileSync(path.join(dist, ORT_FILES.script), 'utf8');
  const version = /ONNX Runtime Web v([\w.-]+)/.exec(script)?.[1] ?? '';
  return { dist, script, version };
}

export function onnxruntimeAssetsPlugin(dir) {
  return {
    name: 'ptqscope-onnxruntime-assets',
    apply: 'build',
    generateBundle() {
      const { dist, script, version } = onnxruntimeDist();
      const wasm = fs.readFileSync(path.join(dist, 'ort-wasm-simd-threaded.wasm'));
      const notice = `/*! ONNX Runtime Web v${version} (ort-wasm-simd-threaded.wasm, base64). Copyright (c) Microsoft Corporation. All rights reserved. Licensed under the MIT License. */\n`;
      this.emitFile({ type: 'asset', fileName: `${dir}/${ORT_FILES.script}`, source: script.replace(/\n\/\/# sourceMappingURL=\S+\s*$/, '\n') });
      this.emitFile({ type: 'asset', fileName: `${dir}/${ORT_FILES.wasm}`, source: `${notice}export default "${wasm.toString('base64')}";\n` });
    },
  };
}
