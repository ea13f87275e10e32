// page-targets.js — #/targets : every machine that registered (or that an
// import named), hosts and guests, at a glance: online or stale, kind, its
// host, labels, change points of its history not acknowledged yet,
// fingerprint, last seen and site benchmarks; filtered by kind and label
// selector, both kept in the URL.

import { el, put } from './dom.js';
import { api, query } from './api.js';
import { current, href, setParams } from './route.js';
import { dataTable } from './table.js';
import * as ui from './ui.js';

/** Draws the targets page. */
export function show(ctx) {
  document.title = 'Targets — hvbench';
  const { params } = current();
  let kind = params.get('kind') || '';
  let label = params.get('label') || '';
  const body = el('div', { id: 'targets-body' }, ui.loading('the targets'));
  const select = el('select', { id: 'targets-kind' }, ['', 'host', 'guest'].map((k) => el('option', { value: k, selected: k === kind }, k || 'any')));
  const labelInput = el('input', { id: 'targets-label', name: 'label', value: label, placeholder: 'pool=batch,rack=3', autocomplete: 'off' });
  select.addEventListener('change', () => {
    kind = select.value;
    setParams({ kind });
    load();
  });
  const form = el('form', { class: 'filters' }, ui.field('Kind', select), ui.field('Labels', labelInput),
    el('button', { type: 'submit' }, 'Filter'));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    label = labelInput.value.trim();
    setParams({ label });
    load();
  });
  put(ctx.view, el('h1', { tabindex: '-1' }, 'Targets'), form, body);

  async function load() {
    const data = await ui.answer(ctx, body, api('api/v1/targets' + query({ kind, label })));
    if (!data) return;
    const items = data.items || [];
    if (items.length === 0) {
      put(body, kind || label ? ui.empty('No target matches these filters.')
        : ui.empty('No targets yet. A target appears when its ', el('code', {}, 'hvbench-worker'), ' registers, or when an import names it.'));
      return;
    }
    const online = items.filter((t) => t.online).length;
    const fresh = items.reduce((n, t) => n + (t.change_points_new || 0), 0);
    put(body, el('p', { id: 'targets-summary' }, items.length + (items.length === 1 ? ' target' : ' targets') + ': ' +
      online + ' online, ' + (items.length - online) + ' not seen lately; ' + fresh +
      (fresh === 1 ? ' change point' : ' change points') + ' not acknowledged.'),
    dataTable({
      id: 'targets-table', param: 'tg', rows: items, caption: 'Targets by name',
      rowProps: (t) => ({ 'data-target-id': t.id, 'data-online': t.online ? '1' : '0' }),
      columns: [
        { key: 'name', label: 'Name', value: (t) => t.name, cell: (t) => ui.targetLink(t.id, t.name) },
        { key: 'online', label: 'State', value: (t) => (t.online ? 'online' : 'stale'), cell: stateBadge },
        { key: 'kind', label: 'Kind', value: (t) => t.kind },
        { key: 'host', label: 'Host', value: (t) => t.host || '' },
        { key: 'labels', label: 'Labels', value: (t) => labelText(t.labels), cell: labelLinks },
        { key: 'cp', label: 'New change points', value: (t) => t.change_points_new || 0, cell: changeCell },
        { key: 'fingerprint', label: 'Fingerprint', value: (t) => t.fingerprint || '', cell: (t) => (t.fingerprint ? el('code', { title: t.fingerprint }, t.fingerprint.slice(0, 12)) : '-') },
        { key: 'benchmarks', label: 'Site benchmarks', value: (t) => (t.benchmarks || []).map((b) => b.name).join(', ') },
        { key: 'last_seen', label: 'Last seen', value: (t) => t.last_seen, cell: (t) => ui.timeEl(t.last_seen) },
      ],
    }));
  }
  load();
}

/** Online: its worker called within the server's --stale-after; stale:
 *  not since (or never: an imported target). Words, not colour alone. */
function stateBadge(t) {
  return t.online ? el('span', { class: 'badge online', title: 'its worker called the server recently' }, 'online')
    : el('span', { class: 'badge stale', title: 'its worker has not called the server lately (or it was only imported)' }, 'stale');
}

/** Each label a link to the targets that carry it. */
function labelLinks(t) {
  const pairs = Object.entries(t.labels || {});
  if (pairs.length === 0) return '-';
  return pairs.map(([k, v], i) => [i ? ', ' : '', el('a', { href: href('/targets', { label: k + '=' + v }), class: 'label' }, k + '=' + v)]);
}

/** The count, linking to the target's page where they are listed. */
function changeCell(t) {
  const n = t.change_points_new || 0;
  return n > 0 ? el('a', { href: '#/targets/' + t.id, class: 'cp-new', title: 'change points of its history not acknowledged' }, el('strong', {}, String(n))) : '0';
}

/** "rack=3, room=b" */
export function labelText(labels) {
  return Object.entries(labels || {}).map(([k, v]) => k + '=' + v).join(', ');
}
