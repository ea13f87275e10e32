// plan-hosts.js — a fleet plan's hosts on its plan page: the child plan of
// each host with its status and progress (GET /api/v1/plans/{id}
// `children`), and the report's per-host view (`hosts`): per workload and
// primary metric each host's ratio to the fleet's median with its 95 %
// interval, the outliers marked, and what differs in their facts.

import { el } from './dom.js';
import { intervalChart } from './charts.js';
import * as fmt from './fmt.js';
import * as ui from './ui.js';

/** The children of a fleet plan: host, child plan, status, progress and
 *  what a waiting child waits for. */
export function children(plan) {
  const kids = Array.isArray(plan.children) ? plan.children : [];
  if (kids.length === 0) return ui.empty('No host matched the selector.');
  const running = kids.filter((c) => ui.ACTIVE.has(c.status) && !c.waiting).length;
  return el('div', {},
    el('p', { id: 'fleet-line' }, kids.length + (kids.length === 1 ? ' host' : ' hosts'),
      typeof plan.max_parallel_hosts === 'number' ? ', at most ' + plan.max_parallel_hosts + ' at a time' : '',
      running > 0 ? ' (' + running + ' now)' : '', '.'),
    el('div', { class: 'scroll-x' }, el('table', { id: 'children-table', class: 'data' },
      el('caption', {}, 'One plan per host, the same workloads and seed: each host\'s results, verdicts and recommendations are on its plan\'s page'),
      el('thead', {}, el('tr', {}, ['Host', 'Plan', 'Status', 'Progress'].map((h) => el('th', { scope: 'col' }, h)))),
      el('tbody', {}, kids.map((c) => {
        const p = typeof c.progress === 'number' ? c.progress : 0;
        return el('tr', { 'data-plan-id': c.id },
          el('td', {}, c.host || '-'),
          el('td', {}, ui.planLink(c.id, 'Plan ' + c.id)),
          el('td', {}, ui.badge(c.status), c.waiting ? el('div', { class: 'waiting' }, String(c.waiting.detail || c.waiting)) : null),
          el('td', { class: 'num' }, el('progress', { max: 1, value: p, 'aria-label': 'plan ' + c.id + ' progress' }),
            ' ' + Math.floor(p * 100 + 1e-9) + '%'));
      })))));
}

/** The report's per-host view: a chart and a table per series, then the
 *  outliers with the facts in which they differ from the typical host. */
export function hostsView(report) {
  const h = report && report.hosts;
  if (!h || !Array.isArray(h.series)) return ui.empty('The per-host view comes with the children\'s results.');
  if (h.series.length === 0) return ui.empty('No host has a result of a primary metric yet.');
  const margin = h.margin_pct;
  const figs = h.series.map((s) => {
    const rows = Array.isArray(s.hosts) ? s.hosts : [];
    const below = (r) => (s.higher_is_better === false ? r.ratio > 1 : r.ratio < 1);
    const items = rows.map((r) => ({
      label: r.host, center: r.ratio, lo: r.usable === false ? null : r.ratio_lo ?? null, hi: r.usable === false ? null : r.ratio_hi ?? null,
      cls: r.outlier ? ui.verdictClass(below(r) ? 'worse' : 'better') : ui.verdictClass('no_effect'),
    }));
    const title = s.metric + ' — ' + s.workload + (s.where === 'guests' ? ', the guests' : ', the host') + ': ratio to the fleet median';
    // A ratio chart: the fleet median (1) as a line, the ±margin as a
    // band, an interval reaching 0 too wide to draw.
    const fig = intervalChart(title, null, items, 'host', { ratio: true, ref: 1,
      band: typeof margin === 'number' ? [1 - margin / 100, 1 + margin / 100] : null, axisLabel: 'ratio to the fleet median' });
    fig.setAttribute('data-metric', s.metric);
    fig.setAttribute('data-workload', s.workload);
    fig.setAttribute('data-where', s.where || 'host');
    fig.append(el('p', { class: 'muted small' }, 'Fleet median ', el('span', { class: 'num median' }, fmt.num(s.median)),
      s.unit ? ' ' + s.unit : '', '; dot: the host\'s mean over the median, whiskers: its 95 % interval; line: the median (1), band: ±' +
      margin + ' % around it, which an outlier\'s interval lies wholly beyond' + (s.higher_is_better === false ? ' (lower is better).' : '.')));
    fig.append(el('div', { class: 'scroll-x' }, el('table', { class: 'data compact hosts-table' },
      el('caption', { class: 'visually-hidden' }, title),
      el('thead', {}, el('tr', {}, ['Host', 'Rounds', 'Mean', '95 % interval', 'Ratio', 'Ratio interval', ''].map((x) => el('th', { scope: 'col' }, x)))),
      el('tbody', {}, rows.map((r) => el('tr', { class: r.outlier ? ui.verdictClass(below(r) ? 'worse' : 'better') : '', 'data-host': r.host },
        el('td', {}, r.host), el('td', { class: 'num' }, String(r.n)),
        el('td', { class: 'num mean' }, fmt.num(r.mean)),
        el('td', { class: 'num' }, fmt.boundsOrNote(r, r.lo, r.hi, fmt.num)),
        el('td', { class: 'num ratio' }, fmt.num(r.ratio)),
        el('td', { class: 'num' }, fmt.boundsOrNote(r, r.ratio_lo, r.ratio_hi, fmt.num)),
        el('td', {}, r.outlier ? el('strong', {}, 'outlier') : '')))))));
    return fig;
  });
  const outliers = Array.isArray(h.outliers) ? h.outliers : [];
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
