// main.js — the hvbench web page: routing by location.hash (the server
// serves one fixed page), the read token, and the error box.
//
// Pages: #/ (plans), #/plans/ID, #/plans/ID/jobs, #/jobs/ID, #/targets,
// #/targets/ID (with its history), #/compare, #/fleet-history,
// #/recommendations and #/recommendations/ID (drawn here, below). Each page
// module exports show(ctx, ...): it draws into ctx.view and drops answers that arrive
// after the user moved on (ctx.current() turns false).

import { el, put } from './dom.js';
import { ApiError, api, getToken, onAnswer, query, setToken } from './api.js';
import { current, setParams } from './route.js';
import * as fmt from './fmt.js';
import * as ui from './ui.js';
import * as plans from './page-plans.js';
import * as plan from './page-plan.js';
import * as jobs from './page-jobs.js';
import * as job from './page-job.js';
import * as targets from './page-targets.js';
import * as target from './page-target.js';
import * as compare from './page-compare.js';
import * as fleetHistory from './page-fleet-history.js';

const view = document.getElementById('view');
const errorBox = document.getElementById('error');
const tokenForm = document.getElementById('token-form');
const tokenInput = document.getElementById('token-input');
const forgetToken = document.getElementById('forget-token');

// Each navigation bumps the generation; answers that arrive for an older
// one are dropped, so a slow request cannot paint over the current page.
let generation = 0;
let timer = null;

// A request that got no answer: the page is drawn again after 1 s, then
// 2, 4, 8 … up to 30 s while nothing answers (the wait starts again at 1 s
// once the server answers anything), and every .retry-wait slot says when;
// "Try again now" (.retry-now) draws it at once. One retry a page, however
// many of its sections failed.
const RETRY_MAX_S = 30;
const retry = { failures: 0, at: 0, timer: null, tick: null };

/** Schedules the page's retry unless one is; returns the words of the
 *  wait ("; trying again in 4 s."). */
function scheduleRetry() {
  if (!retry.timer) {
    const wait = Math.min(RETRY_MAX_S, 2 ** retry.failures);
    retry.failures++;
    retry.at = Date.now() + wait * 1000;
    retry.timer = setTimeout(() => {
      stopRetry();
      route();
    }, wait * 1000);
    retry.tick = setInterval(showWait, 1000);
  }
  return waitWords();
}

function waitWords() {
  return '; trying again in ' + Math.max(0, Math.ceil((retry.at - Date.now()) / 1000)) + ' s.';
}

function showWait() {
  const words = waitWords();
  for (const e of document.querySelectorAll('.retry-wait')) e.textContent = words;
}

function stopRetry() {
  clearTimeout(retry.timer);
  clearInterval(retry.tick);
  retry.timer = null;
  retry.tick = null;
}

onAnswer(() => { retry.failures = 0; });
document.addEventListener('hv-unreachable', (ev) => { ev.detail.words = scheduleRetry(); });
document.addEventListener('click', (ev) => {
  if (!(ev.target instanceof Element) || !ev.target.closest('.retry-now')) return;
  stopRetry();
  route();
});

/** Shows err in the #error box: title, detail, one line per errors[]
 *  entry and the hint. A 401 also opens the token form; no answer at all
 *  says so in words and tries again by itself. */
function showError(err) {
  const p = (err && err.problem) || { title: 'Error', detail: String(err) };
  const status = err && err.status ? ' (HTTP ' + err.status + ')' : '';
  const detail = errorBox.querySelector('.error-detail');
  if (err && err.status === 0 && p.unreachable) {
    errorBox.querySelector('.error-title').textContent = 'The server at ' + ui.serverPlace() + ' did not answer';
    put(detail, el('span', { class: 'retry-wait', 'aria-live': 'off' }, scheduleRetry()), ' ',
      el('button', { type: 'button', class: 'retry-now small' }, 'Try again now'),
      p.detail ? el('span', { class: 'hint' }, ' (the browser says: ' + p.detail + ')') : null);
  } else {
    errorBox.querySelector('.error-title').textContent = (p.title || 'Error') + status;
    detail.textContent = p.detail || '';
  }
  const list = errorBox.querySelector('.error-list');
  list.replaceChildren();
  if (Array.isArray(p.errors)) {
    for (const e of p.errors) {
      list.appendChild(el('li', {}, el('code', {}, (e && e.path) || '(request)'), ': ', (e && e.message) || 'invalid'));
    }
  }
  errorBox.querySelector('.error-hint').textContent = p.hint ? 'Hint: ' + p.hint : '';
  errorBox.hidden = false;
  if (err && err.status === 401) {
    tokenForm.hidden = false;
    if (getToken()) tokenForm.querySelector('label').textContent = 'The stored token was refused; paste another';
  }
}

function clearError() {
  errorBox.hidden = true;
}

function storeToken(token) {
  try {
    setToken(token);
  } catch (e) {
    showError(new ApiError(0, { title: 'Cannot store the token', detail: 'this browser refuses localStorage: ' + e.message }));
  }
  forgetToken.hidden = !getToken();
}

tokenForm.addEventListener('submit', (ev) => {
  ev.preventDefault();
  const token = tokenInput.value.trim();
  if (!token) return;
  storeToken(token);
  tokenInput.value = '';
  tokenForm.hidden = true;
  route();
});

forgetToken.addEventListener('click', () => {
  storeToken(null);
  route();
});

/** The context a page draws with. */
function context(gen) {
  return {
    view,
    current: () => gen === generation,
    showError: (err) => { if (gen === generation) showError(err); },
    clearError: () => { if (gen === generation) clearError(); },
    /** Runs fn after ms unless the user moved on; one timer per page. */
    schedule: (fn, ms) => {
      clearTimeout(timer);
      timer = setTimeout(() => { if (gen === generation) fn(); }, ms);
    },
  };
}

// The skip link targets #main, which is not a route: focus it instead.
document.querySelector('.skip-link').addEventListener('click', (ev) => {
  ev.preventDefault();
  document.getElementById('main').focus();
});

// ---- #/recommendations and #/recommendations/ID ---------------------------
// The recommendations kept (GET /api/v1/recommendations), newest first:
// the change, its plan, the gain it predicted, its state, the hosts that
// carry it and the verdict of their adoption; a state filter in the URL and
// older ones a page at a time. One recommendation: all of that with its
// adoptions and, once regressed, its rollback in every form.

const RECS_PAGE = 50;

// What each state of a recommendation (and of its verdict) means
// (lib/adoption.h), said in its badge's title.
const REC_STATES = {
  proposed: 'proposed: no host carries it',
  adopted: 'adopted: hosts carry it; whether it delivered is not judged yet',
  delivered: 'delivered: the hosts that adopted it gained beyond the margin, as much as predicted or more',
  partial: 'partial: the hosts that adopted it gained beyond the margin, less than predicted',
  none: 'none: no gain beyond the margin, and the predicted gain ruled out',
  regressed: 'regressed: the hosts that adopted it got worse beyond the margin',
};
const VERDICT_PENDING = 'pending: too few hosts or values yet, or an interval still too wide to tell';
const ROLLBACK_FORMS = ['tuned', 'ansible', 'puppet', 'shell'];

function knownState(s) {
  return Object.prototype.hasOwnProperty.call(REC_STATES, s);
}

/** A recommendation's state as a badge: its words ("adopted on 2 hosts"),
 *  its colour, its meaning in the title. */
function recBadge(r) {
  const s = knownState(r.state) ? r.state : 'unknown';
  const n = r.adopted && Number.isFinite(r.adopted.hosts) ? r.adopted.hosts : 0;
  const words = s === 'adopted' ? 'adopted on ' + n + (n === 1 ? ' host' : ' hosts') : String(r.state || 'unknown');
  return ui.tagBadge('rec-state rec-' + s, words, s === 'unknown' ? 'a state this page does not know: ' + r.state : REC_STATES[s]);
}

/** A verdict's state as a badge (pending included). */
function verdictStateBadge(v) {
  const s = v.state === 'pending' || knownState(v.state) ? v.state : 'unknown';
  return ui.tagBadge('rec-state rec-' + s, String(v.state || 'unknown'),
    s === 'pending' ? VERDICT_PENDING : s === 'unknown' ? 'a verdict this page does not know: ' + v.state : REC_STATES[s]);
}

/** "thp=never (default always)". */
function recChange(r) {
  return [el('code', { class: 'rec-change' }, r.factor + '=' + r.level),
    r.default !== null && r.default !== undefined ? [' ', el('span', { class: 'muted' }, '(default ', el('span', { class: 'rec-default' }, r.default), ')')] : null];
}

/** The gain the plan predicted: "+5.02 % [+4.61, +5.43]" on its metric,
 *  in its workload. */
function recGain(r) {
  const gi = r.gain_interval || {};
  return [el('span', { class: 'gain-value rec-gain' }, fmt.changeWithInterval(r.gain_pct, gi.lo_pct, gi.hi_pct)),
    r.metric ? [' on ', el('code', {}, r.metric)] : null, r.workload ? el('span', { class: 'muted' }, ' (' + r.workload + ')') : null];
}

/** The hosts carrying it now, each a link to its target when the name is
 *  a host target's (ids: name → id), and, with since, since when. */
function recHosts(r, ids, since) {
  const a = r.adopted || {};
  const names = Array.isArray(a.names) ? a.names : [];
  if (names.length === 0) return el('span', { class: 'muted' }, '-');
  return [ui.foldedList(names, (n) => (ids.has(n) ? ui.targetLink(ids.get(n), n) : n)),
    since && a.since ? el('div', { class: 'more' }, 'since ', ui.timeEl(a.since)) : null];
}

function plural(n, one, many) {
  return n + ' ' + (n === 1 ? one : many);
}

/** "2 hosts vs 3 controls", said as before and after only without controls. */
function verdictHosts(v) {
  const h = Number.isFinite(v.hosts) ? v.hosts : 0;
  const c = Number.isFinite(v.controls) ? v.controls : 0;
  return plural(h, 'host', 'hosts') + ' vs ' + plural(c, 'control', 'controls') +
    (v.controlled === false ? ' (before and after only)' : '');
}

/** "[+4.60, +5.40]": a predicted interval. */
function predicted(v, r) {
  const p = (v && v.predicted) || (r && r.gain_interval) || {};
  return fmt.boundsOrNote(null, p.lo_pct, p.hi_pct, fmt.change);
}

/** The verdict in a line: observed gain and interval against the predicted
 *  one and on how many hosts; the reason while pending. */
function verdictWords(r) {
  const v = r.verdict;
  if (!v) return el('span', { class: 'muted' }, r.adopted && r.adopted.hosts > 0 ? 'not judged yet' : '-');
  if (v.state === 'pending') return el('span', { class: 'rec-why muted' }, 'pending: ' + (v.why || 'not judged yet'));
  return el('span', { class: 'rec-verdict' },
    'observed ', el('strong', { class: 'rec-observed' }, fmt.changeWithInterval(v.gain_pct, v.lo_pct, v.hi_pct)),
    ' vs predicted ', el('span', { class: 'rec-predicted' }, predicted(v, r)),
    el('div', { class: 'more' }, verdictHosts(v)));
}

/** Host target ids by name, for links; empty when the list fails. */
function hostIds() {
  return api('api/v1/targets' + query({ kind: 'host' }))
    .then((d) => new Map((d.items || []).map((t) => [t.name, t.id])))
    .catch(() => new Map());
}

/** Draws the recommendation list. */
function showRecommendations(ctx) {
  document.title = 'Recommendations — hvbench';
  const p = current().params.get('state') || '';
  let state = knownState(p) ? p : '';
  const body = el('div', { id: 'recs-body', 'aria-live': 'polite' }, ui.loading('the recommendations'));
  const select = el('select', { id: 'recs-state', name: 'state' },
    ['', ...Object.keys(REC_STATES)].map((s) => el('option', { value: s, selected: s === state }, s || 'any')));
  select.addEventListener('change', () => {
    state = select.value;
    setParams({ state });
    load(true);
  });
  const form = el('form', { class: 'filters', role: 'search', 'aria-label': 'Filter recommendations', onsubmit: (e) => e.preventDefault() },
    ui.field('State', select));
  put(ctx.view, el('h1', { tabindex: '-1' }, 'Recommendations'), form, body);

  const ids = hostIds();
  let items = [];
  let cursor = null;
  async function load(fresh) {
    if (fresh) {
      items = [];
      cursor = null;
      put(body, ui.loading('the recommendations'));
    }
    const asked = state;
    const data = await ui.answer(ctx, body, api('api/v1/recommendations' + query({ state, limit: RECS_PAGE, cursor })));
    if (!data || asked !== state) return;
    const names = await ids;
    if (!ctx.current() || asked !== state) return;
    items = items.concat(Array.isArray(data.items) ? data.items : []);
    cursor = data.next_cursor || null;
    if (items.length === 0) {
      put(body, state ? ui.empty('No recommendation is ' + state + '.')
        : ui.empty('No recommendations yet. A tuning plan that ends done keeps those its report makes.'));
      return;
    }
    const more = cursor ? el('button', { type: 'button', id: 'recs-more', onclick: () => load(false) }, 'Show older recommendations') : null;
    put(body, recsTable(items, names), more);
  }
  load(true);
}

function recsTable(items, ids) {
  const rows = items.map((r) => {
    const link = '#/recommendations/' + r.id;
    // The whole row opens the recommendation; its links keep their own.
    const open = (ev) => {
      if (ev.target instanceof Element && ev.target.closest('a, button, summary')) return;
      if (String(window.getSelection() || '')) return;
      location.hash = link;
    };
    return el('tr', { class: 'rec-row', 'data-rec-id': r.id, 'data-state': r.state, onclick: open },
      el('td', { class: 'num' }, Number.isSafeInteger(r.id) ? el('a', { href: link, 'aria-label': 'recommendation ' + r.id }, String(r.id)) : '-'),
      el('td', {}, recChange(r)),
      el('td', {}, ui.planLink(r.plan_id, r.plan || '#' + r.plan_id)),
      el('td', { class: 'gain' }, recGain(r)),
      el('td', { class: 'rec-state-cell' }, recBadge(r)),
      el('td', { class: 'hosts' }, recHosts(r, ids)),
      el('td', { class: 'verdict-cell' }, verdictWords(r)),
      el('td', {}, ui.timeEl(r.created_at)));
  });
  return el('div', { class: 'scroll-x' }, el('table', { id: 'recs-table', class: 'data recs' },
    el('caption', { class: 'visually-hidden' }, 'Recommendations, newest first'),
    el('thead', {}, el('tr', {},
      el('th', { scope: 'col', class: 'num' }, 'ID'), el('th', { scope: 'col' }, 'Change'),
      el('th', { scope: 'col' }, 'Plan'),
      el('th', { scope: 'col' }, el('abbr', { title: 'the gain its plan measured, with its 95 % interval, in the metric\'s good direction' }, 'Predicted gain')),
      el('th', { scope: 'col' }, 'State'), el('th', { scope: 'col' }, 'Adopted on'),
      el('th', { scope: 'col' }, el('abbr', { title: 'the gain the hosts that adopted it showed, against the hosts that did not' }, 'Verdict')),
      el('th', { scope: 'col' }, 'Created'))),
    el('tbody', {}, rows)));
}

/** Draws one recommendation. */
function showRecommendation(ctx, id) {
  document.title = 'Recommendation ' + id + ' — hvbench';
  const title = el('h1', { tabindex: '-1' }, 'Recommendation ' + id);
  const head = el('section', { id: 'rec-head', class: 'plan-status', 'aria-label': 'Recommendation' }, ui.loading('the recommendation'));
  const rest = el('div', {});
  put(ctx.view, el('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' }, el('a', { href: '#/recommendations' }, '← All recommendations')),
    title, head, rest);
  (async () => {
    const [r, ids] = await Promise.all([ui.answer(ctx, head, api('api/v1/recommendations/' + id)), hostIds()]);
    if (!r || !ctx.current()) return;
    title.textContent = 'Recommendation ' + id + ': ' + r.factor + '=' + r.level;
    document.title = r.factor + '=' + r.level + ' — hvbench';
    put(head, recHead(r, ids));
    const v = r.verdict;
    put(rest, ui.section('rec-verdict', 'Verdict', verdictDetail(r)),
      v && v.state === 'regressed' && v.rollback ? ui.section('rollback', 'Roll it back', rollback(v.rollback)) : null,
      ui.section('adoptions', 'Adoptions', adoptionsTable(r.adoptions || [])));
  })();
}

function recHead(r, ids) {
  const scope = Array.isArray(r.scope) ? r.scope : [];
  return [
    el('dl', { class: 'facts' },
      el('dt', {}, 'Change'), el('dd', {}, recChange(r)),
      el('dt', {}, 'State'), el('dd', { id: 'rec-state' }, recBadge(r)),
      el('dt', {}, 'Plan'), el('dd', {}, ui.planLink(r.plan_id, r.plan || '#' + r.plan_id),
        scope.length ? [' on ', ui.foldedList(scope, (n) => (ids.has(n) ? ui.targetLink(ids.get(n), n) : n))] : null),
      el('dt', {}, 'Predicted gain'), el('dd', { id: 'rec-gain' }, recGain(r)),
      el('dt', {}, 'Risk'), el('dd', {}, r.risk_level || '-', r.risk ? ': ' + r.risk : null),
      el('dt', {}, 'Adopted on'), el('dd', {}, recHosts(r, ids, true)),
      el('dt', {}, 'Kept'), el('dd', {}, ui.timeEl(r.created_at))),
    r.sentence ? el('p', { class: 'rec-sentence' }, r.sentence) : null,
    r.apply ? el('div', { class: 'apply' },
      el('div', { class: 'apply-head' }, el('span', {}, 'Apply it'), ui.copyButton(r.apply, 'Copy how to apply ' + r.factor + '=' + r.level)),
      el('pre', {}, el('code', {}, r.apply))) : null,
  ];
}

/** The verdict: state, observed against predicted, hosts and controls,
 *  and the values each host has on either side of the adoption. */
function verdictDetail(r) {
  const v = r.verdict;
  if (!v) return ui.empty(r.adopted && r.adopted.hosts > 0 ? 'Not judged yet.' : 'No host has adopted it: there is nothing to judge yet.');
  const perHost = Array.isArray(v.per_host) ? v.per_host : [];
  return [
    el('dl', { class: 'facts', id: 'verdict-facts' },
      el('dt', {}, 'State'), el('dd', { id: 'verdict-state' }, verdictStateBadge(v)),
      v.why ? [el('dt', {}, 'Why pending'), el('dd', { class: 'rec-why' }, v.why)] : null,
      el('dt', {}, 'Observed gain'), el('dd', { id: 'verdict-observed' },
        typeof v.gain_pct === 'number' ? fmt.changeWithInterval(v.gain_pct, v.lo_pct, v.hi_pct) : el('span', { class: 'muted' }, 'not estimated yet')),
      el('dt', {}, 'Predicted'), el('dd', {}, predicted(v, r)),
      typeof v.margin_pct === 'number' ? [el('dt', {}, 'Margin'), el('dd', {}, '±' + fmt.value(v.margin_pct) + ' %')] : null,
      el('dt', {}, 'Hosts'), el('dd', { id: 'verdict-hosts' }, verdictHosts(v)),
      v.split_at ? [el('dt', {}, 'Split at'), el('dd', {}, ui.timeEl(v.split_at))] : null),
    perHost.length ? el('div', { class: 'scroll-x' }, el('table', { id: 'per-host-table', class: 'data compact' },
      el('caption', {}, 'Values of each host before and after the split'),
      el('thead', {}, el('tr', {}, ['Host', 'Adopted', 'Before', 'After'].map((h, i) => el('th', { scope: 'col', class: i >= 2 ? 'num' : null }, h)))),
      el('tbody', {}, perHost.map((h) => el('tr', { 'data-host': h.target },
        el('td', {}, h.target), el('td', {}, h.adopted ? 'yes' : 'no (control)'),
        el('td', { class: 'num' }, fmt.value(h.before)), el('td', { class: 'num' }, fmt.value(h.after))))))) : null,
  ];
}

/** Every adoption, open or ended. */
function adoptionsTable(list) {
  if (list.length === 0) return ui.empty('No host has adopted it.');
  return el('div', { class: 'scroll-x' }, el('table', { id: 'adoptions-table', class: 'data' },
    el('caption', {}, 'The hosts that carried it, oldest adoption first'),
    el('thead', {}, el('tr', {}, ['Host', 'Since', 'Until', 'Source', 'Declared by'].map((h) => el('th', { scope: 'col' }, h)))),
    el('tbody', {}, list.map((a) => el('tr', { 'data-adoption-id': a.id },
      el('td', {}, ui.targetLink(a.target_id, a.target)), el('td', {}, ui.timeEl(a.since)),
      el('td', {}, a.until ? ui.timeEl(a.until) : el('strong', {}, 'still carries it')),
      el('td', {}, a.source || '-'), el('td', {}, a.created_by || el('span', { class: 'muted' }, '-')))))));
}

/** The rollback in every form the server gives, one shown at a time (the
 *  form in the URL: format=), with a copy button. */
function rollback(forms) {
  const names = ROLLBACK_FORMS.filter((f) => typeof forms[f] === 'string').concat(
    Object.keys(forms).filter((f) => !ROLLBACK_FORMS.includes(f) && typeof forms[f] === 'string'));
  if (names.length === 0) return ui.empty('The server gave no form of its rollback.');
  const asked = current().params.get('format');
  let shown = names.includes(asked) ? asked : names[0];
  const pres = names.map((f) => el('pre', { id: 'rollback-' + f, class: 'rollback', 'data-format': f, hidden: f !== shown, 'aria-label': 'rollback as ' + f },
    el('code', {}, forms[f])));
  const copy = el('span', {});
  const buttons = names.map((f) => el('button', { type: 'button', class: 'small', 'data-format': f, 'aria-pressed': String(f === shown), 'aria-controls': 'rollback-' + f },
    f));
  function pick(f) {
    shown = f;
    setParams({ format: f === names[0] ? null : f });
    for (const b of buttons) b.setAttribute('aria-pressed', String(b.dataset.format === f));
    for (const p of pres) p.hidden = p.dataset.format !== f;
    put(copy, ui.copyButton(forms[f], 'Copy the rollback as ' + f));
  }
  for (const b of buttons) b.addEventListener('click', () => pick(b.dataset.format));
  pick(shown);
  return el('div', { class: 'apply rollback-forms' },
    el('p', {}, 'The hosts that adopted it got worse: undo it with the rollback part of one of these.'),
    el('div', { class: 'apply-head' }, el('div', { class: 'format-switch', role: 'group', 'aria-label': 'Rollback format' }, buttons), copy),
    pres);
}

const ROUTES = [
  [/^\/(plans\/?)?$/, (ctx) => plans.show(ctx)],
  [/^\/plans\/(\d{1,15})\/?$/, (ctx, m) => plan.show(ctx, Number(m[1]))],
  [/^\/plans\/(\d{1,15})\/jobs\/?$/, (ctx, m) => jobs.show(ctx, Number(m[1]))],
  [/^\/jobs\/(\d{1,15})\/?$/, (ctx, m) => job.show(ctx, Number(m[1]))],
  [/^\/targets\/?$/, (ctx) => targets.show(ctx)],
  [/^\/targets\/(\d{1,15})\/?$/, (ctx, m) => target.show(ctx, Number(m[1]))],
  [/^\/compare\/?$/, (ctx) => compare.show(ctx)],
  [/^\/fleet-history\/?$/, (ctx) => fleetHistory.show(ctx)],
  [/^\/recommendations\/?$/, (ctx) => showRecommendations(ctx)],
  [/^\/recommendations\/(\d{1,15})\/?$/, (ctx, m) => showRecommendation(ctx, Number(m[1]))],
];

/** Draws the page of the current hash. */
function route() {
  clearTimeout(timer);
  stopRetry();
  generation++;
  clearError();
  forgetToken.hidden = !getToken();
  const { path } = current();
  for (const a of document.querySelectorAll('.topnav a')) {
    const section = a.getAttribute('data-section');
    const here = section === 'plans' ? /^\/(plans.*)?$|^\/jobs/.test(path) : path.startsWith('/' + section);
    if (here) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  const ctx = context(generation);
  for (const [re, fn] of ROUTES) {
    const m = re.exec(path);
    if (m) {
      fn(ctx, m);
      return;
    }
  }
  document.title = 'Not found — hvbench';
  put(view, el('h1', { tabindex: '-1' }, 'Not found'),
    el('p', {}, 'No page at ', el('code', {}, location.hash), '. ', el('a', { href: '#/' }, 'All plans')));
}

window.addEventListener('hashchange', () => {
  route();
  // Move keyboard and screen reader focus to the new page's heading.
  const h1 = view.querySelector('h1');
  if (h1) h1.focus({ preventScroll: true });
  window.scrollTo(0, 0);
});
route();
