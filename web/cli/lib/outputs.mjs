// Output paths of the CLI: every one is checked before any work starts, and a run writes its files
// so that a failure never leaves a result that looks complete.
//
//   checkOutputs([{ path, kind: 'file' | 'dir', option: '--json' }, ...])
//     -> throws a UsageError (exit 2) naming the option, the path and the reason when a path cannot be
//        written: an existing directory where a file goes (or the reverse), a path below a file, a
//        device / FIFO / socket, a place where nothing can be created (read-only, /proc, permissions).
//        Writability is probed by creating (and removing) an entry, so it also holds for root and
//        read-only mounts; nothing is ever opened that could block (FIFOs are refused unopened).
//   withOutputs(fn) -> runs fn with an output transaction: writeOutput / makeOutputDir inside it go
//     to hidden temporary names; when fn returns, every file is renamed into place (each rename is
//     atomic); when it throws, the temporaries and every directory the run created are removed.
import fs from 'node:fs';
import path from 'node:path';
import { UsageError } from './errors.mjs';

const REASONS = {
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'read-only file system',
  ENOSPC: 'no space left on device',
  EDQUOT: 'disk quota exceeded',
  ENOENT: 'no such file or folder',
  ENOTDIR: 'a part of the path is not a directory',
  EISDIR: 'is a directory',
  ENAMETOOLONG: 'name too long',
  ELOOP: 'too many levels of symbolic links',
  EEXIST: 'already exists',
  EINVAL: 'invalid path for this file system',
};

export const reasonOf = (err) => REASONS[err?.code] ?? err?.code ?? String(err?.message ?? err);

function statOrNull(p) {
  try {
    return fs.statSync(p);
  } catch (err) {
    if (err.code === 'ENOENT') return null;
    if (err.code === 'ENOTDIR') return 'below-file';
    throw err;
  }
}

const kindOf = (st) => (st.isFile() ? 'a file' : st.isDirectory() ? 'a directory' : st.isFIFO() ? 'a FIFO'
  : st.isSocket() ? 'a socket' : st.isCharacterDevice() || st.isBlockDevice() ? 'a device' : 'not a regular file');

// Can entries be created in the existing directory `dir`? Creates and removes a probe directory.
function probeDirectory(dir) {
  try {
    fs.rmdirSync(fs.mkdtempSync(path.join(dir, '.ptqscope-probe-')));
    return null;
  } catch (err) {
    return `nothing can be created in ${dir} (${err.code === 'ENOENT' ? 'the file system refuses new entries' : reasonOf(err)})`;
  }
}

// The nearest existing ancestor of `p` (p itself excluded) and its stat.
function existingAncestor(p) {
  let dir = path.dirname(p);
  for (;;) {
    const st = statOrNull(dir);
    if (st === 'below-file') {
      dir = path.dirname(dir);
      continue;
    }
    if (st) return { dir, st };
    const up = path.dirname(dir);
    if (up === dir) return { dir, st: null };
    dir = up;
  }
}

// The reason `p` (kind 'file' or 'dir') cannot be written, or null.
function outputProblem(p, kind) {
  const abs = path.resolve(p);
  let st;
  try {
    st = statOrNull(abs);
  } catch (err) {
    return reasonOf(err);
  }
  if (st && st !== 'below-file') {
    if (kind === 'dir') {
      if (!st.isDirectory()) return `exists and is ${kindOf(st)}, not a directory`;
      return probeDirectory(abs);
    }
    if (st.isDirectory()) return 'is a directory (a file name is expected)';
    if (!st.isFile()) return `exists and is ${kindOf(st)}, not a regular file`;
    // A read-only file is not replaced behind the user's back.
    try {
      fs.accessSync(abs, fs.constants.W_OK);
    } catch (err) {
      return `the file is not writable (${reasonOf(err)})`;
    }
    return probeDirectory(path.dirname(fs.realpathSync(abs)));
  }
  if (kind === 'file' && /[/\\]$/.test(p)) return 'ends with a "/" but names a file to write';
  const { dir, st: up } = existingAncestor(abs);
  if (!up) return 'no part of the path exists';
  if (!up.isDirectory()) return `${dir} is ${kindOf(up)}, not a directory`;
  return probeDirectory(dir);
}

// Checks every output before any work: throws one UsageError listing each bad path.
export function checkOutputs(outputs) {
  const problems = [];
  const seen = new Map();
  for (const o of outputs) {
    if (o.path === null || o.path === undefined) continue;
    if (o.path === '') {
      problems.push(`${o.option}: an empty path`);
      continue;
    }
    const key = path.resolve(o.path);
    if (seen.has(key) && o.kind === 'file') {
      problems.push(`${o.option} ${o.path}: the same file as ${seen.get(key)}`);
      continue;
    }
    seen.set(key, o.option);
    const problem = outputProblem(o.path, o.kind);
    if (problem) problems.push(`${o.option} ${o.path}: cannot write ${o.kind === 'dir' ? 'the output folder' : 'the output file'}: ${problem}`);
  }
  if (problems.length === 1) throw new UsageError(problems[0]);
  if (problems.length) throw new UsageError(`bad output paths:\n  ${problems.join('\n  ')}`);
}

// ---- the output transaction ----------------------------------------------------------------------

let current = null; // { files: Map(final -> temp), createdDirs: [] }

class OutputError extends UsageError {}

function fail(file, err) {
  return new OutputError(`cannot write ${file}: ${typeof err === 'string' ? err : reasonOf(err)}`);
}

function removeQuietly(p) {
  try {
    fs.rmSync(p, { force: true });
  } catch {
    // already gone or never made
  }
}

// mkdir -p that records the directories it created (so a failed run removes them).
export function makeOutputDir(dir) {
  const abs = path.resolve(dir);
  const missing = [];
  let d = abs;
  for (; !fs.existsSync(d); d = path.dirname(d)) missing.unshift(d);
  if (!fs.statSync(d).isDirectory()) throw fail(d, 'it is a file, not a folder');
  for (const d of missing) {
    try {
      fs.mkdirSync(d);
    } catch (err) {
      if (err.code !== 'EEXIST') throw fail(d, err);
      continue;
    }
    current?.createdDirs.push(d);
  }
}

// Writes `data` to `file`: inside a transaction to a hidden temporary beside it, renamed at commit;
// outside one, through a temporary and an immediate rename.
export function writeOutput(file, data) {
  const abs = path.resolve(file);
  let target = abs;
  try {
    target = fs.realpathSync(abs); // an existing symbolic link is written through, not replaced
  } catch {
    // not there yet
  }
  makeOutputDir(path.dirname(target));
  const temp = path.join(path.dirname(target), `.${path.basename(target)}.ptqscope-${process.pid}-${Math.random().toString(36).slice(2, 8)}`);
  try {
    fs.writeFileSync(temp, data, { flag: 'wx' });
  } catch (err) {
    removeQuietly(temp);
    throw fail(file, err);
  }
  if (current) {
    const previous = current.files.get(target);
    if (previous) removeQuietly(previous);
    current.files.set(target, temp);
    return;
  }
  try {
    fs.renameSync(temp, target);
  } catch (err) {
    removeQuietly(temp);
    throw fail(file, err);
  }
}

function abort(t) {
  for (const temp of t.files.values()) removeQuietly(temp);
  // Deepest first: a run's own folders go, folders that were there before stay.
  for (const d of [...t.createdDirs].reverse()) {
    try {
      fs.rmSync(d, { recursive: true, force: true });
    } catch {
      // leave what cannot be removed
    }
  }
}

export async function withOutputs(fn) {
  if (current) return fn(); // nested: the outer transaction commits
  const t = { files: new Map(), createdDirs: [] };
  current = t;
  try {
    const result = await fn();
    for (const [target, temp] of t.files) {
      try {
        fs.renameSync(temp, target);
      } catch (err) {
        throw fail(target, err);
      }
      t.files.delete(target);
    }
    return result;
  } catch (err) {
    abort(t);
    throw err;
  } finally {
    current = null;
  }
}
