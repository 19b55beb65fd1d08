// The cause hints ("Why") and the calibration-method comparison in the page: dock tabs over the
// analyses' worker pool, "Apply" and "Open in what-if" going to the page's what-if view.
import './explain.css';
import { registerPanel } from '../shell.mjs';
import { runner } from '../analysis/index.mjs';
import { whatIf } from '../whatif/index.mjs';
import { mountWhyPanel } from './why_panel.mjs';
import { mountMethodsPanel } from './methods_panel.mjs';

registerPanel({ id: 'why', title: 'Why', mount: (el, st) => mountWhyPanel(el, st, runner, whatIf) });
registerPanel({ id: 'methods', title: 'Calibration methods', mount: (el, st) => mountMethodsPanel(el, st, runner, whatIf) });
