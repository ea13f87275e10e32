// page-targets.js — #/targets : every machine that registered (or that an
// import named), hosts and guests, with labels, fingerprint, last seen
// and site benchmarks.

import { el, put } from './dom.js';
import { api, query } from './api.js';
import { current, setParams } from './route.js';
import { dataTable } from './table.js';
import * as ui from './ui.js';

/** Draws the targets page. */
export function show(ctx) {
  document.title = 'Targets — hvbench';
  let kind = current().params.get('kind') || '';
  const body = el('div', { id: 'targets-body' }, ui.loading('the targets'));
  const select = el('select', { id: 'targets-kind' }, ['', 'host', 'guest'].map((k) => el('option', { value: k, selected: k === kind }, k || 'any')));
  select.addEventListener('change', () => {
    kind = select.value;
    setParams({ kind });
    load();
  });
  put(ctx.view, el('h1', { tabindex: '-1' }, 'Targets'),
    el('form', { class: 'filters', onsubmit: (e) => e.preventDefault() }, ui.field('Kind', select)), body);

  async function load() {
    let data;
    try {
      data = await api('api/v1/targets' + query({ kind }));
    } catch (err) {
      if (!ctx.current()) return;
      put(body, ui.sectionError(err));
      ctx.showError(err);
      return;
    }
    if (!ctx.current()) return;
    ctx.clearError();
    const items = data.items || [];
    if (items.length === 0) {
      put(body, ui.empty('No targets yet. A target appears when its ', el('code', {}, 'hvbench-worker'), ' registers, or when an import names it.'));
      return;
    }
    put(body, dataTable({
      id: 'targets-table', param: 'tg', rows: items, caption: 'Targets by name',
      rowProps: (t) => ({ 'data-target-id': t.id }),
      columns: [
        { key: 'name', label: 'Name', value: (t) => t.name, cell: (t) => ui.targetLink(t.id, t.name) },
        { key: 'kind', label: 'Kind', value: (t) => t.kind },
        { key: 'labels', label: 'Labels', value: (t) => labelText(t.labels) },
        { key: 'fingerprint', label: 'Fingerprint', value: (t) => t.fingerprint || '', cell: (t) => (t.fingerprint ? el('code', { title: t.fingerprint }, t.fingerprint.slice(0, 12)) : '-') },
        { key: 'benchmarks', label: 'Site benchmarks', value: (t) => (t.benchmarks || []).map((b) => b.name).join(', ') },
        { key: 'last_seen', label: 'Last seen', value: (t) => t.last_seen, cell: (t) => ui.lastSeen(t) },
      ],
    }));
  }
  load();
}

/** "rack=3, room=b" */
export function labelText(labels) {
  return Object.entries(labels || {}).map(([k, v]) => k + '=' + v).join(', ');
}
