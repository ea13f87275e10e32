// fmt.js — how numbers, changes, times and durations are written.
//
// Numbers follow the CLI (cli/table.c cli_fmt_num) so the page and
// `hvbench report` print the same text for the same value.

/** cli_fmt_num: four significant digits with trailing zeros dropped, an SI
 *  suffix from 1e5 (k, M, G, T; chosen after rounding, so 999960 is "1M"),
 *  and C's "%.4g" exponent form below 1e-4 and from 1e15. No digit
 *  grouping: a comma inside "[1,503, 1,543]" would be ambiguous. A value
 *  that is not a finite number is "-". */
export function num(v) {
  if (typeof v !== 'number' || !isFinite(v)) return '-';
  const a = Math.abs(v);
  if (a === 0) return '0';
  if (a < 1e-4 || a >= 1e15) return exp4(v);
  const sign = v < 0 ? '-' : '';
  const rounded = Number(a.toPrecision(4));
  for (const [scale, suffix] of [[1e12, 'T'], [1e9, 'G'], [1e6, 'M'], [1e5, 'k']]) {
    if (rounded >= scale) return sign + fourDigits(a / (scale === 1e5 ? 1e3 : scale)) + suffix;
  }
  return sign + fourDigits(a);
}

function fourDigits(a) {
  const decimals = Math.max(0, 3 - Math.floor(Math.log10(a)));
  return stripZeros(a.toFixed(decimals));
}

function stripZeros(s) {
  return s.includes('.') ? s.replace(/0+$/, '').replace(/\.$/, '') : s;
}

/** printf("%.4g") for the exponent range: "1e-05", "1.5e+15". */
function exp4(v) {
  const [mant, e] = v.toExponential(3).split('e');
  const x = Number(e);
  return stripZeros(mant) + 'e' + (x < 0 ? '-' : '+') + String(Math.abs(x)).padStart(2, '0');
}

/** A percentage without sign: "13" from 10 up, "1.3" from 0.1, else two
 *  significant digits. */
export function pct(p) {
  if (typeof p !== 'number' || !isFinite(p)) return '-';
  const a = Math.abs(p);
  if (a >= 10) return p.toFixed(0);
  if (a >= 0.1) return p.toFixed(1);
  return String(Number(p.toPrecision(2)));
}

/** A signed % change: "+5.03", "-0.41", "+12.5", "+104"; "-" when absent. */
export function change(p) {
  if (typeof p !== 'number' || !isFinite(p)) return '-';
  const a = Math.abs(p);
  const s = a.toFixed(a >= 100 ? 0 : a >= 10 ? 1 : 2);
  if (Number(s) === 0) return '0.00';
  return (p > 0 ? '+' : '-') + s;
}

/** "+5.03 % [+3.90, +6.12]" from a change and its interval (either bound
 *  missing: the change alone). */
export function changeWithInterval(p, lo, hi) {
  const head = change(p) + ' %';
  if (typeof lo !== 'number' || typeof hi !== 'number') return head;
  return head + ' [' + change(lo) + ', ' + change(hi) + ']';
}

/** A % change with its interval when the server calls it usable (o's
 *  usable, as every report and compare object with an interval has it),
 *  else with the server's words why there is none in its place:
 *  "+107.2 % (n = 2: too few rounds for an interval)". */
export function changeOrNote(p, lo, hi, o) {
  if (o && o.usable === false) return change(p) + ' %' + (o.interval_note ? ' (' + o.interval_note + ')' : '');
  return changeWithInterval(p, lo, hi);
}

/** An interval [lo, hi] as fmt(lo)–fmt(hi) in brackets when o's interval
 *  is usable and has both bounds, else the server's words (interval_note)
 *  or "-". */
export function boundsOrNote(o, lo, hi, f) {
  if (o && o.usable === false) return o.interval_note || 'no interval';
  if (typeof lo !== 'number' || typeof hi !== 'number') return '-';
  return '[' + f(lo) + ', ' + f(hi) + ']';
}

/** An efficiency (1 = as fast as the baseline) as a percentage with one
 *  decimal: 0.9712 → "97.1 %". */
export function eff(v) {
  if (typeof v !== 'number' || !isFinite(v)) return '-';
  return (100 * v).toFixed(1) + ' %';
}

/** An ISO timestamp as the CLI writes it (cli/table.c cli_fmt_time: local
 *  "2026-11-29 19:40:12"), followed by the zone it is in: "UTC", else the
 *  offset from UTC ("+01:00", "-05:30"). Text that is not a time is shown
 *  as it is; nothing at all is "-". */
export function time(iso) {
  const d = new Date(iso);
  if (!iso || isNaN(d.getTime())) return iso || '-';
  const two = (n) => String(n).padStart(2, '0');
  const off = -d.getTimezoneOffset();
  const zone = off === 0 ? 'UTC'
    : (off > 0 ? '+' : '-') + two(Math.floor(Math.abs(off) / 60)) + ':' + two(Math.abs(off) % 60);
  return d.getFullYear() + '-' + two(d.getMonth() + 1) + '-' + two(d.getDate()) + ' ' +
    two(d.getHours()) + ':' + two(d.getMinutes()) + ':' + two(d.getSeconds()) + ' ' + zone;
}

/** A free number (a fact, an observed value, a setting read back): an
 *  integer as it is, since counts, sizes and ids are exact; any other
 *  number to its meaningful digits as num() writes it, so a measured
 *  2.0275403780000003 reads "2.028". Anything else as its text. */
export function value(v) {
  if (typeof v !== 'number') return v === null || v === undefined ? '-' : String(v);
  return Number.isSafeInteger(v) ? String(v) : num(v);
}

/** Seconds as "850 ms", "12.3 s", "4 min 05 s", "2 h 03 min", "3 d 4 h". */
export function duration(s) {
  if (typeof s !== 'number' || !isFinite(s) || s < 0) return '-';
  if (s < 1) return Math.round(s * 1000) + ' ms';
  if (s < 60) return (s < 10 ? s.toFixed(1) : s.toFixed(0)) + ' s';
  const m = Math.floor(s / 60);
  if (m < 60) return m + ' min ' + String(Math.floor(s % 60)).padStart(2, '0') + ' s';
  const h = Math.floor(m / 60);
  if (h < 48) return h + ' h ' + String(m % 60).padStart(2, '0') + ' min';
  return Math.floor(h / 24) + ' d ' + (h % 24) + ' h';
}

/** Seconds between two ISO times, or NaN. */
export function seconds(fromIso, toIso) {
  const a = Date.parse(fromIso);
  const b = Date.parse(toIso);
  return isNaN(a) || isNaN(b) ? NaN : (b - a) / 1000;
}
