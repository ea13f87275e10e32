// page-compare.js — #/compare?a=PLAN[:CONFIGURATION]&b=... : two plans, or
// two configurations, side by side (GET /api/v1/compare): each side's n,
// centre and 95 % interval per metric, B against A as a % change with its
// interval, coloured by verdict.

import { el, put } from './dom.js';
import { api, apiOptional, query } from './api.js';
import { current, href } from './route.js';
import { direction, figures } from './plan-report.js';
import * as fmt from './fmt.js';
import * as ui from './ui.js';

const SIDE = /^[1-9][0-9]{0,17}(:.+)?$/;

/** Draws the compare page. */
export function show(ctx) {
  document.title = 'Compare — hvbench';
  const { params } = current();
  const a = params.get('a') || '';
  const b = params.get('b') || '';
  const body = el('div', { id: 'compare-body' });
  put(ctx.view, el('h1', { tabindex: '-1' }, 'Compare'), form(ctx, a, b), body);
  if (!a || !b) {
    put(body, ui.empty('Name two plans (' , el('code', {}, '12'), ') or configurations of plans (',
      el('code', {}, '12:vcpu_pin=on'), '); B is compared with A.'));
    return;
  }
  if (!SIDE.test(a) || !SIDE.test(b)) {
    put(body, ui.sectionError({ problem: { title: 'Bad side', detail: 'each side is PLAN or PLAN:CONFIGURATION, e.g. 12 or 12:vcpu_pin=on' } }));
    return;
  }
  load(ctx, a, b, body);
}

function form(ctx, a, b) {
  const ia = el('input', { id: 'cmp-a', name: 'a', value: a, list: 'cmp-sides', autocomplete: 'off', required: true, pattern: SIDE.source });
  const ib = el('input', { id: 'cmp-b', name: 'b', value: b, list: 'cmp-sides', autocomplete: 'off', required: true, pattern: SIDE.source });
  const sides = el('datalist', { id: 'cmp-sides' });
  const f = el('form', { class: 'filters', id: 'compare-form', 'aria-label': 'What to compare' },
    ui.field('A (reference)', ia), ui.field('B', ib), sides,
    el('button', { type: 'button', onclick: () => { const t = ia.value; ia.value = ib.value; ib.value = t; } }, 'Swap'),
    el('button', { type: 'submit' }, 'Compare'));
  f.addEventListener('submit', (e) => {
    e.preventDefault();
    location.hash = href('/compare', { a: ia.value.trim(), b: ib.value.trim() });
  });
  // Suggestions: the latest plans, and the configurations of A's and B's.
  (async () => {
    try {
      const d = await api('api/v1/plans?limit=30');
      const ids = new Set([a, b].map((s) => s.split(':')[0]).filter(Boolean));
      for (const p of d.items || []) sides.append(el('option', { value: String(p.id) }, p.id + ': ' + p.name));
      for (const id of ids) {
        const r = await api('api/v1/plans/' + id + '/report').catch(() => null);
        const configs = new Set(((r && r.summaries) || []).map((x) => x.configuration));
        for (const c of configs) sides.append(el('option', { value: id + ':' + c }));
      }
    } catch (e) {
      // Suggestions only.
    }
  })();
  return f;
}

async function load(ctx, a, b, body) {
  put(body, ui.loading('the comparison'));
  let res;
  try {
    res = await apiOptional('api/v1/compare' + query({ a, b }));
  } catch (err) {
    if (!ctx.current()) return;
    put(body, ui.sectionError(err));
    ctx.showError(err);
    return;
  }
  if (!ctx.current()) return;
  if (res.missing) {
    fallback(ctx, a, b, body);
    return;
  }
  const c = res.data;
  const rows = Array.isArray(c.rows) ? c.rows : [];
  put(body,
    el('div', { class: 'sides' }, sideHead('A', c.a), sideHead('B', c.b)),
    rows.length === 0 ? ui.empty('The two sides share no workload and metric.') :
      el('div', { class: 'scroll-x' }, el('table', { id: 'compare-table', class: 'data' },
        el('caption', {}, 'B against A per metric; margin of the verdicts ±' + c.margin_pct + ' %'),
        el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'Workload'), el('th', { scope: 'col' }, 'Metric'),
          el('th', { scope: 'col', class: 'num' }, 'A: centre [95 %]'), el('th', { scope: 'col', class: 'num' }, 'n'),
          el('th', { scope: 'col', class: 'num' }, 'B: centre [95 %]'), el('th', { scope: 'col', class: 'num' }, 'n'),
          el('th', { scope: 'col', class: 'num' }, 'B vs A [95 %]'), el('th', { scope: 'col' }, 'Verdict'))),
        el('tbody', {}, rows.map((r) => el('tr', { class: ui.verdictClass(r.verdict), 'data-metric': r.metric, 'data-workload': r.workload },
          el('td', {}, r.workload), el('td', {}, el('code', {}, r.metric), ' ', direction(r.higher_is_better), r.unit ? el('span', { class: 'muted' }, ' ' + r.unit) : null),
          sideCells(r.a), sideCells(r.b),
          el('td', { class: 'num change' }, r.change_pct === null || r.change_pct === undefined ? '-' : fmt.changeOrNote(r.change_pct, r.lo_pct, r.hi_pct, r)),
          el('td', {}, r.verdict ? ui.verdictBadge(r.verdict) : el('span', { class: 'muted' }, r.a && r.b ? 'no interval' : 'one side only'))))))));
}

function sideHead(name, h) {
  if (!h) return null;
  return el('div', { class: 'side card' }, el('h2', {}, name + ': ', ui.planLink(h.plan_id, 'plan ' + h.plan_id), ' ', h.plan_name || ''),
    el('p', {}, 'Configuration ', el('code', {}, h.configuration), ' on ', (h.targets || []).join(', ') || '-'));
}

/** A side's centre and interval as the API computed them (the geometric
 *  mean with its interval on logs), or the API's words why there is none. */
function sideCells(s) {
  if (!s) return [el('td', { class: 'num muted' }, '-'), el('td', { class: 'num' }, '-')];
  return [el('td', { class: 'num' }, figureNodes(figures(s))), el('td', { class: 'num' }, String(s.n))];
}

function figureNodes(f) {
  return [el('span', { class: 'centre' }, fmt.num(f.center)),
    f.note ? el('span', { class: 'ci-note muted' }, ' (' + f.note + ')')
      : el('span', { class: 'ci-range' }, ' [' + fmt.num(f.lo) + ', ' + fmt.num(f.hi) + ']')];
}

/** Without the compare endpoint: both reports' summaries side by side, no
 *  ratio (the page shows no number the API does not give). */
async function fallback(ctx, a, b, body) {
  const [pa, ca] = a.split(/:(.*)/s);
  const [pb, cb] = b.split(/:(.*)/s);
  let ra;
  let rb;
  try {
    [ra, rb] = await Promise.all([api('api/v1/plans/' + pa + '/report'), api('api/v1/plans/' + pb + '/report')]);
  } catch (err) {
    if (ctx.current()) put(body, ui.sectionError(err));
    return;
  }
  if (!ctx.current()) return;
  const pick = (r, conf) => {
    const rows = r.summaries || [];
    const want = conf || (rows[0] && rows[0].configuration);
    return new Map(rows.filter((x) => x.configuration === want).map((x) => [x.workload + '\u0000' + x.metric, x]));
  };
  const A = pick(ra, ca);
  const B = pick(rb, cb);
  const keys = [...new Set([...A.keys(), ...B.keys()])];
  const cell = (x) => (x ? [el('td', { class: 'num' }, figureNodes(figures(x))),
    el('td', { class: 'num' }, String(x.n))] : [el('td', { class: 'num muted' }, '-'), el('td', { class: 'num' }, '-')]);
  put(body, ui.unavailable('Ratios and verdicts', 'GET /api/v1/compare'),
    el('p', {}, 'The centres of both reports, side by side:'),
    el('div', { class: 'scroll-x' }, el('table', { id: 'compare-table', class: 'data' },
      el('thead', {}, el('tr', {}, ['Workload', 'Metric'].map((h) => el('th', { scope: 'col' }, h)),
        el('th', { scope: 'col', class: 'num' }, 'A: centre [95 %]'), el('th', { scope: 'col', class: 'num' }, 'n'),
        el('th', { scope: 'col', class: 'num' }, 'B: centre [95 %]'), el('th', { scope: 'col', class: 'num' }, 'n'))),
      el('tbody', {}, keys.map((k) => {
        const x = A.get(k) || B.get(k);
        return el('tr', { 'data-metric': x.metric }, el('td', {}, x.workload), el('td', {}, el('code', {}, x.metric), ' ', direction(x.higher_is_better)),
          cell(A.get(k)), cell(B.get(k)));
      })))));
}
