// page-compare.js — #/compare?a=PLAN[:CONFIGURATION]&b=... : two plans, or
// two configurations, side by side (GET /api/v1/compare): each side's n,
// centre and 95 % interval per metric, B against A as a % change with its
// interval, coloured by verdict.
// #/compare?items=A,B,C…&baseline=B : two to twelve items (plans,
// configurations, targets standing for their latest done plan) against a
// baseline (GET /api/v1/compare?items=): per metric a bar per item with its
// interval's whiskers, its % against the baseline and the verdict after
// Holm, the overall geometric mean, and the items' settings and facts side
// by side with the differing ones marked.

import { el, put, svg } from './dom.js';
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
  if (params.has('items')) {
    showItems(ctx, params.get('items') || '', params.get('baseline') || '');
    return;
  }
  const a = params.get('a') || '';
  const b = params.get('b') || '';
  const body = el('div', { id: 'compare-body' });
  put(ctx.view, el('h1', { tabindex: '-1' }, 'Compare'), form(ctx, a, b), body);
  if (!a || !b) {
    put(body, ui.empty('Name two plans (' , el('code', {}, '12'), ') or configurations of plans (',
      el('code', {}, '12:vcpu_pin=on'), '); B is compared with A.'),
    el('h2', {}, 'Or compare 2 to ' + ITEMS_MAX + ' items against a baseline'), itemsForm([], ''));
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

/** GET /api/v1/compare with q through get (api or apiOptional); null, the
 *  error shown in body, when it failed. */
async function fetchCompare(ctx, q, body, get) {
  try {
    return await get('api/v1/compare' + query(q));
  } catch (err) {
    if (ctx.current()) {
      put(body, ui.sectionError(err));
      ctx.showError(err);
    }
    return null;
  }
}

async function load(ctx, a, b, body) {
  put(body, ui.loading('the comparison'));
  const res = await fetchCompare(ctx, { a, b }, body, apiOptional);
  if (!res || !ctx.current()) return;
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

/* ---- N items ------------------------------------------------------------ */

const ITEMS_MAX = 12;

/** Splits items= as the server does: on ',', a piece with '=' and no ':'
 *  continuing the configuration of the item before ("12:a=1,b=2"). */
export function splitItems(v) {
  const out = [];
  for (const piece of String(v).split(',')) {
    const last = out[out.length - 1];
    if (last !== undefined && last.includes(':') && !piece.includes(':') && piece.includes('=')) out[out.length - 1] = last + ',' + piece;
    else out.push(piece.trim());
  }
  return out.filter((x) => x !== '');
}

function showItems(ctx, items, baseline) {
  const list = splitItems(items);
  const body = el('div', { id: 'compare-body' });
  put(ctx.view, el('h1', { tabindex: '-1' }, 'Compare'), itemsForm(list, baseline), body);
  if (list.length < 2) {
    put(body, ui.empty('Name 2 to ' + ITEMS_MAX + ' items, joined by commas: plans (', el('code', {}, '12'),
      '), configurations of plans (', el('code', {}, '12:vcpu_pin=on'), ') or targets (their latest done plan). ',
      'Or tick plans on the ', el('a', { href: '#/' }, 'plans list'), ' and press "Compare selected".'));
    return;
  }
  if (list.length > ITEMS_MAX) {
    put(body, ui.sectionError({ problem: { title: 'Too many items', detail: 'at most ' + ITEMS_MAX + ' items compare on one page' } }));
    return;
  }
  loadItems(ctx, list, baseline, body);
}

function itemsForm(list, baseline) {
  const items = el('input', { id: 'cmp-items', name: 'items', value: list.join(','), autocomplete: 'off', required: true, size: 40 });
  const base = el('input', { id: 'cmp-baseline', name: 'baseline', value: baseline, autocomplete: 'off', placeholder: 'the first' });
  const f = el('form', { class: 'filters', id: 'compare-items-form', 'aria-label': 'Items to compare' },
    ui.field('Items (comma-separated)', items), ui.field('Baseline', base),
    el('button', { type: 'submit' }, 'Compare'));
  f.addEventListener('submit', (e) => {
    e.preventDefault();
    location.hash = href('/compare', { items: items.value.trim(), baseline: base.value.trim() });
  });
  return f;
}

async function loadItems(ctx, list, baseline, body) {
  put(body, ui.loading('the comparison'));
  const c = await fetchCompare(ctx, { items: list.join(','), baseline }, body, api);
  if (!c || !ctx.current()) return;
  const items = c.items || [];
  const names = items.map((h) => h.item);
  const base = names[c.baseline];
  const metrics = Array.isArray(c.metrics) ? c.metrics : [];
  put(body,
    el('ol', { class: 'items', id: 'compare-items' }, items.map((h) => el('li', { 'data-item': h.item },
      el('strong', {}, h.item), h.baseline ? [' ', el('span', { class: 'tag', title: 'the item the others are compared with' }, 'baseline')] : null, ': ',
      ui.planLink(h.plan_id, 'plan ' + h.plan_id), ' ', h.plan_name || '', ', configuration ', el('code', {}, h.configuration),
      ' on ', (h.targets || []).join(', ') || '-'))),
    geomean(c, names),
    el('p', { class: 'muted' }, 'Each item against the baseline ', el('strong', {}, base), '; margin of the verdicts ±' + c.margin_pct +
      ' %; a verdict is read after Holm\'s correction over the ' + (names.length - 1) + ' comparisons of its metric. Bars: the centre (the geometric mean), whiskers: its 95 % interval.'),
    metrics.length === 0 ? ui.empty('The items share no workload and metric.') :
      el('div', { id: 'compare-metrics' }, metrics.map((m) => metricSection(m, names))),
    sideBySide('compare-settings', 'Settings', 'The factor levels of each item\'s configuration', c.settings, names),
    sideBySide('compare-facts', 'Facts', 'What the workers last reported of each item\'s targets', c.facts, names));
}

/** The overall geometric mean of each item's ratios, as the API gives it. */
function geomean(c, names) {
  const g = c.geomean || {};
  const values = g.values || [];
  if (values.every((v) => typeof v !== 'number')) {
    return el('section', { id: 'compare-geomean' }, el('h2', {}, 'Overall'), ui.empty('No primary metric that every item has: no overall geometric mean.'));
  }
  return el('section', { id: 'compare-geomean' }, el('h2', {}, 'Overall: geometric mean'),
    el('p', { class: 'muted' }, String(g.sentence || '').replace(/^./, (x) => x.toUpperCase()), ': ', (g.metrics || []).join(', '),
      (g.inverted || []).length ? ['; inverted: ', g.inverted.join(', ')] : null, '.'),
    el('ul', { class: 'plain' }, names.map((n, i) => el('li', { 'data-item': n, 'data-geomean': String(values[i]) },
      el('strong', {}, n), ' ', el('span', { class: 'geomean' }, fmt.num(values[i])),
      typeof values[i] === 'number' && i !== c.baseline ? [' (', fmt.change(100 * (values[i] - 1)), ' %', values[i] >= 1 ? ' better' : ' worse', ')'] : null))));
}

/** One metric: a bar per item with whiskers, its figures, its change
 *  against the baseline and the verdict. */
function metricSection(m, names) {
  const vals = (m.values || []).map((v) => (v ? figures(v) : null));
  const top = Math.max(0, ...vals.flatMap((f) => (f ? [f.center, f.hi].filter((x) => typeof x === 'number' && isFinite(x)) : [])));
  const W = 300;
  const H = 16;
  const x = (v) => (top > 0 ? Math.max(0, Math.min(W, (v / top) * W)) : 0);
  const title = [el('code', {}, m.metric), ' ', direction(m.higher_is_better), m.unit ? el('span', { class: 'muted' }, ' ' + m.unit) : null,
    el('span', { class: 'muted' }, ' · ' + m.workload + (m.target ? ' on ' + m.target : '') + (m.primary ? ' · primary' : ''))];
  return el('section', { class: 'cmp-metric', 'data-metric': m.metric, 'data-workload': m.workload },
    el('h3', {}, title),
    el('div', { class: 'scroll-x' }, el('table', { class: 'data cmp-bars' },
      el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'Item'),
        el('th', { scope: 'col' }, 'Centre and 95 % interval (0 to ' + fmt.num(top) + (m.unit ? ' ' + m.unit : '') + ')'),
        el('th', { scope: 'col', class: 'num' }, 'Centre [95 %]'), el('th', { scope: 'col', class: 'num' }, 'n'),
        el('th', { scope: 'col', class: 'num' }, 'vs baseline [95 %]'), el('th', { scope: 'col' }, 'Verdict (Holm)'))),
      el('tbody', {}, names.map((n, i) => {
        const f = vals[i];
        const c = (m.comparisons || [])[i];
        const cls = c ? ui.verdictClass(c.verdict) : 'baseline';
        return el('tr', { class: cls, 'data-item': n, 'data-center': f ? String(f.center) : '', 'data-change': c && typeof c.change_pct === 'number' ? String(c.change_pct) : '' },
          el('th', { scope: 'row', class: 'item-name' }, n),
          el('td', { class: 'bar-cell' }, f ? svg('svg', { class: 'bar', viewBox: '0 0 ' + W + ' ' + H, preserveAspectRatio: 'none', role: 'img', 'aria-label': n + ': ' + fmt.num(f.center) + (f.note ? '' : ' [' + fmt.num(f.lo) + ', ' + fmt.num(f.hi) + ']') },
            svg('rect', { class: 'bar-fill', x: 0, y: 3, width: x(f.center), height: H - 6, 'data-value': String(f.center) }),
            typeof f.lo === 'number' && typeof f.hi === 'number'
              ? svg('g', { class: 'whisker' }, svg('line', { x1: x(f.lo), x2: x(f.hi), y1: H / 2, y2: H / 2 }),
                svg('line', { x1: x(f.lo), x2: x(f.lo), y1: 2, y2: H - 2 }), svg('line', { x1: x(f.hi), x2: x(f.hi), y1: 2, y2: H - 2 }))
              : null) : el('span', { class: 'muted' }, 'no runs')),
          el('td', { class: 'num' }, f ? figureNodes(f) : '-'),
          el('td', { class: 'num' }, f ? String(m.values[i].n) : '-'),
          el('td', { class: 'num change' }, !c ? el('span', { class: 'muted' }, 'baseline')
            : c && typeof c.change_pct === 'number' ? fmt.changeOrNote(c.change_pct, c.lo_pct, c.hi_pct, c) : '-'),
          el('td', {}, !c ? '-' : c.verdict ? ui.verdictBadge(c.verdict) : el('span', { class: 'muted' }, f ? 'no interval' : 'no runs')));
      })))));
}

/** Settings or facts side by side: the rows that differ, marked, then
 *  the equal ones folded. */
function sideBySide(id, title, caption, rows, names) {
  const list = Array.isArray(rows) ? rows : [];
  const differ = list.filter((r) => r.differs);
  const same = list.filter((r) => !r.differs);
  const table = (part, what) => el('div', { class: 'scroll-x' }, el('table', { class: 'data side-by-side' },
    el('caption', {}, what),
    el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'Name'), names.map((n) => el('th', { scope: 'col' }, n)))),
    el('tbody', {}, part.map((r) => el('tr', { class: r.differs ? 'differs' : null, 'data-name': r.name },
      el('th', { scope: 'row' }, r.name, r.differs ? [' ', el('span', { class: 'tag differs-tag', title: 'the items do not all have the same value' }, 'differs')] : null),
      (r.values || []).map((v) => el('td', {}, cell(v))))))));
  return el('section', { id },
    el('h2', {}, title),
    list.length === 0 ? ui.empty('None recorded.') : [
      differ.length ? table(differ, caption + ': the ' + differ.length + ' of ' + list.length + ' that differ') : el('p', {}, 'All ' + list.length + ' are the same on every item.'),
      same.length ? el('details', {}, el('summary', {}, 'The ' + same.length + ' that are the same on every item'), table(same, caption + ': the same on every item')) : null]);
}

/** A value of a setting or fact. */
function cell(v) {
  if (v === null || v === undefined) return el('span', { class: 'muted' }, '-');
  if (typeof v === 'number') return fmt.num(v);
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}
