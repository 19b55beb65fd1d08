// Builds the Netron plugin: dist/plugin/ptqscope-plugin.js (an ES module loaded with one
// <script type="module"> tag) plus its analysis worker (with the wasm core embedded) under
// dist/plugin/ptqscope-plugin/. Separate from the web app's vite.config.mjs. Run: npm run plugin:build
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import { describePlugin } from '../web/pipeline/describe_vite.mjs';
import { onnxruntimeAssetsPlugin } from '../web/pipeline/onnxruntime_assets.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const ASSETS = 'ptqscope-plugin';
// PTQSCOPE_WASM (as for the CLI) bundles another build of the wasm core, e.g. a debug build.
const WASM = process.env.PTQSCOPE_WASM;

export default defineConfig({
  root,
  publicDir: false,
  base: './', // assets resolved next to the script, wherever Netron is served
  logLevel: 'warn',
  // The core's describe() document, asked of the wasm module at build time (web/pipeline/describe.mjs).
  // onnxruntime-web beside the worker, for "Check with onnxruntime" (plugin/entry.mjs ORT_DIR).
  plugins: [describePlugin(path.resolve(WASM ?? path.join(root, 'build/wasm/ptqscope.mjs'))), onnxruntimeAssetsPlugin(`${ASSETS}/onnxruntime-web`)],
  resolve: { alias: WASM ? [{ find: /^(\.\.\/)+build\/wasm\/ptqscope\.mjs$/, replacement: path.resolve(WASM) }] : [] },
  build: {
    outDir: path.join(root, 'dist/plugin'),
    emptyOutDir: true,
    target: 'es2022',
    modulePreload: false, // no polyfill script: one entry file, one worker file
    assetsInlineLimit: 0,
    reportCompressedSize: false,
    rollupOptions: {
      input: { 'ptqscope-plugin': path.join(root, 'plugin/entry.mjs') },
      output: {
        entryFileNames: '[name].js',
        chunkFileNames: `${ASSETS}/[name]-[hash].js`,
        assetFileNames: `${ASSETS}/[name]-[hash][extname]`,
      },
    },
  },
  worker: {
    format: 'es',
    plugins: () => [describePlugin(path.resolve(WASM ?? path.join(root, 'build/wasm/ptqscope.mjs')))],
    rollupOptions: { output: { entryFileNames: `${ASSETS}/[name]-[hash].js`, chunkFileNames: `${ASSETS}/[name]-[hash].js` } },
  },
});
