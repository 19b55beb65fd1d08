// The sub-commands of ptqscope, in the order `ptqscope --help` lists them (hmct-debugger's first):
// name -> loader of commands/<name>.mjs, which exports { summary, usage, main(argv) -> exit code }
// (and, for an analysis, `analysis`: the core analysis it runs).
export const COMMANDS = {
  'get-sensitivity-of-nodes': () => import('./get-sensitivity-of-nodes.mjs'),
  'plot-acc-error': () => import('./plot-acc-error.mjs'),
  'plot-distribution': () => import('./plot-distribution.mjs'),
  'get-channelwise-data-distribution': () => import('./get-channelwise-data-distribution.mjs'),
  'sensitivity-analysis': () => import('./sensitivity-analysis.mjs'),
  runall: () => import('./runall.mjs'),
  'leave-one-out': () => import('./leave-one-out.mjs'),
  fix: () => import('./fix.mjs'),
  'export-config': () => import('./export-config.mjs'),
  'import-report': () => import('./import-report.mjs'),
  'get-calibration-nodes-stat-info': () => import('./get-calibration-nodes-stat-info.mjs'),
  'node-errors': () => import('./node-errors.mjs'),
  explain: () => import('./explain.mjs'),
  'calibration-methods': () => import('./calibration-methods.mjs'),
  calibrate: () => import('./calibrate.mjs'),
  run: () => import('./run.mjs'),
  merge: () => import('./merge.mjs'),
};
