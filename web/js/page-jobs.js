// page-jobs.js — #/plans/ID/jobs : a plan's jobs in run order with state,
// target, configuration, attempt, duration and the whole error text of
// every failed one; filterable by status, sortable, filterable by text.

import { el, put } from './dom.js';
import { api, apiAll, query } from './api.js';
import { current, setParams } from './route.js';
import { dataTable } from './table.js';
import * as fmt from './fmt.js';
import * as ui from './ui.js';

const MAX_JOBS = 10000;
const REFRESH_MS = 5000;

/** Draws the jobs page. */
export function show(ctx, id) {
  document.title = 'Jobs of plan ' + id + ' — hvbench';
  const { params } = current();
  let status = params.get('status') || '';
  const body = el('div', { id: 'jobs-body' }, ui.loading('the jobs'));
  const select = el('select', { id: 'jobs-status' }, ['', 'queued', 'running', 'done', 'failed', 'cancelled']
    .map((s) => el('option', { value: s, selected: s === status }, s || 'any')));
  select.addEventListener('change', () => {
    status = select.value;
    setParams({ status });
    load();
  });
  const heading = el('h1', { tabindex: '-1' }, 'Jobs of plan ' + id);
  put(ctx.view, el('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' },
    el('a', { href: '#/' }, 'Plans'), ' / ', el('a', { href: '#/plans/' + id }, 'Plan ' + id)),
  heading, el('form', { class: 'filters', onsubmit: (e) => e.preventDefault() }, ui.field('Status', select)), body);

  api('api/v1/plans/' + id).then((p) => {
    if (ctx.current() && p.name) heading.textContent = 'Jobs of plan ' + id + ': ' + p.name;
  }).catch(() => {});

  async function load() {
    let data;
    try {
      data = await apiAll('api/v1/plans/' + id + '/jobs' + query({ status, limit: 1000 }), MAX_JOBS);
    } catch (err) {
      if (!ctx.current()) return;
      put(body, ui.sectionError(err));
      ctx.showError(err);
      return;
    }
    if (!ctx.current()) return;
    ctx.clearError();
    if (data.items.length === 0) {
      put(body, ui.empty(status ? 'No ' + status + ' jobs.' : 'This plan has no jobs.'));
      return;
    }
    put(body, jobsTable(data.items),
      data.more ? el('p', { class: 'muted' }, 'The first ' + MAX_JOBS + ' jobs are shown.') : null);
    if (data.items.some((j) => ui.ACTIVE.has(j.status))) ctx.schedule(load, REFRESH_MS);
  }
  load();
}

/** Seconds a job ran: claimed to finished (or to now while it runs). */
export function jobSeconds(j) {
  if (!j.claimed_at) return NaN;
  return fmt.seconds(j.claimed_at, j.finished_at || (j.status === 'running' ? new Date().toISOString() : null));
}

function jobsTable(items) {
  return dataTable({
    id: 'jobs-table', param: 'j', rows: items,
    caption: 'Jobs in run order',
    rowProps: (j) => ({ 'data-job-id': j.id, class: 'job-' + j.status }),
    columns: [
      { key: 'id', label: 'Job', num: true, value: (j) => j.id, cell: (j) => ui.jobLink(j.id) },
      { key: 'status', label: 'State', value: (j) => j.status, cell: (j) => ui.badge(j.status) },
      { key: 'target', label: 'Target', value: (j) => j.target },
      { key: 'configuration', label: 'Configuration', value: (j) => j.configuration },
      { key: 'workload', label: 'Workload', value: (j) => j.workload + (j.role ? ' (' + j.role + ')' : '') },
      { key: 'repetition', label: 'Rep.', title: 'repetition (round)', num: true, value: (j) => j.repetition },
      { key: 'attempt', label: 'Attempt', num: true, value: (j) => j.attempt },
      { key: 'duration', label: 'Duration', num: true, value: (j) => jobSeconds(j), cell: (j) => fmt.duration(jobSeconds(j)) },
      { key: 'error', label: 'Error', value: (j) => j.error || '', cell: (j) => (j.error ? el('pre', { class: 'error-text' }, j.error) : '') },
    ],
  });
}
