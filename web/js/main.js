// main.js — the hvbench web page: routing by location.hash (the server
// serves one fixed page), the read token, and the error box.
//
// Pages: #/ (plans), #/plans/ID, #/plans/ID/jobs, #/jobs/ID, #/targets,
// #/targets/ID (with its history), #/compare, #/fleet-history,
// #/recommendations and #/recommendations/ID. Each page
// module exports show(ctx, ...): it draws into ctx.view and drops answers that arrive
// after the user moved on (ctx.current() turns false).

import { el, put } from './dom.js';
import { ApiError, getToken, onAnswer, setToken } from './api.js';
import { current } from './route.js';
import * as ui from './ui.js';
import * as plans from './page-plans.js';
import * as plan from './page-plan.js';
import * as jobs from './page-jobs.js';
import * as job from './page-job.js';
import * as targets from './page-targets.js';
import * as target from './page-target.js';
import * as compare from './page-compare.js';
import * as fleetHistory from './page-fleet-history.js';
import * as recommendations from './page-recommendations.js';

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

const ROUTES = [
  [/^\/(plans\/?)?$/, (ctx) => plans.show(ctx)],
  [/^\/plans\/(\d{1,15})\/?$/, (ctx, m) => plan.show(ctx, Number(m[1]))],
  [/^\/plans\/(\d{1,15})\/jobs\/?$/, (ctx, m) => jobs.show(ctx, Number(m[1]))],
  [/^\/jobs\/(\d{1,15})\/?$/, (ctx, m) => job.show(ctx, Number(m[1]))],
  [/^\/targets\/?$/, (ctx) => targets.show(ctx)],
  [/^\/targets\/(\d{1,15})\/?$/, (ctx, m) => target.show(ctx, Number(m[1]))],
  [/^\/compare\/?$/, (ctx) => compare.show(ctx)],
  [/^\/fleet-history\/?$/, (ctx) => fleetHistory.show(ctx)],
  [/^\/recommendations\/?$/, (ctx) => recommendations.showList(ctx)],
  [/^\/recommendations\/(\d{1,15})\/?$/, (ctx, m) => recommendations.showOne(ctx, Number(m[1]))],
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
