// web-bench.js — bench/web.sh's measurements, on the job (JOB, SAMPLES
// samples), the history (target HIST, POINTS points of METRIC), the fleet
// history (FLEET_HOSTS hosts of pool=bench-fh) and the fleet plan
// (FLEET_PLAN) web.sh made: loads each page BENCH_RUNS times in headless Chromium and reports
// the median time from navigation to the first chart painted (the page's
// performance mark "hv-first-chart", set an animation frame after uPlot
// drew), when the page had the answer its chart is drawn from, and the
// median time to fetch and parse that same answer (the URL the page
// fetched) as JSON alone, in the same page: the floor. For the job also
// the whole series as GET /api/v1/jobs/{id}/results gives it. "First API
// request sent" is when the page's scripts, loaded and run, first asked
// the API for anything: what the page costs before any data.
'use strict';

const { chromium } = require('playwright-core');

const URL_ = process.env.URL.replace(/\/+$/, '');
const RUNS = Number(process.env.BENCH_RUNS || 7);
const { JOB, HIST, METRIC, SAMPLES, POINTS, FLEET_HOSTS, FLEET_PLAN } = process.env;

const median = (xs) => {
  const s = xs.slice().sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** Time to fetch url and parse it as JSON, in the page, in ms. */
function fetchJson(page, url) {
  return page.evaluate(async (p) => {
    const t0 = performance.now();
    const d = await (await fetch(p, { cache: 'no-store' })).json();
    if (!d) throw new Error('no body');
    return performance.now() - t0;
  }, url);
}

/** Medians over RUNS loads of the page at hash (or hash(i) for the i-th
 *  load): first chart, the chart's
 *  answer complete (the resource whose URL holds api), that answer as
 *  JSON alone, and each of extra (URLs) as JSON alone; in ms. */
async function measure(browser, hash, api, extra = []) {
  const chart = [];
  const start = [];
  const answer = [];
  const json = [];
  const more = extra.map(() => []);
  let asked = '';
  for (let i = 0; i < RUNS; i++) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const at = typeof hash === 'function' ? hash(i) : hash;
    await page.goto(`${URL_}/${at}`);
    await page.waitForFunction(() => performance.getEntriesByName('hv-first-chart').length > 0, null, { timeout: 60000 });
    chart.push(await page.evaluate(() => performance.getEntriesByName('hv-first-chart')[0].startTime));
    // The answer the chart was drawn from: what remains is the page's work.
    const r = await page.evaluate((p) => performance.getEntriesByType('resource').filter((e) => e.name.includes(p))
      .map((e) => ({ name: e.name, end: e.responseEnd })), api);
    if (r.length === 0) throw new Error(`the page fetched nothing like ${api}`);
    answer.push(Math.max(...r.map((e) => e.end)));
    // When the page's scripts first asked the API for anything: the page's
    // own start, before any data.
    start.push(await page.evaluate(() => Math.min(...performance.getEntriesByType('resource')
      .filter((e) => e.name.includes('/api/')).map((e) => e.startTime))));
    asked = r[r.length - 1].name;
    if (process.env.BENCH_TRACE === '1') {
      // Where the time went in this load: every resource and mark, in ms.
      const t = await page.evaluate(() => [...performance.getEntriesByType('navigation'),
        ...performance.getEntriesByType('resource'), ...performance.getEntriesByType('mark')]
        .map((e) => [e.startTime, e.responseStart || e.startTime, e.responseEnd || e.startTime, e.name.replace(/^.*\/\/[^/]*\//, '')]));
      console.log(`trace ${at} run ${i + 1}`);
      console.log(JSON.stringify(await page.evaluate(() => { const n = performance.getEntriesByType('navigation')[0];
        return { domInteractive: n.domInteractive, dcl: n.domContentLoadedEventStart, dclEnd: n.domContentLoadedEventEnd, load: n.loadEventStart }; })));
      for (const [s0, s1, s2, n] of t.sort((x, y) => x[0] - y[0])) console.log(`  ${s0.toFixed(0).padStart(5)} ${s1.toFixed(0).padStart(5)} ${s2.toFixed(0).padStart(5)}  ${n}`);
    }
    json.push(await fetchJson(page, asked));
    for (let k = 0; k < extra.length; k++) more[k].push(await fetchJson(page, extra[k]));
    await context.close();
  }
  return { chart: median(chart), start: median(start), answer: median(answer), json: median(json), more: more.map(median), runs: chart, asked };
}

const s = (ms) => (ms / 1000).toFixed(3) + ' s';

/** Prints page tag's line as bench/web.sh reads it: the first chart (its
 *  median and runs), when the first API request went, when the chart's
 *  answer was complete, that answer alone (note after it), extra figures,
 *  and the goal (ms) met or not. */
function report(tag, what, m, goal, note = '', extra = '') {
  console.log(`${tag}  ${what}: first chart ${s(m.chart)} (median of ${RUNS}; runs ${m.runs.map((x) => x.toFixed(0)).join(' ')} ms); ` +
    `first API request sent at ${s(m.start)}; its answer (${m.asked.replace(/^.*\/api\//, 'api/')}) complete at ${s(m.answer)}; ` +
    `that JSON alone ${s(m.json)}${note}; ${extra}goal < ${goal / 1000} s: ${m.chart < goal ? 'met' : 'NOT met'}`);
}

(async () => {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM, headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    const a = await measure(browser, `#/jobs/${JOB}`, `/api/v1/jobs/${JOB}/samples`, [`${URL_}/api/v1/jobs/${JOB}/results`]);
    report('A', `job page, ${SAMPLES} samples`, a, 500, '', `the whole series (results) as JSON alone ${s(a.more[0])}; `);
    const b = await measure(browser, `#/targets/${HIST}?metric=${METRIC}`, `/api/v1/targets/${HIST}/history?`);
    report('B', `history, ${POINTS} points`, b, 500);
    const c = await measure(browser, '#/fleet-history?selector=pool%3Dbench-fh&metric=cpu.score&range=90d', '/api/v1/history?');
    report('C', `fleet history, ${FLEET_HOSTS} hosts x 90 days`, c, 1000);
    // The same question nobody asked before: a custom window a second
    // longer each load, so the server has no answer kept and runs the
    // fleet history's statement while the page waits.
    const end = Math.ceil(Date.now() / 3600000) * 3600000;
    const e = await measure(browser, (i) => '#/fleet-history?selector=pool%3Dbench-fh&metric=cpu.score&range=custom' +
      `&from=${new Date(end - 90 * 86400000).toISOString()}&to=${new Date(end + (i + 1) * 1000).toISOString()}`, '/api/v1/history?');
    report('E', `fleet history, ${FLEET_HOSTS} hosts x 90 days, no answer kept`, e, 1000, ' (kept by then)');
    if (process.env.FLEET_SHOT) {
      // The page as docs/web.md shows it: 1400×900, the chart drawn.
      const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
      const page = await context.newPage();
      await page.goto(`${URL_}/#/fleet-history?selector=pool%3Dbench-fh&metric=cpu.score&range=90d`);
      await page.waitForFunction(() => performance.getEntriesByName('hv-first-chart').length > 0, null, { timeout: 60000 });
      await page.screenshot({ path: process.env.FLEET_SHOT });
      await context.close();
    }
    const d = await measure(browser, `#/plans/${FLEET_PLAN}`, `/api/v1/plans/${FLEET_PLAN}/report`);
    report('D', `fleet plan page, ${FLEET_HOSTS} hosts`, d, 1000);
  } finally {
    await browser.close();
  }
})().catch((e) => {
  console.error('web-bench:', e);
  process.exit(1);
});
