// Vite build of the web app (web/app) into dist/:
//   dist/index.html + dist/assets/*   for any static host (relative URLs, no special headers)
//   dist/ptqscope.html                the same app in one self-contained file that works from file://
// Both are one JS bundle (no code splitting) whose workers are inlined as blob URLs and whose wasm
// is embedded once (build/wasm/ptqscope.mjs is a SINGLE_FILE module: sharedWasmPlugin moves its
// bytes from the workers' copies of the glue to the page), so nothing is ever fetched. The
// embedded example (calibrated digits CNN + calibration_data) comes from PTQ_EXAMPLE_DIR, default
// build/web-example (scripts/build.sh web makes it).
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import { describePlugin } from './web/pipeline/describe_vite.mjs';
import { onnxruntimeAssetsPlugin } from './web/pipeline/onnxruntime_assets.mjs';

const ROOT = path.dirname(fileURLToPath(import.meta.url));
const EXAMPLE_DIR = path.resolve(ROOT, process.env.PTQ_EXAMPLE_DIR ?? 'build/web-example');
// PTQSCOPE_WASM (as for the CLI) swaps in another build of the wasm module, e.g. a private build dir.
const WASM_GLUE = path.resolve(process.env.PTQSCOPE_WASM ?? path.join(ROOT, 'build/wasm/ptqscope.mjs'));

// The page may run scripts of its own bundle, workers from blob: URLs and wasm compiled from bytes;
// it may not connect anywhere (connect-src 'none'). No 'unsafe-eval': the wasm module is linked with
// -sDYNAMIC_EXECUTION=0, so embind never calls new Function().
// In ptqscope.html 'self' is replaced by the hash of the inlined script.
// dist/index.html ships onnxruntime-web in ONNXRUNTIME_DIR for "Check with onnxruntime" (imported as
// scripts of its own origin when asked: web/pipeline/onnxruntime_assets.mjs); ptqscope.html, one
// file, does not carry its 14 MB runtime and says so (the meta tag the page reads).
const ONNXRUNTIME_DIR = 'assets/onnxruntime-web';
const ONNXRUNTIME_META = '<meta name="ptqscope-onnxruntime" content="%PTQ_ONNXRUNTIME%">';
const SINGLE_FILE_ONNXRUNTIME = 'This single-file page does not carry onnxruntime-web (its 14 MB runtime): open dist/index.html '
  + 'from any static server (the page with its assets/ folder) to check with onnxruntime.';
const csp = (scriptSrc) => [
  "default-src 'none'",
  `script-src ${scriptSrc} 'wasm-unsafe-eval' blob:`,
  'worker-src blob: data:',
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'none'",
  "connect-src 'none'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

function listFiles(dir, rel = '') {
  return fs.readdirSync(path.join(dir, rel), { withFileTypes: true })
    .filter((e) => !e.name.startsWith('.'))
    .sort((a, b) => (a.name < b.name ? -1 : 1))
    .flatMap((e) => (e.isDirectory() ? listFiles(dir, path.posix.join(rel, e.name)) : [path.posix.join(rel, e.name)]));
}

// virtual:ptqscope-example -> { model: {path, base64}, folder, files: [{path: '<input>/<file>', base64}] }
function examplePlugin() {
  const id = 'virtual:ptqscope-example';
  return {
    name: 'ptqscope-example',
    resolveId: (source) => (source === id ? `\0${id}` : null),
    load(resolved) {
      if (resolved !== `\0${id}`) return null;
      const model = fs.existsSync(EXAMPLE_DIR) && fs.readdirSync(EXAMPLE_DIR).find((f) => f.endsWith('.onnx'));
      const data = path.join(EXAMPLE_DIR, 'calibration_data');
      if (!model || !fs.existsSync(data)) {
        this.error(`the example is missing in ${EXAMPLE_DIR} (a .onnx model and calibration_data/): run scripts/build.sh web`);
      }
      this.addWatchFile(path.join(EXAMPLE_DIR, model));
      const b64 = (file) => fs.readFileSync(file).toString('base64');
      const example = {
        model: { path: model, base64: b64(path.join(EXAMPLE_DIR, model)) },
        folder: 'calibration_data',
        files: listFiles(data).map((f) => ({ path: f, base64: b64(path.join(data, f)) })),
      };
      return `export default ${JSON.stringify(example)};`;
    },
  };
}

// The wasm bytes once: the glue's SINGLE_FILE data URI is emptied in every module that imports the
// glue (the two workers; they get the compiled module from the page, web/app/graph/wasm_share.mjs)
// and virtual:ptqscope-wasm gives the page the base64 instead.
const WASM_DATA_URI = /(wasmBinaryFile\s*=\s*")data:application\/octet-stream;base64,([A-Za-z0-9+/=]+)"/;
function sharedWasmPlugin() {
  const id = 'virtual:ptqscope-wasm';
  const glueBase64 = (ctx) => {
    if (!fs.existsSync(WASM_GLUE)) ctx.error(`${WASM_GLUE} is missing: run scripts/build.sh wasm-module`);
    const m = WASM_DATA_URI.exec(fs.readFileSync(WASM_GLUE, 'utf8'));
    if (!m) ctx.error(`${WASM_GLUE}: no embedded wasm (wasmBinaryFile="data:...") found; link it with -sSINGLE_FILE=1`);
    return m[2];
  };
  return {
    name: 'ptqscope-shared-wasm',
    resolveId: (source) => (source === id ? `\0${id}` : null),
    load(resolved) {
      if (resolved !== `\0${id}`) return null;
      this.addWatchFile(WASM_GLUE);
      return `export default ${JSON.stringify(glueBase64(this))};`;
    },
    transform(code, module) {
      if (path.resolve(module.split('?')[0]) !== WASM_GLUE) return null;
      glueBase64(this); // fails loudly on a glue without embedded bytes
      return { code: code.replace(WASM_DATA_URI, '$1data:application/octet-stream;base64,"'), map: null };
    },
  };
}

// Fills in the CSP of index.html and writes ptqscope.html with the bundle's JS and CSS inlined.
function singleFilePlugin() {
  return {
    name: 'ptqscope-single-file',
    transformIndexHtml: { order: 'post', handler: (html) => html.replace('%PTQ_CSP%', csp("'self'")).replace('%PTQ_ONNXRUNTIME%', `${ONNXRUNTIME_DIR}/`) },
    generateBundle: { order: 'post', handler(_options, bundle) {
      const html = bundle['index.html'];
      if (!html) return;
      let page = String(html.source);
      const scripts = [];
      for (const [name, item] of Object.entries(bundle)) {
        if (item.type === 'chunk' && item.isEntry) {
          // "</script" may not appear inside an inline script; "<\/script" means the same in JS strings.
          const code = item.code.replace(/<\/script/gi, '<\\/script');
          scripts.push(code);
          const tag = new RegExp(`<script type="module"[^>]*src="\\.?/?${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}"[^>]*></script>`);
          if (!tag.test(page)) this.error(`ptqscope.html: no <script> tag for ${name}`);
          // The script goes at the end of <body> (a module script is deferred anyway).
          page = page.replace(tag, '').replace('</body>', () => `<script type="module">${code}</script>\n</body>`);
        } else if (item.type === 'asset' && name.endsWith('.css')) {
          const tag = new RegExp(`<link rel="stylesheet"[^>]*href="\\.?/?${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}"[^>]*>`);
          page = page.replace(tag, () => `<style>${String(item.source)}</style>`);
        }
      }
      if (/<(script|link)[^>]+(src|href)="(?!data:)/.test(page)) this.error('ptqscope.html still references an external file');
      const meta = ONNXRUNTIME_META.replace('%PTQ_ONNXRUNTIME%', `${ONNXRUNTIME_DIR}/`);
      if (!page.includes(meta)) this.error('index.html: no ptqscope-onnxruntime meta tag');
      page = page.replace(meta, () => `<meta name="ptqscope-onnxruntime" content="" data-unavailable="${SINGLE_FILE_ONNXRUNTIME}">`);
      const hashes = scripts.map((s) => `'sha256-${createHash('sha256').update(s).digest('base64')}'`).join(' ');
      page = page.replace(csp("'self'"), csp(hashes));
      this.emitFile({ type: 'asset', fileName: 'ptqscope.html', source: page });
    } },
  };
}

export default defineConfig({
  root: path.join(ROOT, 'web/app'),
  base: './',
  publicDir: false,
  plugins: [examplePlugin(), sharedWasmPlugin(), describePlugin(WASM_GLUE), onnxruntimeAssetsPlugin(ONNXRUNTIME_DIR), singleFilePlugin()],
  // Workers are bundled with their own plugin list (config.plugins applies to them only in dev).
  worker: { format: 'iife', plugins: () => [sharedWasmPlugin(), describePlugin(WASM_GLUE)] },
  build: {
    outDir: path.join(ROOT, 'dist'),
    emptyOutDir: true,
    target: 'es2022',
    assetsInlineLimit: Number.MAX_SAFE_INTEGER,
    modulePreload: { polyfill: false },
    chunkSizeWarningLimit: 8192,
    rolldownOptions: { output: { codeSplitting: false } },
  },
  resolve: process.env.PTQSCOPE_WASM ? { alias: [{ find: /^.*\/build\/wasm\/ptqscope\.mjs$/, replacement: WASM_GLUE }] } : {},
  server: { fs: { allow: [ROOT] } },
});
