// A small option parser shared by the subcommands: positionals plus `--name value` / `--name=value`
// options declared up front, so a typo is an error rather than a silently ignored flag.
import { UsageError as BaseUsageError } from './errors.mjs';

class UsageError extends BaseUsageError {
  constructor(message) {
    super(message, { showUsage: true });
  }
}

// spec: { options: { out: { required: true }, quant: { choices: ['on', 'off'] } }, positionals: ['MODEL', ...] }
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
    if (eq >= 0) value = arg.slice(eq + 1);
    else if (i + 1 < argv.length) value = argv[++i];
    else throw new UsageError(`option --${name} needs a value`);
    if (name in options) throw new UsageError(`option --${name} given twice`);
    options[name] = value;
  }
  for (const [name, opt] of Object.entries(spec.options)) {
    if (options[name] === undefined) {
      if (opt.required) throw new UsageError(`missing option --${name}`);
      if ('default' in opt) options[name] = opt.default;
      continue;
    }
    if (opt.choices && !opt.choices.includes(options[name])) {
      throw new UsageError(`--${name} must be one of ${opt.choices.join(', ')} (got '${options[name]}')`);
    }
  }
  if (positionals.length !== spec.positionals.length) {
    throw new UsageError(`expected ${spec.positionals.length} arguments (${spec.positionals.join(' ')}), got ${positionals.length}`);
  }
  return { options, positionals };
}
