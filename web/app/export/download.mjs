// Saving files from the page: a Blob and a temporary <a download> (works from file:// and any host;
// nothing leaves the machine).
import { zipSync, strToU8 } from 'fflate';

export function download(doc, name, data, type = 'application/octet-stream') {
  const blob = data instanceof Blob ? data : new Blob([data], { type });
  const url = URL.createObjectURL(blob);
  const a = doc.createElement('a');
  a.href = url;
  a.download = name;
  a.style.display = 'none';
  doc.body.append(a);
  a.click();
  a.remove();
  // Revoke later: the download reads the blob asynchronously.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

// [{name, text | bytes}] → one .zip (paths kept). `level` 0 stores: for files already compressed (PNG).
export function zipFiles(files, { level = 6 } = {}) {
  const tree = {};
  for (const f of files) tree[f.name] = f.bytes ?? strToU8(f.text);
  return zipSync(tree, { level });
}
