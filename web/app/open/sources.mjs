// Turns what the browser hands over (a drop, a file picker, a folder picker, a .zip) into
// [{path, bytes, file?}] with '/'-separated paths. Folders keep their own name as the first path part.
// `file` is the File the bytes were read from (none for a .zip's entries): the analysis workers read
// calibration samples from it again as they use them (web/pipeline/worker_core.mjs).
import { unzipSync } from 'fflate';
import { isZip } from './checks.mjs';

const readBytes = async (file) => new Uint8Array(await file.arrayBuffer());

// Reads every file below a FileSystemEntry (from DataTransferItem.webkitGetAsEntry()).
async function readEntry(entry, prefix, out) {
  const path = prefix ? `${prefix}/${entry.name}` : entry.name;
  if (entry.isFile) {
    const file = await new Promise((resolve, reject) => entry.file(resolve, reject));
    out.push({ path, bytes: await readBytes(file), file });
    return;
  }
  const reader = entry.createReader();
  // readEntries returns at most ~100 entries per call: read until it returns none.
  for (;;) {
    const batch = await new Promise((resolve, reject) => reader.readEntries(resolve, reject));
    if (batch.length === 0) break;
    for (const child of batch) await readEntry(child, path, out);
  }
}

// Expands .zip archives into their entries (the archive name is not part of the paths, so a zip of
// calibration_data/ and a zip of its contents both work).
export function expandZips(files) {
  const out = [];
  for (const f of files) {
    if (!(/\.zip$/i.test(f.path) || isZip(f.bytes))) {
      out.push(f);
      continue;
    }
    let entries;
    try {
      entries = unzipSync(f.bytes);
    } catch (err) {
      throw new Error(`${f.path}: not a readable .zip archive (${err.message})`);
    }
    for (const [name, bytes] of Object.entries(entries)) {
      if (!name.endsWith('/')) out.push({ path: name, bytes });
    }
  }
  return out;
}

// A DataTransfer from a drop: folders through webkitGetAsEntry, plain files otherwise.
export async function filesFromDataTransfer(dt) {
  const out = [];
  const entries = [...(dt.items ?? [])].filter((i) => i.kind === 'file').map((i) => i.webkitGetAsEntry?.() ?? null);
  if (entries.length > 0 && entries.every(Boolean)) {
    for (const e of entries) await readEntry(e, '', out);
  } else {
    // Synthetic drops (tests) and browsers without entries: the File objects themselves.
    for (const file of dt.files ?? []) out.push({ path: file.webkitRelativePath || file.name, bytes: await readBytes(file), file });
  }
  return expandZips(out);
}

// A FileList from <input type=file> (with or without webkitdirectory).
export async function filesFromFileList(list) {
  const out = [];
  for (const file of list) out.push({ path: file.webkitRelativePath || file.name, bytes: await readBytes(file), file });
  return expandZips(out);
}
