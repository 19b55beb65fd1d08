// What-if and fix in the page: the dock tabs "What-if" and "Fix" over the analyses' worker pool.
import './whatif.css';
import { state } from '../state.mjs';
import { registerPanel } from '../shell.mjs';
import { runner } from '../analysis/index.mjs';
import { createWhatIfController } from './controller.mjs';
import { mountWhatIfPanel } from './panel.mjs';
import { mountFixPanel } from './fix_panel.mjs';

export const whatIf = createWhatIfController(state, runner);

registerPanel({ id: 'whatif', title: 'What-if', mount: (el, st) => mountWhatIfPanel(el, st, whatIf, runner) });
registerPanel({ id: 'fix', title: 'Fix', mount: (el, st) => mountFixPanel(el, st, runner, whatIf) });
