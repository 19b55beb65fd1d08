// The option syntax of hmct-debugger (a Python `click` program, §9), so its users can keep
// their command lines: `-m VALUE`, `--metrics VALUE`, `--metrics=VALUE`, multi-letter short options as
// single tokens (`-nm`, `-dnl`), a single-letter short option with its value attached (`-d5`),
// options anywhere between the positionals, `--` ending the options, the last of a repeated option
// winning, and click's BOOL / INT / FLOAT / Choice conversions with click's error texts.
import { UsageError } from './errors.mjs';

// Reported like click does: the message, then a pointer to --help (not the whole usage text).
export class ClickError extends UsageError {
  constructor(message) {
    super(message);
    this.helpHint = true;
  }
}

const TRUE_WORDS = new Set(['1', 'true', 't', 'yes', 'y', 'on']);
const FALSE_WORDS = new Set(['0', 'false', 'f', 'no', 'n', 'off']);

// click.BOOL: case-insensitive words, surrounding whitespace ignored.
export function parseClickBool(text) {
  const v = text.trim().toLowerCase();
  if (TRUE_WORDS.has(v)) return true;
  if (FALSE_WORDS.has(v)) return false;
  throw new Error(`${pyRepr(text)} is not a valid boolean.`);
}

// click.INT is Python's int(str): whitespace, a sign, '_' between digits.
export function parseClickInt(text) {
  const t = text.trim();
  if (!/^[+-]?\d+(_\d+)*$/.test(t)) throw new Error(`${pyRepr(text)} is not a valid integer.`);
  return Number(t.replace(/_/g, ''));
}

// click.FLOAT is Python's float(str): decimal/exponent forms, inf/infinity/nan in any case.
export function parseClickFloat(text) {
  const t = text.trim().replace(/(\d)_(?=\d)/g, '$1');
  if (/^[+-]?(inf|infinity)$/i.test(t)) return t.startsWith('-') ? -Infinity : Infinity;
  if (/^[+-]?nan$/i.test(t)) return NaN;
  if (!/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(t)) throw new Error(`${pyRepr(text)} is not a valid float.`);
  return Number(t);
}

// Python's repr of a str as click shows it in messages.
function pyRepr(text) {
  return text.includes("'") && !text.includes('"') ? `"${text}"` : `'${text.replace(/'/g, "\\'")}'`;
}

const CONVERT = {
  str: (t) => t,
  bool: parseClickBool,
  int: parseClickInt,
  float: parseClickFloat,
};

function convert(opt, text) {
  try {
    if (opt.choices) {
      if (!opt.choices.includes(text)) {
        throw new Error(`${pyRepr(text)} is not one of ${opt.choices.map((c) => `'${c}'`).join(', ')}.`);
      }
      return text;
    }
    const value = CONVERT[opt.type ?? 'str'](text);
    return opt.parse ? opt.parse(value) : value;
  } catch (err) {
    if (err instanceof ClickError) throw err;
    throw new ClickError(`Invalid value for ${label(opt)}: ${err.message}`);
  }
}

// "'-m' / '--metrics'", as click names an option in its errors.
export function label(opt) {
  return opt.flags.map((f) => `'${f}'`).join(' / ');
}

// spec: { positionals: ['MODEL_OR_FILE', ...], options: [{ name, flags: ['-m', '--metrics'],
//   type: 'str'|'bool'|'int'|'float', choices?, default?, required?, flag? (no value), parse?, help,
//   aliases? (more flags, accepted and listed in the usage; messages name `flags` as click would) }] }
// Returns { options: {name: value}, positionals: [...] }; defaults are applied (and parsed).
export function parseClick(argv, spec) {
  const byFlag = new Map();
  for (const opt of spec.options) for (const f of [...opt.flags, ...(opt.aliases ?? [])]) byFlag.set(f, opt);
  const raw = new Map();
  const positionals = [];
  let i = 0;
  const take = (opt, flag, attached) => {
    if (opt.flag) {
      if (attached !== undefined) throw new ClickError(`Option '${flag}' does not take a value.`);
      raw.set(opt.name, true);
      return;
    }
    if (attached !== undefined) raw.set(opt.name, attached);
    else if (i < argv.length) raw.set(opt.name, argv[i++]);
    else throw new ClickError(`Option '${flag}' requires an argument.`);
  };
  while (i < argv.length) {
    const arg = argv[i++];
    if (arg === '--') {
      positionals.push(...argv.slice(i));
      break;
    }
    if (!arg.startsWith('-') || arg === '-') {
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const head = eq < 0 ? arg : arg.slice(0, eq);
    if (byFlag.has(head) && (head.startsWith('--') || head.length > 2)) {
      take(byFlag.get(head), head, eq < 0 ? undefined : arg.slice(eq + 1));
    } else if (byFlag.has(arg)) {
      take(byFlag.get(arg), arg, undefined);
    } else if (!arg.startsWith('--') && byFlag.has(arg.slice(0, 2)) && !byFlag.get(arg.slice(0, 2)).flag) {
      // A single-letter short option with its value attached: -d5, -nweight.
      take(byFlag.get(arg.slice(0, 2)), arg.slice(0, 2), arg.slice(2));
    } else {
      throw new ClickError(`No such option: ${head}`);
    }
  }
  if (positionals.length < spec.positionals.length) {
    throw new ClickError(`Missing argument '${spec.positionals[positionals.length]}'.`);
  }
  if (positionals.length > spec.positionals.length) {
    const extra = positionals.slice(spec.positionals.length);
    throw new ClickError(`Got unexpected extra argument${extra.length > 1 ? 's' : ''} (${extra.join(' ')})`);
  }
  const options = {};
  for (const opt of spec.options) {
    if (raw.has(opt.name)) {
      options[opt.name] = opt.flag ? true : convert(opt, raw.get(opt.name));
    } else if (opt.required) {
      // click would prompt ("Specify nodes"); a non-interactive tool reports it instead.
      throw new ClickError(`Missing option ${label(opt)}.`);
    } else if (opt.flag) {
      options[opt.name] = false;
    } else if (opt.default === undefined || opt.default === null) {
      options[opt.name] = null;
    } else {
      options[opt.name] = typeof opt.default === 'string' ? convert(opt, opt.default) : opt.default;
    }
  }
  return { options, positionals };
}

// The usage text of a command from its spec.
export function clickUsage(command, spec, description) {
  const lines = [`usage: ptqscope ${command} [OPTIONS] ${spec.positionals.join(' ')}`, '', description, '', 'options:'];
  for (const opt of spec.options) {
    const flags = [...opt.flags, ...(opt.aliases ?? [])].join(', ') + (opt.flag ? '' : ` ${opt.metavar ?? (opt.choices ? `[${opt.choices.join('|')}]` : (opt.type ?? 'str').toUpperCase())}`);
    const def = opt.required ? ' (required)' : opt.default !== undefined && opt.default !== null && !opt.flag ? ` (default: ${opt.default})` : '';
    lines.push(`  ${flags.padEnd(34)} ${opt.help ?? ''}${def}`);
  }
  lines.push(`  ${'-h, --help'.padEnd(34)} show this message`);
  return lines.join('\n');
}
