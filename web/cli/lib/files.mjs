// File-system helpers shared by the CLI subcommands.
//
// Symbolic links are followed (a linked model, linked sample files, linked input folders), as the
// page does with the files a browser hands it. File names are read as bytes: a name that is not
// valid UTF-8 is an error naming the file (with the bad bytes shown as \xNN) instead of a crash.
// Anything but a regular file or a directory (FIFO, socket, device) is refused without opening it,
// so nothing can block.
import fs from 'node:fs';
import path from 'node:path';
import { UsageError } from './errors.mjs';
import { reasonOf } from './outputs.mjs';

const utf8 = new TextDecoder('utf-8', { fatal: true });

// A file name (Buffer) as text, or null when it is not valid UTF-8.
function decodeName(bytes) {
  try {
    return utf8.decode(bytes);
  } catch {
    return null;
  }
}

// Printable form of a name that is not valid UTF-8: the bytes that do not decode as \xNN.
export function showName(bytes) {
  let out = '';
  let i = 0;
  while (i < bytes.length) {
    let ok = false;
    for (let n = Math.min(4, bytes.length - i); n >= 1 && !ok; n--) {
      const text = decodeName(bytes.subarray(i, i + n));
      if (text !== null && !text.includes('\ufffd')) {
        out += text;
        i += n;
        ok = true;
      }
    }
    if (!ok) out += `\\x${bytes[i++].toString(16).padStart(2, '0')}`;
  }
  return out;
}

const describe = (st) => (st.isFIFO() ? 'a FIFO' : st.isSocket() ? 'a socket'
  : st.isCharacterDevice() || st.isBlockDevice() ? 'a device' : 'not a regular file');

// `shown`: the name in messages (`file` may be a Buffer path).
// What readBytes would say of `file` without reading it: a calibration folder is listed when it is
// opened and its files are read as their samples are used.
function checkReadable(file, what, shown) {
  try {
    fs.accessSync(file, fs.constants.R_OK);
    if (fs.statSync(file).size >= 2 ** 31) throw new UsageError(`${what} ${shown}: larger than 2 GiB`);
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError(`cannot read ${what} ${shown}: ${reasonOf(err)}`);
  }
}

function readBytes(file, what, shown = file) {
  try {
    return fs.readFileSync(file);
  } catch (err) {
    if (err.code === 'ERR_FS_FILE_TOO_LARGE') throw new UsageError(`${what} ${shown}: larger than 2 GiB`);
    throw new UsageError(`cannot read ${what} ${shown}: ${reasonOf(err)}`);
  }
}

export function readModelFile(file) {
  let st;
  try {
    st = fs.statSync(file);
  } catch (err) {
    if (err.code === 'ENOENT' && isBrokenLink(file)) throw new UsageError(`model file ${file} is a broken symbolic link`);
    if (err.code === 'ENOENT' || err.code === 'ENOTDIR') throw new UsageError(`model file not found: ${file}`);
    throw new UsageError(`cannot read model file ${file}: ${reasonOf(err)}`);
  }
  if (st.isDirectory()) throw new UsageError(`model path is not a file: ${file} is a directory`);
  if (!st.isFile()) throw new UsageError(`model path is not a file: ${file} is ${describe(st)}`);
  return readBytes(file, 'model file'); // a Buffer is a Uint8Array: no extra copy
}

// The model's external-data files, read beside it: [{path: location, bytes}] for
// Session.loadModel(bytes, files). The core says which files the model names (ptq.externalDataFiles,
// each location checked to stay below the model's folder); a missing one is named with where it was
// looked for. Symbolic links are followed, like every input.
export function readExternalData(ptq, modelFile, modelBytes) {
  let needed;
  try {
    needed = ptq.externalDataFiles(modelBytes, []);
  } catch (err) {
    throw new UsageError(`${modelFile}: ${err.message}`);
  }
  return needed.map(({ location }) => {
    const file = path.join(path.dirname(modelFile), location);
    let st;
    try {
      st = fs.statSync(file);
    } catch {
      throw new UsageError(`${modelFile}: its tensors are stored in the external file '${location}', which is not beside the model (looked for ${file})`);
    }
    if (!st.isFile()) throw new UsageError(`${modelFile}: external data file ${file} is ${st.isDirectory() ? 'a directory' : describe(st)}`);
    return { path: location, bytes: readBytes(file, 'external data file') };
  });
}

// A small text input (a configuration document) as UTF-8, `what` naming it in messages ("the
// configuration"). Anything but a regular file is refused without opening it (a FIFO would block).
export function readTextInput(file, what) {
  const fail = (reason) => new UsageError(`${file}: cannot read ${what}: ${reason}`);
  let st;
  try {
    st = fs.statSync(file);
  } catch (err) {
    if (err.code === 'ENOENT' && isBrokenLink(file)) throw fail('a broken symbolic link');
    throw fail(err.code === 'ENOENT' ? 'no such file' : reasonOf(err));
  }
  if (st.isDirectory()) throw fail('it is a directory');
  if (!st.isFile()) throw fail(`it is ${describe(st)}, not a file`);
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw fail(reasonOf(err));
  }
}

function isBrokenLink(file) {
  try {
    return fs.lstatSync(file).isSymbolicLink();
  } catch {
    return false;
  }
}

// Every regular file under a calibration_data folder as {path, file}, `path` relative to the
// folder with '/' separators and `file` the file to read (checked readable, not read); hidden files (.DS_Store, ...) are skipped. Symbolic links to files and
// folders are followed (a link back to a folder being read is an error). The core checks the layout.
export function listCalibrationFolder(dir) {
  let st;
  try {
    st = fs.statSync(dir);
  } catch {
    st = null;
  }
  if (!st?.isDirectory()) throw new UsageError(`${dir} is not a directory.`);
  const files = [];
  const root = Buffer.from(dir);
  const sep = Buffer.from('/');
  // rel: the relative path as text; abs: the same as bytes; ancestors: real paths being read.
  const walk = (rel, abs, ancestors) => {
    let entries;
    try {
      entries = fs.readdirSync(abs, { withFileTypes: true, encoding: 'buffer' });
    } catch (err) {
      throw new UsageError(`cannot read folder ${path.join(dir, rel)}: ${reasonOf(err)}`);
    }
    const named = [];
    for (const e of entries) {
      const raw = Buffer.isBuffer(e.name) ? e.name : Buffer.from(e.name);
      if (raw[0] === 0x2e) continue; // hidden: '.'
      const name = decodeName(raw);
      if (name === null) {
        throw new UsageError(`${path.join(dir, rel, showName(raw))}: the file name is not valid UTF-8; rename it`);
      }
      named.push({ e, name, raw });
    }
    named.sort((a, b) => Buffer.compare(a.raw, b.raw)); // byte order, as the core sorts
    for (const { e, name, raw } of named) {
      const child = rel ? `${rel}/${name}` : name;
      const full = Buffer.concat([abs, sep, raw]);
      let isDir = e.isDirectory();
      let isFile = e.isFile();
      if (e.isSymbolicLink()) {
        let target;
        try {
          target = fs.statSync(full);
        } catch (err) {
          throw new UsageError(`${path.join(dir, child)} is a broken symbolic link (${reasonOf(err)})`);
        }
        isDir = target.isDirectory();
        isFile = target.isFile();
        if (!isDir && !isFile) throw new UsageError(`${path.join(dir, child)} links to ${describe(target)}, not a file`);
      } else if (!isDir && !isFile) {
        throw new UsageError(`${path.join(dir, child)} is ${describe(fs.lstatSync(full))}, not a file`);
      }
      if (isDir) {
        const real = fs.realpathSync(full);
        if (ancestors.includes(real)) throw new UsageError(`${path.join(dir, child)} is a symbolic link loop (it leads back to ${real})`);
        walk(child, full, [...ancestors, real]);
      } else {
        checkReadable(full, 'calibration file', path.join(dir, child));
        files.push({ path: child, file: path.join(dir, child) });
      }
    }
  };
  walk('', root, [fs.realpathSync(dir)]);
  if (files.length === 0) throw new UsageError(`${dir} contains no files`);
  return files;
}

// The files of a calibration folder with their bytes, [{path, bytes}].
export function readCalibrationFolder(dir) {
  return listCalibrationFolder(dir).map((f) => ({ path: f.path, bytes: readBytes(f.file, 'calibration file', f.file) }));
}

// The same for a Session in this thread (Session.loadCalibrationData, docs/wasm-api.md): each file
// read whenever the core uses its sample, [{path, bytes: () => Uint8Array}].
export function calibrationFilesOnDemand(dir) {
  return listCalibrationFolder(dir).map((f) => ({ path: f.path, bytes: () => fs.readFileSync(f.file) }));
}
