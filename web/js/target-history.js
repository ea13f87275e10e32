// target-history.js — a metric's history on a target over months (GET
// /api/v1/targets/{id}/history): one zoomable chart per series, imports at
// their own dates, change points marked, each listed with the fingerprint
// and facts that differ around it and the tuning changes between, and a
// form to acknowledge it with a submit token. The zoom range (from/to,
// epoch seconds) and the metric are in the URL: a drag zooms every chart
// of the metric, and a link with from/to opens zoomed.

import { el, put } from './dom.js';
import { api, apiOptional, query } from './api.js';
import { current, href, setParams } from './route.js';
import { chartPoints, historyChart } from './charts.js';
import * as fmt from './fmt.js';
import * as ui from './ui.js';

const RECENT_PLANS = 5; // whose report rows suggest metrics

/** Draws the history section of target id into slot; target is the
 *  promise of the target itself (GET /api/v1/targets/{id}), whose name and
 *  benchmarks the section's words and metric suggestions need, but not its
 *  chart. A target that cannot be read leaves the section to the page. */
export async function history(ctx, id, target, slot) {
  const { params } = current();
  const metric = params.get('metric') || '';
  const input = el('input', { id: 'history-metric', name: 'metric', list: 'history-metrics', value: metric, autocomplete: 'off', required: true });
  const list = el('datalist', { id: 'history-metrics' });
  const body = el('div', { id: 'history-body' });
  const form = el('form', { class: 'filters', 'aria-label': 'History of a metric' },
    ui.field('Metric', input), list, el('button', { type: 'submit' }, 'Show'));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const m = input.value.trim();
    if (m) location.hash = href('/targets/' + id, { metric: m });
  });
  put(slot, form, body);
  // The metric suggestions read the target's recent reports: with a metric
  // asked for they wait until its chart is drawn, so they do not compete
  // with it for the server and the page.
  let suggested = false;
  const suggest = () => {
    if (suggested || !ctx.current()) return;
    suggested = true;
    target.then((t) => suggestMetrics(ctx, t, list, metric, body), () => {});
  };
  if (!metric) {
    suggest();
    return;
  }
  let charted = false;
  try {
    charted = await drawHistory(ctx, id, target, slot, body, metric, suggest);
  } finally {
    if (!charted) suggest();
  }
}

/** The history of metric in body; true when a chart is to be drawn, which
 *  calls suggest once it is. */
async function drawHistory(ctx, id, target, slot, body, metric, suggest) {
  const { params } = current();
  const from = Number(params.get('from'));
  const to = Number(params.get('to'));
  const view = from > 0 && to > from ? [from, to] : null;
  put(body, ui.loading('the history'));
  // About a point per pixel of the chart: past that the server answers
  // time buckets (mean, min, max), which draw the same and arrive sooner.
  // A zoom (from/to in the URL, seconds) is asked of the server: the
  // window's own points, or finer buckets of it, not the whole range's.
  const points = chartPoints(body);
  const ask = (r) => apiOptional('api/v1/targets/' + id + '/history' + query({
    metric, workload: params.get('workload'), configuration: params.get('configuration'), max_points: points,
    from: r ? new Date(r[0] * 1000).toISOString() : null,
    to: r ? new Date(r[1] * 1000).toISOString() : null,
  }));
  let res;
  let win = null;
  try {
    // The whole series (its full range and change points, what "Whole
    // range" shows) and, with a zoom in the URL, the window beside it.
    [res, win] = await Promise.all([ask(null), view ? ask(view) : null]);
  } catch (err) {
    if (ctx.current()) put(body, ui.sectionError(err));
    return;
  }
  if (!ctx.current()) return;
  if (res.missing) {
    put(body, ui.unavailable('History', 'GET /api/v1/targets/{id}/history'));
    return;
  }
  let t;
  try {
    t = await target;
  } catch (err) {
    return;
  }
  if (!ctx.current()) return;
  const h = res.data;
  const series = Array.isArray(h.series) ? h.series : [];
  if (series.length === 0) {
    put(body, ui.empty('Nothing on ' + t.name + ' measured ' + metric + '.'));
    return;
  }
  const zoom = zoomer(ctx, ask, h, view);
  const shown = win && !win.missing ? win.data : h;
  const figs = series.map((s, i) => seriesView(ctx, t, h, s, i, zoom.view, matching(shown, s), zoom.to));
  zoom.figs = figs;
  put(body,
    h.new_change_points > 0 ? el('p', { class: 'warning-line' }, h.new_change_points + ' change point' + (h.new_change_points === 1 ? '' : 's') + ' nobody acknowledged yet.') : null,
    figs);
  requestAnimationFrame(() => {
    if (!ctx.current()) return;
    let first = true;
    for (const f of figs) {
      f.chart.draw();
      if (first) {
        first = false;
        requestAnimationFrame(() => {
          performance.mark('hv-first-chart');
          suggest();
        });
      }
    }
  });
  return true;
}

/** The series of answer a that is series s of another answer (the same
 *  workload), or null: a window may hold points of fewer series. */
function matching(a, s) {
  const key = JSON.stringify(s.workload || null);
  return (Array.isArray(a.series) ? a.series : []).find((x) => JSON.stringify(x.workload || null) === key) || null;
}

/** A series' points as a chart draws them. */
function columns(s) {
  const pts = s && Array.isArray(s.points) ? s.points : [];
  const d = Boolean(s && s.downsampled);
  return {
    at: Float64Array.from(pts, (p) => Date.parse(p.at) / 1000),
    v: Float64Array.from(pts, (p) => p.value),
    min: d ? Float64Array.from(pts, (p) => (typeof p.min === 'number' ? p.min : p.value)) : null,
    max: d ? Float64Array.from(pts, (p) => (typeof p.max === 'number' ? p.max : p.value)) : null,
  };
}

/** What a zoom does: every chart shows the window at once, the window
 *  goes into the URL (from/to) and its own points are read (after the
 *  drag has settled) into the same charts, which keep the window; the
 *  whole range shows the whole answer h again. .to(range | null) zooms,
 *  .view is the window shown, .figs the series' views (seriesView). */
function zoomer(ctx, ask, h, view) {
  let timer = null;
  let asked = 0;
  const z = { view, figs: [] };
  const apply = (a) => {
    for (const f of z.figs) f.show(matching(a, f.series));
  };
  z.to = (r) => {
    if (r === z.view || (r && z.view && r[0] === z.view[0] && r[1] === z.view[1])) return;
    z.view = r;
    setParams({ from: r ? r[0] : null, to: r ? r[1] : null });
    for (const f of z.figs) f.chart.setView(r);
    clearTimeout(timer);
    const mine = ++asked;
    if (!r) {
      apply(h);
      return;
    }
    timer = setTimeout(async () => {
      let res;
      try {
        res = await ask(r);
      } catch (err) {
        if (ctx.current()) ctx.showError(err);
        return;
      }
      if (ctx.current() && mine === asked && !res.missing) apply(res.data);
    }, 300);
  };
  return z;
}

async function suggestMetrics(ctx, t, list, metric, body) {
  const names = new Set((t.benchmarks || []).map((b) => b.metric));
  try {
    const plans = await api('api/v1/plans' + query({ target: t.name, limit: RECENT_PLANS }));
    const reports = await Promise.all((plans.items || []).map((p) => api('api/v1/plans/' + p.id + '/report').catch(() => null)));
    for (const r of reports) for (const row of (r && r.rows) || []) if (row.target === t.name) names.add(row.metric);
  } catch (e) {
    // Suggestions only; the field takes any name.
  }
  if (!ctx.current()) return;
  const sorted = [...names].sort();
  for (const n of sorted) list.append(el('option', { value: n }));
  if (!metric) {
    put(body, sorted.length ? el('div', {}, el('p', {}, 'Pick a metric to see its history on ' + t.name + ':'),
      el('ul', { class: 'metric-links' }, sorted.map((n) => el('li', {}, el('a', { href: href('/targets/' + t.id, { metric: n }) }, n)))))
      : ui.empty('No results on ' + t.name + ' yet.'));
  }
}

/** One series: its chart (the points of shown, the window's or the
 *  whole series') and its change points (the whole series'); .show(x)
 *  draws series x of another answer (a window) in the same chart. */
function seriesView(ctx, t, h, s, i, view, shown, zoom) {
  const pts = Array.isArray(s.points) ? s.points : [];
  const cps = Array.isArray(s.change_points) ? s.change_points : [];
  const w = s.workload || {};
  const label = h.metric + ' — ' + (s.workload_ids || []).join(', ') + (w.engine ? ' (' + w.kind + ', ' + w.engine + ')' : '');
  const first = Date.parse(s.first) / 1000;
  const last = Date.parse(s.last) / 1000;
  const chart = historyChart({
    label, unit: s.unit, ...columns(shown),
    changePoints: cps.map((c) => ({ at: Date.parse(c.at) / 1000, status: c.status })),
    full: first > 0 && last >= first ? [first, last > first ? last : first + 1] : null,
    view, onZoom: zoom,
  });
  const cpItems = cps.map((c) => changePoint(ctx, t, pts, c, zoom));
  // The compare links from the points shown (a window's carry plans).
  const linksFrom = (ss) => {
    for (const li of cpItems) li.points(ss && Array.isArray(ss.points) ? ss.points : []);
  };
  if (shown !== s) linksFrom(shown);
  const box = el('div', { class: 'series', 'data-series': i },
    chart,
    el('p', { class: 'muted small' }, s.n + ' points from ', ui.timeEl(s.first), ' to ', ui.timeEl(s.last),
      s.downsampled ? ' — more than ' + h.max_points + ' points: each point is a time bucket (its mean; grey lines its min and max)' : ''),
    cps.length ? el('ol', { class: 'change-points' }, cpItems) : el('p', { class: 'muted' }, 'No change points in this series.'));
  box.chart = chart;
  box.series = s;
  box.show = (shownSeries) => {
    chart.update(columns(shownSeries));
    linksFrom(shownSeries);
  };
  return box;
}

/** The plan of the point just before a change point, for compare. */
function planBefore(pts, c) {
  const before = Date.parse(c.before_at);
  for (let i = pts.length - 1; i >= 0; i--) if (Date.parse(pts[i].at) <= before && pts[i].plan_id) return pts[i].plan_id;
  return null;
}

function changePoint(ctx, t, pts, c, zoom) {
  const link = el('span', { class: 'cp-compare' });
  const li = el('li', { class: 'change-point cp-' + c.status, 'data-cp-id': c.id },
    el('p', {}, el('strong', {}, fmt.change(c.change_pct) + ' %'), ' at ', ui.timeEl(c.at),
      ': mean ', fmt.num(c.mean_before), ' → ', fmt.num(c.mean_after),
      ' (n = ' + c.n_before + ' before, ' + c.n_after + ' after; p = ' + fmt.num(c.p) + ') ',
      c.status === 'new' ? ui.tagBadge('status-failed', 'new', 'new: nobody has acknowledged this change point yet') : acknowledgedBadge()),
    el('p', { class: 'small' }, 'First point of the new level: ', ui.planLink(c.plan_id, 'plan ' + c.plan_id), link),
    factsDiff(c), tuningDiff(c));
  // The compare link, from the points shown: in a series cut into buckets
  // the points around a change point carry no plan; a zoom around it reads
  // them (the window's points, given to .points), and the link comes with
  // them.
  li.points = (shown) => {
    const prev = planBefore(shown, c) || planBefore(pts, c);
    const around = !prev && zoom ? zoomAround(c) : null;
    put(link, prev && prev !== c.plan_id ? [' · ', el('a', { href: href('/compare', { a: prev, b: c.plan_id }), class: 'compare-link' }, 'compare plan ' + prev + ' with plan ' + c.plan_id)] : null,
      around ? [' · ', zoomLink(around, zoom)] : null);
  };
  li.points(pts);
  if (c.status === 'new') li.append(ackForm(ctx, c, li));
  else if (c.acknowledged_at) li.append(el('p', { class: 'small muted' }, 'Acknowledged ', ui.timeEl(c.acknowledged_at), c.acknowledged_by ? ' by ' + c.acknowledged_by : ''));
  return li;
}

/** A window around change point c: on each side four times the time
 *  between it and the point before it, at least a day. */
function zoomAround(c) {
  const at = Date.parse(c.at) / 1000;
  const before = Date.parse(c.before_at) / 1000;
  if (!(at > 0) || !(before > 0)) return null;
  const pad = Math.max(86400, (at - before) * 4);
  return [Math.floor(before - pad), Math.ceil(at + pad)];
}

function zoomLink(r, zoom) {
  const a = el('a', { href: '#', class: 'zoom-link' }, 'zoom to it (the plans around it, to compare)');
  a.addEventListener('click', (e) => {
    e.preventDefault();
    zoom(r);
  });
  return a;
}

function factsDiff(c) {
  const fb = c.facts_before;
  const fa = c.facts_after;
  const changed = Array.isArray(c.facts_changed) ? c.facts_changed : [];
  const fp = fb && fa && fb.fingerprint !== fa.fingerprint
    ? el('p', { class: 'small' }, 'Fingerprint ', el('code', {}, String(fb.fingerprint)), ' → ', el('code', {}, String(fa.fingerprint)))
    : el('p', { class: 'small muted' }, fb && fa ? 'Same fingerprint before and after.' : 'No facts recorded on one side.');
  return el('div', { class: 'facts-diff' }, fp,
    changed.length ? el('ul', { class: 'small' }, changed.map((d) => el('li', {}, el('code', {}, d.fact), ': ',
      JSON.stringify(d.before), ' → ', JSON.stringify(d.after)))) : null,
    c.facts_versions_between > 0 ? el('p', { class: 'small' }, c.facts_versions_between + ' facts version(s) began between the two points.') : null);
}

function tuningDiff(c) {
  const list = Array.isArray(c.tuning) ? c.tuning : [];
  if (list.length === 0) return null;
  return el('ul', { class: 'small tuning' }, list.map((x) => el('li', {}, x.event + ': ', el('code', {}, x.factor), ' ',
    fmt.value(x.from), ' → ', fmt.value(x.to), ' on ', x.object ? ui.pathText(x.object) : x.scope, x.plan_id ? [' (', ui.planLink(x.plan_id, 'plan ' + x.plan_id), ')'] : null)));
}

/** Acknowledge with the stored token or a submit token typed here. */
function ackForm(ctx, c, li) {
  const tokenId = 'ack-token-' + c.id;
  const token = el('input', { id: tokenId, type: 'password', autocomplete: 'off', spellcheck: 'false', placeholder: 'submit token (or the stored one)' });
  const note = el('span', { class: 'small', role: 'status' });
  const form = el('form', { class: 'ack-form' },
    el('label', { for: tokenId, class: 'visually-hidden' }, 'Submit token to acknowledge change point ' + c.id),
    token, el('button', { type: 'submit' }, 'Acknowledge'), note);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    note.textContent = 'Sending…';
    try {
      const r = await api('api/v1/change-points/' + c.id + '/ack', { method: 'POST', token: token.value.trim() || undefined });
      if (!ctx.current()) return;
      li.classList.replace('cp-new', 'cp-acknowledged');
      form.replaceWith(el('p', { class: 'small' }, 'Acknowledged ', ui.timeEl(r.acknowledged_at), r.acknowledged_by ? ' by ' + r.acknowledged_by : ''));
      const badge = li.querySelector('.badge');
      if (badge) badge.replaceWith(acknowledgedBadge());
    } catch (err) {
      put(note, ui.sectionError(err));
    }
  });
  return form;
}

function acknowledgedBadge() {
  return ui.tagBadge('status-done', 'acknowledged', 'acknowledged: someone has seen this change point and said so');
}
