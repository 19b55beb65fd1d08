// File-system helpers shared by the CLI subcommands.
import fs from 'node:fs';
import path from 'node:path';
import { UsageError } from './errors.mjs';

export function readModelFile(file) {
  let st;
  try {
    st = fs.statSync(file);
  } catch {
    throw new UsageError(`model file not found: ${file}`);
  }
  if (!st.isFile()) throw new UsageError(`model path is not a file: ${file}`);
  return fs.readFileSync(file); // a Buffer is a Uint8Array: no extra copy
}

// Every regular file under a calibration_data folder as {path, bytes}, `path` relative to the
// folder with '/' separators; hidden files (.DS_Store, ...) are skipped. The core checks the layout.
export function readCalibrationFolder(dir) {
  let st;
  try {
    st = fs.statSync(dir);
  } catch {
    st = null;
  }
  if (!st?.isDirectory()) throw new UsageError(`${dir} is not a directory.`);
  const files = [];
  const walk = (rel) => {
    const entries = fs.readdirSync(path.join(dir, rel), { withFileTypes: true })
      .filter((e) => !e.name.startsWith('.'))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      const child = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(child);
      else if (e.isFile()) files.push({ path: child, bytes: fs.readFileSync(path.join(dir, child)) });
    }
  };
  walk('');
  if (files.length === 0) throw new UsageError(`${dir} contains no files`);
  return files;
}
