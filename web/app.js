// app.js — the hvbench web page: a list of plans and one page per plan.
//
// Plain ES2017, no framework, no build step. Routing is by location.hash
// ("#/" and "#/plans/ID") so the server serves one fixed page. Every piece of
// server data reaches the DOM as a text node or an attribute set through the
// DOM API, never as HTML: plan names and metric names are user input.
'use strict';

(function () {
  const TOKEN_KEY = 'hvbench.token';
  const PLAN_REFRESH_MS = 3000; // a plan page follows a running plan
  const LIST_REFRESH_MS = 5000; // the list only while something is active
  const ACTIVE = new Set(['queued', 'running']);

  const view = document.getElementById('view');
  const errorBox = document.getElementById('error');
  const tokenForm = document.getElementById('token-form');
  const tokenInput = document.getElementById('token-input');
  const forgetToken = document.getElementById('forget-token');

  // Each navigation bumps the generation; answers that arrive for an older
  // one are dropped, so a slow request cannot paint over the current page.
  let generation = 0;
  let timer = null;

  /** A failed API call: HTTP status (0 when no answer came) and the
   *  problem document, or one made up with title and detail. */
  class ApiError extends Error {
    constructor(status, problem) {
      super(problem.title || 'HTTP ' + status);
      this.status = status;
      this.problem = problem;
    }
  }

  // ---- DOM helpers ------------------------------------------------------

  /** Creates an element. props are attributes (class, href, ...) plus
   *  on<event> listeners; false/null/undefined props are left out.
   *  Children are nodes or text (turned into text nodes, never parsed). */
  function el(tag, props, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(props || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k.startsWith('on') && typeof v === 'function') e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? '' : String(v));
    }
    append(e, children);
    return e;
  }

  /** Appends children (nested arrays allowed) to parent as nodes/text. */
  function append(parent, children) {
    for (const c of children) {
      if (c === undefined || c === null || c === false) continue;
      if (Array.isArray(c)) append(parent, c);
      else parent.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
    }
  }

  // ---- token ------------------------------------------------------------

  /** The stored read token, or null. localStorage may be unavailable
   *  (privacy settings): then the page works without a token. */
  function getToken() {
    try {
      return localStorage.getItem(TOKEN_KEY);
    } catch (e) {
      return null;
    }
  }

  function setToken(token) {
    try {
      if (token) localStorage.setItem(TOKEN_KEY, token);
      else localStorage.removeItem(TOKEN_KEY);
    } catch (e) {
      // Requests read the token back from storage, so an unstored token
      // would silently not be sent: say so.
      showError(new ApiError(0, {
        title: 'Cannot store the token',
        detail: 'this browser refuses localStorage: ' + e.message,
      }));
    }
    forgetToken.hidden = !getToken();
  }

  tokenForm.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const token = tokenInput.value.trim();
    if (!token) return;
    setToken(token);
    tokenInput.value = '';
    tokenForm.hidden = true;
    route();
  });

  forgetToken.addEventListener('click', () => {
    setToken(null);
    route();
  });

  // ---- API --------------------------------------------------------------

  /** GETs path (relative to the page, so a path prefix keeps working) and
   *  returns the parsed JSON, or throws an ApiError. */
  async function api(path) {
    const headers = { Accept: 'application/json, application/problem+json' };
    const token = getToken();
    if (token) headers.Authorization = 'Bearer ' + token;
    let res;
    try {
      res = await fetch(path, { headers, cache: 'no-store' });
    } catch (e) {
      throw new ApiError(0, { title: 'Cannot reach the server', detail: e.message });
    }
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
        title: 'Unexpected answer',
        detail: 'HTTP ' + res.status + ' without a JSON body',
      });
    }
    return body;
  }

  // ---- errors -----------------------------------------------------------

  /** Shows err in the #error box: title, detail, one line per errors[]
   *  entry and the hint. A 401 also opens the token form. */
  function showError(err) {
    const p = (err && err.problem) || { title: 'Error', detail: String(err) };
    const status = err && err.status ? ' (HTTP ' + err.status + ')' : '';
    errorBox.querySelector('.error-title').textContent = (p.title || 'Error') + status;
    errorBox.querySelector('.error-detail').textContent = p.detail || '';
    const list = errorBox.querySelector('.error-list');
    list.replaceChildren();
    if (Array.isArray(p.errors)) {
      for (const e of p.errors) {
        list.appendChild(el('li', {},
          el('code', {}, (e && e.path) || '(plan)'), ': ', (e && e.message) || 'invalid'));
      }
    }
    errorBox.querySelector('.error-hint').textContent = p.hint ? 'Hint: ' + p.hint : '';
    errorBox.hidden = false;
    if (err && err.status === 401) {
      tokenForm.hidden = false;
      if (getToken()) {
        tokenForm.querySelector('label').textContent = 'The stored token was refused; paste another';
      }
    }
  }

  function clearError() {
    errorBox.hidden = true;
  }

  // ---- formatting ---------------------------------------------------------

  /** The CLI's number format (cli/table.c cli_fmt_num): four significant
   *  digits with trailing zeros dropped, an SI suffix from 1e5 (k, M, G, T;
   *  chosen after rounding, so 999960 is "1M"), and C's "%.4g" exponent
   *  form below 1e-4 and from 1e15. No digit grouping: a comma inside
   *  "[1,503, 1,543]" would be ambiguous. */
  function fmtNum(v) {
    if (typeof v !== 'number' || !isFinite(v)) return '-';
    const a = Math.abs(v);
    if (a === 0) return '0';
    if (a < 1e-4 || a >= 1e15) return fmtExp(v);
    const sign = v < 0 ? '-' : '';
    const rounded = Number(a.toPrecision(4));
    for (const [scale, suffix] of [[1e12, 'T'], [1e9, 'G'], [1e6, 'M'], [1e5, 'k']]) {
      if (rounded >= scale) return sign + fourDigits(a / (scale === 1e5 ? 1e3 : scale)) + suffix;
    }
    return sign + fourDigits(a);
  }

  function fourDigits(a) {
    const decimals = Math.max(0, 3 - Math.floor(Math.log10(a)));
    return stripZeros(a.toFixed(decimals));
  }

  function stripZeros(s) {
    return s.includes('.') ? s.replace(/0+$/, '').replace(/\.$/, '') : s;
  }

  /** printf("%.4g") for the exponent range: "1e-05", "1.5e+15". */
  function fmtExp(v) {
    const [mant, exp] = v.toExponential(3).split('e');
    const x = Number(exp);
    return stripZeros(mant) + 'e' + (x < 0 ? '-' : '+') + String(Math.abs(x)).padStart(2, '0');
  }

  /** A percentage without sign: "13" from 10 up, "1.3" from 0.1, else two
   *  significant digits. */
  function fmtPct(p) {
    const a = Math.abs(p);
    if (a >= 10) return p.toFixed(0);
    if (a >= 0.1) return p.toFixed(1);
    return String(Number(p.toPrecision(2)));
  }

  /** Local date and time of an ISO timestamp, or the text itself. */
  function fmtTime(iso) {
    const d = new Date(iso);
    if (!iso || isNaN(d.getTime())) return iso || '-';
    return d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
  }

  function timeEl(iso) {
    return el('time', { datetime: iso, title: iso }, fmtTime(iso));
  }

  /** Counts of a plan summary with absent members as 0. */
  function jobCounts(plan) {
    const j = plan.jobs || {};
    const n = (k) => (Number.isFinite(j[k]) ? j[k] : 0);
    return {
      total: n('total'), queued: n('queued'), running: n('running'),
      done: n('done'), failed: n('failed'), cancelled: n('cancelled'),
    };
  }

  /** Share of jobs that ended, 0..1 (the same the CLI prints). */
  function fraction(c) {
    return c.total > 0 ? (c.done + c.failed + c.cancelled) / c.total : 0;
  }

  const KNOWN_STATUS = new Set(['queued', 'running', 'done', 'failed', 'cancelled']);

  function badge(status) {
    const s = String(status || 'unknown');
    return el('span', { class: 'badge status-' + (KNOWN_STATUS.has(s) ? s : 'unknown') }, s);
  }

  function progressBar(c, label, status) {
    return el('progress', {
      class: 'progress status-' + (KNOWN_STATUS.has(status) ? status : 'unknown'),
      max: Math.max(c.total, 1), value: c.done + c.failed + c.cancelled,
      'aria-label': label,
    });
  }

  /** A link to a plan page; ids are checked to be integers so the href can
   *  only ever be "#/plans/<digits>". */
  function planLink(id, text) {
    return Number.isSafeInteger(id) ? el('a', { href: '#/plans/' + id }, text) : text;
  }

  // ---- scheduling -------------------------------------------------------

  function schedule(fn, ms) {
    clearTimeout(timer);
    timer = setTimeout(fn, ms);
  }

  // ---- #/ : the list of plans -------------------------------------------

  function showList(gen) {
    document.title = 'Plans — hvbench';
    const body = el('div', { 'aria-live': 'polite', 'aria-busy': 'true' },
      el('p', { class: 'note' }, 'Loading…'));
    view.replaceChildren(el('h1', { tabindex: '-1' }, 'Plans'), body);

    async function load() {
      let data;
      try {
        data = await api('api/v1/plans');
      } catch (err) {
        if (gen !== generation) return;
        body.setAttribute('aria-busy', 'false');
        body.replaceChildren();
        showError(err);
        // Keep trying through a restart of the server, not after a refusal.
        if (err.status === 0 || err.status >= 500) schedule(load, LIST_REFRESH_MS);
        return;
      }
      if (gen !== generation) return;
      clearError();
      body.setAttribute('aria-busy', 'false');
      const items = Array.isArray(data.items) ? data.items : [];
      if (items.length === 0) {
        body.replaceChildren(el('p', { class: 'empty' },
          'No plans yet. Submit one with ', el('code', {}, 'hvbench submit plan.json'), '.'));
        return;
      }
      body.replaceChildren(plansTable(items));
      if (items.some((p) => ACTIVE.has(p.status))) schedule(load, LIST_REFRESH_MS);
    }
    load();
  }

  function plansTable(items) {
    const rows = items.map((p) => {
      const c = jobCounts(p);
      return el('tr', { 'data-plan-id': p.id },
        el('td', { class: 'num' }, planLink(p.id, String(p.id))),
        el('td', {}, planLink(p.id, p.name || '(unnamed)')),
        el('td', {}, badge(p.status)),
        el('td', { class: 'num' }, el('div', { class: 'progress-cell' },
          el('span', { class: 'counts' }, c.done + '/' + c.total),
          progressBar(c, 'plan ' + p.id + ' progress', p.status))),
        el('td', {}, timeEl(p.created_at)));
    });
    return el('table', { id: 'plans-table', class: 'data' },
      el('caption', { class: 'visually-hidden' }, 'Plans, newest first'),
      el('thead', {}, el('tr', {},
        el('th', { scope: 'col', class: 'num' }, 'ID'),
        el('th', { scope: 'col' }, 'Name'),
        el('th', { scope: 'col' }, 'Status'),
        el('th', { scope: 'col', class: 'num' }, 'Done/total'),
        el('th', { scope: 'col' }, 'Created'))),
      el('tbody', {}, rows));
  }

  // ---- #/plans/ID : one plan --------------------------------------------

  function showPlan(gen, id) {
    document.title = 'Plan ' + id + ' — hvbench';
    const title = el('h1', { tabindex: '-1' }, 'Plan ' + id);
    const status = el('section', { id: 'plan-status', class: 'plan-status', 'aria-live': 'polite',
      'aria-label': 'Status' });
    const report = el('div', { class: 'report' });
    const planCode = el('code', {});
    const details = el('details', { id: 'plan-json' },
      el('summary', {}, 'Submitted plan (JSON)'), el('pre', {}, planCode));
    // Hidden until the plan has loaded once: a plan that does not exist
    // shows the error box and no empty frames.
    const content = el('div', { hidden: true }, status,
      el('section', { 'aria-labelledby': 'results-heading' },
        el('h2', { id: 'results-heading' }, 'Results'), report),
      details);
    view.replaceChildren(
      el('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' }, el('a', { href: '#/' }, '← All plans')),
      title, content);

    async function load() {
      const [planRes, reportRes] = await Promise.allSettled([
        api('api/v1/plans/' + id), api('api/v1/plans/' + id + '/report')]);
      if (gen !== generation) return;
      let again = false;
      if (planRes.status === 'fulfilled') {
        const plan = planRes.value;
        renderPlanHeader(title, status, plan);
        content.hidden = false;
        // The plan does not change after submission: set it once, so an
        // open <details> and its scroll position survive the refreshes.
        if (!planCode.textContent && plan.plan !== undefined) {
          planCode.textContent = JSON.stringify(plan.plan, null, 2);
        }
        again = ACTIVE.has(plan.status);
      } else {
        const err = planRes.reason;
        again = err.status === 0 || err.status >= 500;
      }
      if (reportRes.status === 'fulfilled') renderReport(report, reportRes.value);
      const failed = planRes.status === 'rejected' ? planRes.reason
        : reportRes.status === 'rejected' ? reportRes.reason : null;
      if (failed) showError(failed);
      else clearError();
      if (again) schedule(load, PLAN_REFRESH_MS);
    }
    load();
  }

  function renderPlanHeader(title, status, plan) {
    const c = jobCounts(plan);
    const pct = Math.floor(fraction(c) * 100 + 1e-9);
    title.textContent = 'Plan ' + plan.id + (plan.name ? ': ' + plan.name : '');
    document.title = title.textContent + ' — hvbench';
    const counts = [['done', c.done], ['running', c.running], ['queued', c.queued],
      ['failed', c.failed], ['cancelled', c.cancelled]];
    status.replaceChildren(
      el('div', { class: 'status-line' },
        badge(plan.status),
        el('span', { class: 'jobs' }, c.total + (c.total === 1 ? ' job' : ' jobs')),
        progressBar(c, 'progress', plan.status),
        el('span', { class: 'pct' }, pct + '%')),
      el('dl', { class: 'counts' }, counts.map(([k, v]) => [
        el('div', { class: 'count count-' + k + (v > 0 ? ' nonzero' : '') },
          el('dt', {}, k), el('dd', {}, String(v)))])),
      el('p', { class: 'times' },
        'Created ', timeEl(plan.created_at),
        plan.updated_at ? [' · updated ', timeEl(plan.updated_at)] : null,
        ACTIVE.has(plan.status) ? el('span', { class: 'note' }, ' · refreshing every 3 s') : null));
  }

  /** Direction arrow of a metric, with a text alternative. */
  function direction(hib) {
    if (hib === true) return el('span', { class: 'dir', title: 'higher is better', 'aria-label': 'higher is better' }, '↑');
    if (hib === false) return el('span', { class: 'dir', title: 'lower is better', 'aria-label': 'lower is better' }, '↓');
    return null;
  }

  function renderReport(container, data) {
    const rows = Array.isArray(data.rows) ? data.rows : [];
    if (rows.length === 0) {
      container.replaceChildren(el('p', { class: 'empty' },
        ACTIVE.has(data.status) ? 'No results yet: the first jobs are still running.'
          : 'No results.'));
      return;
    }
    const body = rows.map((r) => {
      const hasCi = r.n >= 2 && Number.isFinite(r.ci95_low) && Number.isFinite(r.ci95_high);
      const half = hasCi && Number.isFinite(r.ci95_half_pct) ? '±' + fmtPct(r.ci95_half_pct) + '%' : '-';
      return el('tr', {},
        el('td', {}, r.configuration || '-'),
        el('td', {}, r.workload || '-'),
        el('td', {}, r.target || '-'),
        el('td', {}, r.metric || '-', ' ', direction(r.higher_is_better)),
        el('td', { class: 'num' }, Number.isFinite(r.n) ? String(r.n) : '-'),
        el('td', { class: 'num' }, fmtNum(r.mean)),
        el('td', { class: 'num' }, r.n >= 2 ? fmtNum(r.sd) : '-'),
        el('td', { class: 'num ci' },
          el('span', { class: 'ci-pct' }, half),
          hasCi ? el('span', { class: 'ci-range' },
            '[' + fmtNum(r.ci95_low) + ', ' + fmtNum(r.ci95_high) + ']') : null),
        el('td', {}, r.unit || ''));
    });
    container.replaceChildren(el('table', { id: 'report-table', class: 'data' },
      el('caption', {}, 'Mean, sample standard deviation and 95 % confidence interval of the mean (Student t) per metric' +
        (ACTIVE.has(data.status) ? ' — partial, the plan is still ' + data.status : '')),
      el('thead', {}, el('tr', {},
        ['Configuration', 'Workload', 'Target', 'Metric'].map((h) => el('th', { scope: 'col' }, h)),
        el('th', { scope: 'col', class: 'num' }, el('abbr', { title: 'repetitions' }, 'n')),
        el('th', { scope: 'col', class: 'num' }, 'Mean'),
        el('th', { scope: 'col', class: 'num' }, el('abbr', { title: 'standard deviation' }, 'SD')),
        el('th', { scope: 'col', class: 'num' }, el('abbr', { title: '95 % confidence interval of the mean: half width and bounds' }, '95% CI')),
        el('th', { scope: 'col' }, 'Unit'))),
      el('tbody', {}, body)));
  }

  // ---- routing ----------------------------------------------------------

  function route() {
    clearTimeout(timer);
    generation++;
    clearError();
    forgetToken.hidden = !getToken();
    const hash = location.hash || '#/';
    const m = /^#\/plans\/(\d{1,15})\/?$/.exec(hash);
    if (hash === '#/' || hash === '#') {
      showList(generation);
    } else if (m) {
      showPlan(generation, Number(m[1]));
    } else {
      document.title = 'Not found — hvbench';
      view.replaceChildren(el('h1', { tabindex: '-1' }, 'Not found'),
        el('p', {}, 'No page at ', el('code', {}, hash), '. ', el('a', { href: '#/' }, 'All plans')));
    }
  }

  window.addEventListener('hashchange', () => {
    route();
    // Move keyboard and screen reader focus to the new page's heading.
    const h1 = view.querySelector('h1');
    if (h1) h1.focus();
  });
  route();
})();
