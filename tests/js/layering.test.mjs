// The core's stages (the folders of wasm/src) are layered: a file includes headers of its own stage and
// of the stages before it, never of a later one. The order is PTQ_STAGES in CMakeLists.txt (the
// library's sources, in that order), followed by the faces PTQ_FACES (bind/, tools/: programs that
// may use every stage and that no stage includes); docs/architecture.md states the same order.
// Every `#include "..."` of every file under wasm/src is checked; a violation names file, line and edge.
import { describe, it, expect } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SRC = path.join(root, 'wasm', 'src');

function cmakeList(name) {
  const text = fs.readFileSync(path.join(root, 'CMakeLists.txt'), 'utf8');
  const m = text.match(new RegExp(`set\\(${name}((?:\\s+[a-z_]+)+)\\s*\\)`));
  if (!m) throw new Error(`CMakeLists.txt: no set(${name} ...)`);
  return m[1].trim().split(/\s+/);
}

// stage -> rank; the faces share the top rank but none may include another.
function ranks(stages, faces) {
  const rank = new Map(stages.map((s, i) => [s, i]));
  for (const f of faces) rank.set(f, stages.length);
  return rank;
}

// Upward includes of one file: [{ line, edge, reason }]. `file` is relative to wasm/src.
function violations(file, text, rank) {
  const own = file.split('/')[0];
  const out = [];
  text.split('\n').forEach((line, i) => {
    const m = line.match(/^\s*#\s*include\s*"([^"]+)"/);
    if (!m) return;
    const target = m[1];
    if (target.includes('..')) {
      out.push({ line: i + 1, edge: `${own} -> ${target}`, reason: 'relative path out of the stage' });
      return;
    }
    if (!target.includes('/')) return;  // a file of the same folder
    const to = target.split('/')[0];
    if (to === own) return;
    if (!rank.has(to)) {
      if (fs.existsSync(path.join(SRC, to))) out.push({ line: i + 1, edge: `${own} -> ${to}`, reason: `${to}/ is not a stage` });
      return;  // not a wasm/src folder (e.g. a system header with a path)
    }
    if (rank.get(to) >= rank.get(own)) out.push({ line: i + 1, edge: `${own} -> ${to}`, reason: 'upward include' });
  });
  return out;
}

function* sourceFiles(dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* sourceFiles(p);
    else if (/\.(h|cpp|inc)$/.test(entry.name)) yield p;
  }
}

describe('include layering of wasm/src', () => {
  const stages = cmakeList('PTQ_STAGES');
  const faces = cmakeList('PTQ_FACES');
  const rank = ranks(stages, faces);

  it('every folder of wasm/src is a stage or a face, and docs/architecture.md gives the same order', () => {
    const folders = fs.readdirSync(SRC, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
    expect(folders.filter((f) => !rank.has(f))).toEqual([]);
    expect([...rank.keys()].filter((s) => !folders.includes(s))).toEqual([]);
    const doc = fs.readFileSync(path.join(root, 'docs', 'architecture.md'), 'utf8');
    const line = doc.split('\n').find((l) => l.startsWith('Stage order:'));
    expect(line, 'docs/architecture.md: a line "Stage order: `core` < `io` < ..."').toBeDefined();
    const named = [...line.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]);
    expect(named).toEqual([...stages, ...faces]);
  });

  it('finds an upward include and names file, line and edge (the check itself)', () => {
    const r = ranks(['core', 'ir', 'exec'], ['bind', 'tools']);
    const text = '#include <vector>\n#include "ir/graph.h"\n  #  include "exec/registry.h"\n#include "bind/x.h"\n#include "../core/y.h"\n';
    expect(violations('ir/graph.cpp', text, r)).toEqual([
      { line: 3, edge: 'ir -> exec', reason: 'upward include' },
      { line: 4, edge: 'ir -> bind', reason: 'upward include' },
      { line: 5, edge: 'ir -> ../core/y.h', reason: 'relative path out of the stage' },
    ]);
    expect(violations('tools/t.cpp', '#include "bind/x.h"\n#include "api/a.h"\n', ranks(['api'], ['bind', 'tools']))).toEqual([
      { line: 1, edge: 'tools -> bind', reason: 'upward include' },
    ]);
  });

  it('no file includes a later stage', () => {
    const found = [];
    for (const p of sourceFiles(SRC)) {
      const file = path.relative(SRC, p).split(path.sep).join('/');
      for (const v of violations(file, fs.readFileSync(p, 'utf8'), rank)) found.push(`wasm/src/${file}:${v.line}: ${v.edge} (${v.reason})`);
    }
    expect(found).toEqual([]);
  });
});
