// hmct-debugger's `keep_list_format` (§9.1): how list arguments such as
// `-m ['cosine-similarity','mse']` or `-q [[Conv_2],[Conv_2,Conv_90]]` are read.
//   - a value not starting with '[' is returned unchanged (one name / metric);
//   - otherwise every ' and " is deleted, every maximal run of characters other than '[', ']', ','
//     and whitespace is wrapped in single quotes, and the text is evaluated as a Python literal.
// The evaluation is done here by a tiny parser of exactly the literals that step can produce:
// nested lists of string literals, adjacent literals concatenated ('a' 'b' -> 'ab', so "[a b]" is
// ['ab']), an optional trailing comma, Python's backslash escapes inside the quotes.
import { UsageError } from './errors.mjs';

export function keepListFormat(value) {
  if (value === undefined || value === null) return null;
  if (!value.startsWith('[')) return value;
  const quoted = value.replace(/['"]/g, '').replace(/[^[\],\s]+/g, (run) => `'${run}'`);
  return parseLiteral(quoted, value);
}

function syntaxError(original, why) {
  return new UsageError(`cannot read the list ${JSON.stringify(original)}: ${why}`);
}

function parseLiteral(text, original) {
  let i = 0;
  const skipSpace = () => {
    while (i < text.length && /\s/.test(text[i])) i++;
  };
  const parseString = () => {
    // A run of adjacent '...' literals (the quotes were inserted above, so content has no quote).
    let out = '';
    while (text[i] === "'") {
      const end = text.indexOf("'", i + 1);
      const body = text.slice(i + 1, end < 0 ? text.length : end);
      // A body ending in an odd number of backslashes escapes the closing quote: unterminated.
      if (end < 0 || /(^|[^\\])(\\\\)*\\$/.test(body)) throw syntaxError(original, 'unterminated string');
      out += unescapePython(body);
      i = end + 1;
      skipSpace();
    }
    return out;
  };
  const parseValue = () => {
    skipSpace();
    if (text[i] === "'") return parseString();
    if (text[i] !== '[') throw syntaxError(original, `unexpected ${text[i] === undefined ? 'end' : `'${text[i]}'`}`);
    i++;
    const items = [];
    skipSpace();
    while (text[i] !== ']') {
      items.push(parseValue());
      skipSpace();
      if (text[i] === ',') {
        i++;
        skipSpace();
      } else if (text[i] !== ']') {
        throw syntaxError(original, text[i] === undefined ? "missing ']'" : `unexpected '${text[i]}'`);
      }
    }
    i++;
    return items;
  };
  const value = parseValue();
  skipSpace();
  if (i !== text.length) throw syntaxError(original, `unexpected text after the list: '${text.slice(i)}'`);
  return value;
}

const SIMPLE_ESCAPES = { '\n': '', '\\': '\\', "'": "'", '"': '"', a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v' };

// Python str-literal escapes; an unknown escape keeps its backslash (as Python does).
function unescapePython(body) {
  return body.replace(/\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-7]{1,3}|[\s\S])/g, (all, e) => {
    if (e in SIMPLE_ESCAPES) return SIMPLE_ESCAPES[e];
    if (/^[0-7]+$/.test(e)) return String.fromCodePoint(parseInt(e, 8));
    if (/^[xuU]/.test(e)) return String.fromCodePoint(parseInt(e.slice(1), 16));
    return all;
  });
}

// The list arguments as the analyses take them (a bare name -> [name]): the result module's.
export { asList } from '../../pipeline/result.mjs';
