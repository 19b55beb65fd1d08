// Number formatting shared by every chart, table and the report. Parsing the result schema's numbers
// (non-finite ones are the strings "inf", "-inf" and "nan") and file-safe names are the result
// module's (web/pipeline/result.mjs), re-exported here for the chart modules.
import { isNonFiniteText, safeName, toNumber } from '../pipeline/result.mjs';

export { safeName, toNumber };

export const isFiniteNumber = (v) => Number.isFinite(toNumber(v));

// Text for HTML (the report and the static tables): & < > " escaped; null and undefined as ''.
export const escapeHtml = (s) => String(s ?? '').replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }[c]));

// Text of a value for tables and tooltips: non-finite as the schema spells it, numbers with at
// most `digits` significant digits (shortest form), strings as they are.
export function formatValue(v, digits = 6) {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string' && !isNonFiniteText(v)) return v;
  const n = toNumber(v);
  if (Number.isNaN(n)) return 'nan';
  if (n === Infinity) return 'inf';
  if (n === -Infinity) return '-inf';
  if (Number.isInteger(n) && Math.abs(n) < 1e15) return String(n);
  const s = Math.abs(n) < 1e-4 ? n.toExponential(digits - 1) : n.toPrecision(digits);
  // Drop trailing zeros of the mantissa: "0.998100" -> "0.9981", "1.20000e-5" -> "1.2e-5".
  return s.replace(/(\.\d*?)0+(e|$)/, '$1$2').replace(/\.(e|$)/, '$1');
}

// Coordinates in the SVG are rounded to 2 decimals: identical text for identical input and small
// files (a histogram has 1024 bars per series).
export const r2 = (v) => Math.round(v * 100) / 100;

// A deterministic text width estimate (DejaVu Sans averages ~0.6 em per character), so browser,
// linkedom and resvg lay out identically; no getBBox.
export function textWidth(text, fontSize = 11) {
  return String(text).length * fontSize * 0.6;
}

// Truncates long labels from the left, keeping the distinctive end of node names.
export function ellipsize(text, maxChars) {
  const s = String(text);
  return s.length <= maxChars ? s : `…${s.slice(s.length - maxChars + 1)}`;
}
