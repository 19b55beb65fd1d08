// ESLint flat config: the repository's JavaScript conventions as the code is written (ES modules,
// 2-space indentation, single quotes, semicolons, `const` where nothing is reassigned, `===`).
// Checked by tests/js/style.test.mjs on the files listed in scripts/style-checked.txt.
const readonly = (names) => Object.fromEntries(names.map((n) => [n, 'readonly']));

// Node's globals as this Node has them, plus the browser's that pages, workers and the plugin use.
const GLOBALS = {
  ...readonly(Object.getOwnPropertyNames(globalThis)),
  ...readonly(['window', 'document', 'self', 'navigator', 'location', 'HTMLElement', 'Element', 'Node',
    'Event', 'CustomEvent', 'KeyboardEvent', 'MouseEvent', 'DragEvent', 'File', 'FileReader', 'FileReaderSync', 'FileList',
    'DataTransfer', 'Worker', 'Image', 'Path2D', 'ResizeObserver', 'MutationObserver', 'IntersectionObserver',
    'requestAnimationFrame', 'cancelAnimationFrame', 'getComputedStyle', 'OffscreenCanvas', 'XMLSerializer',
    'DOMParser', 'SVGElement', 'HTMLCanvasElement', 'HTMLInputElement', 'ImageData', 'createImageBitmap',
    'importScripts', 'postMessage', 'onmessage', 'alert', 'confirm', 'localStorage', 'sessionStorage',
    'indexedDB', 'caches', 'matchMedia', 'devicePixelRatio', 'innerWidth', 'innerHeight', 'scrollX', 'scrollY',
    'NodeFilter', 'Range', 'Selection', 'getSelection', 'history', 'open', 'close', 'print', 'CSS']),
};

export default [
  { ignores: ['node_modules/**', 'build/**', 'dist/**', '.cache/**', 'tests/artifacts/**'] },
  {
    files: ['**/*.mjs', '**/*.js'],
    languageOptions: { ecmaVersion: 'latest', sourceType: 'module', globals: GLOBALS },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      'no-undef': 'error',
      'no-unused-vars': ['error', { args: 'none', caughtErrors: 'none', ignoreRestSiblings: true }],
      'no-var': 'error',
      'prefer-const': ['error', { destructuring: 'all' }],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      semi: ['error', 'always'],
      quotes: ['error', 'single', { avoidEscape: true, allowTemplateLiterals: true }],
      indent: ['error', 2, { SwitchCase: 1, ignoredNodes: ['TemplateLiteral *'] }],
      'comma-dangle': ['error', 'always-multiline'],
      'no-trailing-spaces': 'error',
      'eol-last': 'error',
    },
  },
];
