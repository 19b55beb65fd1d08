// Section citations ("§N" / "§N.M") anywhere in the repository's sources, tests and docs refer to
// docs/behaviour.md: every cited number must have its anchor there (<a id="sN-M"></a>) followed by a
// heading of that number, so a renumbered or missing section fails here instead of leaving a dead
// citation.
import { describe, it, expect } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SCANNED = ['README.md', 'CONTRIBUTING.md', 'docs', 'wasm', 'web', 'plugin', 'scripts', 'tests', 'CMakeLists.txt'];
const SKIPPED_DIRS = new Set(['node_modules', 'build', 'dist', '.cache', 'third_party']);
const TEXT = /\.(md|mjs|js|cpp|h|inc|txt|sh|py|html|css|json)$|^CMakeLists\.txt$/;

function* textFiles(p) {
  if (!fs.existsSync(p)) return;
  const stat = fs.statSync(p);
  if (stat.isFile()) {
    if (TEXT.test(path.basename(p))) yield p;
    return;
  }
  for (const entry of fs.readdirSync(p, { withFileTypes: true })) {
    if (entry.isDirectory() && SKIPPED_DIRS.has(entry.name)) continue;
    yield* textFiles(path.join(p, entry.name));
  }
}

// { "3.4": ["wasm/src/api/merge.cpp:50", ...] }
function citations() {
  const found = {};
  for (const top of SCANNED) {
    for (const file of textFiles(path.join(root, top))) {
      const lines = fs.readFileSync(file, 'utf8').split('\n');
      lines.forEach((line, i) => {
        for (const m of line.matchAll(/§(\d+(?:\.\d+)?)/g)) {
          (found[m[1]] ??= []).push(`${path.relative(root, file)}:${i + 1}`);
        }
      });
    }
  }
  return found;
}

// The numbers docs/behaviour.md defines: an anchor line <a id="sN-M"></a> directly followed by a
// heading that starts with that number.
function sections(markdown) {
  const defined = new Set();
  const lines = markdown.split('\n');
  lines.forEach((line, i) => {
    const m = line.match(/^<a id="s(\d+(?:-\d+)?)"><\/a>$/);
    if (!m) return;
    const number = m[1].replace('-', '.');
    const heading = lines[i + 1] ?? '';
    if (new RegExp(`^#{2,3} ${number.replace('.', '\\.')}\\.? `).test(heading)) defined.add(number);
  });
  return defined;
}

describe('section citations', () => {
  const behaviour = fs.readFileSync(path.join(root, 'docs/behaviour.md'), 'utf8');
  const defined = sections(behaviour);

  it('docs/behaviour.md anchors each numbered heading', () => {
    const headings = behaviour.split('\n').filter((l) => /^#{2,3} \d+(\.\d+)?\.? /.test(l));
    expect(headings.length).toBeGreaterThan(30);
    expect(defined.size).toBe(headings.length);
  });

  it('every cited section exists in docs/behaviour.md', () => {
    const cited = citations();
    expect(Object.keys(cited).length).toBeGreaterThan(20);
    const missing = Object.entries(cited).filter(([n]) => !defined.has(n)).map(([n, where]) => `§${n} (${where.join(', ')})`);
    expect(missing).toEqual([]);
  });

  it('links inside docs/behaviour.md point at its anchors', () => {
    const links = [...behaviour.matchAll(/\]\(#s(\d+(?:-\d+)?)\)/g)].map((m) => m[1].replace('-', '.'));
    expect(links.length).toBeGreaterThan(20);
    expect(links.filter((n) => !defined.has(n))).toEqual([]);
  });
});
