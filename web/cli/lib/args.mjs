// A small option parser shared by the subcommands: positionals plus `--name value` / `--name=value`
// options declared up front, so a typo is an error rather than a silently ignored flag.
import { UsageError as BaseUsageError } from './errors.mjs';

class UsageError extends BaseUsageError {
  constructor(message) {
    super(message, { showUsage: true });
  }
}

// spec: { options: { out: { required: true }, quant: { choices: ['on', 'off'] }, quiet: { flag: true } },
//         positionals: ['MODEL', ...] }; a last positional 'NAME...' takes one or more arguments.
// A `flag` option takes no value (true when given, else false). `either: 'other'`: this option or
// --other is required, and not both (`run`'s --quant or --config).
export function parseArgs(argv, spec) {
  const options = {};
  const positionals = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith('--') || arg === '--') {
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq < 0 ? undefined : eq);
    if (!(name in spec.options)) throw new UsageError(`unknown option --${name}`);
    let value;
    if (spec.options[name].flag) {
      if (eq >= 0) throw new UsageError(`option --${name} takes no value`);
      value = true;
    } else if (eq >= 0) value = arg.slice(eq + 1);
    else if (i + 1 < argv.length) value = argv[++i];
    else throw new UsageError(`option --${name} needs a value`);
    if (name in options) throw new UsageError(`option --${name} given twice`);
    options[name] = value;
  }
  for (const [name, opt] of Object.entries(spec.options)) {
    if (options[name] === undefined) {
      if (opt.flag) options[name] = false;
      if (opt.required) throw new UsageError(`missing option --${name}`);
      if (opt.either && options[opt.either] === undefined) throw new UsageError(`missing option --${name} (or --${opt.either})`);
      if ('default' in opt) options[name] = opt.default;
      continue;
    }
    if (opt.either && options[opt.either] !== undefined) throw new UsageError(`give --${name} or --${opt.either}, not both`);
    if (opt.choices && !opt.choices.includes(options[name])) {
      throw new UsageError(`--${name} must be one of ${opt.choices.join(', ')} (got '${options[name]}')`);
    }
  }
  const variadic = spec.positionals.at(-1)?.endsWith('...');
  if (variadic ? positionals.length < spec.positionals.length : positionals.length !== spec.positionals.length) {
    throw new UsageError(`expected ${variadic ? 'at least ' : ''}${spec.positionals.length} argument${spec.positionals.length > 1 ? 's' : ''} ` +
      `(${spec.positionals.join(' ')}), got ${positionals.length}`);
  }
  return { options, positionals };
}
