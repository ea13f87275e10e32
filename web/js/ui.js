// ui.js — the pieces every page is made of: badges, progress bars, the
// loading / empty / error / not-available states, links by id, key-value
// lists and the copy button.

import { el } from './dom.js';
import * as fmt from './fmt.js';

const STATUS = new Set(['queued', 'running', 'done', 'failed', 'cancelled', 'waiting']);
export const ACTIVE = new Set(['queued', 'running']);

/** A plan, job or step status as a coloured badge with its word. */
export function badge(status) {
  const s = String(status || 'unknown');
  return el('span', { class: 'badge status-' + (STATUS.has(s) ? s : 'unknown') }, s);
}

/** When a target's worker was last seen, with a "stale" badge when the
 *  server has not seen it for longer than its lease (the target's stale). */
export function lastSeen(t) {
  return el('span', { class: 'last-seen' }, timeEl(t.last_seen),
    t.stale ? [' ', el('span', { class: 'badge stale', title: 'its worker has not called the server for longer than a lease' }, 'stale')] : null);
}

const VERDICTS = {
  better: 'better', worse: 'worse', no_effect: 'no effect', inconclusive: 'inconclusive',
};

/** A verdict badge: colour plus the words, never colour alone. */
export function verdictBadge(v) {
  const known = Object.prototype.hasOwnProperty.call(VERDICTS, v);
  return el('span', { class: 'verdict verdict-' + (known ? v : 'none') },
    known ? VERDICTS[v] : 'no verdict');
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

/** The disruption class of a factor as a badge with its meaning. */
export function disruptionBadge(d) {
  const known = Object.prototype.hasOwnProperty.call(DISRUPTION, d);
  return el('span', { class: 'tag disruption-' + (known ? d : 'unknown'),
    title: known ? DISRUPTION[d] : 'unknown disruption class' }, d || 'unknown');
}

/** A progress bar of a plan's job counts. */
export function progressBar(c, label, status) {
  return el('progress', {
    class: 'progress status-' + (STATUS.has(status) ? status : 'unknown'),
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

/** A <time> element of an ISO timestamp. */
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

/** A section's own error (the page goes on): title, detail and hint. */
export function sectionError(err) {
  const p = (err && err.problem) || { title: 'Error', detail: String(err && err.message || err) };
  return el('div', { class: 'state state-error', role: 'alert' },
    el('strong', {}, (p.title || 'Error') + (err && err.status ? ' (HTTP ' + err.status + ')' : '')),
    p.detail ? [': ', p.detail] : null,
    p.hint ? el('span', { class: 'hint' }, ' — ' + p.hint) : null);
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

/** A plain value of facts/observed/settings as text. */
function scalar(v) {
  if (v === null) return 'null';
  if (typeof v === 'number') return String(v);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  return String(v);
}

/** An object as a definition list, nested objects as nested lists, arrays
 *  of scalars joined, other arrays as JSON; depth-limited. */
export function kvList(obj, depth = 0) {
  if (obj === null || typeof obj !== 'object') return el('span', {}, scalar(obj));
  const entries = Array.isArray(obj) ? obj.map((v, i) => [String(i), v]) : Object.entries(obj);
  if (entries.length === 0) return el('span', { class: 'muted' }, Array.isArray(obj) ? '[]' : '{}');
  if (Array.isArray(obj) && obj.every((v) => v === null || typeof v !== 'object')) {
    return el('span', {}, obj.map(scalar).join(', '));
  }
  if (depth >= 4) return el('code', {}, JSON.stringify(obj));
  return el('dl', { class: 'kv' }, entries.map(([k, v]) => [
    el('dt', {}, k),
    el('dd', {}, v !== null && typeof v === 'object' ? kvList(v, depth + 1) : scalar(v)),
  ]));
}

/** A labelled field of a filter form. */
export function field(label, control) {
  return el('label', { class: 'field' }, el('span', {}, label), control);
}
