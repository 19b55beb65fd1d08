// The real Netron 9.2.1 web app (its unbuilt `source/` folder) for the optional tests and
// scripts/bench-graph.mjs: the tarball is found through PTQ_NETRON_TARBALL or at
// ../shared/netron/netron-9.2.1-source.tar.xz from the repository root; callers skip with
// `NETRON_MISSING` when it is absent. `source/` runs unbuilt from any static server (not file://):
// serveFolder, also the plugin tests' server for their Netron-like folder.
import fs from 'node:fs';
import path from 'node:path';
import http from 'node:http';
import { execFileSync } from 'node:child_process';
import { REPO_ROOT } from '../../../web/cli/lib/wasm.mjs';

export const NETRON_TARBALL = process.env.PTQ_NETRON_TARBALL || path.resolve(REPO_ROOT, '../shared/netron/netron-9.2.1-source.tar.xz');
export const NETRON_AVAILABLE = fs.existsSync(NETRON_TARBALL);
export const NETRON_MISSING = `no Netron tarball at ${NETRON_TARBALL} (set PTQ_NETRON_TARBALL to netron-9.2.1-source.tar.xz)`;

const MIME = { '.html': 'text/html', '.js': 'text/javascript', '.mjs': 'text/javascript', '.css': 'text/css', '.json': 'application/json', '.png': 'image/png', '.ico': 'image/x-icon' };

// Extracts the tarball into `dir` -> the path of its `source/` folder.
export function extractNetron(dir) {
  execFileSync('tar', ['xJf', NETRON_TARBALL, '-C', dir]);
  return path.join(dir, 'source');
}

// A static server for `dir` on 127.0.0.1 (an ephemeral port) -> the http.Server, listening.
// onRequest(url): told of every request (what a page asked its server for).
export function serveFolder(dir, { onRequest } = {}) {
  return new Promise((resolve) => {
    const s = http.createServer((req, res) => {
      onRequest?.(req.url);
      let file = path.join(dir, decodeURIComponent(new URL(req.url, 'http://x').pathname));
      if (file.endsWith(path.sep)) file = path.join(file, 'index.html');
      if (!file.startsWith(dir) || !fs.existsSync(file) || fs.statSync(file).isDirectory()) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'Content-Type': MIME[path.extname(file)] ?? 'application/octet-stream' });
      fs.createReadStream(file).pipe(res);
    });
    s.listen(0, '127.0.0.1', () => resolve(s));
  });
}

// The consent cookie that keeps Netron's banner away, for `base` (http://127.0.0.1:<port>/).
export const consentCookie = (base) => ({ name: 'consent', value: String(Date.now()), url: base });
