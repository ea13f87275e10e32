// web-bench.js — bench/web.sh's measurements: fills the server through its
// API (one job with BENCH_SAMPLES samples; BENCH_POINTS imports for a
// history), then loads each page BENCH_RUNS times in headless Chromium and
// reports the median time from navigation to the first chart painted (the
// page's performance mark "hv-first-chart", set two animation frames after
// uPlot drew) and the median time to fetch and parse the same API answer
// as JSON alone, in the same page.
'use strict';

const fs = require('node:fs');
const { chromium } = require('playwright-core');

const URL_ = process.env.URL.replace(/\/+$/, '');
const RUNS = Number(process.env.BENCH_RUNS || 7);
const POINTS = Number(process.env.BENCH_POINTS || 10000);
const SAMPLES = Number(process.env.BENCH_SAMPLES || 100000);

async function call(method, path, token, body) {
  const res = await fetch(URL_ + path, {
    method, body: body === undefined ? undefined : JSON.stringify(body),
    headers: { Authorization: 'Bearer ' + token, 'Content-Type': 'application/json' },
    signal: AbortSignal.timeout(120000),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

/** One job with SAMPLES per-second samples of cpu.score. */
async function bigJob() {
  const reg = await call('POST', '/api/v1/workers/register', process.env.WORKER_TOKEN,
    { name: 'bench-web', kind: 'host', facts: {} });
  if (reg.status !== 200) throw new Error('register: ' + reg.status + ' ' + JSON.stringify(reg.body));
  const cred = reg.body.worker_token;
  const plan = await call('POST', '/api/v1/plans', process.env.SUBMIT_TOKEN, {
    name: 'bench-web', targets: { host: 'bench-web' }, repetitions: { min: 1 },
    workloads: [{ id: 'cpu', kind: 'cpu', engine: 'builtin', params: { copies: 1, seconds: 1 } }],
  });
  if (plan.status !== 201) throw new Error('submit: ' + plan.status);
  const claim = await call('POST', '/api/v1/jobs/claim', cred, { wait: 5 });
  if (claim.status !== 200) throw new Error('claim: ' + claim.status);
  const { id, attempt } = claim.body.job;
  const samples = new Array(SAMPLES);
  for (let i = 0; i < SAMPLES; i++) {
    samples[i] = { metric: 'cpu.score', t: i + 1, value: 1000 + 50 * Math.sin(i / 500) + (i % 7) };
  }
  const up = await call('POST', `/api/v1/jobs/${id}/result`, cred, {
    attempt, status: 'ok', metrics: [{ name: 'cpu.score', value: 1000, unit: 'score', higher_is_better: true }], samples,
  });
  if (up.status !== 201) throw new Error('upload: ' + up.status + ' ' + JSON.stringify(up.body).slice(0, 300));
  return { job: id, target: reg.body.target_id };
}

/** POINTS imports of a sysbench cpu output, an hour apart, each with its
 *  own events per second (the same output twice is refused). */
async function history(target) {
  const probe = await call('GET', `/api/v1/targets/${target}/history?metric=cpu.sysbench.events_per_s`, process.env.SUBMIT_TOKEN);
  if (probe.status === 404 && /no such endpoint/.test((probe.body && probe.body.detail) || '')) return null;
  const fixture = fs.readFileSync(process.env.FIXTURE, 'utf8');
  const start = Date.parse('2024-01-01T00:00:00Z');
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < POINTS; i = next++) {
      const eps = (3000 + (i % 500) + i / POINTS).toFixed(2);
      const r = await call('POST', '/api/v1/imports', process.env.SUBMIT_TOKEN, {
        tool: 'sysbench', target: 'bench-history', at: new Date(start + i * 3600e3).toISOString().replace(/\.\d+Z$/, 'Z'),
        output: fixture.replace(/events per second:\s+[0-9.]+/, 'events per second:  ' + eps),
      });
      if (r.status !== 201) throw new Error('import ' + i + ': ' + r.status + ' ' + JSON.stringify(r.body).slice(0, 300));
    }
  };
  const t0 = Date.now();
  await Promise.all([worker(), worker(), worker(), worker()]);
  console.log(`# ${POINTS} imports in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  const targets = await call('GET', '/api/v1/targets', process.env.SUBMIT_TOKEN);
  return targets.body.items.find((t) => t.name === 'bench-history').id;
}

const median = (xs) => {
  const s = xs.slice().sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** Median first-chart time of the page at hash, and of fetching api as
 *  JSON alone, in ms. */
async function measure(browser, hash, api) {
  const chart = [];
  const json = [];
  const answer = [];
  for (let i = 0; i < RUNS; i++) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${URL_}/${hash}`);
    await page.waitForFunction(() => performance.getEntriesByName('hv-first-chart').length > 0, null, { timeout: 60000 });
    chart.push(await page.evaluate(() => performance.getEntriesByName('hv-first-chart')[0].startTime));
    // When the page had the API's answer: what remains is the page's own work.
    answer.push(await page.evaluate((p) => {
      const r = performance.getEntriesByType('resource').filter((e) => e.name.includes(p));
      return r.length ? Math.max(...r.map((e) => e.responseEnd)) : NaN;
    }, api.replace(/\?.*/, '')));
    json.push(await page.evaluate(async (p) => {
      const t0 = performance.now();
      const d = await (await fetch(p, { cache: 'no-store' })).json();
      if (!d) throw new Error('no body');
      return performance.now() - t0;
    }, api));
    await context.close();
  }
  return { chart: median(chart), json: median(json), answer: median(answer), runs: chart };
}

(async () => {
  const { job, target } = await bigJob();
  const histTarget = await history(target);
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM, headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    const a = await measure(browser, `#/jobs/${job}`, `api/v1/jobs/${job}/results`);
    console.log(`A  job page, ${SAMPLES} samples: first chart ${(a.chart / 1000).toFixed(3)} s (median of ${RUNS}; runs ${a.runs.map((x) => x.toFixed(0)).join(' ')} ms); ` +
      `its API answer complete at ${(a.answer / 1000).toFixed(3)} s; JSON alone ${(a.json / 1000).toFixed(3)} s; goal < 0.5 s: ${a.chart < 500 ? 'met' : 'NOT met'}`);
    if (histTarget === null) {
      console.log('B  history: not available on this server (no GET /api/v1/targets/{id}/history)');
    } else {
      const api = `api/v1/targets/${histTarget}/history?metric=cpu.sysbench.events_per_s&max_points=${POINTS}`;
      const b = await measure(browser, `#/targets/${histTarget}?metric=cpu.sysbench.events_per_s`, api);
      console.log(`B  history, ${POINTS} points: first chart ${(b.chart / 1000).toFixed(3)} s (median of ${RUNS}; runs ${b.runs.map((x) => x.toFixed(0)).join(' ')} ms); ` +
        `its API answer complete at ${(b.answer / 1000).toFixed(3)} s; JSON alone ${(b.json / 1000).toFixed(3)} s; goal < 0.5 s: ${b.chart < 500 ? 'met' : 'NOT met'}`);
    }
  } finally {
    await browser.close();
  }
})().catch((e) => {
  console.error('web-bench:', e);
  process.exit(1);
});
