// The core's description of itself (ptq.describe(), docs/wasm-api.md): metrics and their better
// direction, node types, analyses with their options and defaults. In Node (CLI, tests) it is asked
// of the wasm module when this module is first imported; the page and plugin bundles carry the
// document the same wasm module gave at build time (describe_vite.mjs replaces this file), so every
// face reads the same facts from the core. Use it through catalog.mjs.
import { loadPtqModule } from '../cli/lib/wasm.mjs';

export default JSON.parse((await loadPtqModule()).describe());
