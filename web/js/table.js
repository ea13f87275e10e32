// table.js — a data table that sorts by any column (a button in each
// header, aria-sort on the sorted one) and filters by text, with both kept
// in the URL so a sorted, filtered view can be shared.

import { el, put } from './dom.js';
import { current, setParams } from './route.js';

/** Builds the table. spec:
 *   id, caption, rows,
 *   columns: [{key, label, title?, num?, value(row) → sort value,
 *              cell(row) → node or text}],
 *   rowProps(row) → attributes of the <tr> (optional),
 *   param: prefix of the URL params ("t" → t_sort, t_q).
 *  Returns the element (a wrapper with the filter box and the table). */
export function dataTable(spec) {
  const { params } = current();
  const sortKey = spec.param + '_sort';
  const filterKey = spec.param + '_q';
  let sort = params.get(sortKey) || '';
  let filter = params.get(filterKey) || '';

  const count = el('span', { class: 'count', 'aria-live': 'polite' });
  const input = el('input', {
    type: 'search', id: spec.id + '-filter', value: filter, placeholder: 'filter rows',
    'aria-controls': spec.id, autocomplete: 'off',
  });
  const tbody = el('tbody');
  const heads = spec.columns.map((c) => {
    const button = el('button', { type: 'button', class: 'sort', 'data-key': c.key },
      c.title ? el('abbr', { title: c.title }, c.label) : c.label);
    button.addEventListener('click', () => {
      sort = sort === c.key ? '-' + c.key : c.key;
      setParams({ [sortKey]: sort });
      render();
    });
    return el('th', { scope: 'col', class: c.num ? 'num' : null, 'data-key': c.key }, button);
  });
  const table = el('table', { id: spec.id, class: 'data sortable' },
    spec.caption ? el('caption', {}, spec.caption) : null,
    el('thead', {}, el('tr', {}, heads)), tbody);

  // Row texts for the filter, computed once.
  const texts = spec.rows.map((r) => spec.columns.map((c) => String(c.value(r) ?? '')).join(' ').toLowerCase());

  function render() {
    const desc = sort.startsWith('-');
    const key = desc ? sort.slice(1) : sort;
    const col = spec.columns.find((c) => c.key === key);
    const words = filter.toLowerCase().split(/\s+/).filter(Boolean);
    let idx = spec.rows.map((_, i) => i).filter((i) => words.every((w) => texts[i].includes(w)));
    if (col) {
      idx.sort((i, j) => {
        const a = col.value(spec.rows[i]);
        const b = col.value(spec.rows[j]);
        const r = compare(a, b);
        return desc ? -r : r;
      });
    }
    for (const th of heads) {
      th.setAttribute('aria-sort', th.dataset.key === key ? (desc ? 'descending' : 'ascending') : 'none');
    }
    put(tbody, idx.map((i) => {
      const r = spec.rows[i];
      return el('tr', spec.rowProps ? spec.rowProps(r) : {},
        spec.columns.map((c) => el('td', { class: c.num ? 'num' : null }, c.cell ? c.cell(r) : String(c.value(r) ?? '-'))));
    }));
    count.textContent = idx.length === spec.rows.length ? spec.rows.length + ' rows'
      : idx.length + ' of ' + spec.rows.length + ' rows';
  }

  input.addEventListener('input', () => {
    filter = input.value;
    setParams({ [filterKey]: filter });
    render();
  });
  render();
  return el('div', { class: 'table-wrap' },
    el('div', { class: 'table-tools' },
      el('label', { for: spec.id + '-filter', class: 'visually-hidden' }, 'Filter the rows of ' + (spec.caption || 'the table')),
      input, count),
    el('div', { class: 'scroll-x' }, table));
}

/** Numbers before text, nulls last, numbers numerically. */
function compare(a, b) {
  const an = a === null || a === undefined || (typeof a === 'number' && !isFinite(a));
  const bn = b === null || b === undefined || (typeof b === 'number' && !isFinite(b));
  if (an || bn) return an === bn ? 0 : an ? 1 : -1;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return String(a).localeCompare(String(b), undefined, { numeric: true });
}
