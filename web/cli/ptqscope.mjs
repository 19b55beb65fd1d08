#!/usr/bin/env node
// ptqscope command-line entry: `ptqscope <command> [args]`. Each command lives in commands/<name>.mjs
// and exports { summary, usage, main(argv) -> exit code }; commands/index.mjs lists them.
import { EXIT_BAD_INPUT, EXIT_FAILURE, isInputError } from './lib/errors.mjs';
import { COMMANDS } from './commands/index.mjs';

// One line per command: the hmct-debugger sub-commands first (same names, arguments and options).
async function topUsage() {
  const lines = await Promise.all(Object.entries(COMMANDS).map(async ([c, load]) => `  ${c.padEnd(34)} ${(await load()).summary}`));
  return `usage: ptqscope <command> [args]   (ptqscope <command> --help for details)\n\ncommands:\n${lines.join('\n')}`;
}

// The commands that still work on a model with ops the core cannot run: those whose analysis
// describe() marks as running the model only for activations (needs_execution).
async function withoutExecution() {
  const { analysisSpec } = await import('../pipeline/catalog.mjs');
  const names = [];
  for (const [c, load] of Object.entries(COMMANDS)) {
    const { analysis } = await load();
    if (analysis && analysisSpec(analysis).needs_execution !== 'always') names.push(c);
  }
  return `Without running the model, these commands work on weight calibration nodes (-n/--nodes_list): ${names.join(', ')}`;
}

async function main(argv) {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    console.log(await topUsage());
    return name ? 0 : EXIT_BAD_INPUT;
  }
  const load = COMMANDS[name];
  if (!load) {
    console.error(`ptqscope: unknown command '${name}'\n${await topUsage()}`);
    return EXIT_BAD_INPUT;
  }
  const command = await load();
  if (rest.includes('--help') || rest.includes('-h')) {
    console.log(command.usage);
    return 0;
  }
  try {
    return await command.main(rest);
  } catch (err) {
    if (isInputError(err)) {
      console.error(`ptqscope ${name}: error: ${err.message}`);
      if (err.showUsage) console.error(command.usage);
      if (err.helpHint) console.error(`Try 'ptqscope ${name} -h' for help.`);
      if (err.cannotRun) console.error(await withoutExecution());
      return EXIT_BAD_INPUT;
    }
    if (err?.name === 'SetupError') console.error(`ptqscope ${name}: ${err.message}`);
    else console.error(`ptqscope ${name}: internal error: ${err?.stack ?? err}`);
    return EXIT_FAILURE;
  }
}

// The commands read their defaults from the core's describe() (web/pipeline/catalog.mjs), so loading
// one loads the wasm module: a missing build is reported as such, whatever the command.
async function run(argv) {
  try {
    return await main(argv);
  } catch (err) {
    if (err?.name !== 'SetupError') throw err;
    console.error(`ptqscope: ${err.message}`);
    return EXIT_FAILURE;
  }
}

process.exitCode = await run(process.argv.slice(2));
