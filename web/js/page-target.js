// page-target.js — #/targets/ID : one target. What it is (facts,
// fingerprint, labels, last seen, site benchmarks), the tuning changes
// plans made on it, and a metric's history over months with its change
// points, each with what differed on the target, acknowledged from here.

import { el, put } from './dom.js';
import { api } from './api.js';
import { href } from './route.js';
import { labelText } from './page-targets.js';
import { history } from './target-history.js';
import * as fmt from './fmt.js';
import * as ui from './ui.js';

/** Draws the target page. */
export function show(ctx, id) {
  document.title = 'Target ' + id + ' — hvbench';
  const title = el('h1', { tabindex: '-1' }, 'Target ' + id);
  const head = el('section', { id: 'target-head', class: 'plan-status', 'aria-label': 'Target' }, ui.loading('the target'));
  const hist = el('div', {});
  const changes = el('div', {}, ui.loading('the changes'));
  put(ctx.view, el('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' }, el('a', { href: '#/targets' }, '← All targets')),
    title, head, ui.section('history', 'History', hist), ui.section('changes', 'Tuning changes', changes));

  // The history's request goes out beside the target's, not after it: the
  // metric and the target's id are in the URL.
  const target = api('api/v1/targets/' + id);
  history(ctx, id, target, hist);
  (async () => {
    let t;
    try {
      t = await target;
    } catch (err) {
      if (!ctx.current()) return;
      put(head, ui.sectionError(err));
      put(hist);
      put(changes);
      ctx.showError(err);
      return;
    }
    if (!ctx.current()) return;
    title.textContent = 'Target ' + t.name;
    document.title = t.name + ' — hvbench';
    put(head, targetHead(t), el('p', {}, el('a', { id: 'target-compare', href: href('/compare', { items: t.name }) },
      'Compare its latest done plan with…')));
    try {
      const c = await api('api/v1/targets/' + id + '/changes');
      if (ctx.current()) put(changes, changesTable(c.items || []));
    } catch (err) {
      if (ctx.current()) put(changes, ui.sectionError(err));
    }
  })();
}

function targetHead(t) {
  const b = t.benchmarks || [];
  return [
    el('dl', { class: 'facts' },
      el('dt', {}, 'Kind'), el('dd', {}, t.kind),
      t.domain ? [el('dt', {}, 'Domain'), el('dd', {}, t.domain.name + ' on ' + t.domain.host)] : null,
      el('dt', {}, 'Fingerprint'), el('dd', {}, t.fingerprint ? el('code', { id: 'fingerprint' }, t.fingerprint) : '-'),
      el('dt', {}, 'Labels'), el('dd', {}, labelText(t.labels) || '-'),
      el('dt', {}, 'Registered'), el('dd', {}, ui.timeEl(t.registered_at)),
      el('dt', {}, 'Last seen'), el('dd', { id: 'last-seen' }, ui.lastSeen(t)),
      el('dt', {}, 'Plans'), el('dd', {}, el('a', { href: href('/', { target: t.name }) }, 'plans with a job on ' + t.name))),
    b.length ? el('table', { class: 'data compact', id: 'benchmarks-table' },
      el('caption', {}, 'Site benchmarks its worker declared'),
      el('thead', {}, el('tr', {}, ['Name', 'Kind', 'Metric', 'Unit'].map((h) => el('th', { scope: 'col' }, h)))),
      el('tbody', {}, b.map((x) => el('tr', {}, el('td', {}, x.name), el('td', {}, x.kind),
        el('td', {}, el('a', { href: href('/targets/' + t.id, { metric: x.metric }) }, x.metric)), el('td', {}, x.unit || '')))))
      : el('p', { class: 'muted' }, 'No site benchmarks declared.'),
    el('details', { id: 'facts' }, el('summary', {}, 'Facts its worker reported'),
      t.facts && Object.keys(t.facts).length ? ui.kvList(t.facts) : ui.empty('No facts (an import created this target).')),
  ];
}

// Who put a change back, as the server recorded it (restored_how).
const RESTORED_BY = {
  step: (c) => 'by step ' + c.restored_by,
  worker_start: () => 'by the worker at its start',
  restore_command: () => 'by hvbench-worker --restore',
};

// "restored at <time> by ...", or that the change is still in force.
function restoredCell(c) {
  if (!c.restored_at) return el('strong', {}, 'still in force');
  const by = RESTORED_BY[c.restored_how];
  return el('span', { class: 'restored' }, 'restored at ', ui.timeEl(c.restored_at), by ? ' ' + by(c) : '');
}

function changesTable(items) {
  if (items.length === 0) return ui.empty('No plan changed a setting on this target.');
  return el('div', { class: 'scroll-x' }, el('table', { id: 'changes-table', class: 'data' },
    el('caption', {}, 'What tuning plans changed, newest first'),
    el('thead', {}, el('tr', {}, ['Changed', 'Plan', 'Factor', 'Object', 'From', 'To', 'Restored'].map((h) => el('th', { scope: 'col' }, h)))),
    el('tbody', {}, items.map((c) => el('tr', {},
      el('td', {}, ui.timeEl(c.changed_at)), el('td', {}, ui.planLink(c.plan_id)),
      el('td', {}, c.factor + (c.scope ? ' (' + c.scope + ')' : '')), el('td', {}, el('code', {}, c.object ? ui.pathText(c.object) : '-')),
      el('td', {}, fmt.value(c.from)), el('td', {}, fmt.value(c.to)),
      el('td', {}, restoredCell(c)))))));
}

