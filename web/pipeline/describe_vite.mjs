// Vite plugin for the page and plugin bundles: web/pipeline/describe.mjs becomes the document the
// wasm module (`glue`, build/wasm/ptqscope.mjs) describes itself with, asked in Node at build time,
// so the bundles need no wasm instance on the page to know the core's facts.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const DESCRIBE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'describe.mjs');

export function describePlugin(glue) {
  let text = null;
  return {
    name: 'ptqscope-describe',
    async load(id) {
      if (path.resolve(id.split('?')[0]) !== DESCRIBE) return null;
      if (!fs.existsSync(glue)) this.error(`${glue} is missing: run scripts/build.sh wasm-module`);
      this.addWatchFile(glue);
      if (text === null) {
        const { default: createPtqModule } = await import(pathToFileURL(glue).href);
        text = (await createPtqModule()).describe();
      }
      return `export default ${JSON.stringify(JSON.parse(text))};`;
    },
  };
}
