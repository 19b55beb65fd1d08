// The wasm core's fix search stopped through Session.analyze's shouldCancel (docs/wasm-api.md), on the
// calibrated digits CNN: asked before every evaluation, a truthy answer after the first evaluation
// event ends the search there ("cancelled": true, one evaluation, no configuration to use), and the
// same session then answers the same request in full, as a fresh session does. Also: the export
// formats the page offers are the core's (describe().export_formats, the same names as exportFormats()).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixture, openSession } from './helpers.mjs';
import { EXPORT_FORMATS } from '../../web/pipeline/catalog.mjs';

let opened;
let fresh;

beforeAll(async () => {
  opened = await openSession(fixture('digits_cnn_calibrated'));
  fresh = await openSession(fixture('digits_cnn_calibrated'));
});

afterAll(() => {
  opened?.session.delete();
  fresh?.session.delete();
});

// A target between the as-calibrated mean output cosine and 1: the search needs evaluations.
function request(session) {
  const start = JSON.parse(session.analyze(JSON.stringify({ analysis: 'what_if', options: { data_num: 1 } }))).what_if.mean['cosine-similarity'];
  expect(start).toBeLessThan(1);
  return { analysis: 'fix', options: { target: `cosine-similarity>=${start + (1 - start) / 2}`, data_num: 1 } };
}

describe('fix search cancelled in the core', () => {
  it('stops before the next evaluation, keeps no configuration, and leaves the session usable', () => {
    const { session } = opened;
    const req = JSON.stringify(request(session));
    let evaluated = 0;
    let asked = 0;
    const cancelled = JSON.parse(session.analyze(req, (e) => {
      if (JSON.parse(e).row !== null) evaluated++;
    }, () => {
      asked++;
      return evaluated >= 1;
    }));
    expect(cancelled.cancelled).toBe(true);
    expect(cancelled.config).toBeNull();
    expect(cancelled.fix.evaluations).toBe(1);
    expect(evaluated).toBe(1);
    expect(asked).toBeGreaterThan(1);

    const again = JSON.parse(session.analyze(req));
    const reference = JSON.parse(fresh.session.analyze(req));
    expect(again.cancelled).toBe(false);
    expect(again.fix.reached).toBe(true);
    expect(again.fix.evaluations).toBeGreaterThan(1);
    expect(again.fix).toEqual(reference.fix);
    expect(again.config).toEqual(reference.config);
  });

  it('rethrows an exception of shouldCancel after stopping', () => {
    const { session } = opened;
    const req = JSON.stringify(request(session));
    expect(() => session.analyze(req, undefined, () => {
      throw new Error('host failed');
    })).toThrow('host failed');
    expect(() => session.analyze(req, undefined, 42)).toThrow('shouldCancel must be a function');
    expect(JSON.parse(session.analyze(req)).cancelled).toBe(false);
  });

  it('offers the export formats of the core', () => {
    expect(EXPORT_FORMATS.map((f) => f.name)).toEqual(opened.ptq.exportFormats());
    for (const f of EXPORT_FORMATS) {
      expect(Object.keys(f).sort()).toEqual(['binary', 'label', 'media_type', 'name', 'suffix', 'thresholds']);
      expect(f.suffix.startsWith('.')).toBe(true);
      expect(typeof f.thresholds).toBe('boolean');
    }
  });
});
