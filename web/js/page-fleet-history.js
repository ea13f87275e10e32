// page-fleet-history.js — #/fleet-history : a metric's history across the
// hosts a label selector picks (GET /api/v1/history, one request): every
// host's series on one chart, the fleet's median with its quartile band,
// the outlier hosts drawn in colour and listed, change points marked. The
// selector, the metric and the range (last 7, 30, 90 days or custom from/to)
// are in the URL. Bucket means, medians and ratios are the server's.

import { el, put } from './dom.js';
import { api, query } from './api.js';
import { current, href, setParams } from './route.js';
import * as fmt from './fmt.js';
import * as ui from './ui.js';
import { fleetChart } from './charts.js';

const DAY = 86400;
const RANGES = [['7d', 'last 7 days', 7], ['30d', 'last 30 days', 30], ['90d', 'last 90 days', 90], ['custom', 'custom', 0]];
/** Hosts listed before "Show all". */
const HOSTS_SHOWN = 20;

/** The window [from, to] (ISO 8601) of the URL's range: a last-N-days
 *  range ends at the next full hour (so reloads within the hour ask the
 *  same question, which the server keeps answered); custom takes from/to
 *  (dates or times). */
export function windowOf(params, now = Date.now()) {
  const range = params.get('range') || '30d';
  const r = RANGES.find((x) => x[0] === range) || RANGES[1];
  if (r[0] === 'custom') {
    const iso = (d, end) => (d && /^\d{4}-\d{2}-\d{2}$/.test(d) ? d + (end ? 'T23:59:59Z' : 'T00:00:00Z') : d || null);
    const to = iso(params.get('to'), true) || new Date(now).toISOString();
    const from = iso(params.get('from'), false) || new Date(Date.parse(to) - 30 * DAY * 1000).toISOString();
    return { range: 'custom', from, to };
  }
  const end = Math.ceil(now / 3600000) * 3600000;
  return { range: r[0], from: new Date(end - r[2] * DAY * 1000).toISOString(), to: new Date(end).toISOString() };
}

/** Draws the fleet history page. */
export function show(ctx) {
  document.title = 'Fleet history — hvbench';
  const { params } = current();
  const selector = params.get('selector') || '';
  const metric = params.get('metric') || '';
  const win = windowOf(params);
  const selInput = el('input', { id: 'fh-selector', name: 'selector', value: selector, placeholder: 'pool=batch', autocomplete: 'off', required: true });
  const metricInput = el('input', { id: 'fh-metric', name: 'metric', value: metric, placeholder: 'cpu.score', autocomplete: 'off', required: true });
  const rangeSel = el('select', { id: 'fh-range' }, RANGES.map(([k, label]) => el('option', { value: k, selected: k === win.range }, label)));
  const fromInput = el('input', { id: 'fh-from', type: 'date', value: win.range === 'custom' ? win.from.slice(0, 10) : '' });
  const toInput = el('input', { id: 'fh-to', type: 'date', value: win.range === 'custom' ? win.to.slice(0, 10) : '' });
  const custom = el('span', { class: 'fh-custom', hidden: win.range !== 'custom' }, ui.field('From', fromInput), ui.field('To', toInput));
  rangeSel.addEventListener('change', () => { custom.hidden = rangeSel.value !== 'custom'; });
  const form = el('form', { class: 'filters', 'aria-label': 'Fleet history' },
    ui.field('Hosts with labels', selInput), ui.field('Metric', metricInput), ui.field('Range', rangeSel), custom,
    el('button', { type: 'submit' }, 'Show'));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const range = rangeSel.value;
    location.hash = href('/fleet-history', {
      selector: selInput.value.trim(), metric: metricInput.value.trim(), range: range === '30d' ? '' : range,
      from: range === 'custom' ? fromInput.value : '', to: range === 'custom' ? toInput.value : '',
    });
  });
  const body = el('div', { id: 'fleet-history-body' });
  put(ctx.view, el('h1', { tabindex: '-1' }, 'Fleet history'),
    el('p', { class: 'muted' }, 'One metric on every host whose labels match, over time: each host\'s mean per time bucket, the fleet\'s median and middle half, the hosts far from the median in colour.'),
    form, body);
  if (!selector || !metric) {
    put(body, ui.empty('Name the hosts by their labels (', el('code', {}, 'pool=batch'), ') and a metric (',
      el('code', {}, 'cpu.score'), ').'));
    return;
  }
  put(body, ui.loading('the fleet\'s history'));
  load(ctx, body, { selector, metric, key: params.get('key') || '', from: win.from, to: win.to });
}

async function load(ctx, body, q) {
  const d = await ui.answer(ctx, body, api('api/v1/history' + query(q)));
  if (!d) return;
  const hosts = d.hosts || [];
  const withPoints = hosts.filter((h) => (h.points || []).length > 0);
  if (hosts.length === 0) {
    put(body, ui.empty('No host has labels matching ', el('code', {}, q.selector), '.'));
    return;
  }
  if (withPoints.length === 0) {
    put(body, ui.empty('None of the ' + hosts.length + ' hosts has a value of ', el('code', {}, q.metric),
      ' between ', fmt.time(d.from), ' and ', fmt.time(d.to), '.'));
    return;
  }
  const outliers = withPoints.filter((h) => h.outlier);
  const keys = d.series_keys || [];
  // The buckets' times; each host's values and the median's aligned on them.
  const at = (d.median || []).map((m) => m[0]);
  const index = new Map(at.map((x, i) => [x, i]));
  const col = (rows, j) => {
    const a = new Array(at.length).fill(null);
    for (const r of rows || []) if (index.has(r[0])) a[index.get(r[0])] = r[j];
    return a;
  };
  const hib = d.higher_is_better !== false;
  const fig = fleetChart({ id: 'fh-chart', label: d.metric, unit: d.unit, from: Date.parse(d.from) / 1000, to: Date.parse(d.to) / 1000,
    at, median: col(d.median, 1), p25: col(d.median, 2), p75: col(d.median, 3),
    hosts: withPoints.map((h) => ({ name: h.name, v: col(h.points, 1), outlier: h.outlier, below: hib ? h.ratio < 1 : h.ratio > 1 })),
    changePoints: withPoints.flatMap((h) => (h.change_points || []).map((c) => ({ at: Date.parse(c.at) / 1000, status: c.status }))) });
  put(body,
    el('p', { id: 'fh-summary' }, String(withPoints.length), withPoints.length === 1 ? ' host' : ' hosts', ' with values',
      hosts.length > withPoints.length ? ' (' + (hosts.length - withPoints.length) + ' more without any in the range)' : '',
      ', ', String(outliers.length), outliers.length === 1 ? ' outlier' : ' outliers',
      ' (median ratio to the fleet beyond ±' + fmt.num(d.margin_pct) + ' %); one point per host per ', fmt.duration(d.bucket_s),
      ' from ', fmt.time(d.from), ' to ', fmt.time(d.to), '.'),
    keys.length > 1 ? seriesPicker(d, keys) : null,
    fig,
    hostList(d, withPoints));
  fig.draw();
  requestAnimationFrame(() => performance.mark('hv-first-chart'));
}

/** Which workload's series the chart shows, when the hosts ran several. */
function seriesPicker(d, keys) {
  const sel = el('select', { id: 'fh-key' }, keys.map((k) => el('option', { value: k.key, selected: k.key === d.key },
    workloadText(k.workload) + ' — ' + k.hosts + (k.hosts === 1 ? ' host' : ' hosts'))));
  sel.addEventListener('change', () => {
    setParams({ key: sel.value });
    window.dispatchEvent(new HashChangeEvent('hashchange'));
  });
  return el('form', { class: 'filters', onsubmit: (e) => e.preventDefault() }, ui.field('Workload', sel));
}

function workloadText(w) {
  if (!w) return 'workload';
  return [w.kind, w.engine].filter(Boolean).join('/') + (w.params ? ' ' + JSON.stringify(w.params) : '');
}

/** The hosts: outliers first, then the others by how far they lie from
 *  the median (the server's order), the first HOSTS_SHOWN then all. */
function hostList(d, hosts) {
  const rows = (list) => list.map((h) => el('tr', { 'data-host': h.name, class: h.outlier ? 'outlier' : '' },
    el('td', {}, ui.targetLink(h.id, h.name)),
    el('td', { class: 'num' }, fmt.num(h.ratio)),
    el('td', {}, h.outlier ? el('strong', {}, 'outlier') : ''),
    el('td', { class: 'num' }, String((h.change_points || []).length)),
    el('td', {}, el('a', { href: href('/targets/' + h.id, { metric: d.metric }) }, 'its history'))));
  const tbody = el('tbody', {}, rows(hosts.slice(0, HOSTS_SHOWN)));
  const more = hosts.length > HOSTS_SHOWN ? el('button', { type: 'button', id: 'fh-all' }, 'Show all ' + hosts.length + ' hosts') : null;
  if (more) {
    more.addEventListener('click', () => {
      tbody.replaceChildren(...rows(hosts));
      more.remove();
    });
  }
  return el('div', {},
    el('div', { class: 'scroll-x' }, el('table', { id: 'fh-hosts', class: 'data compact' },
      el('caption', {}, 'Hosts, outliers first: ratio is the median over the buckets of the host\'s mean over the fleet\'s median'),
      el('thead', {}, el('tr', {}, ['Host', 'Ratio to median', '', 'Change points', ''].map((x) => el('th', { scope: 'col' }, x)))),
      tbody)),
    more);
}
