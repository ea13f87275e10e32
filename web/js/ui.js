// ui.js — the pieces every page is made of: badges, progress bars, the
// loading / empty / error / not-available states, links by id, key-value
// lists and the copy button.

import { el } from './dom.js';
import * as fmt from './fmt.js';

// What each status of a plan, job or step means (docs/api.md), said in
// the badge's title.
const STATUS = {
  queued: 'queued: nothing of it has started yet',
  running: 'running: a worker is on it now',
  done: 'done: it ran to the end',
  failed: 'failed: it ended, and something of it failed',
  cancelled: 'cancelled: stopped before its end',
  waiting: 'waiting: for a target or a host to be free',
};
export const ACTIVE = new Set(['queued', 'running']);

/** A plan, job or step status as a coloured badge with its word, its
 *  meaning in the title. */
export function badge(status) {
  const s = String(status || 'unknown');
  const known = Object.prototype.hasOwnProperty.call(STATUS, s);
  return el('span', { class: 'badge status-' + (known ? s : 'unknown'),
    title: known ? STATUS[s] : 'a status this page does not know: ' + s }, s);
}

/** A badge with class cls, its words and what they mean (title): for
 *  states that are not a plan's, job's or step's status. */
export function tagBadge(cls, words, meaning) {
  return el('span', { class: 'badge ' + cls, title: meaning }, words);
}

/** When a target's worker was last seen, with a "stale" badge when the
 *  server has not seen it for longer than its lease (the target's stale). */
export function lastSeen(t) {
  return el('span', { class: 'last-seen' }, timeEl(t.last_seen),
    t.stale ? [' ', el('span', { class: 'badge stale', title: 'its worker has not called the server for longer than a lease' }, 'stale')] : null);
}

const VERDICTS = {
  better: ['better', 'better: the whole interval of the change is beyond the margin, in the good direction'],
  worse: ['worse', 'worse: the whole interval of the change is beyond the margin, in the bad direction'],
  no_effect: ['no effect', 'no effect: the whole interval of the change is within the margin'],
  inconclusive: ['inconclusive', 'inconclusive: the interval of the change reaches across the margin; more rounds would decide it'],
};

/** A verdict badge: colour plus the words, never colour alone; what the
 *  verdict means in its title. */
export function verdictBadge(v) {
  const known = Object.prototype.hasOwnProperty.call(VERDICTS, v);
  return el('span', { class: 'verdict verdict-' + (known ? v : 'none'),
    title: known ? VERDICTS[v][1] : 'no verdict: nothing to compare, or no interval to judge by' },
  known ? VERDICTS[v][0] : 'no verdict');
}

/** The CSS class of a verdict, for rows and chart marks. */
export function verdictClass(v) {
  return 'verdict-' + (Object.prototype.hasOwnProperty.call(VERDICTS, v) ? v : 'none');
}

const DISRUPTION = {
  live: 'live: applied to running guests',
  restart: 'restart: guests are restarted',
  host: 'host: a host setting',
  reboot: 'reboot: needs a reboot or module reload',
};

/** The disruption class of a factor as a badge with its meaning. The
 *  server sends none (null) for a factor its catalog does not describe
 *  (server/report_advice.c: no hv_factor_find entry): that is said. */
export function disruptionBadge(d) {
  const known = Object.prototype.hasOwnProperty.call(DISRUPTION, d);
  return el('span', { class: 'tag disruption-' + (known ? d : 'unknown'),
    title: known ? DISRUPTION[d] : 'this factor is not in the factor catalog: how applying it disrupts guests is not known' },
  known ? d : 'disruption not known');
}

/** A progress bar of a plan's job counts. */
export function progressBar(c, label, status) {
  return el('progress', {
    class: 'progress status-' + (Object.prototype.hasOwnProperty.call(STATUS, status) ? status : 'unknown'),
    max: Math.max(c.total, 1), value: c.done + c.failed + c.cancelled, 'aria-label': label,
  });
}

/** Counts of a plan summary with absent members as 0. */
export function jobCounts(plan) {
  const j = (plan && plan.jobs) || {};
  const n = (k) => (Number.isFinite(j[k]) ? j[k] : 0);
  return {
    total: n('total'), queued: n('queued'), running: n('running'),
    done: n('done'), failed: n('failed'), cancelled: n('cancelled'),
  };
}

/** Links by id: the href is only ever "#/kind/<digits>". */
export function planLink(id, text) {
  return Number.isSafeInteger(id) ? el('a', { href: '#/plans/' + id }, text ?? String(id)) : text ?? '-';
}
export function jobLink(id, text) {
  return Number.isSafeInteger(id) ? el('a', { href: '#/jobs/' + id }, text ?? String(id)) : text ?? '-';
}
export function targetLink(id, text) {
  return Number.isSafeInteger(id) ? el('a', { href: '#/targets/' + id }, text ?? String(id)) : text ?? '-';
}

/** A <time> element of an ISO timestamp, in local time with its zone
 *  (fmt.time); the server's UTC text in the title. */
export function timeEl(iso) {
  if (!iso) return el('span', { class: 'muted' }, '-');
  return el('time', { datetime: iso, title: iso }, fmt.time(iso));
}

/** "Loading …" for a section, announced politely. */
export function loading(what) {
  return el('p', { class: 'state state-loading', role: 'status' }, 'Loading ' + (what || '') + '…');
}

/** An empty state: what is missing and, optionally, what to do. */
export function empty(text, ...more) {
  return el('p', { class: 'state state-empty' }, text, ...more);
}

/** A section's own error (the page goes on): title, detail and hint. A
 *  request that got no answer (status 0) is said in words instead
 *  (unreachable()). */
export function sectionError(err) {
  if (err && err.status === 0 && err.problem && err.problem.unreachable) return unreachable(err);
  const p = (err && err.problem) || { title: 'Error', detail: String(err && err.message || err) };
  return el('div', { class: 'state state-error', role: 'alert' },
    el('strong', {}, (p.title || 'Error') + (err && err.status ? ' (HTTP ' + err.status + ')' : '')),
    p.detail ? [': ', p.detail] : null,
    p.hint ? el('span', { class: 'hint' }, ' — ' + p.hint) : null);
}

/** Where the page's server is, for the words of an unanswered request:
 *  the page's own URL without its hash (a path prefix included). */
export function serverPlace() {
  return location.origin + location.pathname.replace(/index\.html$/, '');
}

/** The state of a request that got no answer: "The server at … did not
 *  answer; trying again in 4 s.", the wait in a slot (.retry-wait) kept
 *  current (not announced at each tick: the alert is said once), and a
 *  "Try again now" button (.retry-now). main.js owns the
 *  retry: it learns of this state from the "hv-unreachable" event sent
 *  here, and answers with the slot's words in the event's detail. */
export function unreachable(err) {
  const ask = { words: '.' };
  document.dispatchEvent(new CustomEvent('hv-unreachable', { detail: ask }));
  const why = err && err.problem && err.problem.detail;
  return el('div', { class: 'state state-error state-unreachable', role: 'alert' },
    el('strong', {}, 'The server at ' + serverPlace() + ' did not answer'),
    el('span', { class: 'retry-wait', 'aria-live': 'off' }, ask.words), ' ',
    el('button', { type: 'button', class: 'retry-now small' }, 'Try again now'),
    why ? el('span', { class: 'hint' }, ' (the browser says: ' + why + ')') : null);
}

/** Awaits a page's answer for slot: null when it failed (the section's
 *  error drawn in slot and shown in the error box) or the user moved on;
 *  else the answer, the error box cleared. */
export async function answer(ctx, slot, promise) {
  let d;
  try {
    d = await promise;
  } catch (err) {
    if (!ctx.current()) return null;
    slot.replaceChildren(sectionError(err));
    ctx.showError(err);
    return null;
  }
  if (!ctx.current()) return null;
  ctx.clearError();
  return d;
}

/** The state of a section whose endpoint this server does not have. */
export function unavailable(what, endpoint) {
  return el('p', { class: 'state state-unavailable' },
    what + ': not available from this server (it has no ', el('code', {}, endpoint), ').');
}

/** A section: a heading with an id and its body. */
export function section(id, title, ...body) {
  return el('section', { id, class: 'panel', 'aria-labelledby': id + '-h' },
    el('h2', { id: id + '-h' }, title), ...body);
}

/** A button that copies text to the clipboard and says so. */
export function copyButton(text, label) {
  const b = el('button', { type: 'button', class: 'copy', 'aria-label': label || 'Copy' }, 'Copy');
  b.addEventListener('click', async () => {
    let ok = false;
    try {
      await navigator.clipboard.writeText(text);
      ok = true;
    } catch (e) {
      ok = false;
    }
    b.textContent = ok ? 'Copied' : 'Select and copy';
    setTimeout(() => { b.textContent = 'Copy'; }, 2000);
  });
  return b;
}

/** Text with a chance to wrap after each '/': a path such as
 *  /sys/kernel/mm/transparent_hugepage/enabled wraps at its slashes on a
 *  narrow screen, never one character a line. */
export function pathText(s) {
  return String(s).split(/(?<=\/)(?=.)/).map((p, i) => (i ? [el('wbr'), p] : p));
}

/** A plain value of facts/observed/settings: numbers to their meaningful
 *  digits (fmt.value), paths breakable at '/'. */
function scalar(v) {
  if (v === null) return 'null';
  if (typeof v === 'number') return fmt.value(v);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  return pathText(v);
}

/** An object as a definition list, nested objects as nested lists, arrays
 *  of scalars joined, other arrays as JSON; depth-limited. */
export function kvList(obj, depth = 0) {
  if (obj === null || typeof obj !== 'object') return el('span', {}, scalar(obj));
  const entries = Array.isArray(obj) ? obj.map((v, i) => [String(i), v]) : Object.entries(obj);
  if (entries.length === 0) return el('span', { class: 'muted' }, Array.isArray(obj) ? '[]' : '{}');
  if (Array.isArray(obj) && obj.every((v) => v === null || typeof v !== 'object')) {
    return el('span', {}, obj.map((v, i) => [i ? ', ' : '', scalar(v)]));
  }
  if (depth >= 4) return el('code', {}, JSON.stringify(obj));
  return el('dl', { class: 'kv' }, entries.map(([k, v]) => [
    el('dt', {}, k),
    el('dd', {}, v !== null && typeof v === 'object' ? kvList(v, depth + 1) : scalar(v)),
  ]));
}

// How many items a list shows before it folds the rest.
const FOLD_AT = 10;

/** A list of items in a line, complete: the first ten as they are, the
 *  rest folded behind "and N more" (a <details> that opens in place).
 *  each(item) → node or text; sep goes between two items. */
export function foldedList(items, each, sep = ', ') {
  const line = (list) => list.map((x, i) => [i ? sep : '', each(x)]);
  const head = line(items.slice(0, FOLD_AT));
  if (items.length <= FOLD_AT) return el('span', { class: 'folded' }, head);
  const rest = items.slice(FOLD_AT);
  return el('span', { class: 'folded' }, head,
    el('details', { class: 'fold-more' }, el('summary', {}, 'and ' + rest.length + ' more'), line(rest)));
}

/** A labelled field of a filter form. */
export function field(label, control) {
  return el('label', { class: 'field' }, el('span', {}, label), control);
}
