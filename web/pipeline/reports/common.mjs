// Helpers the report formats share (pure; no DOM, no Node APIs): number cells as the toolchains print
// them, JSON as Python's json.dump writes it, and line numbers of JSON keys for the problem list.
import { betterDirection } from '../catalog.mjs';

// A number cell: decimals, exponents, and the non-finite spellings Python and C print
// (nan, inf, -inf, NaN, Infinity). Returns a number (NaN included) or null when the text is not one.
const NUMBER = /^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/;
export function parseNumber(text) {
  if (typeof text === 'number') return text;
  if (typeof text !== 'string') return null;
  const t = text.trim();
  if (NUMBER.test(t)) return Number(t);
  const lower = t.toLowerCase();
  if (lower === 'nan' || lower === '-nan') return NaN;
  if (lower === 'inf' || lower === '+inf' || lower === 'infinity' || lower === '+infinity') return Infinity;
  if (lower === '-inf' || lower === '-infinity') return -Infinity;
  return null;
}

// Text of a file: bytes (Uint8Array) decoded as UTF-8 (a byte-order mark dropped), or a string.
export function textOf(input) {
  const text = typeof input === 'string' ? input : new TextDecoder('utf-8', { fatal: false }).decode(input);
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

// JSON as Python's json.dump writes floats: bare NaN, Infinity and -Infinity (not JSON) become the
// strings "nan", "inf", "-inf" before JSON.parse. Returns {value} or {error} (the parser's message).
export function parseJsonLenient(text) {
  let out = '';
  let i = 0;
  let plain = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '"') {
      // skip the string, escapes included
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      i = j + 1;
      continue;
    }
    const m = /^(-?Infinity|NaN)\b/.exec(text.slice(i, i + 9));
    if (m && !/[\w.]/.test(text[i - 1] ?? '')) {
      out += text.slice(plain, i) + JSON.stringify(m[1] === 'NaN' ? 'nan' : m[1].startsWith('-') ? '-inf' : 'inf');
      i += m[1].length;
      plain = i;
      continue;
    }
    i++;
  }
  out += text.slice(plain);
  try {
    return { value: JSON.parse(out) };
  } catch (err) {
    return { error: err.message };
  }
}

// 1-based line of each top-level key of a JSON object text (in order of appearance), so a bad entry
// is reported with its line: Map<key, line>. Keys found by their quoted spelling; a key whose text
// cannot be found gets no line.
export function keyLines(text, keys, from = 0) {
  const lines = new Map();
  const lineOf = lineCounter(text);
  let cursor = from;
  for (const key of keys) {
    const quoted = JSON.stringify(key);
    const at = text.indexOf(quoted, cursor);
    if (at < 0) continue;
    lines.set(key, lineOf(at));
    cursor = at + quoted.length;
  }
  return lines;
}

// lineOf(offset) -> 1-based line, for offsets asked in increasing order (linear in the text overall;
// an earlier offset restarts the count).
export function lineCounter(text) {
  let pos = 0;
  let line = 1;
  return (offset) => {
    if (offset < pos) {
      pos = 0;
      line = 1;
    }
    const end = Math.min(offset, text.length);
    for (; pos < end; pos++) if (text.charCodeAt(pos) === 10) line++;
    return line;
  };
}

// The better direction of a report metric: a metric that IS one of the core's metrics says so with
// `core` and takes the core's direction (§4); any other metric declares `better` itself, once, in its
// format module.
export function metricBetter(metric) {
  if (metric.core) return betterDirection(metric.core);
  if (metric.better !== 'higher' && metric.better !== 'lower') throw new Error(`report metric '${metric.name}' declares no direction`);
  return metric.better;
}

export const isPlainObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
