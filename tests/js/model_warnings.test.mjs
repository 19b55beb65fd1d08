// Model warnings (loadModel's `warnings`: things read, but not as written) reach the user: the CLI
// prints each one on stderr as `<model>: warning: <text>`, once, also with --quiet, and still exits
// with 0 and the same numbers as the model without them; the page shows them in its banner
// (tests/js/bad_inputs/page.test.mjs).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { calibratedDigits, cli } from './cli_fixture.mjs';
import { writeWarningModel } from './bad_inputs/warnings.mjs';

const { model, data } = calibratedDigits();
let tmp;
let warned;
beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ptqscope-warnings-'));
  warned = writeWarningModel(tmp, model);
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

// Every warning once, as `<file>: warning: <text>...`, and nothing else that says warning.
function expectWarnings(stderr) {
  const lines = stderr.split('\n').filter((l) => l.includes(': warning: '));
  expect(lines.length, stderr).toBe(warned.warnings.length);
  for (const l of lines) expect(l.startsWith(`${warned.file}: warning: `), l).toBe(true);
  for (const w of warned.warnings) expect(lines.filter((l) => l.includes(w)).length, w).toBe(1);
}

describe('model warnings on the command line', () => {
  it('an analysis prints them (--quiet too, several workers) and computes what the model without them does', async () => {
    const [a, b] = await Promise.all([
      cli(['get-sensitivity-of-nodes', warned.file, data, '--quiet', '--workers', '2', '--json', path.join(tmp, 'warned.json')]),
      cli(['get-sensitivity-of-nodes', model, data, '--quiet', '--workers', '2', '--json', path.join(tmp, 'plain.json')]),
    ]);
    expect(a.code, a.stderr).toBe(0);
    expectWarnings(a.stderr);
    expect(b.code, b.stderr).toBe(0);
    expect(b.stderr).not.toContain(': warning: ');
    const read = (f) => JSON.parse(fs.readFileSync(path.join(tmp, f), 'utf8')).sensitivity;
    expect(read('warned.json')).toEqual(read('plain.json'));
  });

  it('run and export-config print them too', async () => {
    const config = path.join(tmp, 'keep.json');
    fs.writeFileSync(config, JSON.stringify({ schema: 'ptqscope.config', version: 1, intents: [{ node: '/features/features.3/Conv', action: 'int16' }] }));
    const [run, exp] = await Promise.all([
      cli(['run', warned.file, data, '--quant', 'on', '--out', path.join(tmp, 'run')]),
      cli(['export-config', config, '--model', warned.file, '--format', 'ort-json', '--out', path.join(tmp, 'ort.json')]),
    ]);
    expect(run.code, run.stderr).toBe(0);
    expectWarnings(run.stderr);
    expect(exp.code, exp.stderr).toBe(0);
    expectWarnings(exp.stderr);
  });
});
