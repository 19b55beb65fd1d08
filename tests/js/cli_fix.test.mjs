// `ptqscope fix` through the real CLI on the calibrated digits model: the as-calibrated model's mean
// output cosine (computed here in JavaScript from the stored and the float runs of the last sample)
// gives a target halfway to 1 that it misses; fix reaches it, prints the path and writes the chart.
// An unknown metric in the target is bad input (exit code 2).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPtqModule, readCalibrationFolder } from './helpers.mjs';
import { calibratedDigits, cli } from './cli_fixture.mjs';

const { model, data } = calibratedDigits();
const readJson = (f) => JSON.parse(fs.readFileSync(f, 'utf8'));

function outputs(session, sample, config) {
  session.run(sample, config);
  return Array.from({ length: session.outputCount() }, (_, i) => Float64Array.from(session.output(i).data));
}

function cosine(a, b) {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return dot / Math.sqrt(na * nb);
}

let tmp;
beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ptqscope-cli-fix-'));
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('ptqscope fix', () => {
  it('reaches a target the as-calibrated model misses, prints the path and draws it', async () => {
    const ptq = await loadPtqModule();
    const session = new ptq.Session();
    session.loadModel(fs.readFileSync(model));
    const { sampleCount } = session.loadCalibrationData(readCalibrationFolder(data));
    const ref = outputs(session, sampleCount - 1, 'off');
    const got = outputs(session, sampleCount - 1, 'stored');
    session.delete();
    const start = ref.reduce((s, r, i) => s + cosine(r, got[i]), 0) / ref.length;
    expect(start).toBeLessThan(0.99999);
    const bound = Number((1 - (1 - start) / 2).toPrecision(8));
    const target = `cosine-similarity>=${bound}`;
    const json = path.join(tmp, 'fix.json');
    const r = await cli(['fix', model, data, '--target', target, '--json', json, '-s', tmp, '--quiet', '--workers', '1']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const { fix, fix_samples: samples } = readJson(json);
    expect(samples.length).toBe(1);
    expect(fix.target.text).toBe(target);
    expect(Math.abs(fix.start - start)).toBeLessThan(1e-5); // the core's float32 metric vs the one above
    expect(fix.start).toBeLessThan(bound);
    expect(fix.reached).toBe(true);
    expect(fix.final).toBeGreaterThanOrEqual(bound);
    expect(fix.steps.at(-1).value).toBe(fix.final);
    expect(fix.nodes.length).toBeGreaterThan(0);
    expect(r.stdout).toContain(`fix: target ${target}; start `);
    expect(r.stdout).toContain('fix: target reached: ');
    for (const n of fix.nodes) expect(r.stdout).toContain(`${n.node} ${n.action}`);
    expect(fs.readFileSync(path.join(tmp, 'fix_path.svg'), 'utf8')).toContain('<svg');
    expect(fs.existsSync(path.join(tmp, 'fix_path.png'))).toBe(true);
  });

  it('names a bad target (exit code 2)', async () => {
    const r = await cli(['fix', model, data, '--target', 'cosine>=0.9', '--quiet', '--workers', '1']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("options.target 'cosine>=0.9': unknown metric 'cosine'");
  });
});
