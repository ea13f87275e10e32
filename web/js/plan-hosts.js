// plan-hosts.js — a fleet plan's hosts on its plan page: the child plan of
// each host with its status and progress (GET /api/v1/plans/{id}
// `children`), and the report's per-host view (`hosts`): per workload and
// primary metric each host's ratio to the fleet's median with its 95 %
// interval, the outliers marked, and what differs in their facts. Made for
// hundreds of hosts: a strip of dots per series instead of a chart row per
// host, outliers first, a filter by name or labels kept in the URL, long
// lists shown 25 rows at a time.

import { el, put } from './dom.js';
import { api, query } from './api.js';
import { current, setParams } from './route.js';
import * as fmt from './fmt.js';
import * as ui from './ui.js';
import { ratioStrip } from './charts.js';

/** Rows a long host list shows before "Show all". */
const ROWS_SHOWN = 25;

/** The host filter of the URL ("hosts"): words a host's name contains, or
 *  a label selector (k=v[,k=v]) its target's labels hold. */
function hostFilter() {
  return (current().params.get('hosts') || '').trim();
}

/** Whether a filter is a label selector rather than part of a name. */
function isSelector(f) {
  return /^[^=,\s]+=[^=,]*(,[^=,\s]+=[^=,]*)*$/.test(f);
}

/** The filter's test of a host name: names holds the hosts whose labels
 *  match when the filter is a selector. */
function matcher(f, names) {
  if (!f) return () => true;
  if (isSelector(f)) return (h) => !!names && names.has(h);
  const low = f.toLowerCase();
  return (h) => String(h || '').toLowerCase().includes(low);
}

/** A tbody of rows(list) showing the first ROWS_SHOWN, and a button
 *  showing the rest. */
function limited(tbody, list, row) {
  tbody.replaceChildren(...list.slice(0, ROWS_SHOWN).map(row));
  if (list.length <= ROWS_SHOWN) return null;
  const more = el('button', { type: 'button', class: 'small show-all' }, 'Show all ' + list.length);
  more.addEventListener('click', () => {
    tbody.replaceChildren(...list.map(row));
    more.remove();
  });
  return more;
}

/** The filter form of a fleet plan's hosts: typing filters the children
 *  and the per-host view (onChange(filter, names)); a label selector is
 *  looked up once among the host targets. The filter stays in the URL. */
export function filterForm(onChange) {
  const input = el('input', { id: 'hosts-filter', type: 'search', value: hostFilter(), placeholder: 'name, or labels such as rack=3', size: 32, autocomplete: 'off' });
  let seq = 0;
  const apply = async () => {
    const f = input.value.trim();
    setParams({ hosts: f });
    const mine = ++seq;
    let names = null;
    if (isSelector(f)) {
      try {
        const d = await api('api/v1/targets' + query({ kind: 'host', label: f }));
        names = new Set((d.items || []).map((t) => t.name));
      } catch {
        names = new Set();
      }
    }
    if (mine === seq) onChange(f, names);
  };
  input.addEventListener('input', apply);
  return { form: el('form', { class: 'filters', role: 'search', onsubmit: (e) => e.preventDefault() },
    ui.field('Hosts', input)), apply };
}

/** The children of a fleet plan: host, child plan, status, progress and
 *  what a waiting child waits for; those the filter keeps (names: the
 *  hosts a label filter matched). */
export function children(plan, filter = hostFilter(), names = null) {
  const kids = Array.isArray(plan.children) ? plan.children : [];
  if (kids.length === 0) return ui.empty('No host matched the selector.');
  const running = kids.filter((c) => ui.ACTIVE.has(c.status) && !c.waiting).length;
  const keep = matcher(filter, names);
  const shown = kids.filter((c) => keep(c.host));
  const tbody = el('tbody', {});
  const more = limited(tbody, shown, (c) => {
    const p = typeof c.progress === 'number' ? c.progress : 0;
    return el('tr', { 'data-plan-id': c.id },
      el('td', {}, c.host || '-'),
      el('td', {}, ui.planLink(c.id, 'Plan ' + c.id)),
      el('td', {}, ui.badge(c.status), c.waiting ? el('div', { class: 'waiting' }, String(c.waiting.detail || c.waiting)) : null),
      el('td', { class: 'num' }, el('progress', { max: 1, value: p, 'aria-label': 'plan ' + c.id + ' progress' }),
        ' ' + Math.floor(p * 100 + 1e-9) + '%'));
  });
  return el('div', {},
    el('p', { id: 'fleet-line' }, kids.length + (kids.length === 1 ? ' host' : ' hosts'),
      typeof plan.max_parallel_hosts === 'number' ? ', at most ' + plan.max_parallel_hosts + ' at a time' : '',
      running > 0 ? ' (' + running + ' now)' : '', '.',
      filter ? ' ' + shown.length + ' match the filter.' : ''),
    el('div', { class: 'scroll-x' }, el('table', { id: 'children-table', class: 'data' },
      el('caption', {}, 'One plan per host, the same workloads and seed: each host\'s results, verdicts and recommendations are on its plan\'s page'),
      el('thead', {}, el('tr', {}, ['Host', 'Plan', 'Status', 'Progress'].map((h) => el('th', { scope: 'col' }, h)))),
      tbody)), more);
}

/** The report's per-host view: per series a strip of the hosts' ratios
 *  and a table, outliers first then by how far the ratio lies from 1.0,
 *  filtered as children() is; then the outliers with the facts in which
 *  they differ from the typical host. */
export function hostsView(report, filter = hostFilter(), names = null) {
  const h = report && report.hosts;
  if (!h || !Array.isArray(h.series)) return ui.empty('The per-host view comes with the children\'s results.');
  if (h.series.length === 0) return ui.empty('No host has a result of a primary metric yet.');
  const margin = h.margin_pct;
  const keep = matcher(filter, names);
  const far = (r) => (typeof r.ratio === 'number' ? Math.abs(r.ratio - 1) : -1);
  const figs = h.series.map((s) => {
    const rows = (Array.isArray(s.hosts) ? s.hosts : []).slice()
      .sort((a, b) => (b.outlier === true) - (a.outlier === true) || far(b) - far(a) || String(a.host).localeCompare(String(b.host)));
    const below = (r) => (s.higher_is_better === false ? r.ratio > 1 : r.ratio < 1);
    const title = s.metric + ' — ' + s.workload + (s.where === 'guests' ? ', the guests' : ', the host') + ': ratio to the fleet median';
    const shown = rows.filter((r) => keep(r.host));
    const tbody = el('tbody', {});
    const more = limited(tbody, shown, (r) => el('tr', { class: r.outlier ? ui.verdictClass(below(r) ? 'worse' : 'better') : '', 'data-host': r.host },
      el('td', {}, r.host), el('td', { class: 'num' }, String(r.n)),
      el('td', { class: 'num mean' }, fmt.num(r.mean)),
      el('td', { class: 'num' }, fmt.boundsOrNote(r, r.lo, r.hi, fmt.num)),
      el('td', { class: 'num ratio' }, fmt.num(r.ratio)),
      el('td', { class: 'num' }, fmt.boundsOrNote(r, r.ratio_lo, r.ratio_hi, fmt.num)),
      el('td', {}, r.outlier ? el('strong', {}, 'outlier') : '')));
    const n = rows.filter((r) => r.outlier).length;
    return el('figure', { class: 'host-series', 'data-metric': s.metric, 'data-workload': s.workload, 'data-where': s.where || 'host' },
      el('figcaption', {}, title, s.unit ? el('span', { class: 'unit' }, ' (' + s.unit + ')') : null),
      ratioStrip(title, shown.map((r) => ({ name: r.host, ratio: r.ratio, outlier: r.outlier,
        cls: ui.verdictClass(r.outlier ? (below(r) ? 'worse' : 'better') : 'no_effect') })), margin),
      el('p', { class: 'muted small' }, 'Fleet median ', el('span', { class: 'num median' }, fmt.num(s.median)),
        s.unit ? ' ' + s.unit : '', '; ', String(rows.length), ' hosts, ', String(n), n === 1 ? ' outlier' : ' outliers',
        ' (interval wholly beyond ±' + margin + ' %', s.higher_is_better === false ? ', lower is better' : '',
        '); dot: a host\'s mean over the median, line: 1.0, band: ±' + margin + ' %. Outliers first, then by distance from 1.0.'),
      el('div', { class: 'scroll-x' }, el('table', { class: 'data compact hosts-table' },
        el('caption', { class: 'visually-hidden' }, title),
        el('thead', {}, el('tr', {}, ['Host', 'Rounds', 'Mean', '95 % interval', 'Ratio', 'Ratio interval', ''].map((x) => el('th', { scope: 'col' }, x)))),
        tbody)), more);
  });
  const outliers = (Array.isArray(h.outliers) ? h.outliers : []).filter((o) => keep(o.host));
  return el('div', {},
    el('div', { class: 'charts hosts-charts' }, figs),
    el('h3', {}, 'Outliers'),
    outliers.length === 0 ? ui.empty('No host lies beyond ±' + margin + ' % of the fleet median.')
      : el('ul', { id: 'outliers', class: 'outliers' }, outliers.map((o) => el('li', { 'data-host': o.host },
        el('strong', {}, o.host), ' (', ui.planLink(o.plan_id, 'plan ' + o.plan_id), '): ',
        (o.series || []).map((x, i) => [i ? '; ' : '', x.metric + ' (' + x.workload + ', ' + (x.where === 'guests' ? 'the guests' : 'the host') + ') ' + x.side + ' the median, ratio ' + fmt.num(x.ratio) +
          (typeof x.ratio_lo === 'number' ? ' [' + fmt.num(x.ratio_lo) + ', ' + fmt.num(x.ratio_hi) + ']' : '')]),
        '. ', (o.differs || []).length === 0 ? 'Its facts are the typical host\'s.'
          : ['Differs in ', (o.differs || []).map((d, i) => [i ? ', ' : '', el('code', {}, d.fact), ' ', fmt.value(d.value),
            ' (typical ', fmt.value(d.typical), ')']), '.']))));
}

/** A fleet plan's hosts section: the filter, the children and the
 *  per-host view of report (or the error reading it), redrawn as the
 *  filter changes. */
export function section(plan, report, reportError) {
  const kids = el('div', {});
  const view = el('div', { id: 'hosts-view' });
  const draw = (f, names) => {
    put(kids, children(plan, f, names));
    put(view, report ? hostsView(report, f, names) : ui.sectionError(reportError));
  };
  const { form, apply } = filterForm(draw);
  const f = hostFilter();
  if (isSelector(f)) apply();
  else draw(f, null);
  // The strips are the page's first chart (bench/web.sh).
  if (report) requestAnimationFrame(() => performance.mark('hv-first-chart'));
  return el('div', {}, form, kids, view);
}
