// Emscripten 3.1.6's ES6 output refers to __dirname, which does not exist in Node ES modules.
/* eslint-disable no-var, no-unused-vars -- prepended to that output, which reads the var */
var __dirname = (typeof import.meta !== 'undefined' && import.meta.url && import.meta.url.startsWith('file:')) ? new URL('.', import.meta.url).pathname : '';
