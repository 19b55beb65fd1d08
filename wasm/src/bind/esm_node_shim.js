// Emscripten 3.1.6's ES6 output refers to __dirname, which does not exist in Node ES modules.
var __dirname = (typeof import.meta !== 'undefined' && import.meta.url && import.meta.url.startsWith('file:')) ? new URL('.', import.meta.url).pathname : '';
