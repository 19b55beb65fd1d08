// Subgraphs in the page's graph (Chromium, dist/ptqscope.html from file://), on the control-flow
// fixture (a Loop whose body reads the main graph's weights, an If with two branches): the nodes
// with a body are marked; a double-click on the Loop shows its body's nodes; the path bar goes back
// to the main graph; on the If, the then-branch's path bar offers the else-branch. The expected
// node lists come from the wasm core's graphJson in Node.
import path from 'node:path';
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { fixture, openSession } from '../helpers.mjs';
import { openApp } from './browser.mjs';

let app;
let graph;
const entry = fixture('loop_if_cnn');

beforeAll(async () => {
  app = await openApp();
  const { session } = await openSession(entry);
  graph = JSON.parse(session.graphJson());
  session.delete();
});

afterAll(async () => {
  await app?.context.close();
});

// The boxes a graph is drawn with: its nodes but Constants (folded into their consumers' rows).
const boxesOf = (g) => g.nodes.filter((n) => n.op_type !== 'Constant').map((n) => n.name).sort();
const nodeOf = (op) => graph.nodes.find((n) => n.op_type === op);

describe('subgraphs in the page', () => {
  it('a double-click opens a Loop\'s body and an If\'s branches; the path bar goes back', async () => {
    const { page } = app;
    const ready = (p) => page.waitForFunction((want) => {
      const el = document.querySelector('#graph');
      return el.dataset.state === 'ready' && (el.dataset.path ?? '') === want;
    }, p);
    const drawn = () => page.$$eval('#graph .node-node', (gs) => gs.map((g) => g.dataset.name).sort());
    await page.setInputFiles('#open-model', entry.model);
    await page.waitForFunction((name) => document.querySelector('#model-info').textContent.startsWith(`${name} · `), path.basename(entry.model));
    await ready('');
    expect(await drawn()).toEqual(boxesOf(graph));
    const loop = nodeOf('Loop');
    const branch = nodeOf('If');
    expect(await page.$$eval('#graph .node-has-body', (gs) => gs.map((g) => g.dataset.name).sort())).toEqual([branch.name, loop.name].sort());
    expect(await page.isHidden('#graph .graph-path')).toBe(true);

    await page.dblclick(`#graph .node[data-name="${loop.name}"]`);
    await ready(`${loop.name}.body`);
    expect(await drawn()).toEqual(boxesOf(loop.attributes.body.graph));
    expect(await page.textContent('#graph .graph-path')).toBe(`${graph.name || 'main graph'} › ${loop.name} · body`);
    // The double-click selected the Loop; a click in its body does not change the main graph's
    // selection (a body's names are its own).
    expect(await page.evaluate(() => window.ptqscope.state.get('selection'))).toBe(loop.name);
    await page.click(`#graph .node-node >> nth=0`);
    expect(await page.evaluate(() => window.ptqscope.state.get('selection'))).toBe(loop.name);
    await page.click('#graph .graph-path button >> nth=0');
    await ready('');
    expect(await drawn()).toEqual(boxesOf(graph));

    await page.dblclick(`#graph .node[data-name="${branch.name}"]`);
    await ready(`${branch.name}.then_branch`);
    expect(await drawn()).toEqual(boxesOf(branch.attributes.then_branch.graph));
    await page.click('#graph .graph-path .graph-path-sibling');
    await ready(`${branch.name}.else_branch`);
    expect(await drawn()).toEqual(boxesOf(branch.attributes.else_branch.graph));
    // Backspace goes up one level; a search result is a main-graph node and brings the main graph back.
    await page.locator('#graph svg.graph-canvas').click({ position: { x: 5, y: 5 } });
    await page.keyboard.press('Backspace');
    await ready('');
    await page.dblclick(`#graph .node[data-name="${loop.name}"]`);
    await ready(`${loop.name}.body`);
    await page.evaluate((name) => window.ptqscope.state.set('focus', name), branch.name);
    await ready('');
    expect(await drawn()).toEqual(boxesOf(graph));
  });
});
