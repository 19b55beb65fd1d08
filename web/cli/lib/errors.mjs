// Exit codes of every ptqscope subcommand.
export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;   // a failure of ptqscope itself (missing build, internal error, OOM)
export const EXIT_BAD_INPUT = 2; // bad command line, unreadable/invalid model or data

// Thrown for anything the user supplied wrongly; reported without a stack, exit code 2.
// `showUsage` is set for command-line syntax errors, where the command's usage text helps.
export class UsageError extends Error {
  constructor(message, { showUsage = false } = {}) {
    super(message);
    this.name = 'UsageError';
    this.showUsage = showUsage;
  }
}

// ptqscope itself is not ready (e.g. the wasm build is missing): exit code 1, no stack trace.
export class SetupError extends Error {
  constructor(message) {
    super(message);
    this.name = 'SetupError';
  }
}

// Errors the wasm core raises about its inputs (docs/wasm-api.md): also "bad input".
export function isInputError(err) {
  return err instanceof UsageError || err?.name === 'FormatError' || err?.name === 'PtqError';
}

// Runs fn, prefixing a core error's message with the file it concerns (keeping its name, which
// decides the exit code).
export function withContext(file, fn) {
  try {
    return fn();
  } catch (err) {
    if (err instanceof Error && !err.message.includes(file)) err.message = `${file}: ${err.message}`;
    throw err;
  }
}
