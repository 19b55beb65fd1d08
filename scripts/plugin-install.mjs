#!/usr/bin/env node
// Installs the ptqscope plugin into a self-hosted Netron web folder (Netron's `source/` or its built
// web output), or removes it again:
//   npm run plugin:install -- <netron folder>              copy + patch (idempotent: re-run to update)
//   npm run plugin:install -- <netron folder> --uninstall  restore the folder as it was
//   options: --dist <dir>  the built plugin (default dist/plugin, from `npm run plugin:build`)
// What it changes in the Netron folder:
//   + ptqscope-plugin.js and ptqscope-plugin/ (the worker with the wasm core), copied from --dist
//   ~ index.html: one <script type="module"> line before </head>, between two marker comments
//   ~ onnx-metadata.json: the horizon op schemas appended (original kept as onnx-metadata.json.ptqscope-orig)
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { mergeSchemas } from '../plugin/netron/metadata.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SCRIPT = 'ptqscope-plugin.js';
const ASSET_DIR = 'ptqscope-plugin';
const METADATA = 'onnx-metadata.json';
const BACKUP = `${METADATA}.ptqscope-orig`;
// The exact text inserted into index.html; uninstall removes exactly this text.
export const TAG = `<!-- ptqscope plugin --><script type="module" src="${SCRIPT}"></script><!-- /ptqscope plugin -->\n`;
const TAG_RE = /<!-- ptqscope plugin -->[\s\S]*?<!-- \/ptqscope plugin -->\n?/g;

class UsageError extends Error {}

export function patchIndexHtml(html) {
  const clean = html.replace(TAG_RE, '');
  const at = clean.search(/<\/head>/i);
  if (at < 0) throw new Error('index.html has no </head>: is this a Netron web folder?');
  return clean.slice(0, at) + TAG + clean.slice(at);
}

export const unpatchIndexHtml = (html) => html.replace(TAG_RE, '');

function log(quiet, msg) {
  if (!quiet) console.log(msg);
}

export function install(netronDir, { dist = path.join(ROOT, 'dist/plugin'), quiet = false } = {}) {
  const index = path.join(netronDir, 'index.html');
  if (!fs.existsSync(index)) throw new UsageError(`${index} not found: give Netron's web folder (its source/ folder or built web output)`);
  const script = path.join(dist, SCRIPT);
  if (!fs.existsSync(script)) throw new UsageError(`${script} not found: run \`npm run plugin:build\` first`);

  fs.copyFileSync(script, path.join(netronDir, SCRIPT));
  const assets = path.join(netronDir, ASSET_DIR);
  fs.rmSync(assets, { recursive: true, force: true }); // drop workers of an older build (hashed names)
  if (fs.existsSync(path.join(dist, ASSET_DIR))) fs.cpSync(path.join(dist, ASSET_DIR), assets, { recursive: true });
  log(quiet, `copied ${SCRIPT} and ${ASSET_DIR}/ to ${netronDir}`);

  const html = fs.readFileSync(index, 'utf8');
  const patched = patchIndexHtml(html);
  if (patched !== html) fs.writeFileSync(index, patched);
  log(quiet, patched === html ? 'index.html already loads the plugin' : 'index.html: added the plugin <script> tag');

  const metadata = path.join(netronDir, METADATA);
  if (!fs.existsSync(metadata)) {
    log(quiet, `${METADATA} not found: horizon ops keep Netron's default look (the plugin still colours them)`);
    return;
  }
  const text = fs.readFileSync(metadata, 'utf8');
  let list;
  try {
    list = JSON.parse(text);
  } catch (err) {
    throw new Error(`${metadata}: not valid JSON (${err.message})`);
  }
  const added = mergeSchemas(list);
  if (added) {
    const backup = path.join(netronDir, BACKUP);
    if (!fs.existsSync(backup)) fs.writeFileSync(backup, text);
    fs.writeFileSync(metadata, JSON.stringify(list, null, 2));
  }
  log(quiet, added ? `${METADATA}: added ${added} horizon op schemas` : `${METADATA}: horizon op schemas already present`);
}

export function uninstall(netronDir, { quiet = false } = {}) {
  const index = path.join(netronDir, 'index.html');
  if (!fs.existsSync(index)) throw new UsageError(`${index} not found`);
  const html = fs.readFileSync(index, 'utf8');
  const restored = unpatchIndexHtml(html);
  if (restored !== html) fs.writeFileSync(index, restored);
  fs.rmSync(path.join(netronDir, SCRIPT), { force: true });
  fs.rmSync(path.join(netronDir, ASSET_DIR), { recursive: true, force: true });
  const backup = path.join(netronDir, BACKUP);
  if (fs.existsSync(backup)) fs.renameSync(backup, path.join(netronDir, METADATA));
  log(quiet, `removed the plugin from ${netronDir}`);
}

function main(argv) {
  const args = [...argv];
  let dist;
  let remove = false;
  const rest = [];
  while (args.length) {
    const a = args.shift();
    if (a === '--uninstall') remove = true;
    else if (a === '--dist') dist = path.resolve(args.shift() ?? '');
    else if (a === '-h' || a === '--help') throw new UsageError('usage: npm run plugin:install -- <netron folder> [--uninstall] [--dist dist/plugin]');
    else if (a.startsWith('-')) throw new UsageError(`unknown option ${a}`);
    else rest.push(a);
  }
  if (rest.length !== 1) throw new UsageError('usage: npm run plugin:install -- <netron folder> [--uninstall] [--dist dist/plugin]');
  const dir = path.resolve(rest[0]);
  if (remove) uninstall(dir);
  else install(dir, dist ? { dist } : {});
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    main(process.argv.slice(2));
  } catch (err) {
    console.error(`plugin-install: ${err.message}`);
    process.exit(err instanceof UsageError ? 2 : 1);
  }
}
