import { describe, it, expect, vi } from 'vitest';
import { createStore, DEFAULTS } from '../../../web/app/state.mjs';
import { registerPanel, registerSidebarSection, registeredPanels, registeredSections, onRegister } from '../../../web/app/shell.mjs';

describe('state store', () => {
  it('gets, sets and notifies listeners with (value, previous, key)', () => {
    const s = createStore({ selection: null });
    const seen = [];
    s.on('selection', (v, prev, key) => seen.push([v, prev, key]));
    s.set('selection', 'Conv_0');
    s.set('selection', 'Relu_1');
    expect(s.get('selection')).toBe('Relu_1');
    expect(seen).toEqual([['Conv_0', null, 'selection'], ['Relu_1', 'Conv_0', 'selection']]);
  });

  it('re-notifies on set with the same value (focus re-centres) but not on update', () => {
    const s = createStore();
    const fn = vi.fn();
    s.on('focus', fn);
    s.set('focus', 'a');
    s.set('focus', 'a');
    s.update('focus', 'a');
    s.update('focus', 'b');
    expect(fn.mock.calls.map((c) => c[0])).toEqual(['a', 'a', 'b']);
  });

  it('unsubscribes, and a wildcard listener sees every key', () => {
    const s = createStore();
    const fn = vi.fn();
    const all = vi.fn();
    const off = s.on('heat', fn);
    s.on('*', all);
    s.set('heat', 1);
    off();
    s.set('heat', 2);
    expect(fn).toHaveBeenCalledTimes(1);
    expect(all.mock.calls.map((c) => c[2])).toEqual(['heat', 'heat']);
  });

  it('a throwing listener does not stop the others and is reported in state "error"', () => {
    const s = createStore();
    const after = vi.fn();
    const err = vi.spyOn(console, 'error').mockImplementation(() => {});
    s.on('results', () => { throw new Error('boom'); });
    s.on('results', after);
    s.set('results', {});
    expect(after).toHaveBeenCalled();
    expect(s.get('error')).toMatch(/results.*boom/);
    err.mockRestore();
  });

  it('declares the keys shared across the app', () => {
    for (const k of ['graph', 'modelBytes', 'calibrationFiles', 'selection', 'picked', 'heat', 'results', 'error', 'focus']) {
      expect(k in DEFAULTS).toBe(true);
    }
  });
});

describe('shell registries', () => {
  it('registers panels and sidebar sections, rejects duplicates and missing hooks, tells late listeners', () => {
    const seen = [];
    const off = onRegister((kind, item) => seen.push(`${kind}:${item.id}`));
    registerPanel({ id: 'test-panel', title: 'T', mount() {} });
    registerSidebarSection({ id: 'test-section', render() {} });
    off();
    expect(registeredPanels().map((p) => p.id)).toContain('test-panel');
    expect(registeredSections().map((p) => p.id)).toContain('test-section');
    expect(seen).toEqual(['panel:test-panel', 'section:test-section']);
    expect(() => registerPanel({ id: 'test-panel', mount() {} })).toThrow(/already registered/);
    expect(() => registerPanel({ id: 'x' })).toThrow(/mount/);
    expect(() => registerSidebarSection({ id: 'y' })).toThrow(/render/);
  });
});
