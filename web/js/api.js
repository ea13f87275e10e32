// api.js — the REST API as the page uses it: GETs relative to the page (a
// path prefix in front of the server keeps working), the read token, and
// the problem documents of failed calls.

const TOKEN_KEY = 'hvbench.token';

/** A failed API call: HTTP status (0 when no answer came) and the problem
 *  document, or one made up with title and detail. */
export class ApiError extends Error {
  constructor(status, problem) {
    super(problem.title || 'HTTP ' + status);
    this.status = status;
    this.problem = problem;
  }
}

/** True when err says the server has no such endpoint (an older server):
 *  the section that needs it says "not available" instead of failing. */
export function isMissingEndpoint(err) {
  return err instanceof ApiError && err.status === 404 &&
    /no such endpoint/i.test((err.problem && err.problem.detail) || '');
}

/** The stored read token, or null. localStorage may be unavailable
 *  (privacy settings): then the page works without a token. */
export function getToken() {
  try {
    return localStorage.getItem(TOKEN_KEY);
  } catch (e) {
    return null;
  }
}

/** Stores token (or forgets it with null); throws when the browser
 *  refuses localStorage, since requests read the token back from it. */
export function setToken(token) {
  if (token) localStorage.setItem(TOKEN_KEY, token);
  else localStorage.removeItem(TOKEN_KEY);
}

// Called with no argument whenever the server answers (any HTTP status):
// the page's retry of an unanswered request starts its backoff again.
let answered = () => {};

/** Sets the one function called at every answer of the server. */
export function onAnswer(fn) {
  answered = fn;
}

/** Sends one request and returns the parsed JSON body, or throws an
 *  ApiError (status 0 and problem.unreachable when no answer came).
 *  opts: method, token (instead of the stored one), signal. */
export async function api(path, opts = {}) {
  const headers = { Accept: 'application/json, application/problem+json' };
  const token = opts.token || getToken();
  if (token) headers.Authorization = 'Bearer ' + token;
  let res;
  try {
    res = await fetch(path, {
      method: opts.method || 'GET', headers, cache: 'no-store', signal: opts.signal,
    });
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    throw new ApiError(0, { title: 'Cannot reach the server', detail: e.message, unreachable: true });
  }
  answered();
  let body = null;
  if (/json/i.test(res.headers.get('Content-Type') || '')) {
    try {
      body = await res.json();
    } catch (e) {
      body = null;
    }
  }
  if (!res.ok) {
    const problem = body && typeof body === 'object' ? body
      : { title: 'HTTP ' + res.status, detail: res.statusText };
    throw new ApiError(res.status, problem);
  }
  if (body === null || typeof body !== 'object') {
    throw new ApiError(res.status, {
      title: 'Unexpected answer', detail: 'HTTP ' + res.status + ' without a JSON body',
    });
  }
  return body;
}

/** Like api(), but resolves to {missing: true} when the server has no such
 *  endpoint, and to {data} otherwise. */
export async function apiOptional(path, opts) {
  try {
    return { data: await api(path, opts) };
  } catch (e) {
    if (isMissingEndpoint(e)) return { missing: true };
    throw e;
  }
}

/** Every item of a cursor-paged list, at most max of them; resolves to
 *  {items, more} where more says the list went on past max. */
export async function apiAll(path, max, opts) {
  const items = [];
  let cursor = null;
  const sep = path.includes('?') ? '&' : '?';
  for (;;) {
    const page = await api(path + (cursor ? sep + 'cursor=' + encodeURIComponent(cursor) : ''), opts);
    for (const it of Array.isArray(page.items) ? page.items : []) items.push(it);
    cursor = page.next_cursor;
    if (!cursor) return { items, more: false };
    if (items.length >= max) return { items: items.slice(0, max), more: true };
  }
}

/** Query string of the defined, non-empty entries of obj. */
export function query(obj) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(obj)) {
    if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  }
  const s = q.toString();
  return s ? '?' + s : '';
}
