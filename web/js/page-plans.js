// page-plans.js — #/ : the plans, newest first, with filters (status,
// target, name, date) and a search over the names; a fleet plan's children
// show their host and their parent; active plans show their
// progress, what runs now, an estimate of the time left from the durations
// of their finished jobs, and what they wait for, in words.

import { el, put } from './dom.js';
import { api, query } from './api.js';
import { current, href, setParams } from './route.js';
import * as fmt from './fmt.js';
import * as ui from './ui.js';

const REFRESH_MS = 5000; // only while a listed plan is active
const PAGE = 50;
const DETAIL_MAX = 10; // active plans whose jobs are looked at

/** Draws the plan list. */
export function show(ctx) {
  document.title = 'Plans — hvbench';
  const { params } = current();
  const f = {
    status: params.get('status') || '', target: params.get('target') || '',
    name: params.get('name') || '', since: params.get('since') || '', q: params.get('q') || '',
  };
  const body = el('div', { id: 'plans-body', 'aria-live': 'polite' }, ui.loading('plans'));
  const form = filterForm(f, () => load(true));
  put(ctx.view, el('h1', { tabindex: '-1' }, 'Plans'), form, body);

  let items = [];
  let cursor = null;
  let lastText = ''; // a refresh that changes nothing leaves the table (and focus) alone

  async function load(fresh) {
    if (fresh) {
      items = [];
      cursor = null;
      if (!body.querySelector('#plans-table')) put(body, ui.loading('plans'));
    }
    const q = { status: f.status, target: f.target, name: f.name, since: f.since, limit: PAGE, cursor };
    let data;
    try {
      data = await api('api/v1/plans' + query(q));
    } catch (err) {
      if (!ctx.current()) return;
      put(body, ui.sectionError(err));
      ctx.showError(err);
      if (err.status === 0 || err.status >= 500) ctx.schedule(() => load(true), REFRESH_MS);
      return;
    }
    if (!ctx.current()) return;
    ctx.clearError();
    const text = JSON.stringify(data);
    if (fresh && text === lastText && items.length === 0 && body.querySelector('#plans-table')) {
      items = data.items || [];
      cursor = data.next_cursor || null;
      if (items.some((p) => ui.ACTIVE.has(p.status))) ctx.schedule(() => load(true), REFRESH_MS);
      return;
    }
    if (fresh) lastText = text;
    items = items.concat(Array.isArray(data.items) ? data.items : []);
    cursor = data.next_cursor || null;
    const shown = f.q ? items.filter((p) => String(p.name || '').toLowerCase().includes(f.q.toLowerCase())) : items;
    if (shown.length === 0) {
      const filtered = f.status || f.target || f.name || f.since || f.q;
      put(body, ui.empty(filtered ? 'No plan matches these filters.' : 'No plans yet. Submit one with ',
        filtered ? null : el('code', {}, 'hvbench submit plan.json'), filtered ? null : '.'));
    } else {
      const more = cursor ? el('button', { type: 'button', id: 'plans-more', onclick: () => load(false) }, 'Show older plans') : null;
      put(body, compareBar(), plansTable(shown), more);
      details(ctx, shown);
    }
    if (fresh && items.some((p) => ui.ACTIVE.has(p.status))) ctx.schedule(() => load(true), REFRESH_MS);
  }
  load(true);
}

/** The filter form; every change goes to the URL and reloads the list. */
function filterForm(f, reload) {
  const status = el('select', { id: 'f-status', name: 'status' },
    ['', 'queued', 'running', 'done', 'failed', 'cancelled'].map((s) =>
      el('option', { value: s, selected: s === f.status }, s || 'any')));
  const target = el('input', { id: 'f-target', name: 'target', value: f.target, list: 'f-targets', autocomplete: 'off' });
  const targets = el('datalist', { id: 'f-targets' });
  const name = el('input', { id: 'f-name', name: 'name', value: f.name, autocomplete: 'off' });
  const since = el('input', { id: 'f-since', name: 'since', type: 'date', value: f.since });
  const q = el('input', { id: 'f-q', name: 'q', type: 'search', value: f.q, autocomplete: 'off' });
  const apply = () => {
    f.status = status.value;
    f.target = target.value.trim();
    f.name = name.value.trim();
    f.since = since.value;
    f.q = q.value.trim();
    setParams({ status: f.status, target: f.target, name: f.name, since: f.since, q: f.q });
    reload();
  };
  for (const c of [status, since]) c.addEventListener('change', apply);
  for (const c of [target, name]) c.addEventListener('change', apply);
  let typing = null;
  q.addEventListener('input', () => {
    clearTimeout(typing);
    typing = setTimeout(apply, 250);
  });
  api('api/v1/targets').then((d) => {
    for (const t of d.items || []) targets.append(el('option', { value: t.name }));
  }).catch(() => {});
  return el('form', { class: 'filters', role: 'search', 'aria-label': 'Filter plans', onsubmit: (e) => { e.preventDefault(); apply(); } },
    ui.field('Status', status), ui.field('Target', target), targets, ui.field('Name (exact)', name),
    ui.field('Created since', since), ui.field('Search names', q));
}

/** "Compare selected": the plans ticked in the table, on the compare page
 *  (2 to 12; the first ticked is the baseline). */
function compareBar() {
  const button = el('button', { type: 'button', id: 'plans-compare', disabled: true }, 'Compare selected');
  const note = el('span', { class: 'muted', id: 'plans-compare-note' }, 'Tick 2 to 12 plans to compare them.');
  button.addEventListener('click', () => {
    const ids = [...document.querySelectorAll('#plans-table input.select-plan:checked')].map((c) => c.value);
    location.hash = href('/compare', { items: ids.join(',') });
  });
  return el('div', { class: 'compare-bar' }, button, ' ', note);
}

/** Keeps the compare button in step with the ticked rows. */
function selectionChanged() {
  const n = document.querySelectorAll('#plans-table input.select-plan:checked').length;
  const button = document.getElementById('plans-compare');
  const note = document.getElementById('plans-compare-note');
  if (button) button.disabled = n < 2 || n > 12;
  if (note) note.textContent = n > 12 ? 'At most 12 plans compare on one page.' : n + ' ticked; tick 2 to 12 plans to compare them.';
}

function plansTable(items) {
  const rows = items.map((p) => {
    const c = ui.jobCounts(p);
    return el('tr', { 'data-plan-id': p.id },
      el('td', { class: 'num' }, el('input', { type: 'checkbox', class: 'select-plan', value: String(p.id), 'aria-label': 'select plan ' + p.id + ' to compare', onchange: selectionChanged }), ' ', ui.planLink(p.id)),
      el('td', {}, ui.planLink(p.id, p.name || '(unnamed)'),
        p.parent_id ? el('p', { class: 'parent muted' }, 'child of ', ui.planLink(p.parent_id, '#' + p.parent_id)) : null,
        p.waiting && p.waiting.detail ? el('p', { class: 'waiting' }, waitingWords(p.waiting)) : null),
      el('td', { class: 'host' }, p.host || el('span', { class: 'muted' }, '-')),
      el('td', {}, ui.badge(p.status)),
      el('td', { class: 'num' }, el('div', { class: 'progress-cell' },
        el('span', { class: 'counts' }, c.done + '/' + c.total),
        ui.progressBar(c, 'plan ' + p.id + ' progress', p.status))),
      el('td', { class: 'now' }, ui.ACTIVE.has(p.status) ? el('span', { class: 'muted' }, '…') : '-'),
      el('td', { class: 'eta' }, ui.ACTIVE.has(p.status) ? el('span', { class: 'muted' }, '…') : '-'),
      el('td', {}, ui.timeEl(p.created_at)));
  });
  return el('div', { class: 'scroll-x' }, el('table', { id: 'plans-table', class: 'data' },
    el('caption', { class: 'visually-hidden' }, 'Plans, newest first'),
    el('thead', {}, el('tr', {},
      el('th', { scope: 'col', class: 'num' }, 'ID'), el('th', { scope: 'col' }, 'Name'),
      el('th', { scope: 'col' }, el('abbr', { title: 'a fleet plan\'s child runs on one host' }, 'Host')),
      el('th', { scope: 'col' }, 'Status'), el('th', { scope: 'col', class: 'num' }, 'Done/total'),
      el('th', { scope: 'col' }, 'Running now'),
      el('th', { scope: 'col' }, el('abbr', { title: 'estimated time left, from the durations of the finished jobs' }, 'Time left')),
      el('th', { scope: 'col' }, 'Created'))),
    el('tbody', {}, rows)));
}

/** "Waiting since 10:02: waiting for target hv-typo (never registered)". */
export function waitingWords(w) {
  return el('span', {}, 'Waiting', w.since ? [' since ', ui.timeEl(w.since)] : null, ': ', w.detail);
}

/** Fills "running now" and "time left" of the first active plans. */
async function details(ctx, items) {
  const active = items.filter((p) => ui.ACTIVE.has(p.status)).slice(0, DETAIL_MAX);
  await Promise.all(active.map(async (p) => {
    const row = document.querySelector('#plans-table tr[data-plan-id="' + p.id + '"]');
    let running;
    let done;
    try {
      [running, done] = await Promise.all([
        api('api/v1/plans/' + p.id + '/jobs?status=running&limit=100'),
        api('api/v1/plans/' + p.id + '/jobs?status=done&limit=1000')]);
    } catch (err) {
      return;
    }
    if (!ctx.current() || !row) return;
    const now = running.items || [];
    put(row.querySelector('.now'), now.length === 0 ? el('span', { class: 'muted' }, 'nothing') :
      el('ul', { class: 'plain' }, now.slice(0, 3).map((j) => el('li', {},
        ui.jobLink(j.id, j.workload + ' on ' + j.target), ' · ', j.configuration)),
      now.length > 3 ? el('li', { class: 'muted' }, '+' + (now.length - 3) + ' more') : null));
    put(row.querySelector('.eta'), eta(p, done.items || [], now.length));
  }));
}

/** Time left: the mean duration of the finished jobs times the jobs left,
 *  over the jobs running side by side now (at least 1). */
export function eta(plan, doneJobs, runningNow) {
  const d = doneJobs.map((j) => fmt.seconds(j.claimed_at, j.finished_at)).filter((s) => s >= 0);
  const c = ui.jobCounts(plan);
  const left = c.queued + c.running;
  if (left === 0) return '-';
  if (d.length === 0) return el('span', { class: 'muted' }, 'after the first job ends');
  const mean = d.reduce((a, b) => a + b, 0) / d.length;
  const s = (mean * left) / Math.max(1, runningNow);
  return el('span', { title: left + ' jobs left × ' + fmt.duration(mean) + ' per job (mean of ' + d.length + ')' }, 'about ' + fmt.duration(s));
}
