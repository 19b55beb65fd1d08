// Comparing two results in the page: the dock tab "Compare".
import '../whatif/whatif.css';
import { registerPanel } from '../shell.mjs';
import { mountComparePanel } from './panel.mjs';

registerPanel({ id: 'compare', title: 'Compare', mount: (el, st) => mountComparePanel(el, st) });
