// The pictures README.md and docs/ show: every image they reference exists, and every picture in
// docs/images/ is one the Chromium tests take (`screenshot(page, name)` in tests/js, written there
// with PTQ_UPDATE_SCREENSHOTS=1), so the pictures follow the page as it changes.
import { describe, it, expect } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from './helpers.mjs';

const IMAGES = path.join(REPO_ROOT, 'docs/images');
const pages = ['README.md', ...fs.readdirSync(path.join(REPO_ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

// [page, image path relative to the repository] of every Markdown image `![alt](path)` (alt may wrap).
function referencedImages() {
  const out = [];
  for (const page of pages) {
    const text = fs.readFileSync(path.join(REPO_ROOT, page), 'utf8');
    for (const m of text.matchAll(/!\[[^\]]*\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/i.test(m[1])) continue; // an address, not a file of the repository
      out.push([page, path.relative(REPO_ROOT, path.resolve(REPO_ROOT, path.dirname(page), m[1]))]);
    }
  }
  return out;
}

// The names tests/js passes to screenshot(page, 'name').
function screenshotNames() {
  const names = new Set();
  const walk = (dir) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.mjs')) for (const m of fs.readFileSync(p, 'utf8').matchAll(/screenshot\(\s*\w+\s*,\s*'([^']+)'/g)) names.add(m[1]);
    }
  };
  walk(path.join(REPO_ROOT, 'tests/js'));
  return names;
}

describe('pictures in the docs', () => {
  it('README.md shows the page near its top, and every referenced image exists', () => {
    const refs = referencedImages();
    expect(refs.filter(([page]) => page === 'README.md').map(([, image]) => image)).toContain('docs/images/page-sensitivity.png');
    for (const [page, image] of refs) expect(fs.existsSync(path.join(REPO_ROOT, image)), `${page} shows ${image}`).toBe(true);
  });

  it('every picture in docs/images is taken by a test', () => {
    const taken = screenshotNames();
    for (const file of fs.readdirSync(IMAGES).filter((f) => f.endsWith('.png'))) {
      expect(taken.has(file.replace(/\.png$/, '')), `${file}: no test takes it (screenshot(page, '${file.replace(/\.png$/, '')}'))`).toBe(true);
    }
  });
});
