// End to end in Chromium (dist/ptqscope.html from file://): a model whose bytes cannot fit the wasm
// heap is refused with the core's estimate in the banner and the page stays usable; the 1 GiB model
// (scripts/fixtures/big_models.py, made only by `make_fixtures.py --parts big`; skipped with a note when
// absent) opened with its 1 GiB external-data file shows its graph, and the wasm heap the page reports
// after the load is within big_model.mjs's bound.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { optionalFixture } from '../helpers.mjs';
import { buildModel } from '../onnx_builder.mjs';
import { BIG_MODEL, LAYERS, heapBound } from '../big_model.mjs';
import { openApp } from './browser.mjs';

const entry = optionalFixture(BIG_MODEL);
const SLOW = 900_000; // a gigabyte read, copied into two workers and parsed on a shared 2-core machine

let tmp;
beforeAll(() => { tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ptq-e2e-big-')); });
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('a model too big for the wasm heap on the page (file://)', () => {
  let app;
  afterAll(async () => { await app?.context.close(); });

  it('is refused with the estimate and the budget in the banner; the page stays usable', async () => {
    app = await openApp();
    const { page } = app;
    // w: 5 GiB of float32 declared in huge.bin (a 4-byte file: the refusal comes before it is read).
    const length = 5 * 2 ** 30;
    const model = path.join(tmp, 'huge.onnx');
    fs.writeFileSync(model, buildModel({
      nodes: [{ name: 'add', op: 'Add', inputs: ['x', 'w'], outputs: ['y'] }],
      initializers: [{ name: 'w', dims: [length / 4], floats: [], external: { location: 'huge.bin', offset: 0, length } }],
      inputs: [{ name: 'x', dims: [length / 4] }],
      outputs: [{ name: 'y' }],
    }));
    fs.writeFileSync(path.join(tmp, 'huge.bin'), Buffer.alloc(4));
    await page.setInputFiles('#open-model', [model, path.join(tmp, 'huge.bin')]);
    await page.waitForSelector('#error-banner:not([hidden])');
    const banner = await page.textContent('#error-banner');
    expect(banner).toContain('huge.onnx: the model needs');
    expect(banner).toContain(`its external data ${length} bytes (5.0 GiB)`);
    expect(banner).toContain('the memory budget is 3221225472 bytes (3.0 GiB)');
    expect(banner).toContain('it cannot be loaded');
    // Still usable: the example opens.
    await page.click('#open-example');
    await page.waitForSelector('#graph[data-state="ready"]');
    await page.waitForFunction(() => /calibration samples/.test(document.querySelector('#model-info').textContent));
    expect(app.pageErrors).toEqual([]);
  });
});

describe.skipIf(!entry)('the 1 GiB model on the page (file://)', () => {
  let app;
  beforeAll(async () => { app = await openApp(); });
  afterAll(async () => { await app?.context.close(); });

  // The calibration check and the sweep are not part of this test yet: on the page the check (a fresh
  // engine worker given the gigabyte again) does not answer (docs/web-app.md, Big models).
  it('opened with its external-data file: the graph shows and the heap after the load is reported and bounded', async () => {
    const { page } = app;
    await page.setInputFiles('#open-model', [entry.model, path.join(path.dirname(entry.model), entry.external_data)]);
    await page.waitForSelector('#graph[data-state="ready"]', { timeout: SLOW });
    expect(await page.isHidden('#error-banner')).toBe(true);
    // Per layer: a MatMul, an activation and a weight calibration node, a Relu but after the last.
    expect(await page.textContent('#model-info')).toContain(`${LAYERS * 4 - 1} nodes · ${LAYERS * 2} calibration nodes`);
    const afterLoad = Number(await page.getAttribute('#model-info', 'data-heap-load'));
    expect(afterLoad).toBeGreaterThanOrEqual(entry.weight_bytes); // the weights are in the heap once
    expect(afterLoad).toBeLessThanOrEqual(heapBound(entry.weight_bytes));
    expect(await page.textContent('#model-info')).toMatch(/wasm heap \d+\.\d GB after load/);
    expect(app.pageErrors).toEqual([]);
    expect(app.offline).toEqual([]);
  }, SLOW);
});

describe.skipIf(entry)('the 1 GiB model on the page', () => {
  it.skip('is made only when asked: /usr/bin/python3 scripts/fixtures/make_fixtures.py --parts big (.cache/fixtures/big)', () => {});
});
