// Every `ptqscope ...` command shown in README.md, web/cli/README.md and docs/**/*.md runs: extracted
// by tests/js/doc_commands.mjs (fenced code blocks; synopsis notation expanded), run against the
// example (the calibrated digits CNN and its calibration_data). Each command runs in a fresh working
// folder holding the example under the placeholder names the docs use (MODEL, DATA, FLOAT.onnx,
// calibrated_model.onnx, calibration_data, ...), so relative outputs land there. A command must end
// with the exit code its line states (`# exit N`, default 0) and never with a stack trace.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI } from './cli_fixture.mjs';
import { REPO_ROOT, fixture } from './helpers.mjs';
import { documentedCommands, expandSynopsis, shellWords } from './doc_commands.mjs';

// The names a documented command may use for the example's files.
const PLACEHOLDERS = {
  calibrated: ['MODEL', 'MODEL_OR_FILE', 'CALIBRATED_MODEL', 'calibrated_model.onnx', 'model.onnx'],
  float: ['FLOAT', 'FLOAT.onnx', 'FLOAT_MODEL', 'float.onnx', 'float_model.onnx'],
  data: ['DATA', 'CALIBRATED_DATA', 'CALIBRATION_DATA', 'calibration_data'],
};

// Documented commands that cannot run against the example, each with the reason. Matched on the
// command's text (`file:line` of the docs is in the test name).
const EXCEPTIONS = [
  { match: /\$[A-Z]\b/, reason: 'uses shell variables set earlier in its block (docs/config-schema.md walk-through)' },
  { match: /--max-nodes N\b/, reason: 'N is a placeholder for a count the reader chooses' },
  { match: /^ptqscope export-config CONFIG /, reason: 'CONFIG is a configuration document written by fix or by hand, not part of the example' },
  { match: /\.cache\/fixtures\//, reason: 'paths relative to the repository root (docs/fix-workflow.md), run from there by the fix tests' },
  { match: /^ptqscope export-config fix\.config\.json /, reason: 'needs the fix.config.json a previous fix command wrote' },
];

const CONCURRENCY = 3;
const TIMEOUT_MS = 300_000;

const { model, data } = fixture('digits_cnn_calibrated');
const floatModel = fixture('digits_cnn').model;
const commands = documentedCommands(REPO_ROOT).filter((c) => !EXCEPTIONS.some((e) => e.match.test(c.text)));
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ptqscope-docs-'));

function prepare(dir) {
  fs.mkdirSync(dir, { recursive: true });
  for (const name of PLACEHOLDERS.calibrated) fs.copyFileSync(model, path.join(dir, name));
  for (const name of PLACEHOLDERS.float) fs.copyFileSync(floatModel, path.join(dir, name));
  for (const name of PLACEHOLDERS.data) fs.cpSync(data, path.join(dir, name), { recursive: true });
}

function run(args, cwd) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    let hung = false;
    const timer = setTimeout(() => { hung = true; child.kill('SIGKILL'); }, TIMEOUT_MS);
    child.stdout.resume();
    child.stderr.on('data', (d) => { stderr += d; });
    child.on('close', (code) => { clearTimeout(timer); resolve({ code, stderr, hung }); });
  });
}

const results = [];
beforeAll(async () => {
  const queue = commands.map((c, i) => [c, i]);
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (queue.length) {
      const [c, i] = queue.shift();
      const cwd = path.join(tmp, String(i));
      prepare(cwd);
      results[i] = await run(c.args, cwd);
    }
  }));
}, 1_800_000);

afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('documented commands', () => {
  it('the docs show commands of every sub-command in the README', () => {
    const shown = new Set(commands.filter((c) => c.file === 'README.md').map((c) => c.args[0]));
    for (const sub of ['get-sensitivity-of-nodes', 'plot-acc-error', 'plot-distribution', 'get-channelwise-data-distribution',
      'sensitivity-analysis', 'runall', 'leave-one-out', 'get-calibration-nodes-stat-info', 'calibrate', 'run']) {
      expect(shown.has(sub), sub).toBe(true);
    }
  });

  commands.forEach((c, i) => {
    it(`${c.file}:${c.line}: ptqscope ${c.args.join(' ')}`, () => {
      const r = results[i];
      const where = `${c.file}:${c.line}: ${c.text}\n${r.stderr}`;
      expect(r.hung, where).toBe(false);
      expect(r.code, where).toBe(c.exit);
      expect(r.stderr, where).not.toMatch(/\n\s+at |internal error/);
    });
  });
});

describe('command extraction', () => {
  it('splits words as a shell does and expands synopsis notation', () => {
    const { words, comment } = shellWords(`ptqscope x M D -m "['a','b']" -q [['c']] --k=v\\ w  # exit 2`);
    expect(words.map((w) => w.text)).toEqual(['ptqscope', 'x', 'M', 'D', '-m', "['a','b']", '-q', '[[c]]', '--k=v w']);
    expect(comment).toBe('exit 2');
    const expand = (line) => expandSynopsis(shellWords(line).words).map((ws) => ws.map((w) => w.text).join(' '));
    expect(expand('a | b c D ...')).toEqual(['a c D', 'b c D']);
    expect(expand('p | q R ...')).toEqual(['p R', 'q R']);
    expect(expand('c F D --out o [--method max|kl] [--qdq q.onnx]')).toEqual([
      'c F D --out o --method max --qdq q.onnx', 'c F D --out o --method kl --qdq q.onnx']);
    expect(expand('run M D --quant on|off --out DIR')).toEqual(['run M D --quant on --out DIR', 'run M D --quant off --out DIR']);
  });
});
