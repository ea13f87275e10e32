// page-recommendations.js — #/recommendations and #/recommendations/ID.
// The recommendations kept (GET /api/v1/recommendations), newest first:
// the change, its plan, the gain it predicted, its state, the hosts that
// carry it and the verdict of their adoption; a state filter in the URL and
// older ones a page at a time. One recommendation: all of that with its
// adoptions and, once regressed, its rollback in every form.

import { el, put } from './dom.js';
import { api, query } from './api.js';
import { current, setParams } from './route.js';
import * as fmt from './fmt.js';
import * as ui from './ui.js';

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
export function showList(ctx) {
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
export function showOne(ctx, id) {
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

