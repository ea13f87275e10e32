// web.test.js — the hvbench web page in a real headless Chromium (Debian's
// /usr/bin/chromium driven by playwright-core), against a real server whose
// database real plan runs filled. Started by tests/integration/test_web.sh,
// which runs the plans; by hand:
//
//   URL=http://127.0.0.1:PORT QUICK_ID=1 FAIL_ID=2 TUNE_ID=3 WAITS_ID=4 \
//     TUNE_TARGET=2 node --test web.test.js
//
// Environment:
//   URL          base URL of a server with open reads (required)
//   QUICK_ID     a finished plan named "quick" with 3 done jobs
//   FAIL_ID      a failed plan (its job's error names stress-ng)
//   TUNE_ID      a done tuning plan with two levels of thp, guests and a host
//   WAITS_ID     a plan waiting for a target that never registered
//   FLEET_ID     a done fleet plan over three hosts (optional)
//   REC_PROPOSED, REC_ADOPTED, REC_DELIVERED, REC_REGRESSED  recommendations
//                in these states, the adopted one pending on two hosts, the
//                regressed one with its rollback in four forms (optional,
//                all or none)
//   TUNE_TARGET  the id of the tuning plan's host target
//   SHOTS        folder for a screenshot of each page (optional)
//   CLI_CENTRE   the quick plan's cpu.score centre as `hvbench report` prints it
//   CLI_INTERVAL and its 95 % interval ("[lo, hi]"), or the words in its place
//   AUTH_URL, READ_TOKEN  a second server with --read-auth token, and a read
//                token for it (optional, both or neither)
//   CHROMIUM     the browser binary (default /usr/bin/chromium)
'use strict';

const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { chromium } = require('playwright-core');
const { cliFmtNum, fmtChange, fmtChangeInterval, fmtChangeOrNote } = require('./fmt.js');

const BASE = required('URL').replace(/\/+$/, '');
const QUICK = required('QUICK_ID');
const FAIL = required('FAIL_ID');
const TUNE = required('TUNE_ID');
const WAITS = required('WAITS_ID');
const TUNE_TARGET = required('TUNE_TARGET');
const FLEET = process.env.FLEET_ID || '';
const RECS = {
  proposed: process.env.REC_PROPOSED || '', adopted: process.env.REC_ADOPTED || '',
  delivered: process.env.REC_DELIVERED || '', regressed: process.env.REC_REGRESSED || '',
};
const HAS_RECS = Object.values(RECS).every(Boolean);
const AUTH_URL = (process.env.AUTH_URL || '').replace(/\/+$/, '');
const READ_TOKEN = process.env.READ_TOKEN || '';
const SHOTS = process.env.SHOTS || '';
const CLI_CENTRE = process.env.CLI_CENTRE || '';
const CLI_INTERVAL = process.env.CLI_INTERVAL || '';

/** A summary's centre and interval as every surface prints them
 *  (lib/report_text.c hv_summary_figures): the interval's centre, the
 *  bounds when usable, else the server's interval_note. */
function figuresOf(s) {
  const iv = s.interval !== undefined ? s.interval : (typeof s.lo === 'number' ? s : null);
  const has = !!iv && typeof iv.lo === 'number' && typeof iv.hi === 'number';
  const usable = typeof s.usable === 'boolean' ? s.usable && has : has;
  return {
    centre: cliFmtNum(has && typeof iv.center === 'number' ? iv.center : s.mean),
    interval: usable ? `[${cliFmtNum(iv.lo)}, ${cliFmtNum(iv.hi)}]` : (s.interval_note || 'no interval'),
  };
}
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

// Nothing here may wait forever: every page action and expectation gives up
// after STEP_MS, and a watchdog ends the whole run after RUN_MS even if
// something outside Playwright's timeouts hangs (the shell adds its own
// `timeout` around node as the last resort).
const STEP_MS = 15000;
const RUN_MS = 360000;

function required(name) {
  const v = process.env[name];
  if (!v) throw new Error(`environment variable ${name} is not set`);
  return v;
}

// The formatter itself is checked on the CLI's own unit test cases
// (tests/unit/test_cli_table.c), so a wrong expectation cannot hide a
// wrong page.
test('cliFmtNum agrees with the CLI unit test cases', () => {
  const cases = [
    [1523.2, '1523'], [-1523.2, '-1523'], [12345.6, '12346'], [99999, '100k'],
    [123456.7, '123.5k'], [1234567.8, '1.235M'], [1000000, '1M'], [999960, '1M'],
    [16629526, '16.63M'], [993867357, '993.9M'], [2.5e9, '2.5G'], [3.2e12, '3.2T'],
    [999.96, '1000'], [9.99996, '10'], [100, '100'], [12.346, '12.35'], [8.1, '8.1'],
    [2.5, '2.5'], [0.5, '0.5'], [0.01234, '0.01234'], [0.00051, '0.00051'], [0, '0'],
    [1e-5, '1e-05'], [1.5e15, '1.5e+15'],
  ];
  for (const [v, want] of cases) assert.equal(cliFmtNum(v), want, `cliFmtNum(${v})`);
  assert.equal(fmtChange(5.034), '+5.03');
  assert.equal(fmtChange(-12.44), '-12.4');
  assert.equal(fmtChangeInterval(5, 3.9, 6.123), '+5.00 % [+3.90, +6.12]');
});

let browser;
let watchdog;
// Console messages of level "error" and uncaught page errors, from every
// page (a CSP violation is one); the last test asserts there were none but
// the expected ones.
const problems = [];
// Chromium logs every HTTP error answer to fetch() as a console error. The
// tests provoke some on purpose: only those, matched by status and URL
// prefix, are allowed; so are 404s of endpoints this server may not have
// yet ("no such endpoint": the page then says "not available").
const expectedHttpErrors = [];

before(async () => {
  watchdog = setTimeout(async () => {
    console.error(`watchdog: the browser tests took longer than ${RUN_MS / 1000} s; giving up`);
    if (browser) await browser.close().catch(() => {});
    process.exit(1);
  }, RUN_MS);
  watchdog.unref();
  // launch() starts Chromium with a new, empty profile directory under
  // os.tmpdir() and deletes it on close; test_web.sh points TMPDIR at a
  // short folder of its own. The flags keep Chromium from reaching out to
  // a network this machine does not have.
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    timeout: 30000,
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
    ],
  });
});

after(async () => {
  if (browser) await browser.close().catch((e) => console.error('closing Chromium:', e));
  clearTimeout(watchdog);
});

const missingEndpoints = new Set();

/** GET from the REST API; resolves to the JSON body, or null for an
 *  endpoint this server does not have. */
async function rest(p, base = BASE) {
  const res = await fetch(`${base}/${p}`, { signal: AbortSignal.timeout(STEP_MS) });
  const body = await res.json();
  if (res.status === 404 && /no such endpoint/.test(body.detail || '')) {
    missingEndpoints.add(p.replace(/\?.*/, '').replace(/\/\d+/g, '/{id}'));
    return null;
  }
  assert.equal(res.status, 200, `GET ${p}: ${JSON.stringify(body).slice(0, 300)}`);
  return body;
}

/** A page in a new browser context (own localStorage), with the timeouts
 *  and the console and error listeners every test wants. Requests to any
 *  other host fail the test: the page needs nothing from elsewhere. */
async function newPage(name, viewport = { width: 1280, height: 900 }) {
  const context = await browser.newContext({ viewport });
  context.setDefaultTimeout(STEP_MS);
  context.setDefaultNavigationTimeout(STEP_MS);
  const page = await context.newPage();
  const origin = new URL(BASE).origin;
  const authOrigin = AUTH_URL ? new URL(AUTH_URL).origin : origin;
  page.on('request', (req) => {
    const u = req.url();
    if (!u.startsWith(origin) && !u.startsWith(authOrigin) && !u.startsWith('data:')) problems.push(`${name}: request to another host: ${u}`);
  });
  page.on('pageerror', (err) => problems.push(`${name}: page error: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() !== 'error') return;
    const text = msg.text();
    const url = msg.location().url || '';
    const m = /^Failed to load resource: the server responded with a status of (\d+)/.exec(text);
    if (m && expectedHttpErrors.some((e) => e.status === Number(m[1]) && url.startsWith(e.url))) return;
    if (m && Number(m[1]) === 404 && [...missingEndpoints].some((p) => url.replace(/\/\d+/g, '/{id}').includes(p))) return;
    problems.push(`${name}: console error: ${text}${url ? ` (${url})` : ''}`);
  });
  return page;
}

async function shot(page, name) {
  if (SHOTS) await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
}

/** Texts of the cells of a table row. */
async function cellTexts(row) {
  return (await row.locator('td').allInnerTexts()).map((t) => t.trim());
}

/** Whether page p scrolls sideways: null when not, else what is too wide. */
async function overflow(p) {
  const [sw, iw] = await p.evaluate(() => [document.documentElement.scrollWidth, innerWidth]);
  return sw > iw ? `the page is ${sw} px wide at ${iw} px` : null;
}

let page; // one page walks the list, the plans, a job, its target, compare

test('the plan list shows every plan, the waiting one in words', async () => {
  // Known before the page asks: these may be missing on this server.
  await rest(`api/v1/targets/${TUNE_TARGET}/history?metric=cpu.score`);
  await rest('api/v1/compare?a=1&b=1').catch(() => {});
  page = await newPage('walk');
  await page.goto(`${BASE}/`);
  const plans = await rest('api/v1/plans');
  for (const p of plans.items) {
    const row = page.locator(`#plans-table tbody tr[data-plan-id="${p.id}"]`);
    await row.waitFor();
    const [id, name, host, status, counts] = await cellTexts(row);
    assert.equal(id, String(p.id));
    assert.ok(name.startsWith(p.name), `name cell "${name}" starts with ${p.name}`);
    // A fleet plan's child: its host, and its parent under its name.
    assert.equal(host, p.host || '-');
    if (p.parent_id) assert.ok(name.includes(`child of #${p.parent_id}`), `name cell "${name}" names parent ${p.parent_id}`);
    assert.equal(status, p.status);
    assert.equal(counts, `${p.jobs.done}/${p.jobs.total}`);
  }
  const waits = plans.items.find((p) => String(p.id) === WAITS);
  const words = await page.locator(`#plans-table tr[data-plan-id="${WAITS}"] .waiting`).innerText();
  assert.ok(words.includes(waits.waiting.detail), `"${words}" has the API's detail "${waits.waiting.detail}"`);
  await shot(page, 'plans');
});

test('the list filters by status, and the filter is in the URL', async () => {
  const p = await newPage('filter');
  await p.goto(`${BASE}/#/?status=failed`);
  await p.locator(`#plans-table tr[data-plan-id="${FAIL}"]`).waitFor();
  assert.equal(await p.locator('#plans-table tbody tr').count(), 1, 'one failed plan');
  assert.equal(await p.locator('#f-status').inputValue(), 'failed');
  await p.locator('#f-status').selectOption('done');
  await p.locator(`#plans-table tr[data-plan-id="${QUICK}"]`).waitFor();
  assert.match(p.url(), /status=done/);
  await p.context().close();
});

test('the quick plan page: status, charts and the full table like the API and the CLI', async () => {
  await page.locator(`#plans-table tr[data-plan-id="${QUICK}"] a`, { hasText: 'quick' }).click();
  await page.waitForFunction((h) => location.hash === h, `#/plans/${QUICK}`);
  await page.locator('#plan-status .badge').waitFor();
  assert.equal((await page.locator('#plan-status .badge').innerText()).trim(), 'done');
  assert.equal((await page.locator('h1').innerText()).trim(), `Plan ${QUICK}: quick`);
  assert.equal((await page.locator('#plan-owner').innerText()).trim(), 'Owner: test-submit', 'the token that submitted it');
  const report = await rest(`api/v1/plans/${QUICK}/report`);
  // A chart per primary metric; its legend lists the API's figures.
  const charts = page.locator('#charts figure.interval-chart');
  await charts.first().waitFor();
  const score = page.locator('#charts figure[data-metric="cpu.score"]');
  const centre = report.summaries.find((s) => s.metric === 'cpu.score').interval.center;
  assert.ok((await score.innerText()).includes(cliFmtNum(centre)), `cpu.score chart names ${cliFmtNum(centre)}`);
  // The report opens with its answer: this plan compares nothing, so the
  // answer (empty) says so.
  assert.equal(await page.locator('#report > :first-child').getAttribute('id'), 'answer', 'the answer comes first');
  assert.deepEqual(report.answer, [], 'no factors, no guests: nothing to answer');
  assert.match(await page.locator('#answer').innerText(), /Nothing to decide/);
  // The primary metrics' rows, as hvbench report prints them; the other
  // metrics and percentiles appear with "All metrics", reached by keyboard.
  const trs = page.locator('#report-table tbody tr');
  const sums = report.summaries;
  const primaries = sums.filter((s) => s.primary === true);
  assert.ok(primaries.length > 0 && primaries.length < sums.length, 'the quick plan has primary and other metrics');
  await page.locator('#report-table').waitFor();
  assert.equal(await trs.count(), primaries.length, 'a row per primary summary, no other');
  assert.equal(await page.locator('#report-table tr[data-primary="false"]').count(), 0, 'no row of another metric or percentile');
  assert.equal(await page.locator('#all-toggle').getAttribute('aria-pressed'), 'false');
  assert.match(await page.locator('#all-note').innerText(), new RegExp(`^Primary metrics only: ${sums.length - primaries.length +
    (report.overhead || []).filter((o) => o.primary === false).length} rows? of other metrics and percentiles left out`));
  await page.locator('#all-toggle').focus();
  await page.keyboard.press('Enter');
  await page.waitForFunction((n) => document.querySelectorAll('#report-table tbody tr').length === n, sums.length);
  assert.equal(await page.locator('#all-toggle').getAttribute('aria-pressed'), 'true');
  assert.match(page.url(), /all=1/, '"All metrics" is in the URL');
  await shot(page, 'plan-quick');
  assert.equal(await trs.count(), sums.length, 'with All metrics: one table row per summary');
  const wrong = [];
  for (let i = 0; i < sums.length; i++) {
    const r = sums[i];
    const cells = await cellTexts(trs.nth(i));
    const range = trs.nth(i).locator('.ci-range, .ci-note');
    const f = figuresOf(r);
    const got = { metric: cells[3].split(' ')[0], n: cells[4], centre: cells[5], mean: cells[7], sd: cells[8],
      interval: (await range.innerText()).trim() };
    const want = { metric: r.metric, n: String(r.n), centre: f.centre, mean: cliFmtNum(r.mean),
      sd: r.n >= 2 ? cliFmtNum(r.sd) : '-', interval: f.interval };
    for (const k of Object.keys(want)) if (got[k] !== want[k]) wrong.push(`${r.metric} ${k}: page "${got[k]}", API "${want[k]}"`);
    if (r === sums.find((x) => x.metric === 'cpu.score') && CLI_CENTRE) {
      assert.equal(f.centre, CLI_CENTRE, 'the CLI prints the same centre');
      assert.equal(f.interval, CLI_INTERVAL, 'and the same interval');
    }
  }
  assert.deepEqual(wrong, [], 'cells that differ from the API');
  // Sorting by the arithmetic mean, descending, by two clicks; the order is the API's.
  const meanHead = page.locator('#report-table th[data-key="mean"] button');
  await meanHead.click();
  await meanHead.click();
  assert.equal(await page.locator('#report-table th[data-key="mean"]').getAttribute('aria-sort'), 'descending');
  const top = Math.max(...sums.map((r) => r.mean));
  assert.equal((await cellTexts(trs.first()))[7], cliFmtNum(top), 'largest mean first');
  await page.locator('#report-table-filter').fill('cpu.score');
  assert.equal(await trs.count(), sums.filter((r) => r.metric.includes('cpu.score')).length, 'the filter keeps the matching rows');
});

test('the tuning plan page: settings read back, verdicts, recommendations, overhead', async () => {
  const p = await newPage('tune');
  await p.goto(`${BASE}/#/plans/${TUNE}`);
  await p.locator('#settings-table').waitFor();
  const steps = (await rest(`api/v1/plans/${TUNE}/steps`)).items.filter((s) => s.kind === 'apply');
  const rows = p.locator('#settings-table tbody tr');
  assert.equal(await rows.count(), steps.length, 'a row per apply step');
  for (let i = 0; i < steps.length; i++) {
    const cells = await cellTexts(rows.nth(i));
    assert.equal(cells[1], steps[i].configuration);
    assert.equal(cells[3], String(steps[i].settings.thp.read_back), 'thp as read back');
  }
  const report = await rest(`api/v1/plans/${TUNE}/report`);
  // The answer opens the report: the server's lines as they are, with how
  // many comparisons are decided, the recommendations (or none) and what
  // would decide the others.
  await p.locator('#answer .answer-lines').waitFor();
  assert.equal(await p.locator('#report > :first-child').getAttribute('id'), 'answer', 'the answer comes first');
  assert.deepEqual((await p.locator('#answer li').allInnerTexts()).map((t) => t.trim()), report.answer, 'the answer as the API gives it');
  const answer = await p.locator('#answer').innerText();
  const d = report.decided;
  assert.ok(d.comparisons > 0 && d.comparisons === report.comparisons.length, 'a comparison per level and primary metric');
  assert.ok(answer.includes(`Decided: ${d.comparisons - d.inconclusive} of ${d.comparisons} comparison`),
    `the decided count in ${JSON.stringify(answer)}`);
  assert.match(answer, /Recommended( 1: thp=never|: nothing)/, 'the recommendation, or that there is none');
  if (report.comparisons.some((c) => c.family_verdict === 'inconclusive' && Number.isInteger(c.more_rounds))) {
    assert.match(answer, /more rounds? (would likely decide it|needed for an interval)/, 'what would decide the rest');
  }
  // Primary metrics only until "All metrics" is pressed.
  await p.locator('#report-table').waitFor();
  const others = report.summaries.filter((s) => s.primary === false).length;
  assert.ok(others > 0, 'the tuning plan has rows of other metrics and percentiles');
  assert.equal(await p.locator('#report-table tr[data-primary="false"]').count(), 0, 'their rows are not shown');
  await p.locator('#all-toggle').click();
  await p.locator('#report-table tr[data-primary="false"]').first().waitFor();
  assert.equal(await p.locator('#report-table tr[data-primary="false"]').count(), others, 'All metrics shows them');
  await p.locator('#all-toggle').click();
  await p.waitForFunction(() => document.querySelectorAll('#report-table tr[data-primary="false"]').length === 0);
  if (report.comparisons) {
    await p.locator('#verdicts-table').waitFor();
    const trs = p.locator('#verdicts-table tbody tr');
    assert.equal(await trs.count(), report.comparisons.length, 'a row per comparison');
    for (let i = 0; i < report.comparisons.length; i++) {
      const c = report.comparisons[i];
      const text = (await trs.nth(i).locator('td.change').innerText()).trim();
      assert.equal(text, fmtChangeOrNote(c, c.pct, c.lo_pct, c.hi_pct), `change of ${c.metric}`);
      if ((c.family_verdict || c.verdict) === 'inconclusive' && Number.isInteger(c.more_rounds)) {
        assert.match(await trs.nth(i).innerText(), new RegExp(`about ${c.more_rounds} more repetition`));
      }
    }
    assert.equal(await p.locator('#recommendations article.rec').count(), report.recommendations.length, 'a card per recommendation');
    for (const e of report.efficiency || []) {
      const cell = p.locator(`#overhead .efficiency[data-configuration="${e.configuration}"] tr.overall td.eff`);
      assert.equal((await cell.innerText()).trim(), (100 * e.overall.efficiency).toFixed(1) + ' %');
    }
  } else {
    for (const id of ['recommendations', 'verdicts', 'overhead']) {
      assert.match(await p.locator(`#${id}`).innerText(), /not available from this server/, `#${id} says not available`);
    }
  }
  await shot(p, 'plan-tune');
  // Down to 400 px the page scrolls only inside its tables.
  await p.setViewportSize({ width: 400, height: 900 });
  await p.waitForTimeout(100);
  const width = await p.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(width <= 400, `page width at a 400 px viewport: ${width}`);
  await shot(p, 'plan-tune-400');
  // Every control has a name a screen reader can say.
  const unnamed = await p.evaluate(() => [...document.querySelectorAll('input, select, button, a[href]')]
    .filter((e) => !(e.labels && e.labels.length) && !e.getAttribute('aria-label') && !e.textContent.trim() && e.offsetParent !== null)
    .map((e) => e.outerHTML.slice(0, 80)));
  assert.deepEqual(unnamed, [], 'controls without an accessible name');
  await p.context().close();
});

test('the failed plan page shows the whole error of its failed job', async () => {
  const p = await newPage('fail');
  await p.goto(`${BASE}/#/plans/${FAIL}`);
  const jobs = (await rest(`api/v1/plans/${FAIL}/jobs?status=failed`)).items;
  assert.ok(jobs.length >= 1);
  const item = p.locator(`#failed-jobs li[data-job-id="${jobs[0].id}"] pre.error-text`);
  await item.waitFor();
  assert.equal((await item.innerText()).trim(), jobs[0].error.trim());
  await shot(p, 'plan-fail');
  await p.context().close();
});

test('the fleet plan page: its hosts, their plans and the per-host view as the API gives them', { skip: !FLEET && 'no FLEET_ID' }, async () => {
  const p = await newPage('fleet');
  await p.goto(`${BASE}/#/plans/${FLEET}`);
  const plan = await rest(`api/v1/plans/${FLEET}`);
  const report = await rest(`api/v1/plans/${FLEET}/report`);
  await p.locator('#children-table tbody tr').first().waitFor();
  const rows = p.locator('#children-table tbody tr');
  assert.equal(await rows.count(), plan.children.length, 'one row per child plan');
  for (const c of plan.children) {
    const [host, child, status] = await cellTexts(p.locator(`#children-table tr[data-plan-id="${c.id}"]`));
    assert.deepEqual([host, child, status], [c.host, `Plan ${c.id}`, c.status]);
  }
  // Per series a chart and a table: each host's mean, ratio and interval.
  const wrong = [];
  for (const s of report.hosts.series) {
    const fig = p.locator(`#hosts-view figure[data-metric="${s.metric}"][data-workload="${s.workload}"]`);
    await fig.waitFor();
    assert.equal((await fig.locator('.median').innerText()).trim(), cliFmtNum(s.median), `${s.metric} median`);
    for (const h of s.hosts) {
      const cells = await cellTexts(fig.locator(`tr[data-host="${h.host}"]`));
      // Two rounds a host: the server's words in place of both intervals.
      assert.equal(h.usable, false, `${h.host}: an interval of ${h.n} rounds is not usable`);
      assert.match(h.interval_note, /^n = 2: too few rounds for an interval/);
      const bounds = (lo, hi) => h.usable === false ? h.interval_note : typeof lo === 'number' ? `[${cliFmtNum(lo)}, ${cliFmtNum(hi)}]` : '-';
      const want = [h.host, String(h.n), cliFmtNum(h.mean), bounds(h.lo, h.hi),
        cliFmtNum(h.ratio), bounds(h.ratio_lo, h.ratio_hi), h.outlier ? 'outlier' : ''];
      if (JSON.stringify(cells) !== JSON.stringify(want)) wrong.push(`${s.metric} ${h.host}: page ${JSON.stringify(cells)}, API ${JSON.stringify(want)}`);
    }
  }
  assert.deepEqual(wrong, [], 'per-host cells that differ from the API');
  const outliers = report.hosts.outliers || [];
  assert.equal(await p.locator('#outliers li').count(), outliers.length, 'one line per outlier the API names');
  for (const o of outliers) {
    const text = await p.locator(`#outliers li[data-host="${o.host}"]`).innerText();
    for (const d of o.differs || []) assert.ok(text.includes(`${d.fact} ${d.value}`), `${o.host}'s line names ${d.fact} ${d.value}`);
  }
  await shot(p, 'plan-fleet');
  // A child plan's page names its fleet plan and links back to it.
  await p.locator(`#children-table tr[data-plan-id="${plan.children[0].id}"] a`).click();
  await p.locator('#fleet-parent a').waitFor();
  await p.locator('#fleet-parent a').click();
  await p.waitForFunction((h) => location.hash === h, `#/plans/${FLEET}`);
  await p.context().close();
});

let hostJob; // a job of the tuning plan's host, with telemetry

test('plan → jobs: every job with state, target, configuration, attempt', async () => {
  await page.goto(`${BASE}/#/plans/${TUNE}`);
  await page.locator('#jobs-link').click();
  await page.waitForFunction((h) => location.hash === h, `#/plans/${TUNE}/jobs`);
  const jobs = (await rest(`api/v1/plans/${TUNE}/jobs?limit=1000`)).items;
  const trs = page.locator('#jobs-table tbody tr');
  await trs.first().waitFor();
  assert.equal(await trs.count(), jobs.length);
  for (const j of jobs.slice(0, 10)) {
    const [id, state, target, configuration, , , attempt] = await cellTexts(page.locator(`#jobs-table tr[data-job-id="${j.id}"]`));
    assert.deepEqual([id, state, target, configuration, attempt], [String(j.id), j.status, j.target, j.configuration, String(j.attempt)]);
  }
  hostJob = jobs.find((j) => j.target === 'web-tune');
  assert.ok(hostJob, 'a baseline job on the host');
  await shot(page, 'jobs');
});

test('jobs → job: metrics, samples and host telemetry on one time axis, observed, raw', async () => {
  await page.locator(`#jobs-table tr[data-job-id="${hostJob.id}"] a`).first().click();
  await page.waitForFunction((h) => location.hash === h, `#/jobs/${hostJob.id}`);
  const res = (await rest(`api/v1/jobs/${hostJob.id}/results`)).items.at(-1);
  await page.locator('#metrics-table').waitFor();
  for (const m of res.metrics) {
    const cell = page.locator(`#metrics-table tr[data-metric="${m.name}"] td.num`);
    assert.equal((await cell.innerText()).trim(), cliFmtNum(m.value), m.name);
  }
  await page.locator('#telemetry .chart-box[data-drawn="1"] canvas').first().waitFor();
  const sampleMetrics = new Set(res.samples.map((s) => s.metric));
  assert.equal(await page.locator('#samples figure.chart').count(), [...sampleMetrics].filter((m) => !m.startsWith('host.')).length);
  assert.equal(await page.locator('#telemetry figure.chart').count(), [...sampleMetrics].filter((m) => m.startsWith('host.')).length);
  // The charts show the samples endpoint's series at about one value per
  // pixel: never more than the page asked for, every sample when fewer.
  const figs = await page.locator('#samples figure.chart, #telemetry figure.chart').evaluateAll((fs) => fs.map((f) => ({
    metric: f.dataset.metric, points: Number(f.dataset.points), samples: Number(f.dataset.samples),
    requested: Number(f.dataset.requested), downsampled: f.dataset.downsampled })));
  assert.equal(figs.length, sampleMetrics.size);
  const requested = figs[0].requested;
  assert.ok(requested >= 100 && requested <= 4000, `points asked ${requested}`);
  const sd = await rest(`api/v1/jobs/${hostJob.id}/samples?points=${requested}&attempt=${res.attempt}`);
  for (const f of figs) {
    const n = res.samples.filter((s) => s.metric === f.metric).length;
    const s = sd.series.find((x) => x.metric === f.metric);
    assert.equal(f.requested, requested, f.metric);
    assert.equal(f.samples, n, `${f.metric}: the samples it stands for`);
    assert.ok(f.points <= f.requested, `${f.metric}: ${f.points} points drawn, ${f.requested} asked`);
    assert.equal(f.points, s.t.length, `${f.metric}: the API's series`);
    if (n <= requested) assert.equal(f.points, n, `${f.metric}: every sample`);
    assert.equal(f.downsampled, n > requested ? '1' : '0', f.metric);
  }
  // A drag across the first chart asks for that range; "Whole run" goes back.
  const first = page.locator('#samples figure.chart').first();
  await first.locator('.u-over').scrollIntoViewIfNeeded();
  const over = await first.locator('.u-over').boundingBox();
  await page.mouse.move(over.x + over.width * 0.25, over.y + over.height / 2);
  await page.mouse.down();
  await page.mouse.move(over.x + over.width * 0.75, over.y + over.height / 2, { steps: 5 });
  await page.mouse.up();
  await first.locator('figcaption button', { hasText: 'Whole run' }).waitFor({ state: 'visible' });
  assert.ok(Number(await first.getAttribute('data-samples')) <= figs[0].samples, 'a range holds no more samples than the run');
  await first.locator('figcaption button', { hasText: 'Whole run' }).click();
  await first.locator('figcaption button', { hasText: 'Whole run' }).waitFor({ state: 'hidden' });
  assert.equal(Number(await first.getAttribute('data-samples')), figs[0].samples, 'the whole run again');
  assert.ok((await page.locator('#observed').innerText()).length > 0);
  await page.locator('#raw-output summary').click();
  await page.locator('#raw-output .raw-body .state, #raw-output .raw-body pre').first().waitFor();
  await shot(page, 'job');
});

test('job → target: facts, fingerprint, tuning changes; → history → compare', async () => {
  await page.locator('#job-head .target-slot a').click();
  await page.waitForFunction((h) => location.hash === h, `#/targets/${TUNE_TARGET}`);
  const t = await rest(`api/v1/targets/${TUNE_TARGET}`);
  await page.locator('#target-head dl.facts').waitFor();
  assert.equal((await page.locator('h1').innerText()).trim(), `Target ${t.name}`);
  const changes = (await rest(`api/v1/targets/${TUNE_TARGET}/changes`)).items;
  // The changes come in a request of their own, after the facts.
  if (changes.length > 0) await page.locator('#changes-table tbody tr').nth(changes.length - 1).waitFor();
  assert.equal(await page.locator('#changes-table tbody tr').count(), changes.length, 'a row per change');
  await page.locator('#history ul.metric-links a', { hasText: /^cpu\.score$/ }).click();
  await page.waitForFunction(() => /metric=cpu.score/.test(location.hash));
  const h = await rest(`api/v1/targets/${TUNE_TARGET}/history?metric=cpu.score`);
  if (h) {
    await page.locator('#history .chart-box[data-drawn="1"] canvas').first().waitFor();
    assert.equal(await page.locator('#history .series').count(), h.series.length);
    // The page asks for about one point per pixel of its chart.
    const asked = await page.evaluate(() => performance.getEntriesByType('resource')
      .filter((e) => e.name.includes('/history?')).map((e) => Number(new URL(e.name).searchParams.get('max_points'))));
    assert.ok(asked.length > 0 && asked.every((n) => n >= 100 && n <= 4000), `max_points asked: ${asked}`);
    // A zoom in the URL (seconds) is asked of the server as a window, and
    // the chart shows the points the server has in it.
    const pts = h.series[0].points;
    const a = Math.floor(Date.parse(pts[0].at) / 1000);
    const b = Math.ceil(Date.parse(pts[pts.length - 1].at) / 1000) + 1;
    const base = await page.evaluate(() => location.hash);
    await page.evaluate((u) => { location.hash = u; }, `${base}&from=${a}&to=${b}`);
    await page.waitForFunction(() => performance.getEntriesByType('resource')
      .some((e) => e.name.includes('/history?') && new URL(e.name).searchParams.has('from')));
    const win = await page.evaluate(() => performance.getEntriesByType('resource')
      .filter((e) => e.name.includes('/history?') && new URL(e.name).searchParams.has('from'))
      .map((e) => [new URL(e.name).searchParams.get('from'), new URL(e.name).searchParams.get('to')])[0]);
    assert.deepEqual(win, [new Date(a * 1000).toISOString(), new Date(b * 1000).toISOString()]);
    const hw = await rest(`api/v1/targets/${TUNE_TARGET}/history?metric=cpu.score&from=${encodeURIComponent(win[0])}&to=${encodeURIComponent(win[1])}`);
    await page.locator('#history .chart-box[data-drawn="1"] canvas').first().waitFor();
    await page.waitForFunction((n) => (document.querySelector('#history figcaption') || {}).textContent?.includes(` ${n} points`),
      hw.series[0].points.length);
    await page.evaluate((u) => { location.hash = u; }, base);
    await page.locator('#history .chart-box[data-drawn="1"] canvas').first().waitFor();
  } else {
    await page.locator('#history .state-unavailable').waitFor();
  }
  await shot(page, 'target');
  // On to compare: the history's link when it has one, else the top bar.
  const cmp = page.locator('#history a.compare-link');
  if (await cmp.count()) await cmp.first().click();
  else await page.locator('.topnav a[data-section="compare"]').click();
  await page.waitForFunction(() => location.hash.startsWith('#/compare'));
});

// --- charts and zoom ------------------------------------------------------

/** Whether ticks are the multiples of one 1-2-5 step (1, 2, 5, 10, 20 …). */
function oneTwoFive(ticks) {
  if (ticks.length < 2) return ticks.length === 1;
  const step = ticks[1] - ticks[0];
  const mant = step / 10 ** Math.floor(Math.log10(step) + 1e-9);
  return [1, 2, 5].some((m) => Math.abs(mant - m) < 1e-6) &&
    ticks.every((t, i) => Math.abs(t - ticks[0] - i * step) < step * 1e-6 && Math.abs(t / step - Math.round(t / step)) < 1e-6);
}

/** A chart figure's data attributes as numbers (lists for the ticks). */
async function chartData(fig) {
  return fig.evaluate((f) => {
    const n = (k) => (f.dataset[k] === undefined ? null : Number(f.dataset[k]));
    const list = (k) => (f.dataset[k] ? f.dataset[k].split(',').map(Number) : []);
    return { from: n('from'), to: n('to'), xmin: n('xmin'), xmax: n('xmax'), ymin: n('ymin'), ymax: n('ymax'),
      yticks: list('yticks'), xticks: list('xticks'), ylabel: f.dataset.ylabel ?? null, xlabel: f.dataset.xlabel ?? null };
  });
}

/** Drags across the middle half of a uPlot chart's plot with the mouse. */
async function dragAcross(p, fig) {
  const over = fig.locator('.u-over');
  await over.scrollIntoViewIfNeeded();
  const box = await over.boundingBox();
  await p.mouse.move(box.x + box.width * 0.25, box.y + box.height / 2);
  await p.mouse.down();
  await p.mouse.move(box.x + box.width * 0.75, box.y + box.height / 2, { steps: 5 });
  await p.mouse.up();
}

const hashParams = (p) => p.evaluate(() => Object.fromEntries(new URLSearchParams(location.hash.split('?')[1] || '')));

test('history zoom stays: a drag writes from/to, survives the refetch, a link opens zoomed, "Whole range" returns', async (t) => {
  const h = await rest(`api/v1/targets/${TUNE_TARGET}/history?metric=cpu.score`);
  if (!h) return t.skip('no history endpoint');
  const p = await newPage('history-zoom');
  await p.goto(`${BASE}/#/targets/${TUNE_TARGET}?metric=cpu.score`);
  const fig = p.locator('#history figure.history-chart').first();
  await fig.locator('.chart-box[data-drawn="1"] canvas').first().waitFor();
  const s = h.series[0];
  const first = Date.parse(s.first) / 1000;
  const last = Date.parse(s.last) / 1000;
  const whole = await chartData(fig);
  assert.deepEqual([whole.xmin, whole.xmax], [first, last > first ? last : first + 1], 'the full range is the series\'');
  assert.deepEqual([whole.from, whole.to], [whole.xmin, whole.xmax], 'unzoomed: the whole range shown');
  assert.ok(await fig.locator('button.zoom-reset').isHidden(), 'no "Whole range" while unzoomed');
  // Mark the figure: a zoom must keep this chart, not build another.
  await fig.evaluate((f) => { f.dataset.mark = 'kept'; });
  await dragAcross(p, fig);
  await p.waitForTimeout(2000);
  const z = await chartData(fig);
  const q = await hashParams(p);
  assert.ok(z.from > whole.from && z.to < whole.to && z.to > z.from, `zoomed in: ${z.from}..${z.to} within ${whole.from}..${whole.to}`);
  assert.deepEqual([Number(q.from), Number(q.to)], [z.from, z.to], 'the URL holds the range shown');
  assert.equal(q.metric, 'cpu.score');
  assert.equal(await fig.getAttribute('data-mark'), 'kept', 'the same chart, not a new one');
  assert.equal(await p.locator('#history figure.history-chart').count(), h.series.length, 'one chart per series');
  // The window was read at full resolution and drawn into the same chart.
  const asked = await p.evaluate(() => performance.getEntriesByType('resource')
    .filter((e) => e.name.includes('/history?') && new URL(e.name).searchParams.has('from'))
    .map((e) => [new URL(e.name).searchParams.get('from'), new URL(e.name).searchParams.get('to')]));
  assert.deepEqual(asked.at(-1), [new Date(z.from * 1000).toISOString(), new Date(z.to * 1000).toISOString()]);
  const win = await rest(`api/v1/targets/${TUNE_TARGET}/history?metric=cpu.score&from=${encodeURIComponent(asked.at(-1)[0])}&to=${encodeURIComponent(asked.at(-1)[1])}`);
  const inWin = (win.series.find((x) => JSON.stringify(x.workload) === JSON.stringify(s.workload)) || { points: [] }).points.length;
  assert.equal(Number(await fig.getAttribute('data-points')), inWin, 'the window\'s own points');
  assert.ok(await fig.locator('button.zoom-reset').isVisible(), '"Whole range" while zoomed');
  // The link opens zoomed.
  await p.reload();
  await fig.locator('.chart-box[data-drawn="1"] canvas').first().waitFor();
  await p.waitForTimeout(500);
  const again = await chartData(fig);
  assert.deepEqual([again.from, again.to], [z.from, z.to], 'a link with from/to opens zoomed');
  assert.deepEqual([again.xmin, again.xmax], [whole.xmin, whole.xmax], 'and knows the full range');
  await shot(p, 'history-zoomed');
  // "Whole range" returns, and from/to leave the URL.
  await fig.locator('button.zoom-reset').click();
  await p.waitForTimeout(500);
  const back = await chartData(fig);
  assert.deepEqual([back.from, back.to], [whole.xmin, whole.xmax], 'the whole range again');
  const q2 = await hashParams(p);
  assert.ok(!('from' in q2) && !('to' in q2), `no from/to left: ${JSON.stringify(q2)}`);
  assert.equal(Number(await fig.getAttribute('data-points')), s.points.length, 'the whole series\' points');
  await p.context().close();
});

test('job zoom stays: a drag zooms every chart, writes from/to, a link opens zoomed', async () => {
  const p = await newPage('job-zoom');
  await p.goto(`${BASE}/#/jobs/${hostJob.id}`);
  const fig = p.locator('#samples figure.chart').first();
  await fig.locator('.chart-box[data-drawn="1"] canvas').first().waitFor();
  // The first chart is above the fold (1280×900), before the metrics.
  const bottom = await fig.locator('canvas').first().evaluate((c) => c.getBoundingClientRect().bottom);
  assert.ok(bottom <= 900, `the first chart ends at ${bottom} px`);
  const whole = await chartData(fig);
  assert.deepEqual([whole.from, whole.to], [whole.xmin, whole.xmax], 'unzoomed: the whole run');
  await dragAcross(p, fig);
  await p.waitForTimeout(2000);
  const z = await chartData(fig);
  const q = await hashParams(p);
  assert.ok(z.from > whole.from && z.to < whole.to, `zoomed in: ${z.from}..${z.to}`);
  assert.deepEqual([Number(q.from), Number(q.to)], [z.from, z.to], 'the URL holds the range shown');
  for (const f of await p.locator('#samples figure.chart, #telemetry figure.chart').all()) {
    const d = await chartData(f);
    assert.deepEqual([d.from, d.to], [z.from, z.to], `${await f.getAttribute('data-metric')}: the same range`);
  }
  await p.reload();
  await fig.locator('.chart-box[data-drawn="1"] canvas').first().waitFor();
  await p.waitForTimeout(500);
  const again = await chartData(fig);
  assert.deepEqual([again.from, again.to], [z.from, z.to], 'a link with from/to opens zoomed');
  await fig.locator('figcaption button', { hasText: 'Whole run' }).click();
  await p.waitForTimeout(300);
  const back = await chartData(fig);
  assert.deepEqual([back.from, back.to], [whole.xmin, whole.xmax], 'the whole run again');
  assert.ok(!('from' in (await hashParams(p))), 'from/to leave the URL');
  await p.context().close();
});

test('charts read right: 1-2-5 ticks, positive axes from 0 up, units on the axes, the ratio chart\'s 1.0 line and band', async () => {
  const p = await newPage('charts');
  // The history chart of a positive metric: its unit on the value axis,
  // never below 0, ticks on one 1-2-5 step.
  const h = await rest(`api/v1/targets/${TUNE_TARGET}/history?metric=cpu.score`);
  if (h) {
    await p.goto(`${BASE}/#/targets/${TUNE_TARGET}?metric=cpu.score`);
    const fig = p.locator('#history figure.history-chart').first();
    await fig.locator('.chart-box[data-drawn="1"] canvas').first().waitFor();
    const d = await chartData(fig);
    assert.equal(d.ylabel, h.series[0].unit || '', 'the unit on the value axis');
    assert.ok(d.ymin >= 0, `a positive metric's axis from ${d.ymin}`);
    assert.ok(oneTwoFive(d.yticks), `1-2-5 ticks: ${d.yticks}`);
    assert.ok(d.yticks.length >= 2 && d.yticks.length <= 8, `${d.yticks.length} ticks`);
  }
  // A job's samples: whole seconds on the time axis, few ticks, units.
  const res = (await rest(`api/v1/jobs/${hostJob.id}/results?samples=0`)).items.at(-1);
  await p.goto(`${BASE}/#/jobs/${hostJob.id}`);
  const figs = p.locator('#samples figure.chart, #telemetry figure.chart');
  await figs.first().locator('.chart-box[data-drawn="1"] canvas').first().waitFor();
  for (const f of await figs.all()) {
    const d = await chartData(f);
    const metric = await f.getAttribute('data-metric');
    const m = res.metrics.find((x) => x.name === metric);
    if (m && m.unit) assert.equal(d.ylabel, m.unit, `${metric}: the unit on the axis`);
    assert.ok(d.ylabel, `${metric}: a unit on the axis`);
    assert.ok(d.ymin >= 0, `${metric}: axis from ${d.ymin}`);
    assert.ok(oneTwoFive(d.yticks) && oneTwoFive(d.xticks), `${metric}: 1-2-5 ticks ${d.yticks} / ${d.xticks}`);
    assert.ok(d.xticks.every(Number.isInteger), `${metric}: whole seconds ${d.xticks}`);
    assert.ok(d.xticks.length <= Math.max(2, Number(await f.getAttribute('data-samples'))) + 1, `${metric}: ${d.xticks.length} ticks`);
  }
  // The quick plan's interval charts: the unit on the axis, 1-2-5 ticks.
  const report = await rest(`api/v1/plans/${QUICK}/report`);
  await p.goto(`${BASE}/#/plans/${QUICK}`);
  const ic = p.locator('figure.interval-chart').first();
  await ic.waitFor();
  const metric = await ic.getAttribute('data-metric');
  const d = await chartData(ic);
  const unit = (report.summaries.find((x) => x.metric === metric) || {}).unit;
  assert.equal(d.xlabel, unit || 'no unit given', `${metric}: the unit on the axis`);
  assert.ok(oneTwoFive(d.xticks) && d.xmin >= 0, `${metric}: ${d.xticks}`);
  // The fleet's ratio charts: the median as a 1.0 line and the ±margin band.
  if (FLEET) {
    const fr = await rest(`api/v1/plans/${FLEET}/report`);
    await p.goto(`${BASE}/#/plans/${FLEET}`);
    const rc = p.locator('#hosts-view figure.host-series svg.host-strip').first();
    await rc.waitFor();
    const m = fr.hosts.margin_pct;
    assert.equal(await rc.getAttribute('data-band'), `${1 - m / 100},${1 + m / 100}`);
    assert.equal(await rc.locator('.one-line').count(), 1, 'a 1.0 line');
    assert.equal(await rc.locator('.margin-band').count(), 1, 'a margin band');
    const xt = (await rc.getAttribute('data-xticks')).split(',').map(Number);
    assert.ok(oneTwoFive(xt) && xt[0] >= 0, `ratio ticks ${xt}`);
    await shot(p, 'fleet-ratio');
  }
  // The chart functions themselves, as the page loads them: 1-2-5 ticks,
  // an axis never below 0 for values that are not, and an interval too
  // wide to draw marked rather than setting the scale.
  const got = await p.evaluate(async () => {
    const c = await import('/js/charts.js');
    const f = c.intervalChart('ratio', null, [
      { label: 'a', center: 1.01, lo: 0.97, hi: 1.05 }, { label: 'b', center: 0.99, lo: 0.96, hi: 1.02 },
      { label: 'c', center: 1.2, lo: -0.5, hi: 40 }], 'host', { ratio: true, ref: 1, band: [0.95, 1.05] });
    return {
      ticks: [[0.5156, 1.149], [-1003, 3009], [1, 2], [0, 0.0007]].map(([lo, hi]) => c.ticks(lo, hi, 5)),
      secs: c.ticks(0, 1, 20, 1),
      range: c.valueRange(1003, 1003.5), flat: c.valueRange(0, 0),
      wide: f.dataset.tooWide, notes: f.querySelectorAll('.too-wide-note').length, xmax: Number(f.dataset.xmax), xmin: Number(f.dataset.xmin),
    };
  });
  for (const t of got.ticks) assert.ok(oneTwoFive(t), `1-2-5: ${t}`);
  assert.deepEqual(got.secs, [0, 1], 'a 2-sample run: two ticks');
  assert.ok(got.range[0] >= 0 && got.flat[0] === 0, `never below 0: ${got.range} ${got.flat}`);
  assert.equal(got.wide, '1');
  assert.equal(got.notes, 1, '"interval too wide to draw"');
  assert.ok(got.xmax <= 2 && got.xmin >= 0, `the wide interval does not set the axis: ${got.xmin}..${got.xmax}`);
  await p.context().close();
});

test('compare: two plans side by side, numbers as the API gives them', async () => {
  await page.locator('#cmp-a').fill(QUICK);
  await page.locator('#cmp-b').fill(`${TUNE}:default`);
  await page.locator('#compare-form button[type=submit]').click();
  await page.waitForFunction((b) => location.hash.includes(b), `b=${TUNE}`);
  await page.locator('#compare-table').waitFor();
  const c = await rest(`api/v1/compare?a=${QUICK}&b=${TUNE}:default`);
  const trs = page.locator('#compare-table tbody tr');
  if (c) {
    assert.equal(await trs.count(), c.rows.length);
    for (let i = 0; i < c.rows.length; i++) {
      const r = c.rows[i];
      const text = (await trs.nth(i).locator('td.change').innerText()).trim();
      assert.equal(text, r.change_pct === null ? '-' : fmtChangeOrNote(r, r.change_pct, r.lo_pct, r.hi_pct), r.metric);
      // Each side's centre and interval as the API computed them.
      const cells = await cellTexts(trs.nth(i));
      for (const [side, cell] of [[r.a, cells[2]], [r.b, cells[4]]]) {
        if (!side) continue;
        const f = figuresOf(side);
        const want = f.interval.startsWith('[') ? `${f.centre} ${f.interval}` : `${f.centre} (${f.interval})`;
        assert.equal(cell, want, `${r.metric}: a side's centre and interval`);
      }
    }
  } else {
    const quick = await rest(`api/v1/plans/${QUICK}/report`);
    const row = quick.summaries.find((r) => r.metric === 'cpu.score');
    const cells = await cellTexts(page.locator('#compare-table tr[data-metric="cpu.score"]'));
    assert.ok(cells[2].startsWith(figuresOf(row).centre), `A's centre ${cells[2]}`);
  }
  await shot(page, 'compare');
});

// ---- compare N: items against a baseline (GET /api/v1/compare?items=) ----

const VERDICT_WORDS = { better: 'better', worse: 'worse', no_effect: 'no effect', inconclusive: 'inconclusive' };
/** The centre a side's figures show: its interval's, else its mean. */
const centreOf = (v) => (typeof v.lo === 'number' && typeof v.hi === 'number' && typeof v.center === 'number' ? v.center : v.mean);

test('compare N: three items, bars and percentages as the API gives them', async () => {
  const report = await rest(`api/v1/plans/${TUNE}/report`);
  const configs = [...new Set(report.summaries.map((x) => x.configuration))];
  assert.ok(configs.length >= 2, `the tuning plan has two configurations: ${configs}`);
  const list = [QUICK, `${TUNE}:${configs[0]}`, `${TUNE}:${configs[1]}`].join(',');
  const c = await rest(`api/v1/compare?items=${encodeURIComponent(list)}`);
  assert.deepEqual(c.items.map((h) => h.item), list.split(','));
  await page.goto(`${BASE}/#/compare?items=${encodeURIComponent(list)}`);
  await page.locator('#compare-metrics').waitFor();
  const sections = page.locator('#compare-metrics section.cmp-metric');
  assert.equal(await sections.count(), c.metrics.length, 'a section per metric');
  for (let k = 0; k < c.metrics.length; k++) {
    const m = c.metrics[k];
    const rows = sections.nth(k).locator('tbody tr');
    assert.equal(await rows.count(), c.items.length, `${m.metric}: a bar per item`);
    const widths = [];
    for (let i = 0; i < c.items.length; i++) {
      const v = m.values[i];
      const cmp = m.comparisons[i];
      const row = rows.nth(i);
      const cells = await cellTexts(row);
      if (!v) {
        assert.equal(cells[1], '-', `${m.metric} ${c.items[i].item}: no figures`);
        continue;
      }
      // The centre and interval as the API computed them.
      const f = figuresOf(v);
      const want = f.interval.startsWith('[') ? `${f.centre} ${f.interval}` : `${f.centre} (${f.interval})`;
      assert.equal(cells[1].replace(/\s+/g, ' '), want, `${m.metric} ${c.items[i].item}: centre and interval`);
      // The bar ends at the centre; its whiskers at the interval's bounds.
      const bar = row.locator('rect.bar-fill');
      assert.equal(Number(await bar.getAttribute('data-value')), centreOf(v));
      const w = Number(await bar.getAttribute('width'));
      widths.push([w, centreOf(v)]);
      if (f.interval.startsWith('[')) {
        const xs = await row.locator('g.whisker line').first().evaluate((l) => [Number(l.getAttribute('x1')), Number(l.getAttribute('x2'))]);
        assert.ok(Math.abs(xs[0] / w - v.lo / v.center) < 1e-6 && Math.abs(xs[1] / w - v.hi / v.center) < 1e-6,
          `${m.metric} ${c.items[i].item}: whiskers at ${v.lo}, ${v.hi} (x ${xs}, bar ${w})`);
      }
      // % against the baseline and the verdict after Holm, as the API says.
      if (!cmp) {
        assert.equal(cells[3], 'baseline');
      } else {
        assert.equal(cells[3], typeof cmp.change_pct === 'number' ? fmtChangeOrNote(cmp, cmp.change_pct, cmp.lo_pct, cmp.hi_pct) : '-',
          `${m.metric} ${c.items[i].item}: change`);
        if (cmp.verdict) assert.equal(cells[4], VERDICT_WORDS[cmp.verdict], `${m.metric} ${c.items[i].item}: verdict`);
      }
    }
    // Bars in proportion to the centres.
    for (const [w, centre] of widths) {
      assert.ok(Math.abs(w * widths[0][1] - widths[0][0] * centre) <= 1e-6 * Math.max(1, w * widths[0][1]), `${m.metric}: bars in proportion`);
    }
  }
  // The geometric mean per item, the API's.
  for (let i = 0; i < c.items.length; i++) {
    const li = page.locator(`#compare-geomean li[data-item="${c.items[i].item}"]`);
    const g = c.geomean.values[i];
    if (typeof g === 'number') assert.equal((await li.locator('.geomean').innerText()).trim(), cliFmtNum(g));
  }
  // Settings side by side, the differing ones marked.
  assert.equal(await page.locator('#compare-settings tr.differs').count(), c.settings.filter((x) => x.differs).length);
  assert.ok(c.settings.some((x) => x.differs), 'the two configurations differ in a setting');
  // At 1280 px every metric's table fits its box: nothing (a verdict, a
  // long note) is cut off at the right.
  const over = await page.locator('#compare-metrics .scroll-x').evaluateAll((l) => l
    .filter((d) => d.scrollWidth > d.clientWidth + 1).map((d) => `${d.closest('section').dataset.metric}: ${d.scrollWidth} > ${d.clientWidth}`));
  assert.deepEqual(over, [], 'metric tables wider than their box at 1280 px');
  await shot(page, 'compare-n');
});

test('compare N: plans ticked on the list land on compare', async () => {
  await page.goto(`${BASE}/#/`);
  const tick = (id) => page.locator(`#plans-table tr[data-plan-id="${id}"] input.select-plan`);
  await tick(QUICK).check();
  assert.equal(await page.locator('#plans-compare').isDisabled(), true, 'one ticked: nothing to compare');
  await tick(TUNE).check();
  await page.locator('#plans-compare').click();
  await page.waitForFunction(() => location.hash.startsWith('#/compare?items='));
  const items = new URLSearchParams(new URL(page.url()).hash.split('?')[1]).get('items').split(',');
  assert.deepEqual([...items].sort(), [QUICK, TUNE].sort());
  await page.locator('#compare-metrics').waitFor();
  assert.deepEqual(await page.locator('#compare-items > li').evaluateAll((l) => l.map((x) => x.dataset.item)), items);
});

test('compare N: a plan and a target lead to compare with themselves as the first item', async () => {
  await page.goto(`${BASE}/#/plans/${TUNE}`);
  await page.locator('#plan-compare').click();
  await page.waitForFunction((h) => location.hash === h, `#/compare?items=${TUNE}`);
  assert.equal(await page.locator('#cmp-items').inputValue(), TUNE);
  const t = await rest(`api/v1/targets/${TUNE_TARGET}`);
  await page.goto(`${BASE}/#/targets/${TUNE_TARGET}`);
  await page.locator('#target-compare').click();
  await page.waitForFunction(() => location.hash.startsWith('#/compare?items='));
  assert.equal(await page.locator('#cmp-items').inputValue(), t.name, 'the target stands for its latest done plan');
});

test('the targets page lists every target', async () => {
  await page.locator('.topnav a[data-section="targets"]').click();
  const items = (await rest('api/v1/targets')).items;
  await page.locator('#targets-table tbody tr').first().waitFor();
  assert.equal(await page.locator('#targets-table tbody tr').count(), items.length);
  assert.equal(await page.locator('#targets-table .badge.stale').count(), items.filter((t) => !t.online).length,
    'a stale badge on each target that is not online (not seen within --stale-after, or only imported)');
  await shot(page, 'targets');
});

// --- fleet and targets ----------------------------------------------------------------------

test('fleet and targets: the targets page filters by label and kind in the URL, with state and new change points', async () => {
  const p = await newPage('targets filter');
  await p.goto(`${BASE}/#/targets?label=pool%3Dwebfleet`);
  const items = (await rest('api/v1/targets?label=pool%3Dwebfleet')).items;
  assert.ok(items.length >= 1, 'the fleet hosts carry pool=webfleet');
  await p.locator('#targets-table tbody tr').first().waitFor();
  assert.equal(await p.locator('#targets-table tbody tr').count(), items.length, 'one row per target the label matches');
  for (const t of items) {
    const row = p.locator(`#targets-table tr[data-target-id="${t.id}"]`);
    const cells = await cellTexts(row);
    assert.deepEqual([cells[0], cells[1], cells[2], cells[3], cells[5]],
      [t.name, t.online ? 'online' : 'stale', t.kind, t.host || '', String(t.change_points_new)], `${t.name}'s row`);
    assert.ok(cells[4].includes('pool=webfleet'), `${t.name}'s labels`);
  }
  assert.equal(await p.locator('#targets-label').inputValue(), 'pool=webfleet', 'the filter read from the URL');
  await p.locator('#targets-kind').selectOption('guest');
  await p.waitForFunction(() => /kind=guest/.test(location.hash) && /label=pool%3Dwebfleet/.test(location.hash));
  const guests = (await rest('api/v1/targets?label=pool%3Dwebfleet&kind=guest')).items;
  if (guests.length === 0) await p.locator('#targets-body .state').waitFor();
  assert.equal(await p.locator('#targets-table tbody tr').count(), guests.length, 'kind and label filter together');
  await p.context().close();
});

test('fleet and targets: the fleet plan page filters its hosts by name or label, outliers first, kept in the URL', { skip: !FLEET && 'no FLEET_ID' }, async () => {
  const p = await newPage('fleet filter');
  const plan = await rest(`api/v1/plans/${FLEET}`);
  const report = await rest(`api/v1/plans/${FLEET}/report`);
  const one = plan.children[0].host;
  await p.goto(`${BASE}/#/plans/${FLEET}?hosts=${encodeURIComponent(one)}`);
  await p.locator('#children-table tbody tr').first().waitFor();
  assert.deepEqual(await p.locator('#children-table tbody tr td:first-child').allInnerTexts(), [one], 'the name filter keeps one child');
  const s = report.hosts.series[0];
  const fig = p.locator(`#hosts-view figure[data-metric="${s.metric}"][data-workload="${s.workload}"]`);
  assert.deepEqual(await fig.locator('tbody tr').evaluateAll((rs) => rs.map((r) => r.dataset.host)), [one], 'and one per-host row');
  assert.equal(await fig.locator('svg.host-strip circle.dot').count(), 1, 'and one dot on the strip');
  await p.locator('#hosts-filter').fill('pool=webfleet');
  await p.waitForFunction(() => /hosts=pool%3Dwebfleet/.test(location.hash));
  await p.waitForFunction((n) => document.querySelectorAll('#children-table tbody tr').length === n, plan.children.length);
  // Outliers first, then by distance of the ratio from 1.0.
  const far = (h) => (typeof h.ratio === 'number' ? Math.abs(h.ratio - 1) : -1);
  const want = s.hosts.slice().sort((a, b) => (b.outlier === true) - (a.outlier === true) || far(b) - far(a) || a.host.localeCompare(b.host)).map((h) => h.host);
  assert.deepEqual(await fig.locator('tbody tr').evaluateAll((rs) => rs.map((r) => r.dataset.host)), want, 'the label filter keeps every host, outliers first');
  assert.equal(await fig.locator('svg.host-strip circle.dot').count(), s.hosts.filter((h) => typeof h.ratio === 'number').length, 'a dot per host');
  assert.equal(await fig.locator('svg.host-strip line.one-line').count(), 1, 'the 1.0 line');
  assert.equal(await fig.locator('svg.host-strip rect.margin-band').count(), 1, 'the margin band');
  await p.context().close();
});

test('fleet and targets: fleet history overlays the hosts, outliers first, the range in the URL', { skip: !FLEET && 'no FLEET_ID' }, async () => {
  const p = await newPage('fleet history', { width: 1400, height: 900 });
  const asked = [];
  p.on('request', (r) => { if (r.url().includes('/api/v1/history?')) asked.push(new URL(r.url())); });
  await p.goto(`${BASE}/#/fleet-history?selector=pool%3Dwebfleet&metric=cpu.score&range=7d`);
  await p.locator('#fh-chart .chart-box[data-drawn="1"]').waitFor();
  assert.equal(asked.length, 1, 'one request for the whole fleet');
  const q = asked[0].searchParams;
  const days = (Date.parse(q.get('to')) - Date.parse(q.get('from'))) / 86400000;
  assert.ok(Math.abs(days - 7) < 0.01, `the last 7 days asked for (${days})`);
  const d = await rest('api/v1/history?' + new URLSearchParams({ selector: 'pool=webfleet', metric: 'cpu.score', from: q.get('from'), to: q.get('to') }));
  const hosts = d.hosts.filter((h) => h.points.length > 0);
  assert.ok(hosts.length >= 3, 'the fleet plan\'s hosts have points this week');
  assert.equal(await p.locator('#fh-chart .chart-box').getAttribute('data-series'), String(hosts.length), 'one series per host');
  const rows = p.locator('#fh-hosts tbody tr');
  assert.deepEqual(await rows.evaluateAll((rs) => rs.map((r) => r.dataset.host)), hosts.map((h) => h.name), 'hosts in the server\'s order, outliers first');
  for (const h of hosts) {
    const cells = await cellTexts(p.locator(`#fh-hosts tr[data-host="${h.name}"]`));
    assert.deepEqual(cells.slice(0, 3), [h.name, cliFmtNum(h.ratio), h.outlier ? 'outlier' : ''], `${h.name}'s row`);
  }
  assert.match(await p.locator('#fh-summary').innerText(), new RegExp(`^${hosts.length} hosts with values, ${hosts.filter((h) => h.outlier).length} outlier`));
  const box = await p.locator('#fh-chart').boundingBox();
  assert.ok(box.y < 900, 'the chart starts above the fold');
  await shot(p, 'fleet-history');
  // Another range: in the URL, and asked for.
  await p.locator('#fh-range').selectOption('90d');
  await p.click('form[aria-label="Fleet history"] button[type="submit"]');
  await p.waitForFunction(() => /range=90d/.test(location.hash) && /selector=pool%3Dwebfleet/.test(location.hash));
  await p.locator('#fh-chart .chart-box[data-drawn="1"]').waitFor();
  const last = asked[asked.length - 1].searchParams;
  const days90 = (Date.parse(last.get('to')) - Date.parse(last.get('from'))) / 86400000;
  assert.ok(Math.abs(days90 - 90) < 0.01, `the last 90 days asked for (${days90})`);
  await p.context().close();
});

// --- recommendations ---------------------------------------------------------------------

/** The words of a recommendation's state badge. */
function recStateWords(r) {
  return r.state === 'adopted' ? `adopted on ${r.adopted.hosts} host${r.adopted.hosts === 1 ? '' : 's'}` : r.state;
}

test('recommendations: the list shows the API\'s items in order with their state, gain, hosts and verdict', { skip: !HAS_RECS && 'no REC_* ids' }, async () => {
  const p = await newPage('recommendations');
  await p.goto(`${BASE}/#/recommendations`);
  const list = await rest('api/v1/recommendations?limit=50');
  const states = Object.fromEntries(list.items.map((r) => [String(r.id), r.state]));
  assert.deepEqual(Object.fromEntries(Object.values(RECS).map((id) => [id, states[id]])),
    { [RECS.proposed]: 'proposed', [RECS.adopted]: 'adopted', [RECS.delivered]: 'delivered', [RECS.regressed]: 'regressed' },
    'the API gives the seeded recommendations their states');
  await p.locator('#recs-table tbody tr').first().waitFor();
  assert.deepEqual(await p.locator('#recs-table tbody tr').evaluateAll((rs) => rs.map((r) => r.dataset.recId)),
    list.items.map((r) => String(r.id)), 'exactly the API\'s items, newest first');
  const hosts = new Map((await rest('api/v1/targets?kind=host')).items.map((t) => [t.name, t.id]));
  const wrong = [];
  for (const r of list.items) {
    const row = p.locator(`#recs-table tr[data-rec-id="${r.id}"]`);
    const [id, change, plan, gain, state, adopted, verdict] = await cellTexts(row);
    const v = r.verdict;
    const want = {
      id: String(r.id), change: `${r.factor}=${r.level}${r.default == null ? '' : ` (default ${r.default})`}`, plan: r.plan,
      gain: `${fmtChangeInterval(r.gain_pct, r.gain_interval.lo_pct, r.gain_interval.hi_pct)} on ${r.metric} (${r.workload})`,
      state: recStateWords(r), adopted: r.adopted.names.length ? r.adopted.names.join(', ') : '-',
    };
    const got = { id, change, plan, gain: gain.replace(/\s+/g, ' '), state, adopted };
    for (const k of Object.keys(want)) if (got[k] !== want[k]) wrong.push(`${r.id} ${k}: page "${got[k]}", API "${want[k]}"`);
    if (await row.getAttribute('data-state') !== r.state) wrong.push(`${r.id}: data-state is not ${r.state}`);
    const hrefs = await row.locator('td.hosts a').evaluateAll((as) => as.map((a) => a.getAttribute('href')));
    const wantHrefs = r.adopted.names.filter((n) => hosts.has(n)).map((n) => `#/targets/${hosts.get(n)}`);
    if (JSON.stringify(hrefs) !== JSON.stringify(wantHrefs)) wrong.push(`${r.id}: host links ${hrefs}, want ${wantHrefs}`);
    // The verdict: observed against predicted on n hosts vs m controls, or why it is pending.
    const words = verdict.replace(/\s+/g, ' ');
    if (v && v.state === 'pending') {
      if (!words.includes(v.why)) wrong.push(`${r.id}: verdict "${words}" lacks the reason "${v.why}"`);
    } else if (v) {
      const w = `observed ${fmtChangeInterval(v.gain_pct, v.lo_pct, v.hi_pct)} vs predicted [${fmtChange(v.predicted.lo_pct)}, ${fmtChange(v.predicted.hi_pct)}]` +
        ` ${v.hosts} host${v.hosts === 1 ? '' : 's'} vs ${v.controls} control${v.controls === 1 ? '' : 's'}`;
      if (!words.startsWith(w)) wrong.push(`${r.id}: verdict "${words}", want "${w}"`);
    } else if (words !== '-') {
      wrong.push(`${r.id}: verdict "${words}" without one`);
    }
  }
  assert.deepEqual(wrong, [], 'cells that differ from the API');
  assert.equal(await overflow(p), null, 'at 1280 px');
  await shot(p, 'recommendations');
  // The state filter: in the URL, and the API's answer to it.
  await p.locator('#recs-state').selectOption('delivered');
  await p.waitForFunction(() => /state=delivered/.test(location.hash));
  const delivered = await rest('api/v1/recommendations?state=delivered');
  assert.deepEqual(delivered.items.map((r) => String(r.id)), [RECS.delivered], 'one recommendation delivered');
  await p.waitForFunction(() => {
    const rows = [...document.querySelectorAll('#recs-table tbody tr')];
    return rows.length > 0 && rows.every((r) => r.dataset.state === 'delivered');
  });
  assert.deepEqual(await p.locator('#recs-table tbody tr').evaluateAll((rs) => rs.map((r) => r.dataset.recId)), [RECS.delivered]);
  // A link with the filter opens filtered; a row opens its recommendation.
  await p.goto(`${BASE}/#/recommendations?state=regressed`);
  await p.locator(`#recs-table tr[data-rec-id="${RECS.regressed}"]`).waitFor();
  assert.equal(await p.locator('#recs-state').inputValue(), 'regressed');
  assert.equal(await p.locator('#recs-table tbody tr').count(), 1);
  await p.locator(`#recs-table tr[data-rec-id="${RECS.regressed}"] td.rec-state-cell`).click();
  await p.waitForFunction((h) => location.hash === h, `#/recommendations/${RECS.regressed}`);
  await p.locator('#rec-head dl.facts').waitFor();
  await p.context().close();
});

test('recommendations: a regressed one shows its rollback in the four forms; an adopted one its adoptions', { skip: !HAS_RECS && 'no REC_* ids' }, async () => {
  const p = await newPage('recommendation');
  await p.goto(`${BASE}/#/recommendations/${RECS.regressed}`);
  const r = await rest(`api/v1/recommendations/${RECS.regressed}`);
  await p.locator('#rollback pre.rollback').first().waitFor();
  assert.equal((await p.locator('h1').innerText()).trim(), `Recommendation ${r.id}: ${r.factor}=${r.level}`);
  assert.equal((await p.locator('#rec-state').innerText()).trim(), 'regressed');
  assert.equal((await p.locator('#verdict-observed').innerText()).trim(), fmtChangeInterval(r.verdict.gain_pct, r.verdict.lo_pct, r.verdict.hi_pct));
  assert.equal((await p.locator('#verdict-hosts').innerText()).trim(), `${r.verdict.hosts} hosts vs ${r.verdict.controls} controls`);
  const forms = ['tuned', 'ansible', 'puppet', 'shell'];
  assert.deepEqual(Object.keys(r.verdict.rollback).sort(), [...forms].sort(), 'the API gives the four forms');
  assert.deepEqual(await p.locator('#rollback pre.rollback').evaluateAll((l) => l.map((e) => e.dataset.format)), forms, 'a <pre> per form');
  for (const f of forms) {
    await p.locator(`#rollback button[data-format="${f}"]`).click();
    const pre = p.locator(`#rollback-${f}`);
    assert.equal(await pre.isVisible(), true, `${f} shown`);
    assert.equal(await p.locator('#rollback pre.rollback:visible').count(), 1, 'one form at a time');
    assert.equal(await p.locator(`#rollback button[data-format="${f}"]`).getAttribute('aria-pressed'), 'true');
    assert.equal(await pre.textContent(), r.verdict.rollback[f], `the ${f} form as the API gives it`);
    if (f !== forms[0]) assert.match(p.url(), new RegExp(`format=${f}`), 'the form in the URL');
  }
  assert.equal(await p.locator('#adoptions-table tbody tr').count(), r.adoptions.length, 'a row per adoption');
  assert.equal(await overflow(p), null, 'at 1280 px');
  await shot(p, 'recommendation');
  await p.setViewportSize({ width: 390, height: 844 });
  await p.waitForTimeout(100);
  assert.equal(await overflow(p), null, 'at 390 px');
  // The adopted one: its adoptions, each host a link to its target, and why its verdict is pending.
  const a = await rest(`api/v1/recommendations/${RECS.adopted}`);
  await p.goto(`${BASE}/#/recommendations/${RECS.adopted}`);
  await p.locator('#adoptions-table tbody tr').first().waitFor();
  assert.ok(a.adoptions.length >= 2, 'adopted on two hosts');
  assert.deepEqual(await p.locator('#adoptions-table tbody tr td:first-child a').evaluateAll((l) => l.map((e) => [e.textContent, e.getAttribute('href')])),
    a.adoptions.map((x) => [x.target, `#/targets/${x.target_id}`]), 'each adoption\'s host, linking to its target');
  assert.equal(a.verdict.state, 'pending');
  assert.equal((await p.locator('#verdict-facts .rec-why').innerText()).trim(), a.verdict.why);
  assert.equal(await p.locator('#rollback').count(), 0, 'no rollback unless regressed');
  assert.equal(await overflow(p), null, 'at 390 px');
  await p.context().close();
});

test('an unknown plan shows the "Not found" problem', async () => {
  const p = await newPage('unknown plan');
  expectedHttpErrors.push({ status: 404, url: `${BASE}/api/v1/plans/999999` });
  await p.goto(`${BASE}/#/plans/999999`);
  const box = p.locator('#error');
  await box.waitFor({ state: 'visible' });
  assert.equal((await box.locator('.error-title').innerText()).trim(), 'Not found (HTTP 404)');
  assert.equal(await p.locator('#plan-status').isVisible(), false, '#plan-status hidden');
  await p.context().close();
});

test('a server with --read-auth token asks for the token, then lists the plans',
  { skip: AUTH_URL ? false : 'AUTH_URL not set' }, async () => {
    assert.ok(READ_TOKEN, 'READ_TOKEN is set');
    const p = await newPage('token form');
    expectedHttpErrors.push({ status: 401, url: `${AUTH_URL}/api/v1/` });
    await p.goto(`${AUTH_URL}/`);
    const form = p.locator('#token-form');
    await form.waitFor({ state: 'visible' });
    assert.match(await p.locator('#error .error-title').innerText(), /\(HTTP 401\)$/);
    assert.equal(await p.locator('#plans-table').count(), 0, 'no plan table without a token');
    await p.locator('#token-input').fill(READ_TOKEN);
    await form.locator('button[type=submit]').click();
    const row = p.locator(`#plans-table tbody tr[data-plan-id="${QUICK}"]`);
    await row.waitFor();
    const [, name, host, status, counts] = await cellTexts(row);
    assert.deepEqual([name, host, status, counts], ['quick', '-', 'done', '3/3'], 'plan row with the token');
    assert.equal(await form.isVisible(), false, 'token form hidden again');
    assert.equal(await p.locator('#error').isVisible(), false, 'error box hidden again');
    assert.equal(await p.locator('#forget-token').isVisible(), true, '"Forget token" shown');
    await p.context().close();
  });

// ---- phone and small things -------------------------------------------------
// Every page at a phone's width, the server-down state, times with their
// zone, free numbers to their meaningful digits, badges that say what they
// mean, evidence lists folded past ten.

/** Every route main.js knows, with the ids of the data test_web.sh built:
 *  one visit each in the 390 px sweep. Add a page here when adding one. */
async function routes() {
  const job = (await rest(`api/v1/plans/${TUNE}/jobs?limit=1`)).items[0];
  return [
    '#/', `#/plans/${QUICK}`, `#/plans/${TUNE}`, `#/plans/${FAIL}`, `#/plans/${WAITS}`,
    ...(FLEET ? [`#/plans/${FLEET}`] : []),
    `#/plans/${TUNE}/jobs`, `#/jobs/${job.id}`, '#/targets', `#/targets/${TUNE_TARGET}?metric=cpu.score`,
    `#/compare?a=${QUICK}&b=${TUNE}:default`,
    `#/compare?items=${encodeURIComponent([QUICK, `${TUNE}:default`, TUNE].join(','))}`,
    ...(FLEET ? ['#/fleet-history?selector=pool%3Dwebfleet&metric=cpu.score&range=7d'] : []),
    ...(HAS_RECS ? ['#/recommendations', `#/recommendations/${RECS.regressed}`, `#/recommendations/${RECS.adopted}`] : []),
  ];
}

/** Waits until route r's page has drawn: its heading, no section in
 *  sight still loading, and the charts' frame after that. */
async function settle(p, r) {
  await p.waitForFunction(() => document.querySelector('#view h1') &&
    ![...document.querySelectorAll('#view .state-loading')].some((e) => e.getClientRects().length > 0))
    .catch((e) => { throw new Error(`${r}: ${e.message}`); });
  await p.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
}

/** The badges (status, verdict, tag) of the page: text, title, whether
 *  taller than one line of their own text. */
function badgesOf(p) {
  return p.evaluate(() => [...document.querySelectorAll('span.badge, span.verdict, span.tag')]
    .filter((b) => b.offsetParent !== null)
    .map((b) => {
      const cs = getComputedStyle(b);
      const inner = b.getBoundingClientRect().height - parseFloat(cs.paddingTop) - parseFloat(cs.paddingBottom) -
        parseFloat(cs.borderTopWidth) - parseFloat(cs.borderBottomWidth);
      return { text: b.textContent, title: b.title, tall: inner > 1.5 * parseFloat(cs.lineHeight) };
    }));
}

test('every page at 390×844: no sideways scroll of the page, badges on one line with their meaning', async () => {
  const p = await newPage('phone', { width: 390, height: 844 });
  const wrong = [];
  let badges = 0;
  for (const r of await routes()) {
    await p.goto(`${BASE}/${r}`);
    await settle(p, r);
    const over = await overflow(p);
    if (over) wrong.push(`${r}: ${over}`);
    for (const b of await badgesOf(p)) {
      badges++;
      if (b.tall) wrong.push(`${r}: badge "${b.text}" takes more than one line`);
      if (!b.title.trim()) wrong.push(`${r}: badge "${b.text}" has no title saying what it means`);
    }
    await shot(p, `phone-${r.replace(/[^a-z0-9]+/gi, '-').replace(/^-|-$/g, '') || 'plans'}`);
  }
  assert.ok(badges > 10, `badges seen: ${badges}`);
  assert.deepEqual(wrong, [], 'at 390 px');
  await p.context().close();
});

test('at 1400×900 the first chart or answer of the plan, job and target pages is above the fold', async () => {
  const p = await newPage('fold', { width: 1400, height: 900 });
  const job = (await rest(`api/v1/plans/${TUNE}/jobs?limit=1`)).items[0];
  for (const [r, sel] of [[`#/plans/${TUNE}`, '#answer'], [`#/plans/${QUICK}`, '#answer'],
    [`#/jobs/${job.id}`, '#samples figure.chart'], [`#/targets/${TUNE_TARGET}?metric=cpu.score`, '#history figure']]) {
    await p.goto(`${BASE}/${r}`);
    await p.locator(sel).first().waitFor();
    const top = await p.locator(sel).first().evaluate((e) => e.getBoundingClientRect().top);
    assert.ok(top < 900, `${r}: ${sel} starts at ${top} px, below the fold`);
  }
  await p.context().close();
});

test('the server does not answer: the page says so with its wait, retries by itself and recovers', async () => {
  // A context of its own: the aborted requests are console errors on purpose.
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  context.setDefaultTimeout(STEP_MS);
  // The wait each new "did not answer" state says when it appears, in order.
  await context.addInitScript(() => {
    window.hvWaits = [];
    new MutationObserver((ms) => {
      for (const m of ms) {
        for (const n of m.addedNodes) {
          const w = n.querySelector ? (n.matches('.retry-wait') ? n : n.querySelector('.retry-wait')) : null;
          const s = w && /in (\d+) s\./.exec(w.textContent);
          if (s && window.hvWaits.at(-1) !== Number(s[1])) window.hvWaits.push(Number(s[1]));
        }
      }
    }).observe(document, { subtree: true, childList: true });
  });
  const p = await context.newPage();
  const errors = [];
  p.on('pageerror', (e) => errors.push(e.message));
  await p.route('**/api/**', (r) => r.abort());
  await p.goto(`${BASE}/#/`);
  const box = p.locator('.state-unreachable').first();
  await box.waitFor();
  const text = await box.innerText();
  assert.ok(text.startsWith(`The server at ${BASE}/ did not answer; trying again in `), text);
  assert.match(text, /trying again in \d+ s\. Try again now/);
  assert.equal(await box.locator('button.retry-now').innerText(), 'Try again now');
  // The wait grows: 1 s, then 2 s once the first retry failed too.
  await p.waitForFunction(() => window.hvWaits.length >= 2);
  assert.deepEqual(await p.evaluate(() => window.hvWaits.slice(0, 2)), [1, 2], 'the first waits');
  await p.evaluate(() => { window.hvSameDocument = true; });
  await p.unroute('**/api/**');
  await p.locator('#plans-table tbody tr').first().waitFor();
  assert.equal(await p.locator('.state-unreachable').count(), 0, 'the words are gone');
  assert.equal(await p.evaluate(() => window.hvSameDocument), true, 'recovered without a reload');
  // "Try again now" does not wait.
  await p.route('**/api/**', (r) => r.abort());
  await p.locator('.topnav a[data-section="targets"]').click();
  await p.locator('.state-unreachable button.retry-now').first().waitFor();
  await p.unroute('**/api/**');
  await p.locator('.state-unreachable button.retry-now').first().click();
  await p.locator('#targets-table tbody tr').first().waitFor();
  assert.deepEqual(errors, [], 'no page errors');
  await context.close();
});

test('times carry their zone in the CLI\'s form; observed numbers have their meaningful digits only', async () => {
  // +05:30 all year: the zone shows whatever this machine's is.
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, timezoneId: 'Asia/Kolkata' });
  context.setDefaultTimeout(STEP_MS);
  const p = await context.newPage();
  await p.goto(`${BASE}/#/plans/${QUICK}`);
  const t = p.locator('#plan-status time').first();
  await t.waitFor();
  const iso = await t.getAttribute('datetime');
  const local = new Date(Date.parse(iso) + 5.5 * 3600e3).toISOString().replace('T', ' ').replace(/\.\d+Z$/, '');
  assert.equal((await t.innerText()).trim(), `${local} +05:30`, `${iso} as the CLI prints it, with the zone`);
  await context.close();

  const q = await newPage('observed');
  const job = (await rest(`api/v1/plans/${QUICK}/jobs?status=done&limit=1`)).items[0];
  const res = (await rest(`api/v1/jobs/${job.id}/results?samples=0`)).items.at(-1);
  await q.goto(`${BASE}/#/jobs/${job.id}`);
  await q.locator('#observed dl.kv').first().waitFor();
  // The page's list as an object: dt → dd text, nested lists as objects.
  const shown = await q.locator('#observed dl.kv').first().evaluate(function walk(dl) {
    const o = {};
    for (const dt of dl.querySelectorAll(':scope > dt')) {
      const dd = dt.nextElementSibling;
      const inner = dd.querySelector(':scope > dl.kv');
      o[dt.textContent] = inner ? walk(inner) : dd.textContent;
    }
    return o;
  });
  const scalar = (v) => (typeof v === 'number' ? (Number.isSafeInteger(v) ? String(v) : cliFmtNum(v)) : v === null ? 'null' : String(v));
  const want = (v) => (Array.isArray(v) && v.every((x) => x === null || typeof x !== 'object') ? v.map(scalar).join(', ')
    : v && typeof v === 'object' ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, want(x)])) : scalar(v));
  assert.ok(Object.keys(res.observed).length > 0, 'the result observed something');
  assert.deepEqual(shown, want(res.observed), 'observed values: integers whole, other numbers as the CLI rounds them');
  const long = JSON.stringify(shown).match(/\d\.\d{5,}/g);
  assert.equal(long, null, `no number with more than four significant digits: ${long}`);
  await q.context().close();
});

test('a recommendation\'s evidence past ten folds as "and N more"; a factor outside the catalog says so', async () => {
  const p = await newPage('evidence');
  const report = await rest(`api/v1/plans/${TUNE}/report`);
  // Real report, one recommendation made to have 24 jobs of evidence and
  // a factor the catalog does not describe (disruption null).
  const jobs = Array.from({ length: 24 }, (_, i) => i + 1);
  const rec = { ...(report.recommendations[0] || { rank: 1, factor: 'thp', level: 'never', default: 'always', gains: [], hurts: [] }),
    jobs, disruption: null, risk_level: null };
  const body = JSON.stringify({ ...report, recommendations: [rec, ...report.recommendations.slice(1)] });
  await p.route(`**/api/v1/plans/${TUNE}/report*`, (r) => r.fulfill({ status: 200, contentType: 'application/json', body }));
  await p.goto(`${BASE}/#/plans/${TUNE}`);
  const ev = p.locator('#recommendations article.rec').first().locator('.evidence');
  await ev.waitFor();
  const visible = () => ev.locator('a').evaluateAll((as) => as.filter((a) => a.checkVisibility()).map((a) => a.textContent));
  assert.deepEqual(await visible(), jobs.slice(0, 10).map(String), 'the first ten');
  assert.equal((await ev.locator('summary').innerText()).trim(), 'and 14 more');
  await ev.locator('summary').click();
  assert.deepEqual(await visible(), jobs.map(String), 'all 24 once opened');
  const badge = p.locator('#recommendations article.rec').first().locator('.tag[class*="disruption-"]');
  assert.equal((await badge.innerText()).trim(), 'disruption not known');
  assert.match(await badge.getAttribute('title'), /not in the factor catalog/);
  await p.context().close();
});

test('no console errors, no page errors, no request to another host', async () => {
  if (page) await page.context().close();
  assert.deepEqual(problems, []);
});
