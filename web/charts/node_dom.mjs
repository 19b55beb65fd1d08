// Node only: a DOM document (linkedom) for rendering the charts and the report without a browser.
// Kept apart from the chart modules so browser bundles never pull linkedom in.
import { parseHTML } from 'linkedom';

export function createDocument() {
  return parseHTML('<!doctype html><html><head></head><body></body></html>').document;
}
