// The `ptqscope ...` command lines shown in README.md, web/cli/README.md and docs/**/*.md, as
// argument lists (tests/js/cli_docs.test.mjs runs each one against the example model).
//
// What counts as a command: a line in a fenced code block that starts with `ptqscope`, `npx ptqscope`
// or `node web/cli/ptqscope.mjs` (after an optional `$ ` prompt); a trailing `\` continues it on the
// next line. A ```text block shows a program's output: its lines are never commands. Words are split as a POSIX shell does (quotes removed, `#` starts a comment). A comment
// `# exit N` says the command is shown failing on purpose with exit code N (default 0).
// Synopsis notation is expanded: `...` / `…` are dropped, an optional `[--option VALUE]` group is
// left out, `a | b | c` (separate words) and `on|off` (one word) give one command per alternative.
import fs from 'node:fs';
import path from 'node:path';

// The Markdown files whose commands are run: README.md, every .md under docs/, web/cli/README.md.
export function docFiles(root) {
  const out = [];
  const walk = (dir) => {
    for (const e of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = path.join(dir, e.name);
      if (e.isDirectory()) walk(rel);
      else if (e.name.endsWith('.md')) out.push(rel);
    }
  };
  for (const f of ['README.md', 'web/cli/README.md']) if (fs.existsSync(path.join(root, f))) out.push(f);
  if (fs.existsSync(path.join(root, 'docs'))) walk('docs');
  return out.sort();
}

// Shell words of one line: [{text, quoted}], plus the comment text after an unquoted '#'.
export function shellWords(line) {
  const words = [];
  let word = null;
  let comment = null;
  const push = () => {
    if (word) words.push(word);
    word = null;
  };
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === ' ' || c === '\t') {
      push();
    } else if (c === '#' && !word) {
      comment = line.slice(i + 1).trim();
      break;
    } else if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) throw new Error(`unterminated ' in: ${line}`);
      word ??= { text: '', quoted: true };
      word.text += line.slice(i + 1, end);
      word.quoted = true;
      i = end;
    } else if (c === '"') {
      word ??= { text: '', quoted: true };
      word.quoted = true;
      let j = i + 1;
      for (; j < line.length && line[j] !== '"'; j++) {
        if (line[j] === '\\' && '"\\$`'.includes(line[j + 1])) j++;
        word.text += line[j];
      }
      if (j >= line.length) throw new Error(`unterminated " in: ${line}`);
      i = j;
    } else if (c === '\\') {
      word ??= { text: '', quoted: false };
      word.text += line[++i] ?? '';
    } else {
      word ??= { text: '', quoted: false };
      word.text += c;
    }
  }
  push();
  return { words, comment };
}

const PREFIXES = [['ptqscope'], ['npx', 'ptqscope'], ['node', 'web/cli/ptqscope.mjs']];

// Expands synopsis notation into concrete argument lists.
export function expandSynopsis(words) {
  // `a | b | c rest...`: alternatives of separate words.
  const bar = words.findIndex((w) => !w.quoted && w.text === '|');
  if (bar > 0) {
    const start = bar - 1;
    let end = bar + 1;
    while (end + 1 < words.length && !words[end + 1].quoted && words[end + 1].text === '|') end += 2;
    const alternatives = [];
    for (let k = start; k <= end; k += 2) alternatives.push(words[k]);
    return alternatives.flatMap((alt) => expandSynopsis([...words.slice(0, start), alt, ...words.slice(end + 1)]));
  }
  const out = [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i];
    if (!w.quoted && (w.text === '...' || w.text === '…')) continue;
    if (!w.quoted && w.text.startsWith('[-')) {
      // An optional group: its words without the brackets (the fuller command is the one run).
      let j = i;
      while (j < words.length && !(!words[j].quoted && words[j].text.endsWith(']'))) j++;
      const group = words.slice(i, j + 1).map((g) => ({ ...g }));
      group[0].text = group[0].text.slice(1);
      group[group.length - 1].text = group[group.length - 1].text.slice(0, -1);
      return expandSynopsis([...out, ...group.filter((g) => g.text !== ''), ...words.slice(j + 1)]);
    }
    if (!w.quoted && /^[^[\]'"|]+(\|[^[\]'"|]+)+$/.test(w.text)) {
      // on|off: one command per alternative.
      return w.text.split('|').flatMap((alt) => expandSynopsis([...out, { text: alt, quoted: true }, ...words.slice(i + 1)]));
    }
    out.push(w);
  }
  return [out];
}

// Does a command use shell variables set earlier (`$M`)? Such a command runs within its walk-through
// (documentedScripts).
export const usesShellVariables = (c) => /\$[A-Za-z_]/.test(c.text);

// The walk-throughs whose commands use shell variables, as shell scripts: per Markdown file, the
// shell code blocks (```sh, ```bash, ```shell) from the first to the last one holding such a command,
// joined (variables set in one block are used in the next). [{file, line, end, script}]: `line` ..
// `end` are the first and last lines covered.
export function documentedScripts(root) {
  const scripts = [];
  for (const file of docFiles(root)) {
    const lines = fs.readFileSync(path.join(root, file), 'utf8').split('\n');
    const blocks = [];
    let open = null;
    for (let n = 0; n < lines.length; n++) {
      const trimmed = lines[n].trim();
      const m = /^(`{3,}|~{3,})\s*(\S*)/.exec(trimmed);
      if (m && !open) {
        open = { fence: m[1], lang: m[2], line: n + 2, body: [] };
      } else if (m && trimmed.startsWith(open.fence)) {
        const hasVariables = open.body.some((l) => {
          const text = l.trim().replace(/^\$\s+/, '');
          return PREFIXES.some((p) => text.startsWith(`${p.join(' ')} `)) && /\$[A-Za-z_]/.test(text);
        });
        blocks.push({ ...open, end: n, hasVariables });
        open = null;
      } else if (open) {
        open.body.push(lines[n]);
      }
    }
    const first = blocks.findIndex((bl) => bl.hasVariables);
    if (first < 0) continue;
    const last = blocks.findLastIndex((bl) => bl.hasVariables);
    const shell = blocks.slice(first, last + 1).filter((bl) => ['sh', 'bash', 'shell'].includes(bl.lang));
    scripts.push({ file, line: shell[0].line, end: shell.at(-1).end, script: `${shell.map((bl) => bl.body.join('\n')).join('\n')}\n` });
  }
  return scripts;
}

// The files a command writes through its file options (--json, --config-out, --out, --qdq).
export function writtenFiles(args) {
  const out = [];
  args.forEach((a, i) => {
    if (['--json', '--config-out', '--out', '--qdq'].includes(a) && i + 1 < args.length) out.push(args[i + 1]);
  });
  return out;
}

// [{file, line, text, args: [...], exit}] for every documented command of the repository at `root`.
export function documentedCommands(root) {
  const commands = [];
  for (const file of docFiles(root)) {
    const lines = fs.readFileSync(path.join(root, file), 'utf8').split('\n');
    let fence = null;
    let output = false;
    for (let n = 0; n < lines.length; n++) {
      const trimmed = lines[n].trim();
      const m = /^(`{3,}|~{3,})\s*(\S*)/.exec(trimmed);
      if (m) {
        if (!fence) { fence = m[1]; output = m[2] === 'text'; }
        else if (trimmed.startsWith(fence)) fence = null;
        continue;
      }
      if (!fence || output) continue;
      let text = trimmed.replace(/^\$\s+/, '');
      if (!PREFIXES.some((p) => text === p.join(' ') || text.startsWith(`${p.join(' ')} `))) continue;
      const first = n + 1;
      while (text.endsWith('\\') && n + 1 < lines.length) text = `${text.slice(0, -1)} ${lines[++n].trim()}`;
      const { words, comment } = shellWords(text);
      const prefix = PREFIXES.find((p) => p.every((word, i) => words[i] && !words[i].quoted && words[i].text === word));
      if (!prefix) continue;
      const exit = Number(/^exit\s+(\d+)/.exec(comment ?? '')?.[1] ?? 0);
      for (const expanded of expandSynopsis(words.slice(prefix.length))) {
        commands.push({ file, line: first, text, args: expanded.map((w) => w.text), exit });
      }
    }
  }
  return commands;
}
