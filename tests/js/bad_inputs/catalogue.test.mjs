// The bad-input catalogue (generate.mjs) through the CLI: every case exits with 2, the message names
// the culprit, there is no stack trace and nothing is left in the case's working folder (no partial
// result). A case that runs longer than CASE_TIMEOUT_MS counts as a hang.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI } from '../cli_fixture.mjs';
import { fixture } from '../helpers.mjs';
import { generateCatalogue } from './generate.mjs';

const CASE_TIMEOUT_MS = 120_000;
const CONCURRENCY = 3;

const { model, data } = fixture('digits_cnn_calibrated');
const floatModel = fixture('digits_cnn').model;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ptqscope-bad-inputs-'));
const all = generateCatalogue(tmp, { model, data, floatModel });
// PTQ_BAD_INPUTS=<regexp>: only the cases whose id matches (while working on some).
const only = process.env.PTQ_BAD_INPUTS ? new RegExp(process.env.PTQ_BAD_INPUTS) : null;
const cases = only ? all.filter((c) => only.test(c.id)) : all;

// Every path under dir (relative), to compare before and after a run.
function listing(dir) {
  const out = [];
  const walk = (rel) => {
    for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const child = path.join(rel, e.name);
      out.push(child);
      if (e.isDirectory()) walk(child);
    }
  };
  walk('');
  return out.sort();
}

function runCase(c) {
  const work = path.join(tmp, 'work', c.id);
  fs.mkdirSync(work, { recursive: true });
  const args = c.args.map((a) => a.replaceAll('{work}', work));
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: work, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let hung = false;
    const timer = setTimeout(() => {
      hung = true;
      child.kill('SIGKILL');
    }, CASE_TIMEOUT_MS);
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, hung, left: listing(work), culprit: c.culprit.replaceAll('{work}', work) });
    });
  });
}

const results = new Map();

beforeAll(async () => {
  const queue = [...cases];
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (queue.length) {
      const c = queue.shift();
      results.set(c.id, await runCase(c));
    }
  }));
}, 1_200_000);

afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('bad-input catalogue', () => {
  it('has at least 60 cases in each of the four groups', () => {
    expect(all.length).toBeGreaterThanOrEqual(60);
    for (const group of ['model', 'data', 'options', 'output']) {
      expect(all.filter((c) => c.group === group).length, group).toBeGreaterThanOrEqual(10);
    }
    expect(new Set(all.map((c) => c.id)).size).toBe(all.length);
  });

  for (const c of cases) {
    it(`${c.id}: exit 2 naming ${c.culprit}`, () => {
      const r = results.get(c.id);
      const where = `ptqscope ${c.args.join(' ')}\n${r.stderr}`;
      expect(r.hung, `hung: ${where}`).toBe(false);
      expect(r.code, where).toBe(2);
      expect(r.stderr, where).toContain(r.culprit);
      if (c.says) expect(r.stderr, where).toMatch(c.says);
      expect(r.stderr, where).not.toMatch(/\n\s+at |internal error/);
      expect(r.left, `left behind: ${where}`).toEqual([]);
    });
  }
});
