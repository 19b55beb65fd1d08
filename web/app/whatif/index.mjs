// What-if and fix in the page: the dock tabs "What-if" and "Fix" over the analyses' worker pool.
import './whatif.css';
import { state } from '../state.mjs';
import { registerPanel } from '../shell.mjs';
import { runner } from '../analysis/index.mjs';
import { createWhatIfController } from './controller.mjs';
import { mountWhatIfPanel } from './panel.mjs';
import { mountFixPanel } from './fix_panel.mjs';

export const whatIf = createWhatIfController(state, runner);

// Where this build ships onnxruntime-web (the static build: its assets folder; the single-file page
// carries none and says why): "Check with onnxruntime" loads it from there when asked.
const onnxruntime = document.querySelector('meta[name="ptqscope-onnxruntime"]');
const folder = onnxruntime?.getAttribute('content');
state.set('onnxruntime', folder && !folder.includes('%')
  ? { url: new URL(folder, document.baseURI).href }
  : { unavailable: onnxruntime?.dataset.unavailable || 'This build of the page does not carry onnxruntime-web.' });

registerPanel({ id: 'whatif', title: 'What-if', mount: (el, st) => mountWhatIfPanel(el, st, whatIf, runner) });
registerPanel({ id: 'fix', title: 'Fix', mount: (el, st) => mountFixPanel(el, st, runner, whatIf) });
