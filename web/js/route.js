// route.js — the page's state lives in location.hash, so every view can be
// linked: "#/plans/7?all=1&t_sort=-mean". The path picks the page, the
// query holds filters, toggles, sort orders and zoom ranges.

/** The current hash as {path, params} ("#/" when empty). */
export function current() {
  const hash = location.hash.replace(/^#/, '') || '/';
  const i = hash.indexOf('?');
  const path = i < 0 ? hash : hash.slice(0, i);
  const params = new URLSearchParams(i < 0 ? '' : hash.slice(i + 1));
  return { path, params };
}

/** A hash link to path with params (an object; empty values left out). */
export function href(path, params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) {
    if (v !== undefined && v !== null && v !== '' && v !== false) q.set(k, String(v));
  }
  const s = q.toString();
  return '#' + path + (s ? '?' + s : '');
}

/** Changes some params of the current view without reloading it and
 *  without a new history entry (filters typed letter by letter must not
 *  fill the back button); null or '' removes a param. */
export function setParams(changes) {
  const { path, params } = current();
  for (const [k, v] of Object.entries(changes)) {
    if (v === null || v === undefined || v === '' || v === false) params.delete(k);
    else params.set(k, String(v));
  }
  const s = params.toString();
  const url = location.pathname + location.search + '#' + path + (s ? '?' + s : '');
  history.replaceState(history.state, '', url);
}
