// The single-file page carries the wasm core once: the workers' copies of the SINGLE_FILE glue have
// their embedded bytes cut out (vite.config.mjs, sharedWasmPlugin) and get the module compiled by the
// page (web/app/graph/wasm_share.mjs). The viewer and e2e tests check that the page still works.
import { describe, it, expect } from 'vitest';
import fs from 'node:fs';
import { PAGE } from '../e2e/browser.mjs';
import { wasmModulePath } from '../../../web/cli/lib/wasm.mjs';

// "\0asm" + version 1 + the type section id, base64-encoded at the start of the data URI.
const WASM_HEADER_BASE64 = 'AGFzbQEAAAAB';

describe('dist/ptqscope.html embeds the wasm core once', () => {
  it('has one wasm header and is smaller than two copies of the module', () => {
    if (!fs.existsSync(PAGE)) throw new Error(`${PAGE} is missing: build the web app first (scripts/build.sh web)`);
    const html = fs.readFileSync(PAGE, 'latin1');
    expect(html.split(WASM_HEADER_BASE64).length - 1).toBe(1);
    const glue = fs.readFileSync(wasmModulePath(), 'latin1');
    const wasmBase64 = /wasmBinaryFile\s*=\s*"data:application\/octet-stream;base64,([A-Za-z0-9+/=]+)"/.exec(glue)?.[1];
    expect(wasmBase64?.length).toBeGreaterThan(100_000);
    // The rest of the app (glue JS, d3, dagre, the example model and data) is well below 1 MB.
    expect(html.length).toBeLessThan(wasmBase64.length + 1_000_000);
  });
});
