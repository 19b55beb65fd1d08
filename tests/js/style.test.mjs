// Code style: ESLint (eslint.config.mjs) over every JavaScript file, and clang-format 14
// (.clang-format) over the C++ files listed in scripts/clang-format-files.txt (the rest predate the
// config and are added to the list as they get formatted).
import { describe, it, expect } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { ESLint } from 'eslint';
import { REPO_ROOT } from './helpers.mjs';

const CLANG_FORMAT = ['clang-format-14', 'clang-format'].find((bin) => {
  const r = spawnSync(bin, ['--version'], { encoding: 'utf8' });
  return r.status === 0 && /version 14\./.test(r.stdout);
});

describe('code style', () => {
  it('ESLint finds nothing in the JavaScript sources', async () => {
    const eslint = new ESLint({ cwd: REPO_ROOT });
    const results = await eslint.lintFiles(['.']);
    expect(results.length).toBeGreaterThan(100);
    const problems = results.flatMap((r) => r.messages.map((m) =>
      `${path.relative(REPO_ROOT, r.filePath)}:${m.line}:${m.column} ${m.ruleId ?? ''} ${m.message}`));
    expect(problems).toEqual([]);
  });

  it('the listed C++ files are formatted with .clang-format', (ctx) => {
    if (!CLANG_FORMAT) ctx.skip('clang-format 14 is not installed (Debian package clang-format; scripts/setup.sh installs it)');
    const files = fs.readFileSync(path.join(REPO_ROOT, 'scripts/clang-format-files.txt'), 'utf8')
      .split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
    expect(files.length).toBeGreaterThan(20);
    const missing = files.filter((f) => !fs.existsSync(path.join(REPO_ROOT, f)));
    expect(missing, 'listed files that do not exist').toEqual([]);
    const r = spawnSync(CLANG_FORMAT, ['--dry-run', '--Werror', ...files], { cwd: REPO_ROOT, encoding: 'utf8' });
    const unformatted = [...new Set([...r.stderr.matchAll(/^(\S+?):\d+:\d+: error/gm)].map((m) => m[1]))];
    expect(unformatted, r.stderr.slice(0, 2000)).toEqual([]);
    expect(r.status).toBe(0);
  });
});
