// page-job.js — #/jobs/ID : one job. What it ran and where, the per-second
// samples as time series with the host telemetry (host.* samples) beneath
// on the same time axis, each attempt's metrics, the raw tool output and
// the environment the worker observed. The samples come from GET
// /api/v1/jobs/{id}/samples at about one value per pixel of the charts
// (time buckets: mean, min, max); a drag across a chart zooms every chart
// to its range, writes it to the URL (from/to, seconds since the start)
// and asks for the range again, whole once it holds few samples; a link
// with from/to opens zoomed.

import { el, put } from './dom.js';
import { api, query } from './api.js';
import { current, href, setParams } from './route.js';
import { chartPoints, seriesChart } from './charts.js';
import { direction } from './plan-report.js';
import { jobSeconds } from './page-jobs.js';
import * as fmt from './fmt.js';
import * as ui from './ui.js';

/** Draws the job page. */
export function show(ctx, id) {
  document.title = 'Job ' + id + ' — hvbench';
  const crumbs = el('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' }, el('a', { href: '#/' }, 'Plans'));
  const title = el('h1', { tabindex: '-1' }, 'Job ' + id);
  const head = el('section', { id: 'job-head', class: 'plan-status', 'aria-label': 'Job' }, ui.loading('the job'));
  const results = el('div', { id: 'job-results' }, ui.loading('the results'));
  put(ctx.view, crumbs, title, head, results);

  (async () => {
    let job;
    let res;
    let sd;
    const want = Number(current().params.get('attempt')) || null;
    const points = chartPoints(ctx.view);
    try {
      // The three at once: the samples of the attempt asked for (or the
      // latest), which is the one shown unless it does not exist.
      [job, res, sd] = await Promise.all([api('api/v1/jobs/' + id), api('api/v1/jobs/' + id + '/results?samples=0'),
        api('api/v1/jobs/' + id + '/samples' + query({ attempt: want, points }))]);
    } catch (err) {
      if (!ctx.current()) return;
      put(head, ui.sectionError(err));
      put(results);
      ctx.showError(err);
      return;
    }
    if (!ctx.current()) return;
    crumbs.append(' / ', ui.planLink(job.plan_id, 'Plan ' + job.plan_id), ' / ',
      el('a', { href: '#/plans/' + job.plan_id + '/jobs' }, 'Jobs'));
    title.textContent = 'Job ' + job.id + ': ' + job.workload + ' on ' + job.target;
    document.title = title.textContent + ' — hvbench';
    put(head, jobHead(job));
    if (typeof job.target_id !== 'number') targetLink(ctx, head, job.target);
    const items = Array.isArray(res.items) ? res.items : [];
    if (items.length === 0) {
      put(results, ui.empty(ui.ACTIVE.has(job.status) ? 'No result yet: the job is ' + job.status + '.' : 'No result was uploaded.'));
      return;
    }
    const r = items.find((x) => x.attempt === want) || items[items.length - 1];
    if (sd.attempt !== r.attempt) {
      try {
        sd = await api('api/v1/jobs/' + id + '/samples' + query({ attempt: r.attempt, points }));
      } catch (err) {
        if (ctx.current()) put(results, ui.sectionError(err));
        return;
      }
      if (!ctx.current()) return;
    }
    put(results,
      items.length > 1 ? el('p', { class: 'attempts' }, 'Attempts: ', items.map((x, i) => [i ? ' · ' : '',
        x === r ? el('strong', {}, String(x.attempt)) : el('a', { href: href('/jobs/' + id, { attempt: x.attempt }) }, String(x.attempt))])) : null,
      resultView(ctx, id, r, sd, points));
  })();
}


/** A link to the job's target, once the targets list names its id (for a
 *  job that names no target id). */
async function targetLink(ctx, head, name) {
  try {
    const d = await api('api/v1/targets');
    const t = (d.items || []).find((x) => x.name === name);
    const slot = head.querySelector('.target-slot');
    if (ctx.current() && t && slot) put(slot, ui.targetLink(t.id, name));
  } catch (e) {
    // The name stays plain text.
  }
}

function jobHead(j) {
  const spec = j.spec || {};
  return [
    el('div', { class: 'status-line' }, ui.badge(j.status), el('span', {}, 'attempt ' + j.attempt),
      j.failures ? el('span', { class: 'count-failed nonzero' }, j.failures + ' failed attempt' + (j.failures === 1 ? '' : 's')) : null),
    el('dl', { class: 'facts' },
      el('dt', {}, 'Target'), el('dd', { class: 'target-slot' },
        typeof j.target_id === 'number' ? ui.targetLink(j.target_id, j.target) : j.target),
      el('dt', {}, 'Configuration'), el('dd', {}, j.configuration),
      el('dt', {}, 'Workload'), el('dd', {}, j.workload, spec.engine ? ' (' + spec.kind + ', ' + spec.engine + ')' : ''),
      el('dt', {}, 'Repetition'), el('dd', {}, String(j.repetition)),
      j.role ? [el('dt', {}, 'Role'), el('dd', {}, j.role + (spec.peer ? ' with ' + spec.peer : ''))] : null,
      el('dt', {}, 'Claimed'), el('dd', {}, ui.timeEl(j.claimed_at)),
      el('dt', {}, 'Finished'), el('dd', {}, ui.timeEl(j.finished_at)),
      el('dt', {}, 'Duration'), el('dd', {}, fmt.duration(jobSeconds(j))),
      spec.params ? [el('dt', {}, 'Parameters'), el('dd', {}, ui.kvList(spec.params))] : null),
    j.error ? el('pre', { class: 'error-text', id: 'job-error' }, j.error) : null,
  ];
}

/** The samples answer's series as columns: Map name → {t, v, min, max
 *  (Float64Arrays; min/max null when the values are the samples), n,
 *  downsampled}, and the time range of them all. */
export function sampleColumns(sd) {
  const out = new Map();
  let lo = Infinity;
  let hi = -Infinity;
  for (const s of Array.isArray(sd.series) ? sd.series : []) {
    const d = s.downsampled && Array.isArray(s.min) && Array.isArray(s.max);
    out.set(s.metric, {
      t: Float64Array.from(s.t), v: Float64Array.from(s.value),
      min: d ? Float64Array.from(s.min) : null, max: d ? Float64Array.from(s.max) : null,
      n: s.n, downsampled: Boolean(s.downsampled),
    });
    if (s.first < lo) lo = s.first;
    if (s.last > hi) hi = s.last;
  }
  return { groups: out, range: hi >= lo ? [lo, hi === lo ? lo + 1 : hi] : null };
}

const EMPTY = { t: new Float64Array(0), v: new Float64Array(0), min: null, max: null, n: 0, downsampled: false };

/** The unit of a host telemetry series, which its name spells
 *  (docs/worker.md): the results list units of the workload's metrics
 *  only. */
const TELEMETRY_UNITS = [['_pct', '%'], ['_bytes_s', 'bytes/s'], ['_reqs_s', 'requests/s'], ['_drops_s', 'packets/s']];

function unitOf(units, name) {
  if (units.get(name)) return units.get(name);
  if (!name.startsWith('host.')) return '';
  const hit = TELEMETRY_UNITS.find(([suffix]) => name.endsWith(suffix));
  return hit ? hit[1] : '';
}

/** The zoom in the URL: [from, to] seconds since the start, or null. */
function urlView() {
  const { params } = current();
  const from = Number(params.get('from'));
  const to = Number(params.get('to'));
  return params.has('from') && params.has('to') && isFinite(from) && isFinite(to) && to > from ? [from, to] : null;
}

const sameView = (a, b) => (a === null ? b === null : b !== null && a[0] === b[0] && a[1] === b[1]);

function resultView(ctx, id, r, sd, points) {
  const units = new Map((r.metrics || []).map((m) => [m.name, m.unit]));
  const { groups, range } = sampleColumns(sd);
  const names = [...groups.keys()];
  const workload = names.filter((n) => !n.startsWith('host.'));
  const host = names.filter((n) => n.startsWith('host.'));
  const sync = 'job-' + id;
  // A zoom is every chart's view at once (the synced charts each report
  // the same drag), in the URL; its samples are asked again, the last
  // asked wins. The whole run is the samples read first.
  let view = urlView();
  let asked = 0;
  const load = async (z) => {
    const mine = ++asked;
    let got = groups;
    if (z) {
      let d;
      try {
        d = await api('api/v1/jobs/' + id + '/samples' + query({ attempt: r.attempt, points, from: z[0], to: z[1] }));
      } catch (err) {
        if (ctx.current()) ctx.showError(err);
        return;
      }
      got = sampleColumns(d).groups;
    }
    if (!ctx.current() || mine !== asked) return;
    for (const f of figs) f.update(got.get(f.dataset.metric) || EMPTY);
  };
  const zoom = (z) => {
    if (sameView(z, view)) return;
    view = z;
    setParams({ from: z ? z[0] : null, to: z ? z[1] : null });
    for (const f of figs) f.setView(z);
    load(z);
  };
  const chart = (n, color) => {
    const g = groups.get(n);
    const f = seriesChart({ label: n, unit: unitOf(units, n), ...g, points, full: range, view, sync, color, height: color ? 140 : 200, onZoom: zoom });
    f.dataset.metric = n;
    return f;
  };
  const wFigs = workload.map((n) => chart(n));
  const hFigs = host.map((n) => chart(n, '--host'));
  const figs = [...wFigs, ...hFigs];
  const raw = el('details', { id: 'raw-output' }, el('summary', {}, 'Raw tool output'), el('div', { class: 'raw-body' }));
  raw.addEventListener('toggle', () => { if (raw.open) loadRaw(ctx, id, r.attempt, raw.querySelector('.raw-body')); });
  const box = el('div', {},
    el('p', { class: 'status-line' }, 'Result of attempt ' + r.attempt + ': ', ui.tagBadge('status-' + (r.status === 'ok' ? 'done' : 'failed'), r.status,
        r.status === 'ok' ? 'ok: the attempt ran and reported its metrics' : r.status + ': the attempt did not report its metrics (its error below)'),
      ' · started ', ui.timeEl(r.started_at), ' · finished ', ui.timeEl(r.finished_at)),
    r.error ? el('pre', { class: 'error-text' }, r.error) : null,
    // The charts first, above the fold; the metrics' table beneath them.
    ui.section('samples', 'Per-second samples',
      wFigs.length ? [el('p', { class: 'muted small' }, 'Drag across a chart to zoom every chart into a range (kept in the URL); double-click or "Whole run" to zoom out.'), wFigs]
        : ui.empty('This result has no per-second samples.')),
    ui.section('telemetry', 'Host telemetry',
      hFigs.length ? hFigs : ui.empty('No host telemetry in this result (no host.* samples).')),
    ui.section('metrics', 'Metrics', metricsTable(r.metrics || [])),
    ui.section('observed', 'Observed environment',
      r.observed && Object.keys(r.observed).length ? ui.kvList(r.observed) : ui.empty('Nothing observed.')),
    raw);
  // Draw once the figures are in the document (they measure their width).
  requestAnimationFrame(() => {
    if (!ctx.current()) return;
    let first = true;
    for (const f of figs) {
      f.draw();
      if (first) {
        first = false;
        requestAnimationFrame(() => performance.mark('hv-first-chart'));
      }
    }
  });
  // A link with from/to opens zoomed: the range's own samples.
  if (view) load(view);
  return box;
}

function metricsTable(metrics) {
  if (metrics.length === 0) return ui.empty('No metrics.');
  return el('table', { id: 'metrics-table', class: 'data compact' },
    el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'Metric'), el('th', { scope: 'col', class: 'num' }, 'Value'), el('th', { scope: 'col' }, 'Unit'))),
    el('tbody', {}, metrics.map((m) => el('tr', { 'data-metric': m.name },
      el('td', {}, m.name, ' ', direction(m.higher_is_better)), el('td', { class: 'num' }, fmt.num(m.value)), el('td', {}, m.unit || '')))));
}

async function loadRaw(ctx, id, attempt, slot) {
  if (slot.dataset.loaded) return;
  slot.dataset.loaded = '1';
  put(slot, ui.loading('the raw output'));
  try {
    const d = await api('api/v1/jobs/' + id + '/results?samples=0&raw=1');
    if (!ctx.current()) return;
    const r = (d.items || []).find((x) => x.attempt === attempt);
    put(slot, r && r.raw ? el('pre', { class: 'raw' }, r.raw) : ui.empty('The worker kept no raw output for this result (built-in engines print none).'));
  } catch (err) {
    slot.dataset.loaded = '';
    put(slot, ui.sectionError(err));
  }
}
