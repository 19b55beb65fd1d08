// Pure checks on what the user opened (no DOM): which file is the model, and whether a
// calibration_data folder follows the debugger's layout rules (§2).
// The wasm core repeats the layout checks and adds the dtype/shape/NaN ones when the data is loaded;
// these run first so that a wrong folder is reported at once, naming the folder or file.

const NPY_MAGIC = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59];

export const isNpy = (bytes) => bytes.length >= 10 && NPY_MAGIC.every((m, i) => bytes[i] === m);
export const isZip = (bytes) => bytes.length >= 4 && bytes[0] === 0x50 && bytes[1] === 0x4b && bytes[2] === 3 && bytes[3] === 4;

// An ONNX ModelProto starts with field 1 (ir_version, varint): tag byte 0x08. Good enough to tell a
// model from .npy/.zip; the wasm reader does the real validation.
export const looksLikeOnnx = (name, bytes) => /\.onnx$/i.test(name) || (bytes.length > 2 && bytes[0] === 0x08);

// A toolchain report opened beside the model (web/pipeline/reports/: text logs and JSON). Calibration
// data is .npy only, so these never belong to calibration_data.
export const isReportFile = (path) => /\.(txt|log|json)$/i.test(path);

// Files the OS or archivers add, which the user never meant as calibration samples.
export const isJunk = (path) => path.split('/').some((p) => p.startsWith('.') || p === '__MACOSX' || p === 'Thumbs.db');

function sortNames(a, b) {
  return a < b ? -1 : a > b ? 1 : 0; // lexicographic, like Python's sorted()
}

// Sorts opened files into { model, data, errors }. `files` are {path, bytes} with '/'-separated
// paths as the browser gives them (webkitRelativePath, a dropped folder, or a zip's entries). A file
// named *.onnx is the model; without one, a file that looks like a ModelProto is (external-data files
// beside a model may start with any byte, so they are never mistaken for a second model).
export function classifyOpened(files) {
  const errors = [];
  const kept = files.filter((f) => !isJunk(f.path));
  const named = kept.filter((f) => /\.onnx$/i.test(f.path) && !isNpy(f.bytes));
  const models = named.length ? named : kept.filter((f) => looksLikeOnnx(f.path, f.bytes) && !isNpy(f.bytes));
  if (models.length > 1) errors.push(`Open one model at a time (got ${models.map((m) => m.path).join(', ')}).`);
  const data = kept.filter((f) => !models.includes(f));
  return { model: models[0] ?? null, data, errors };
}

// The files opened with `model` that may hold its external data (not .npy samples, not a zip), with
// paths relative to the model's folder, the way the model names them.
export function externalDataCandidates(model, data) {
  const slash = model.path.lastIndexOf('/');
  const folder = slash < 0 ? '' : model.path.slice(0, slash + 1);
  return data.filter((f) => !isNpy(f.bytes) && !isZip(f.bytes))
    .map((f) => ({ path: folder && f.path.startsWith(folder) ? f.path.slice(folder.length) : f.path, bytes: f.bytes }));
}

// Removes a common top folder when the files are <root>/<input>/<file> (a dropped or picked
// calibration_data folder), keeping <input>/<file>. Returns { root, files }.
export function stripRoot(files) {
  const parts = files.map((f) => f.path.split('/').filter(Boolean));
  const first = parts[0]?.[0];
  const shared = first !== undefined && parts.every((p) => p.length >= 3 && p[0] === first);
  if (!shared) return { root: '', files: files.map((f, i) => ({ ...f, path: parts[i].join('/') })) };
  return { root: first, files: files.map((f, i) => ({ ...f, path: parts[i].slice(1).join('/') })) };
}

// Loose .npy files (no folder) are the samples of a one-input model.
export function placeLooseNpy(files, inputNames) {
  const loose = files.filter((f) => !f.path.includes('/'));
  if (loose.length === 0) return { files, errors: [] };
  if (inputNames.length !== 1) {
    const names = loose.map((f) => f.path).join(', ');
    return {
      files,
      errors: [`Loose .npy files (${names}) can only be used with a one-input model; this model has ` +
        `${inputNames.length} inputs (${inputNames.join(', ')}): open the calibration_data folder instead.`],
    };
  }
  const placed = files.map((f) => (f.path.includes('/') ? f : { ...f, path: `${inputNames[0]}/${f.path}` }));
  return { files: placed, errors: [] };
}

// The §2 layout checks. `files`: [{path: '<input>/<file>', bytes}] relative to calibration_data;
// `inputNames`: the model's graph inputs (non-initializer). `root` names the folder in messages.
// Returns a list of error messages (empty when the layout is fine).
export function checkCalibrationLayout(files, inputNames, root = 'calibration_data') {
  const where = (p) => `${root}/${p}`;
  if (files.length === 0) return [`${root} contains no files.`];
  const errors = [];
  const perInput = new Map();
  for (const f of files) {
    const parts = f.path.split('/');
    if (parts.length === 1) {
      errors.push(`${where(f.path)} is not a directory.`); // §2.2: every root entry is an input folder
      continue;
    }
    if (parts.length > 2) {
      errors.push(`${where(parts.slice(0, 2).join('/'))} is a directory; calibration folders must hold only .npy files.`);
      continue;
    }
    if (!isNpy(f.bytes)) errors.push(`${where(f.path)} is not a .npy file (no NUMPY header).`);
    if (!perInput.has(parts[0])) perInput.set(parts[0], []);
    perInput.get(parts[0]).push(parts[1]);
  }
  const list = inputNames.join(', ');
  for (const folder of perInput.keys()) {
    if (!inputNames.includes(folder)) {
      errors.push(`Calibration data folder '${where(folder)}' does not match any input of the model (model inputs: ${list}).`);
    }
  }
  for (const name of inputNames) {
    if (!perInput.has(name)) {
      errors.push(`No calibration data for model input '${name}': expected a folder named '${name}' in ${root} (model inputs: ${list}).`);
    }
  }
  const counts = inputNames.filter((n) => perInput.has(n)).map((n) => [n, perInput.get(n).length]);
  for (const [name, count] of counts.slice(1)) {
    if (count !== counts[0][1]) {
      errors.push(`Input ${name} received wrong num of data: ${where(counts[0][0])} has ${counts[0][1]} files, ` +
        `${where(name)} has ${count}.`);
    }
  }
  return errors;
}

// Sample names in the debugger's order (lexicographic file names of the first input).
export function sampleNames(files, inputNames) {
  const first = inputNames[0];
  return files.filter((f) => f.path.startsWith(`${first}/`)).map((f) => f.path.slice(first.length + 1)).sort(sortNames);
}

// A model dropped together with its folder (e.g. the whole output directory): finds the folder whose
// sub-folders are the model's inputs ('<root>/<input>/<file>') and keeps only the files under it.
// Returns { root, files } (paths still starting with root) or null when no such folder exists.
export function findCalibrationRoot(files, inputNames) {
  const counts = new Map();
  for (const f of files) {
    const parts = f.path.split('/');
    if (parts.length >= 2 && inputNames.includes(parts[parts.length - 2])) {
      const root = parts.slice(0, -2).join('/');
      counts.set(root, (counts.get(root) ?? 0) + 1);
    }
  }
  if (counts.size === 0) return null;
  const [root] = [...counts].sort((a, b) => b[1] - a[1] || a[0].length - b[0].length)[0];
  const prefix = root ? `${root}/` : '';
  return { root, files: files.filter((f) => f.path.startsWith(prefix)) };
}
