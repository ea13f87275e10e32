// page-plan.js — #/plans/ID : one plan. Its status (progress, what it
// waits for, the rounds, its owner; a fleet plan's hosts and their
// per-host view, a fleet child's parent), then what its report says, in
// the order of `hvbench report` — the answer, the primary metrics' table
// (every metric with "All metrics", all=1, as --all) and charts, verdicts,
// overhead, recommendations, warnings — the settings each configuration
// read back, the failed jobs with their whole error, and the plan as
// submitted.

import { el, put } from './dom.js';
import { api, apiOptional } from './api.js';
import * as fmt from './fmt.js';
import * as ui from './ui.js';
import * as rep from './plan-report.js';
import * as fleet from './plan-hosts.js';
import { waitingWords } from './page-plans.js';
import { current, href, setParams } from './route.js';

const REFRESH_MS = 3000; // a plan page follows a running plan

/** Draws the plan page. */
export function show(ctx, id) {
  document.title = 'Plan ' + id + ' — hvbench';
  const title = el('h1', { tabindex: '-1' }, 'Plan ' + id);
  const status = el('section', { id: 'plan-status', class: 'plan-status', 'aria-live': 'polite', 'aria-label': 'Status' });
  const slots = {
    answer: el('div', {}, ui.loading('the report')),
    recs: el('div', {}, ui.loading('the report')),
    warnings: el('div', {}),
    overhead: el('div', {}, ui.loading('the report')),
    verdicts: el('div', {}, ui.loading('the report')),
    charts: el('div', {}, ui.loading('the report')),
    table: el('div', { class: 'report' }, ui.loading('the report')),
    settings: el('div', {}, ui.loading('the steps')),
    failed: el('div', {}),
    hosts: el('div', {}, ui.loading('the hosts')),
  };
  // A fleet plan's hosts, shown once the plan says it has children.
  const hostsSection = ui.section('hosts', 'Hosts', slots.hosts);
  hostsSection.hidden = true;
  // "All metrics" (as hvbench report --all): every metric and percentile
  // in the table and the overhead; the primary metrics' alone without.
  let all = current().params.get('all') === '1';
  let shown = null; // the report drawn, for the toggle to draw again
  const allToggle = el('button', { type: 'button', id: 'all-toggle', 'aria-pressed': String(all), 'aria-controls': 'results overhead', hidden: true },
    'All metrics');
  const allNote = el('span', { id: 'all-note', class: 'muted' });
  allToggle.addEventListener('click', () => {
    all = !all;
    setParams({ all: all ? '1' : null });
    if (shown) drawMetrics(slots, shown.report, shown.plan, all, allToggle, allNote);
  });
  // What a plan with jobs of its own shows; a fleet plan's parent has none
  // (its children have them), so it shows its hosts instead. The report's
  // sections open with its answer, as hvbench report does.
  const ownSections = [
    el('div', { id: 'report', class: 'report-sections' },
      ui.section('answer', 'Answer', slots.answer),
      ui.section('results', 'Metrics', el('p', { class: 'all-bar' }, allToggle, ' ', allNote), slots.table),
      ui.section('charts', 'Primary metrics', slots.charts),
      ui.section('verdicts', 'Verdicts', slots.verdicts),
      ui.section('overhead', 'Overhead', slots.overhead),
      ui.section('recommendations', 'Recommendations', slots.recs),
      slots.warnings),
    ui.section('settings', 'Settings read back', slots.settings)];
  const planCode = el('code', {});
  // Hidden until the plan has loaded once: a plan that does not exist
  // shows the error box and no empty frames.
  const content = el('div', { hidden: true }, status,
    hostsSection,
    ...ownSections,
    slots.failed,
    el('details', { id: 'plan-json' }, el('summary', {}, 'Submitted plan (JSON)'), el('pre', {}, planCode)));
  put(ctx.view, el('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' }, el('a', { href: '#/' }, '← All plans')),
    title, content);

  let catalog = null;
  let lastReport = '';
  let lastSteps = '';
  let lastFailed = -1;

  async function load() {
    const [planRes, reportRes, stepsRes] = await Promise.allSettled([
      api('api/v1/plans/' + id), api('api/v1/plans/' + id + '/report'),
      apiOptional('api/v1/plans/' + id + '/steps')]);
    if (!ctx.current()) return;
    if (catalog === null) catalog = await api('api/v1/catalog').catch(() => ({}));
    if (!ctx.current()) return;
    let again = false;
    let plan = null;
    if (planRes.status === 'fulfilled') {
      plan = planRes.value;
      header(title, status, plan);
      content.hidden = false;
      if (Array.isArray(plan.children)) {
        hostsSection.hidden = false;
        for (const sec of ownSections) sec.hidden = true;
        put(slots.hosts, fleet.section(plan, reportRes.status === 'fulfilled' ? reportRes.value : null, reportRes.reason));
      }
      if (!planCode.textContent && plan.plan !== undefined) planCode.textContent = JSON.stringify(plan.plan, null, 2);
      again = ui.ACTIVE.has(plan.status);
    } else {
      const err = planRes.reason;
      again = err.status === 0 || err.status >= 500;
    }
    if (reportRes.status === 'fulfilled') {
      const text = JSON.stringify(reportRes.value);
      if (text !== lastReport && plan) {
        lastReport = text;
        shown = { report: reportRes.value, plan };
        drawReport(slots, reportRes.value, plan, primaryOf(catalog, plan));
        drawMetrics(slots, reportRes.value, plan, all, allToggle, allNote);
      }
    } else {
      for (const k of ['answer', 'recs', 'overhead', 'verdicts', 'charts', 'table']) put(slots[k], ui.sectionError(reportRes.reason));
    }
    if (stepsRes.status === 'fulfilled') {
      const text = JSON.stringify(stepsRes.value);
      if (text !== lastSteps) {
        lastSteps = text;
        put(slots.settings, stepsRes.value.missing ? ui.unavailable('Settings', 'GET /api/v1/plans/{id}/steps') : settings(stepsRes.value.data));
      }
    } else {
      put(slots.settings, ui.sectionError(stepsRes.reason));
    }
    if (plan && ui.jobCounts(plan).failed !== lastFailed) {
      lastFailed = ui.jobCounts(plan).failed;
      failedJobs(ctx, id, lastFailed, slots.failed);
    }
    const failed = planRes.status === 'rejected' ? planRes.reason : reportRes.status === 'rejected' ? reportRes.reason : null;
    if (failed) ctx.showError(failed);
    else ctx.clearError();
    if (again) ctx.schedule(load, REFRESH_MS);
  }
  load();
}

/** The report's sections into their slots, but those "All metrics"
 *  changes (drawMetrics). */
function drawReport(slots, report, plan, primary) {
  put(slots.answer, rep.answer(report));
  put(slots.recs, rep.recommendations(report, plan));
  put(slots.warnings, rep.warnings(report));
  put(slots.verdicts, rep.verdicts(report));
  put(slots.charts, rep.charts(report, primary), rep.repetitions(report));
}

/** The sections of primary metrics alone, or of every metric when all:
 *  the table and the overhead, and the toggle's state. */
function drawMetrics(slots, report, plan, all, toggle, note) {
  put(slots.table, rep.fullTable(report, ui.ACTIVE.has(report.status), plan, all));
  put(slots.overhead, rep.overhead(report, all));
  rep.setAllToggle(toggle, note, report, all);
}

/** Whether (workload variant, metric) is a primary metric of the
 *  workload's engine in the catalogue. Without a catalogue entry every
 *  metric counts. */
function primaryOf(catalog, plan) {
  const engines = new Map();
  for (const e of (catalog && catalog.engines) || []) {
    if (Array.isArray(e.metrics)) engines.set(e.kind + '/' + e.engine, new Set(e.metrics.map((m) => (typeof m === 'string' ? m : m.name))));
  }
  const workloads = new Map();
  for (const w of (plan.plan && plan.plan.workloads) || []) workloads.set(w.id, w.kind + '/' + (w.engine || 'builtin'));
  return (workload, metric) => {
    const set = engines.get(workloads.get(String(workload).replace(/\[.*$/, '')));
    return set ? set.has(metric) : true;
  };
}

/** Status, progress, counts, times, what the plan waits for and the
 *  rounds' decision. */
function header(title, status, plan) {
  const c = ui.jobCounts(plan);
  const ended = c.done + c.failed + c.cancelled;
  const pct = c.total > 0 ? Math.floor((ended / c.total) * 100 + 1e-9) : 0;
  title.textContent = 'Plan ' + plan.id + (plan.name ? ': ' + plan.name : '');
  document.title = title.textContent + ' — hvbench';
  const counts = [['done', c.done], ['running', c.running], ['queued', c.queued], ['failed', c.failed], ['cancelled', c.cancelled]];
  put(status,
    el('div', { class: 'status-line' }, ui.badge(plan.status),
      el('span', { class: 'jobs' }, c.total + (c.total === 1 ? ' job' : ' jobs')),
      ui.progressBar(c, 'progress', plan.status), el('span', { class: 'pct' }, pct + '%'),
      el('a', { href: '#/plans/' + plan.id + '/jobs', id: 'jobs-link' }, 'Jobs'),
      el('a', { href: href('/compare', { items: String(plan.id) }), id: 'plan-compare' }, 'Compare with…')),
    plan.waiting && plan.waiting.detail ? el('p', { class: 'waiting', id: 'plan-waiting' }, waitingWords(plan.waiting)) : null,
    Number.isSafeInteger(plan.parent_id) ? el('p', { id: 'fleet-parent' }, 'One host of fleet plan ',
      ui.planLink(plan.parent_id, String(plan.parent_id)), ': the same workloads on every host its selector matched.') : null,
    el('dl', { class: 'counts' }, counts.map(([k, v]) => el('div', { class: 'count count-' + k + (v > 0 ? ' nonzero' : '') },
      el('dt', {}, k), el('dd', {}, String(v))))),
    roundsWords(plan),
    el('p', { class: 'times' }, 'Created ', ui.timeEl(plan.created_at),
      plan.started_at ? [' · started ', ui.timeEl(plan.started_at)] : null,
      plan.finished_at ? [' · finished ', ui.timeEl(plan.finished_at)] : null,
      !plan.finished_at && plan.updated_at ? [' · updated ', ui.timeEl(plan.updated_at)] : null,
      ui.ACTIVE.has(plan.status) ? el('span', { class: 'muted' }, ' · refreshing every 3 s') : null),
    ownerLine(plan));
}

/** Who may cancel or retry the plan besides an admin: the token that
 *  submitted it, or none for a plan without a submitter (imported, or its
 *  token revoked). Nothing from a server that does not say. */
function ownerLine(plan) {
  if (plan.owner === undefined) return null;
  return el('p', { class: 'times', id: 'plan-owner' }, 'Owner: ',
    typeof plan.owner === 'string' ? el('strong', {}, plan.owner) : "none (no submitter: an admin's)");
}

/** The adaptive repetitions' last decision in words. A plan that ended
 *  runs no more rounds, whatever the last decision was: a cancelled or
 *  failed plan's words are its state's. */
function roundsWords(plan) {
  const r = plan.rounds;
  if (!r || typeof r !== 'object') return null;
  const after = 'After ' + r.rounds + ' round' + (r.rounds === 1 ? '' : 's') + ': ';
  if (plan.status === 'cancelled' || plan.status === 'failed') {
    return el('p', { class: 'rounds-line' }, after + plan.status + '.');
  }
  const w = r.widest;
  const widest = w && w.metric ? ' The widest: ' + w.metric + (w.workload ? ' (' + w.workload + ')' : '') +
    (typeof w.half_pct === 'number' ? ' ±' + w.half_pct.toFixed(2) + ' %' : '') + '.' : '';
  const sequential = r.rule === 'sequential';
  const decided = sequential && typeof r.decided === 'number'
    ? ' ' + r.decided + ' of ' + r.comparisons + ' comparison' + (r.comparisons === 1 ? '' : 's') + ' decided.' : '';
  const words = {
    more: sequential
      ? 'another round is queued: a comparison is not decided yet.' + decided
      : 'another round is queued: an interval of a primary metric is still wider than ±' + r.ci_pct + ' %.',
    decided: 'every comparison is decided (better, worse or no effect), so the plan stopped.',
    precise: sequential
      ? 'every undecided comparison is as precise as asked (±' + r.ci_pct + ' %).' + decided
      : 'every primary interval is within ±' + r.ci_pct + ' %.',
    max: sequential
      ? 'stopped at the maximum number of rounds.' + decided
      : 'stopped at the maximum number of rounds without every interval within ±' + r.ci_pct + ' %.' + widest,
  }[r.decision] || r.decision;
  return el('p', { class: 'rounds-line' }, after + words);
}

/** The apply steps with the settings each read back, per factor. */
function settings(data) {
  const steps = (data.items || []).filter((s) => s.kind === 'apply');
  if (steps.length === 0) return ui.empty('No tuning steps: this plan changes no settings.');
  const factors = [...new Set(steps.flatMap((s) => Object.keys(s.settings || {})))].sort();
  return el('div', { class: 'scroll-x' }, el('table', { id: 'settings-table', class: 'data' },
    el('caption', {}, 'Per block: the configuration applied and each factor as the host read it back'),
    el('thead', {}, el('tr', {}, el('th', { scope: 'col', class: 'num' }, 'Block'), el('th', { scope: 'col' }, 'Configuration'),
      el('th', { scope: 'col' }, 'Status'), factors.map((f) => el('th', { scope: 'col' }, f)))),
    el('tbody', {}, steps.map((s) => el('tr', {},
      el('td', { class: 'num' }, s.block === null || s.block === undefined ? '-' : String(s.block)),
      el('td', {}, s.configuration || '-'),
      el('td', {}, ui.badge(s.status), s.error ? el('div', { class: 'error-text' }, s.error) : null),
      factors.map((f) => {
        const v = s.settings && s.settings[f];
        if (!v) return el('td', { class: 'muted' }, '-');
        const same = String(v.read_back) === String(v.level);
        return el('td', { class: same ? 'read-ok' : 'read-differs', title: v.source ? 'read from ' + v.source : null },
          fmt.value(v.read_back), same ? null : el('span', { class: 'differs' }, ' (asked ' + v.level + ')'));
      }))))));
}

/** The failed jobs, each with its whole error text. */
async function failedJobs(ctx, id, count, slot) {
  if (count === 0) {
    put(slot);
    return;
  }
  put(slot, ui.section('failed-jobs', 'Failed jobs', ui.loading('the failed jobs')));
  let data;
  try {
    data = await api('api/v1/plans/' + id + '/jobs?status=failed&limit=100');
  } catch (err) {
    if (ctx.current()) put(slot, ui.section('failed-jobs', 'Failed jobs', ui.sectionError(err)));
    return;
  }
  if (!ctx.current()) return;
  const items = data.items || [];
  put(slot, ui.section('failed-jobs', 'Failed jobs (' + count + ')',
    el('ul', { class: 'failed-list' }, items.map((j) => el('li', { 'data-job-id': j.id },
      ui.jobLink(j.id, 'Job ' + j.id), ' — ', j.workload, ' on ', j.target, ', ', j.configuration,
      ', attempt ' + j.attempt, el('pre', { class: 'error-text' }, j.error || '(no error text)')))),
    count > items.length ? el('p', {}, el('a', { href: '#/plans/' + id + '/jobs?status=failed' }, 'All ' + count + ' failed jobs')) : null));
}
