// Python / numpy number-to-text rules the original's tables are made of (§3.5, §8.3):
// repr() of a Python float, str() of a numpy float32 scalar, and round(x, n).
// Result JSON numbers are float32 values; non-finite ones arrive as the strings "inf"/"-inf"/"nan"
// (read with result.mjs's toNumber).
import { toNumber } from './result.mjs';


function nonFinite(x) {
  if (Number.isNaN(x)) return 'nan';
  return x > 0 ? 'inf' : '-inf';
}

// Shortest digits (no dot) and the exponent of the first digit, from a toExponential/toPrecision text.
function splitDigits(expText) {
  const [mant, exp] = expText.split('e');
  return { digits: mant.replace('.', '').replace(/0+$/, '') || '0', exp: Number(exp) };
}

// Lays out digits d1d2... (value d1.d2... x 10^exp) positionally or in Python's exponent form.
function layout(sign, digits, exp, scientific) {
  if (scientific) {
    const mant = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    const e = Math.abs(exp) < 10 ? `0${Math.abs(exp)}` : String(Math.abs(exp));
    return `${sign}${mant}e${exp < 0 ? '-' : '+'}${e}`;
  }
  let int;
  let frac;
  if (exp < 0) {
    int = '0';
    frac = '0'.repeat(-exp - 1) + digits;
  } else {
    int = digits.slice(0, exp + 1).padEnd(exp + 1, '0');
    frac = digits.slice(exp + 1);
  }
  return `${sign}${int}.${frac || '0'}`;
}

// Python's repr(float): shortest round-trip digits; exponent form when the exponent is < -4 or >= 16.
export function pyFloatRepr(value) {
  const x = toNumber(value);
  if (!Number.isFinite(x)) return nonFinite(x);
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const { digits, exp } = splitDigits(Math.abs(x).toExponential());
  return layout(x < 0 ? '-' : '', digits, exp, exp < -4 || exp >= 16);
}

// str(numpy.float32(x)): the shortest digits that round-trip as float32; positional when
// 1e-4 <= |x| < 1e16 (or 0), else the exponent form.
export function numpyFloat32Str(value) {
  const x = Math.fround(toNumber(value));
  if (!Number.isFinite(x)) return nonFinite(x);
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const a = Math.abs(x);
  let text = a.toExponential();
  for (let p = 1; p <= 9; p++) {
    const t = a.toPrecision(p);
    if (Math.fround(Number(t)) === a) {
      text = Number(t).toExponential();
      break;
    }
  }
  const { digits, exp } = splitDigits(text);
  return layout(x < 0 ? '-' : '', digits, exp, !(a >= 1e-4 && a < 1e16));
}

// Python's round(x, n) on a float: the exact binary value rounded half to even.
export function pyRound(value, n) {
  const x = toNumber(value);
  if (!Number.isFinite(x) || Math.abs(x) >= 1e21) return x;
  const a = Math.abs(x);
  let text = a.toFixed(n); // nearest; an exact tie goes away from zero
  const exact = a.toFixed(Math.min(100, n + 60));
  const rest = exact.slice(exact.indexOf('.') + 1 + n);
  if (/^50*$/.test(rest) && Number(text.slice(-1)) % 2 === 1) {
    text = exact.slice(0, exact.indexOf('.') + 1 + n); // the tie rounds to the even neighbour below
  }
  const r = Number(text);
  return x < 0 ? -r : r;
}
