// The hmct-debugger command-line syntax (§9): keep_list_format (§9.1), click's option
// forms and BOOL/INT/FLOAT values, every sub-command's flags and defaults (§9.2 table), and the two
// text tables (§3.5 verbose table, §8.3 .log file) against the examples of §3.5 and §8.3.
// No wasm needed: these run on the parsers and formatters alone.
import { describe, expect, it } from 'vitest';
import { keepListFormat } from '../../web/cli/lib/keep_list.mjs';
import { parseClick, parseClickBool } from '../../web/cli/lib/click.mjs';
import { numpyFloat32Str, pyFloatRepr, pyRound } from '../../web/pipeline/pyformat.mjs';
import { formatSensitivityLog, formatVerboseTable } from '../../web/pipeline/tables.mjs';
import * as sensitivity from '../../web/cli/commands/get-sensitivity-of-nodes.mjs';
import * as distribution from '../../web/cli/commands/plot-distribution.mjs';
import * as channelwise from '../../web/cli/commands/get-channelwise-data-distribution.mjs';
import * as accError from '../../web/cli/commands/plot-acc-error.mjs';
import * as sensitivityAnalysis from '../../web/cli/commands/sensitivity-analysis.mjs';
import * as runall from '../../web/cli/commands/runall.mjs';

const POS = ['model.onnx', 'calibration_data'];

describe('keep_list_format (§9.1)', () => {
  // [argument as the program receives it (after the shell), expected value]
  const table = [
    [null, null], // None -> None
    ['cosine-similarity', 'cosine-similarity'], // not starting with '[' -> unchanged
    ['Conv_2', 'Conv_2'],
    [' [a]', ' [a]'], // does not *start* with '['
    ["['cosine-similarity','mse']", ['cosine-similarity', 'mse']], // §9 doc example (-m)
    ["[['Conv_2'],['Conv_2','Conv_90']]", [['Conv_2'], ['Conv_2', 'Conv_90']]], // §9 doc example (-q)
    ["['317_HzCalibration','471_HzCalibration','Conv_2']", ['317_HzCalibration', '471_HzCalibration', 'Conv_2']],
    ['[a,b]', ['a', 'b']],
    ["['a','b']", ['a', 'b']],
    ['[a, b]', ['a', 'b']], // "[a, b]" quoted for the shell
    ['["a", "b"]', ['a', 'b']], // every ' and " is deleted
    ['[[a,b],[c]]', [['a', 'b'], ['c']]],
    ['[weight,activation]', ['weight', 'activation']], // runall -nt example
    ["['weight']", ['weight']], // items wrapped in single quotes are unwrapped
    ['[a b]', ['ab']], // spaces split a name into adjacent literals, concatenated
    ['[1,2]', ['1', '2']], // everything becomes strings
    ["[it's]", ['its']], // quotes cannot be expressed
    ['[input:0,conv/1]', ['input:0', 'conv/1']],
    ['[]', []],
  ];
  for (const [arg, expected] of table) {
    it(`${JSON.stringify(arg)} -> ${JSON.stringify(expected)}`, () => {
      expect(keepListFormat(arg)).toEqual(expected);
    });
  }
  for (const bad of ['[a', '[a]b', '[a][b]', '[,a]']) {
    it(`${bad} is not a Python literal once quoted: a usage error naming the argument`, () => {
      expect(() => keepListFormat(bad)).toThrow(bad);
    });
  }
});

describe('click BOOL (§9: true/false, 1/0, yes/no, y/n, t/f, on/off, any case)', () => {
  const words = [['true', true], ['false', false], ['1', true], ['0', false], ['yes', true], ['no', false],
    ['y', true], ['n', false], ['t', true], ['f', false], ['on', true], ['off', false], ['True', true], ['FALSE', false], ['On', true]];
  for (const [w, v] of words) it(`${w} -> ${v}`, () => expect(parseClickBool(w)).toBe(v));
  for (const w of ['maybe', '', '2', 'tru']) it(`'${w}' is rejected`, () => expect(() => parseClickBool(w)).toThrow('is not a valid boolean'));
  it('-v needs a value (it is not a flag)', () => {
    expect(() => parseClick([...POS, '-v'], sensitivity.SPEC)).toThrow("Option '-v' requires an argument.");
    expect(parseClick([...POS, '-v', 'True'], sensitivity.SPEC).options.verbose).toBe(true);
  });
});

// §9.2: [command module, {option name: [short, long]}, defaults]
const COMMANDS = {
  'get-sensitivity-of-nodes': [sensitivity, {
    metrics: ['-m', '--metrics'], output_node: ['-o', '--output_node'], node_type: ['-n', '--node_type'],
    data_num: ['-d', '--data_num'], verbose: ['-v', '--verbose'], interested_nodes: ['-i', '--interested_nodes'],
  }, { metrics: 'cosine-similarity', output_node: null, node_type: 'node', data_num: 1, verbose: false, interested_nodes: null }],
  'plot-distribution': [distribution, { save_dir: ['-s', '--save_dir'], nodes_list: ['-n', '--nodes_list'] },
    { save_dir: './debug_result/' }],
  'get-channelwise-data-distribution': [channelwise, { save_dir: ['-s', '--save_dir'], nodes_list: ['-n', '--nodes_list'], axis: ['-a', '--axis'] },
    { save_dir: './debug_result/', axis: null }],
  'plot-acc-error': [accError, {
    save_dir: ['-s', '--save_dir'], quantize_node: ['-q', '--quantize_node'], non_quantize_node: ['-nq', '--non_quantize_node'],
    metric: ['-m', '--metric'], average_mode: ['-a', '--average_mode'],
  }, { save_dir: './debug_result/', quantize_node: null, non_quantize_node: null, metric: 'cosine-similarity', average_mode: false }],
  'sensitivity-analysis': [sensitivityAnalysis, {
    pick_threshold: ['-p', '--pick_threshold'], data_num: ['-d', '--data_num'], sensitive_nodes: ['-sn', '--sensitive_nodes'],
    save_dir: ['-sd', '--save_dir'],
  }, { pick_threshold: 0.999, data_num: 1, sensitive_nodes: null, save_dir: './debug_result/' }],
  runall: [runall, {
    save_dir: ['-s', '--save_dir'], ns_metrics: ['-nm', '--ns_metrics'], output_node: ['-o', '--output_node'],
    node_type: ['-nt', '--node_type'], data_num: ['-dn', '--data_num'], verbose: ['-v', '--verbose'],
    interested_nodes: ['-i', '--interested_nodes'], dis_nodes_list: ['-dnl', '--dis_nodes_list'],
    cw_nodes_list: ['-cn', '--cw_nodes_list'], axis: ['-a', '--axis'], quantize_node: ['-qn', '--quantize_node'],
    non_quantize_node: ['-nqn', '--non_quantize_node'], ae_metric: ['-am', '--ae_metric'],
    average_mode: ['-avm', '--average_mode'], pick_threshold: ['-pt', '--pick_threshold'], sensitive_nodes: ['-sn', '--sensitive_nodes'],
  }, {
    save_dir: './debug_result/', ns_metrics: 'cosine-similarity', output_node: null, node_type: null, data_num: 1, verbose: false,
    interested_nodes: null, dis_nodes_list: null, cw_nodes_list: null, axis: null, quantize_node: null, non_quantize_node: null,
    ae_metric: 'cosine-similarity', average_mode: false, pick_threshold: 0.999, sensitive_nodes: null,
  }],
};

// A value of the right type for each option, and what it parses to.
const SAMPLE = {
  int: ['7', 7], float: ['0.5', 0.5], bool: ['yes', true],
};

describe('sub-commands: flags and defaults (§9.2)', () => {
  for (const [name, [mod, flags, defaults]] of Object.entries(COMMANDS)) {
    const required = mod.SPEC.options.filter((o) => o.required).flatMap((o) => [o.flags[0], 'X']);
    it(`${name}: defaults`, () => {
      const { options, positionals } = parseClick([...POS, ...required], mod.SPEC);
      expect(positionals).toEqual(POS);
      for (const [k, v] of Object.entries(defaults)) {
        // String defaults go through the option's own parser (a list option's default is a plain name).
        expect(options[k], k).toEqual(v);
      }
    });
    for (const [opt, [short, long]] of Object.entries(flags)) {
      it(`${name}: ${short} / ${long}`, () => {
        const spec = mod.SPEC.options.find((o) => o.name === opt);
        expect(spec.flags.slice(0, 2)).toEqual([short, long]);
        const [text, value] = spec.choices ? [spec.choices.at(-1), spec.choices.at(-1)] : SAMPLE[spec.type] ?? ['[A,B]', ['A', 'B']];
        const expected = spec.parse || spec.choices || SAMPLE[spec.type] ? value : text;
        const rest = required.filter((_, i) => required[i - (i % 2)] !== short);
        for (const argv of [[short, text], [long, text], [`${long}=${text}`]]) {
          const { options } = parseClick([...argv, ...POS, ...rest], mod.SPEC);
          expect(options[opt], argv.join(' ')).toEqual(expected);
        }
      });
    }
  }
  it('plot-distribution and get-channelwise-data-distribution need -n (the original prompts for it)', () => {
    expect(() => parseClick(POS, distribution.SPEC)).toThrow("Missing option '-n' / '--nodes_list'.");
    expect(() => parseClick(POS, channelwise.SPEC)).toThrow("Missing option '-n' / '--nodes_list'.");
  });
});

describe('click option forms', () => {
  const S = sensitivity.SPEC;
  it('multi-letter short options are single tokens; -nm is not -n with "m"', () => {
    const { options } = parseClick([...POS, '-nm', '[mse,sqnr]', '-dnl', 'Conv_2', '-nt', 'node'], runall.SPEC);
    expect(options.ns_metrics).toEqual(['mse', 'sqnr']);
    expect(options.dis_nodes_list).toBe('Conv_2');
    expect(options.node_type).toBe('node');
  });
  it('a single-letter short option takes an attached value', () => {
    expect(parseClick([...POS, '-d5', '-nweight'], S).options).toMatchObject({ data_num: 5, node_type: 'weight' });
  });
  it('options go anywhere; the last repeated option wins; "--" ends the options', () => {
    const { options, positionals } = parseClick(['-d', '2', 'model.onnx', '-d', '3', '--', '-data'], S);
    expect(options.data_num).toBe(3);
    expect(positionals).toEqual(['model.onnx', '-data']);
  });
  it('a value may start with "-"', () => {
    expect(parseClick([...POS, '-o', '-weird'], S).options.output_node).toBe('-weird');
  });
  it("click's messages for bad input", () => {
    const cases = [
      [[...POS, '-n', 'tae'], "Invalid value for '-n' / '--node_type': 'tae' is not one of 'node', 'weight', 'activation'."],
      [[...POS, '-d', 'x'], "Invalid value for '-d' / '--data_num': 'x' is not a valid integer."],
      [[...POS, '-d', '1.5'], 'is not a valid integer.'],
      [[...POS, '--fast', '1'], 'No such option: --fast'],
      [['model.onnx'], "Missing argument 'CALIBRATED_DATA'."],
      [[...POS, 'extra'], 'Got unexpected extra argument (extra)'],
      [[...POS, '-m', '[a'], "Invalid value for '-m' / '--metrics'"],
    ];
    for (const [argv, message] of cases) expect(() => parseClick(argv, S), argv.join(' ')).toThrow(message);
    expect(() => parseClick([...POS, '-p', 'high'], sensitivityAnalysis.SPEC)).toThrow("'high' is not a valid float.");
  });
  it('-nt is the node type of get-sensitivity-of-nodes (and leave-one-out) as of runall; messages keep click\'s flags', () => {
    expect(parseClick([...POS, '-nt', 'activation'], S).options.node_type).toBe('activation');
    expect(parseClick(['-nt=weight', ...POS], S).options.node_type).toBe('weight');
    expect(() => parseClick([...POS, '-nt', 'tae'], S)).toThrow("Invalid value for '-n' / '--node_type': 'tae' is not one of");
    expect(sensitivity.usage).toMatch(/-n, --node_type, -nt /);
  });
  it('INT / FLOAT as Python reads them', () => {
    expect(parseClick([...POS, '-d', ' +1_0 '], S).options.data_num).toBe(10);
    expect(parseClick([...POS, '-p', '1e-3'], sensitivityAnalysis.SPEC).options.pick_threshold).toBe(0.001);
  });
  it('--workers, --json, --quiet beside the original options', () => {
    const { options } = parseClick([...POS, '--workers', '2', '--json', 'r.json', '--quiet'], S);
    expect(options).toMatchObject({ workers: 2, json: 'r.json', quiet: true });
    expect(() => parseClick([...POS, '--workers', '0'], S)).toThrow("Invalid value for '--workers' / '--threads'");
  });
});

describe('number formatting of the tables', () => {
  it('repr(float) and str(numpy.float32)', () => {
    expect(pyFloatRepr(Math.fround(0.99812))).toBe('0.9981200098991394');
    expect(pyFloatRepr(Math.fround(3.21e-5))).toBe('3.2100000680657104e-05');
    expect(pyFloatRepr(1e16)).toBe('1e+16');
    expect(pyFloatRepr(1e15)).toBe('1000000000000000.0');
    expect(pyFloatRepr(0.0001)).toBe('0.0001');
    expect(pyFloatRepr('inf')).toBe('inf');
    expect(pyFloatRepr('nan')).toBe('nan');
    expect(numpyFloat32Str(0.99812)).toBe('0.99812');
    expect(numpyFloat32Str(3.21e-5)).toBe('3.21e-05');
    expect(numpyFloat32Str(1)).toBe('1.0');
  });
  it('round(x, 5) as Python (ties to even on the exact binary value)', () => {
    expect(pyFloatRepr(pyRound(3.21e-5, 5))).toBe('3e-05');
    expect(pyRound(0.015625, 5)).toBe(0.01562); // 1/64 is an exact tie
    expect(pyRound(0.375, 2)).toBe(0.38);
    expect(pyRound(0.998123, 5)).toBe(0.99812);
  });
});

// The rows of the examples of §3.5 and §8.3 (both tables are made from the same values).
const ROWS = [
  ['317_HzCalibration', { node: 'Conv_2', threshold: 3.12345, qtype: 'int8', 'cosine-similarity': 0.99812, mse: 0.00123 }],
  ['400_HzCalibration', { node: 'Conv_5;Add_7', threshold: 11.5, qtype: 'int16', 'cosine-similarity': 0.99991, mse: 3.21e-5 }],
];
const METRICS = ['cosine-similarity', 'mse'];

describe('text tables', () => {
  it('§8.3 sensitivity_of_<type>.log: the documented example', () => {
    expect(formatSensitivityLog('activation', ROWS, METRICS)).toBe([
      '===================activation===================',
      'Node               cosine-similarity  mse       ',
      '------------------------------------------------',
      '317_HzCalibration  0.9981200098991394 0.001230000052601099',
      '400_HzCalibration  0.9999099969863892 3.2100000680657104e-05',
    ].map((l) => `${l}\n`).join(''));
  });
  it('§3.5 verbose table: the documented example', () => {
    expect(formatVerboseTable('activation', ROWS, METRICS)).toBe([
      '',
      '===============================node sensitivity================================',
      'activation         node          threshold  qtype  cosine-similarity  mse      ',
      '-------------------------------------------------------------------------------',
      '317_HzCalibration  Conv_2        3.12345    int8   0.99812            0.00123  ',
      '400_HzCalibration  Conv_5;Add_7  11.5       int16  0.99991            3e-05    ',
    ].join('\n'));
  });
  it('§8.3: Node column at least 4 wide, names over 50 shown as ... + last 47, symmetric title', () => {
    const long = `${'x'.repeat(40)}_very_long_calibration_node_name`;
    const text = formatSensitivityLog('node', [['A', { mse: 'nan' }], [long, { mse: 'inf' }]], ['mse']);
    const lines = text.split('\n');
    // widths: Node = 50 (capped), mse = max(3, len('nan'), len('inf')) = 3 -> 52 + 5 = 57
    expect(lines[2]).toBe('-'.repeat(57));
    expect(lines[0]).toBe(`${'='.repeat(26)}node${'='.repeat(26)}`); // int((57 - 4) / 2) = 26: one short
    expect(lines[3]).toBe(`${'A'.padEnd(52)}nan  `);
    expect(lines[4]).toBe(`...${long.slice(-47)}  inf  `);
  });
});
