// web.test.js — the hvbench web page in a real headless Chromium (Debian's
// /usr/bin/chromium driven by playwright-core), against a real server that
// already ran a plan to the end. Started by tests/integration/test_web.sh,
// which sets up the server, the worker and the plan; run by hand with
//
//   URL=http://127.0.0.1:PORT PLAN_ID=N node --test web.test.js
//
// Environment:
//   URL         base URL of a server with open reads (required)
//   PLAN_ID     id of a finished plan named "quick" with 3 done jobs (required)
//   SHOT        where to save the screenshot of the plan page (optional)
//   CLI_MEAN    the cpu.score mean as `hvbench report` prints it (optional):
//               checks that the formatter below agrees with the CLI's
//   AUTH_URL    a second server on the same database with --read-auth token,
//   READ_TOKEN  and a read token for it (optional, both or neither)
//   CHROMIUM    the browser binary (default /usr/bin/chromium)
'use strict';

const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { chromium } = require('playwright-core');

const BASE = required('URL').replace(/\/+$/, '');
const PLAN_ID = required('PLAN_ID');
const AUTH_URL = (process.env.AUTH_URL || '').replace(/\/+$/, '');
const READ_TOKEN = process.env.READ_TOKEN || '';
const SHOT = process.env.SHOT || '';
const CLI_MEAN = process.env.CLI_MEAN || '';
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

// Nothing here may wait forever: every page action and expectation gives up
// after STEP_MS, and a watchdog ends the whole run after RUN_MS even if
// something outside Playwright's timeouts hangs (the shell adds its own
// `timeout` around node as the last resort).
const STEP_MS = 15000;
const RUN_MS = 150000;

function required(name) {
  const v = process.env[name];
  if (!v) throw new Error(`environment variable ${name} is not set`);
  return v;
}

/** cli/table.c's cli_fmt_num in JavaScript: four significant digits,
 *  trailing zeros dropped, an SI suffix instead of digit groups for large
 *  values (k from 1e5, shown as thousands; M, G, T), %.4g below 1e-4 and
 *  from 1e15. The page must show numbers exactly like the CLI does. */
function cliFmtNum(v) {
  if (Number.isNaN(v)) return 'nan';
  if (!Number.isFinite(v)) return v > 0 ? 'inf' : '-inf';
  const a = Math.abs(v);
  if (a === 0) return '0';
  if (a < 1e-4 || a >= 1e15) return cFmtG4(v);
  const sign = v < 0 ? '-' : '';
  // The suffix is picked after rounding to four digits: 999960 is "1M".
  const rounded = Number(a.toPrecision(4));
  for (const [scale, suffix] of [[1e12, 'T'], [1e9, 'G'], [1e6, 'M'], [1e5, 'k']]) {
    if (rounded >= scale) return sign + fourDigits(a / (scale === 1e5 ? 1e3 : scale)) + suffix;
  }
  return sign + fourDigits(a);
}

/** cli/table.c's four_digits: "%.*f" with 3 - floor(log10(a)) decimals
 *  (at least 0), trailing zeros and a bare dot dropped. */
function fourDigits(a) {
  const decimals = Math.max(0, 3 - Math.floor(Math.log10(a)));
  return stripZeros(a.toFixed(decimals));
}

function stripZeros(s) {
  return s.includes('.') ? s.replace(/0+$/, '').replace(/\.$/, '') : s;
}

/** C's printf("%.4g", v): exponent form when the exponent is below -4 or
 *  at least 4, with a sign and at least two exponent digits ("1e-05"). */
function cFmtG4(v) {
  const [mant, exp] = v.toExponential(3).split('e');
  const x = Number(exp);
  if (x < -4 || x >= 4) {
    const digits = String(Math.abs(x)).padStart(2, '0');
    return stripZeros(mant) + 'e' + (x < 0 ? '-' : '+') + digits;
  }
  return stripZeros(v.toFixed(3 - x));
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
});

let browser;
let watchdog;
// Console messages of level "error" and uncaught page errors, from every
// page; the last test asserts there were none but the expected ones.
const problems = [];
// Chromium logs every HTTP error answer to fetch() as a console error
// ("Failed to load resource: ... status of 404"). The tests provoke some on
// purpose: only those, matched by status and exact URL, are allowed.
const expectedHttpErrors = [];

before(async () => {
  watchdog = setTimeout(async () => {
    console.error(`watchdog: the browser tests took longer than ${RUN_MS / 1000} s; giving up`);
    if (browser) await browser.close().catch(() => {});
    process.exit(1);
  }, RUN_MS);
  watchdog.unref();
  // launch() starts Chromium with a new, empty profile directory under
  // os.tmpdir() and deletes it on close; test_web.sh points TMPDIR to a
  // short private directory of the test's own (Chromium's profile socket
  // lives there too, and a unix socket path is limited to 107 bytes). The
  // flags keep Chromium from reaching out to a network this machine does
  // not have.
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
  // Always close Chromium, whatever failed; then the watchdog is not needed.
  if (browser) await browser.close().catch((e) => console.error('closing Chromium:', e));
  clearTimeout(watchdog);
});

/** A page in a new browser context (own localStorage), with the timeouts
 *  and the console and error listeners every test wants. */
async function newPage(name) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  context.setDefaultTimeout(STEP_MS);
  context.setDefaultNavigationTimeout(STEP_MS);
  const page = await context.newPage();
  page.on('pageerror', (err) => problems.push(`${name}: page error: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() !== 'error') return;
    const text = msg.text();
    const url = msg.location().url || '';
    const m = /^Failed to load resource: the server responded with a status of (\d+)/.exec(text);
    if (m && expectedHttpErrors.some((e) => e.status === Number(m[1]) && e.url === url)) return;
    problems.push(`${name}: console error: ${text}${url ? ` (${url})` : ''}`);
  });
  return page;
}

/** The expected report row, from the REST API itself. */
async function restScoreRow() {
  const res = await fetch(`${BASE}/api/v1/plans/${PLAN_ID}/report`, {
    signal: AbortSignal.timeout(STEP_MS),
  });
  assert.equal(res.status, 200, 'GET report');
  const body = await res.json();
  const row = body.rows.find((r) => r.metric === 'cpu.score');
  assert.ok(row, 'the REST report has a cpu.score row');
  return row;
}

/** Texts of the cells of a table row. */
async function cellTexts(row) {
  return (await row.locator('td').allInnerTexts()).map((t) => t.trim());
}

let page; // the plan list, then the plan page after the click

test('the plan list shows the finished plan', async () => {
  page = await newPage('plan list');
  await page.goto(`${BASE}/`);
  const row = page.locator(`#plans-table tbody tr[data-plan-id="${PLAN_ID}"]`);
  await row.waitFor();
  const [id, name, status, counts] = await cellTexts(row);
  assert.equal(id, PLAN_ID, 'ID cell');
  assert.equal(name, 'quick', 'Name cell');
  assert.equal(status, 'done', 'Status cell');
  assert.equal(counts, '3/3', 'Done/total cell');
});

test('clicking the plan opens its page', async () => {
  assert.ok(page, 'the plan list test opened a page');
  await page.locator(`#plans-table tr[data-plan-id="${PLAN_ID}"] a`, { hasText: 'quick' }).click();
  await page.waitForURL((u) => u.hash === `#/plans/${PLAN_ID}`);
  await page.locator('#plan-status .badge').waitFor();
  assert.equal((await page.locator('#plan-status .badge').innerText()).trim(), 'done', '#plan-status badge');
  assert.match(await page.locator('#plan-status').innerText(), /\bdone\b/);
  assert.equal((await page.locator('h1').innerText()).trim(), `Plan ${PLAN_ID}: quick`, 'heading');
});

test('the report table shows cpu.score like the REST report and the CLI', async () => {
  assert.ok(page, 'the plan list test opened a page');
  const rest = await restScoreRow();
  const row = page.locator('#report-table tbody tr', {
    has: page.locator('td:nth-child(4)', { hasText: /^cpu\.score\b/ }),
  });
  await row.waitFor();
  // The picture first, so that a failed assertion below still leaves one.
  if (SHOT) await page.screenshot({ path: SHOT, fullPage: true });
  const cells = await cellTexts(row);
  const [n, mean, sd] = cells.slice(4, 7);
  const want = cliFmtNum(rest.mean);
  if (CLI_MEAN) assert.equal(want, CLI_MEAN, `hvbench report prints the mean ${rest.mean} as`);
  assert.equal(n, '3', 'n cell');
  assert.equal(mean, want, `Mean cell for mean ${rest.mean} (row: ${cells.join(' | ')})`);
  assert.equal(sd, cliFmtNum(rest.sd), `SD cell for sd ${rest.sd}`);
});

// cpu.score is near 1000 and may fall on either side of it from run to run;
// the rate metrics are always in the millions, so this test is the one that
// always exercises the SI suffixes.
test('every report row shows mean, SD and interval like the CLI', async () => {
  assert.ok(page, 'the plan list test opened a page');
  const res = await fetch(`${BASE}/api/v1/plans/${PLAN_ID}/report`, {
    signal: AbortSignal.timeout(STEP_MS),
  });
  const { rows } = await res.json();
  const trs = page.locator('#report-table tbody tr');
  assert.equal(await trs.count(), rows.length, 'one table row per REST row');
  const wrong = [];
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i];
    const tr = trs.nth(i);
    const cells = await cellTexts(tr);
    const got = {
      metric: cells[3].split(' ')[0],
      mean: cells[5],
      sd: cells[6],
      interval: (await tr.locator('.ci-range').innerText()).trim(),
    };
    const want = {
      metric: r.metric,
      mean: cliFmtNum(r.mean),
      sd: cliFmtNum(r.sd),
      interval: `[${cliFmtNum(r.ci95_low)}, ${cliFmtNum(r.ci95_high)}]`,
    };
    for (const k of Object.keys(want)) {
      if (got[k] !== want[k]) wrong.push(`${r.metric} ${k}: page "${got[k]}", CLI rules "${want[k]}"`);
    }
  }
  assert.deepEqual(wrong, [], 'cells that differ from cli_fmt_num');
});

test('an unknown plan shows the "Not found" problem', async () => {
  const p = await newPage('unknown plan');
  for (const path of ['api/v1/plans/999999', 'api/v1/plans/999999/report']) {
    expectedHttpErrors.push({ status: 404, url: `${BASE}/${path}` });
  }
  await p.goto(`${BASE}/#/plans/999999`);
  const box = p.locator('#error');
  await box.waitFor({ state: 'visible' });
  assert.equal((await box.locator('.error-title').innerText()).trim(), 'Not found (HTTP 404)');
  // No empty plan frame next to the error.
  assert.equal(await p.locator('#plan-status').isVisible(), false, '#plan-status hidden');
  await p.context().close();
});

test('a server with --read-auth token asks for the token, then lists the plans',
  { skip: AUTH_URL ? false : 'AUTH_URL not set' }, async () => {
    assert.ok(READ_TOKEN, 'READ_TOKEN is set');
    const p = await newPage('token form');
    // Without a token the list request answers 401; that one is expected.
    expectedHttpErrors.push({ status: 401, url: `${AUTH_URL}/api/v1/plans` });
    await p.goto(`${AUTH_URL}/`);
    const form = p.locator('#token-form');
    await form.waitFor({ state: 'visible' });
    assert.match(await p.locator('#error .error-title').innerText(), /\(HTTP 401\)$/);
    assert.equal(await p.locator('#plans-table').count(), 0, 'no plan table without a token');

    await p.locator('#token-input').fill(READ_TOKEN);
    await form.locator('button[type=submit]').click();
    const row = p.locator(`#plans-table tbody tr[data-plan-id="${PLAN_ID}"]`);
    await row.waitFor();
    const [, name, status, counts] = await cellTexts(row);
    assert.deepEqual([name, status, counts], ['quick', 'done', '3/3'], 'plan row with the token');
    assert.equal(await form.isVisible(), false, 'token form hidden again');
    assert.equal(await p.locator('#error').isVisible(), false, 'error box hidden again');
    assert.equal(await p.locator('#forget-token').isVisible(), true, '"Forget token" shown');
    await p.context().close();
  });

test('no console errors and no page errors', async () => {
  if (page) await page.context().close();
  assert.deepEqual(problems, []);
});
