// fmt.js — the number formats the page must print, written independently
// of web/js/fmt.js: cli/table.c's cli_fmt_num, and signed % changes.
'use strict';

/** cli/table.c's cli_fmt_num in JavaScript: four significant digits,
 *  trailing zeros dropped, an SI suffix instead of digit groups for large
 *  values (k from 1e5, shown as thousands; M, G, T), %.4g below 1e-4 and
 *  from 1e15. */
function cliFmtNum(v) {
  if (Number.isNaN(v)) return 'nan';
  if (!Number.isFinite(v)) return v > 0 ? 'inf' : '-inf';
  const a = Math.abs(v);
  if (a === 0) return '0';
  if (a < 1e-4 || a >= 1e15) return cFmtG4(v);
  const sign = v < 0 ? '-' : '';
  // The suffix is picked after rounding to four digits: 999960 is "1M".
  const rounded = Number(a.toPrecision(4));
  for (const [scale, suffix] of [[1e12, 'T'], [1e9, 'G'], [1e6, 'M'], [1e5, 'k']]) {
    if (rounded >= scale) return sign + fourDigits(a / (scale === 1e5 ? 1e3 : scale)) + suffix;
  }
  return sign + fourDigits(a);
}

/** cli/table.c's four_digits: "%.*f" with 3 - floor(log10(a)) decimals
 *  (at least 0), trailing zeros and a bare dot dropped. */
function fourDigits(a) {
  const decimals = Math.max(0, 3 - Math.floor(Math.log10(a)));
  return stripZeros(a.toFixed(decimals));
}

function stripZeros(s) {
  return s.includes('.') ? s.replace(/0+$/, '').replace(/\.$/, '') : s;
}

/** C's printf("%.4g", v): exponent form when the exponent is below -4 or
 *  at least 4, with a sign and at least two exponent digits ("1e-05"). */
function cFmtG4(v) {
  const [mant, exp] = v.toExponential(3).split('e');
  const x = Number(exp);
  if (x < -4 || x >= 4) {
    const digits = String(Math.abs(x)).padStart(2, '0');
    return stripZeros(mant) + 'e' + (x < 0 ? '-' : '+') + digits;
  }
  return stripZeros(v.toFixed(3 - x));
}

/** A signed % change: two decimals below 10, one below 100, none above. */
function fmtChange(p) {
  if (typeof p !== 'number' || !Number.isFinite(p)) return '-';
  const a = Math.abs(p);
  const s = a.toFixed(a >= 100 ? 0 : a >= 10 ? 1 : 2);
  if (Number(s) === 0) return '0.00';
  return (p > 0 ? '+' : '-') + s;
}

/** "+5.00 % [+3.90, +6.12]". */
function fmtChangeInterval(p, lo, hi) {
  const head = fmtChange(p) + ' %';
  if (typeof lo !== 'number' || typeof hi !== 'number') return head;
  return `${head} [${fmtChange(lo)}, ${fmtChange(hi)}]`;
}

/** The change cell of an API object o with an interval: the bounds when
 *  the server calls them usable, else its words in their place:
 *  "+82 % (n = 2: too few rounds for an interval)". */
function fmtChangeOrNote(o, p, lo, hi) {
  if (o.usable === false) return fmtChange(p) + ' %' + (o.interval_note ? ` (${o.interval_note})` : '');
  return fmtChangeInterval(p, lo, hi);
}

module.exports = { cliFmtNum, fmtChange, fmtChangeInterval, fmtChangeOrNote };
