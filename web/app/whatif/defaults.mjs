// Option defaults and choices of the what-if, node-errors and fix analyses, from the core's
// describe() (web/pipeline/catalog.mjs). A core that does not list the analysis gives none: the
// panels then leave the option out of the request and the core applies its own default.
import { ANALYSES, optionSpec } from '../../pipeline/catalog.mjs';

// {default, choices} of an option, or null when the core does not describe it. `default` is what the
// page and the plugin start with: the core's interactive_default where it has one (data_num: every
// sample, 0), else its default.
export function coreOption(analysis, option) {
  if (!ANALYSES.includes(analysis)) return null;
  try {
    const o = optionSpec(analysis, option);
    return { default: o.interactive_default ?? o.default ?? null, choices: o.choices ?? null };
  } catch {
    return null;
  }
}

// "cosine-similarity>=0.999" -> {metric, op, bound}; null when it does not parse.
export function parseTarget(text) {
  const m = /^\s*([a-z-]+)\s*(>=|<=|>|<)\s*([-+0-9.eE]+)\s*$/.exec(String(text ?? ''));
  return m ? { metric: m[1], op: m[2], bound: m[3] } : null;
}
