// plan-report.js — the sections of a plan page drawn from its report
// (GET /api/v1/plans/{id}/report), in the order `hvbench report` prints
// them: the answer, the table of primary metrics (every metric and
// percentile with "All metrics", as --all), a chart per primary metric,
// verdicts per factor level and primary metric, the overhead summary,
// recommendation cards, warnings. A section whose members the server's
// report does not have says so instead of guessing: the page shows only
// numbers and words the API gave.

import { el } from './dom.js';
import * as fmt from './fmt.js';
import * as ui from './ui.js';
import { dataTable } from './table.js';
import { intervalChart } from './charts.js';

/** Direction arrow of a metric, with a text alternative. */
export function direction(hib) {
  if (hib === true) return el('span', { class: 'dir', title: 'higher is better', 'aria-label': 'higher is better' }, '↑');
  if (hib === false) return el('span', { class: 'dir', title: 'lower is better', 'aria-label': 'lower is better' }, '↓');
  return null;
}

const has = (o, k) => o && Object.prototype.hasOwnProperty.call(o, k);
const ENDPOINT = 'recommendations, verdicts and overhead in GET /api/v1/plans/{id}/report';

/** The kind of an answer line, from the word it opens with (the lines of
 *  the report's answer, lib/report_lead.c): its class on the page. */
const ANSWER_KINDS = [['Recommended ', 'answer-rec'], ['Recommended:', 'answer-none'], ['Efficiency', 'answer-eff'],
  ['Decided', 'answer-decided'], ['Undecided', 'answer-undecided']];

/** The answer the report opens with: the server's lines as they are
 *  (`hvbench report` prints the same under "Answer"), the words before
 *  the first colon in bold. */
export function answer(report) {
  if (!has(report, 'answer')) return ui.unavailable('Answer', 'answer in GET /api/v1/plans/{id}/report');
  const lines = Array.isArray(report.answer) ? report.answer.filter((l) => typeof l === 'string') : [];
  if (lines.length === 0) {
    return ui.empty('Nothing to decide: this plan compares no factor levels and no guests with a baseline; its figures are below.');
  }
  return el('ul', { class: 'answer-lines' }, lines.map((line) => {
    const kind = ANSWER_KINDS.find(([word]) => line.startsWith(word));
    const colon = line.indexOf(': ');
    return el('li', { class: kind ? kind[1] : null },
      colon > 0 ? [el('strong', {}, line.slice(0, colon + 1)), line.slice(colon + 1)] : line);
  }));
}

/** Whether a row (a summary or an overhead entry) is shown without "All
 *  metrics": a primary metric's (a report without `primary` shows all). */
export const shownByDefault = (r) => r.primary !== false;

/** How many rows "All metrics" adds: the summaries and overhead entries of
 *  other metrics and percentiles. */
export function hiddenRows(report) {
  const count = (list) => (Array.isArray(list) ? list.filter((r) => !shownByDefault(r)).length : 0);
  return count(report.summaries) + count(report.overhead);
}

/** The "All metrics" toggle (a button kept across redraws, so its focus
 *  stays) and its note, set for report: pressed when all is shown, the
 *  note saying how many rows of other metrics and percentiles are left
 *  out. Hidden when the report has none. */
export function setAllToggle(button, note, report, all) {
  const hidden = hiddenRows(report);
  button.hidden = hidden === 0;
  button.setAttribute('aria-pressed', String(all));
  note.textContent = hidden === 0 ? '' : all ? 'Every metric and percentile.'
    : 'Primary metrics only: ' + hidden + ' row' + (hidden === 1 ? '' : 's') + ' of other metrics and percentiles left out.';
}

/** Recommendation cards, best first. */
export function recommendations(report, plan) {
  if (!has(report, 'recommendations')) return ui.unavailable('Recommendations', ENDPOINT);
  const recs = Array.isArray(report.recommendations) ? report.recommendations : [];
  const factors = plan && plan.plan && plan.plan.factors ? Object.keys(plan.plan.factors) : [];
  if (recs.length === 0) {
    const ignore = Array.isArray(report.safe_to_ignore) ? report.safe_to_ignore : [];
    return el('div', {},
      ui.empty(factors.length === 0 ? 'This plan has no factors: nothing to recommend.'
        : 'No factor level beat its default beyond the margin' +
          (typeof report.margin_pct === 'number' ? ' (±' + report.margin_pct + ' %)' : '') + '.'),
      ignore.length ? el('ul', { class: 'ignore' }, ignore.map((g) => el('li', {}, g.sentence || (g.factor + '=' + g.level)))) : null);
  }
  return el('div', { class: 'cards' }, recs.map(card));
}

// What each risk class means (docs/catalog.md), in the risk badge's title.
const RISK = {
  none: 'risk none: nothing is known to go wrong at this level',
  low: 'risk low: it costs or caps something elsewhere (host CPU, a throughput limit); nothing breaks',
  'data-loss': 'risk data-loss: data can be lost on a host crash',
  availability: 'risk availability: a guest may not start, boot, migrate or reach the network',
};

/** One recommendation: knob → level, gain with interval, disruption,
 *  risk, how to apply it, evidence. */
function card(r) {
  const best = (r.gains || []).reduce((b, g) => {
    const gain = g.higher_is_better === false ? -g.pct : g.pct;
    return b === null || gain > b.gain ? { g, gain } : b;
  }, null);
  const jobs = Array.isArray(r.jobs) ? r.jobs : [];
  return el('article', { class: 'card rec', 'data-factor': r.factor, 'aria-labelledby': 'rec-' + r.rank },
    el('h3', { id: 'rec-' + r.rank },
      el('span', { class: 'rank' }, '#' + r.rank + ' '),
      el('code', {}, r.factor), ' → ', el('code', { class: 'level' }, r.level),
      el('span', { class: 'muted' }, ' (default ' + r.default + ')')),
    el('p', { class: 'gain' },
      'Expected gain ', el('strong', { class: 'gain-value' }, best ? fmt.changeOrNote(best.g.pct, best.g.lo_pct, best.g.hi_pct, best.g) : '-'),
      best ? [' on ', el('code', {}, best.g.metric), ' (', best.g.workload, best.g.side ? ', ' + best.g.side : '', '; n = ', String(best.g.n), ')'] : null),
    el('p', { class: 'badges' }, ui.disruptionBadge(r.disruption),
      r.risk_level ? el('span', { class: 'tag risk-' + r.risk_level, title: RISK[r.risk_level] || 'the worst that can go wrong at this level' }, 'risk: ' + r.risk_level) : null),
    r.risk ? el('p', { class: 'risk' }, el('strong', {}, 'Risk: '), r.risk) : null,
    effects('Helps', r.gains), effects('Hurts', r.hurts),
    r.apply ? el('div', { class: 'apply' },
      el('div', { class: 'apply-head' }, el('span', {}, 'Apply it'), ui.copyButton(r.apply, 'Copy how to apply ' + r.factor + '=' + r.level)),
      el('pre', {}, el('code', {}, r.apply))) : null,
    jobs.length ? el('p', { class: 'evidence' }, 'Evidence: ', jobs.length + ' jobs — ', ui.foldedList(jobs, (id) => ui.jobLink(id))) : null,
    r.sentence ? el('details', { class: 'sentence' }, el('summary', {}, 'In words'), el('p', {}, r.sentence)) : null);
}

function effects(title, list) {
  if (!Array.isArray(list) || list.length === 0) return null;
  return el('div', { class: 'effects effects-' + title.toLowerCase() }, el('strong', {}, title + ': '),
    el('ul', {}, list.map((e) => el('li', {}, el('code', {}, e.metric), ' ', direction(e.higher_is_better), ' ',
      e.workload, e.side ? ' (' + e.side + ')' : '', ': ',
      el('span', { class: 'num' }, fmt.changeOrNote(e.pct, e.lo_pct, e.hi_pct, e)), ' ', ui.verdictBadge(e.verdict)))));
}

/** The report's warnings; width warnings (the CI width asked for was not
 *  reached) first. */
export function warnings(report) {
  if (!has(report, 'warnings')) return null;
  const list = (Array.isArray(report.warnings) ? report.warnings : []).slice()
    .sort((a, b) => (a.kind === 'width' ? 0 : 1) - (b.kind === 'width' ? 0 : 1));
  if (list.length === 0) return null;
  return el('div', { id: 'warnings', class: 'warnings', role: 'note', 'aria-label': 'Warnings' },
    el('ul', {}, list.map((w) => el('li', { class: 'warning warning-' + (w.kind || 'other') },
      el('strong', {}, w.kind === 'width' ? 'Interval width not reached: ' : 'Warning: '), w.message || String(w)))));
}

/** Overhead: guest against host (or the baseline) per subsystem and
 *  overall, with the report's sentences, then per primary metric (per
 *  metric when all). */
export function overhead(report, all) {
  if (!has(report, 'efficiency') && !has(report, 'overhead')) return ui.unavailable('Overhead', ENDPOINT);
  const eff = Array.isArray(report.efficiency) ? report.efficiency : [];
  const per = (Array.isArray(report.overhead) ? report.overhead : []).filter((o) => all || shownByDefault(o));
  if (eff.length === 0 && per.length === 0) {
    return ui.empty(report.baseline === 'host' ? 'No overhead: the plan has no guest results with host results to compare.'
      : 'No overhead: nothing to compare with the baseline ' + (report.baseline || '') + '.');
  }
  return el('div', {},
    eff.map((e) => el('div', { class: 'efficiency', 'data-configuration': e.configuration },
      e.sentence ? el('p', { class: 'sentence' }, e.sentence) : null,
      el('div', { class: 'scroll-x' }, el('table', { class: 'data compact eff-table' },
        el('caption', {}, 'Efficiency of ', e.configuration, ' against ', e.against, ' (100 % = no overhead)'),
        el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'Subsystem'), el('th', { scope: 'col', class: 'num' }, 'Efficiency'),
          el('th', { scope: 'col', class: 'num' }, '95 % interval'), el('th', { scope: 'col', class: 'num' }, 'n'),
          el('th', { scope: 'col', class: 'num' }, 'Weight'))),
        el('tbody', {}, (e.subsystems || []).map((s) => effRow(s.subsystem, s)), e.overall ? effRow('overall', e.overall, true) : null))))),
    per.length ? el('div', { class: 'scroll-x' }, el('table', { class: 'data compact overhead-table' },
      el('caption', {}, (all ? 'Per metric' : 'Per primary metric') + ': change against the baseline'),
      el('thead', {}, el('tr', {}, ['Configuration', 'Workload', 'Metric'].map((h) => el('th', { scope: 'col' }, h)),
        el('th', { scope: 'col', class: 'num' }, 'Change [95 %]'), el('th', { scope: 'col' }, 'Verdict'))),
      el('tbody', {}, per.map((o) => el('tr', { class: ui.verdictClass(o.verdict) },
        el('td', {}, o.configuration), el('td', {}, o.workload + (o.side ? ' (' + o.side + ')' : '')),
        el('td', {}, el('code', {}, o.metric), ' ', direction(o.higher_is_better)),
        el('td', { class: 'num' }, fmt.changeOrNote(o.pct, o.lo_pct, o.hi_pct, o)),
        el('td', {}, ui.verdictBadge(o.verdict))))))) : null);
}

function effRow(name, s, overall) {
  return el('tr', { class: overall ? 'overall' : null, 'data-subsystem': name },
    el('th', { scope: 'row' }, name),
    el('td', { class: 'num eff' }, fmt.eff(s.efficiency)),
    el('td', { class: 'num' }, fmt.boundsOrNote(s, s.lo, s.hi, fmt.eff)),
    el('td', { class: 'num' }, Number.isFinite(s.n) ? String(s.n) : '-'),
    el('td', { class: 'num' }, typeof s.weight === 'number' ? fmt.pct(100 * s.weight) + ' %' : '-'));
}

/** Words for an undecided comparison. */
export function undecidedWords(c) {
  if (c.family_verdict && c.verdict && c.family_verdict !== c.verdict) {
    return c.verdict.replace('_', ' ') + ' on its own, not after Holm\'s correction';
  }
  const v = c.family_verdict || c.verdict;
  if (v !== 'inconclusive') return '';
  if (Number.isInteger(c.more_rounds)) {
    return 'inconclusive — about ' + c.more_rounds + ' more repetition' + (c.more_rounds === 1 ? '' : 's') + ' would decide';
  }
  if (c.more_rounds_beyond_cap) return 'inconclusive — more repetitions than a plan may run would be needed';
  return c.reason ? 'no interval: ' + c.reason : '';
}

/** Verdicts per factor level and primary metric, coloured by verdict. */
export function verdicts(report) {
  if (!has(report, 'comparisons')) return ui.unavailable('Verdicts', ENDPOINT);
  const list = Array.isArray(report.comparisons) ? report.comparisons : [];
  if (list.length === 0) return ui.empty('No factor levels to compare with their defaults.');
  return el('div', {},
    report.family && report.family.sentence ? el('p', { class: 'muted' }, report.family.sentence) : null,
    el('div', { class: 'scroll-x' }, el('table', { id: 'verdicts-table', class: 'data' },
      el('caption', {}, 'Each level against its factor\'s default' +
        (typeof report.margin_pct === 'number' ? '; margin ±' + report.margin_pct + ' %' : '')),
      el('thead', {}, el('tr', {}, ['Level', 'Workload', 'Metric'].map((h) => el('th', { scope: 'col' }, h)),
        el('th', { scope: 'col', class: 'num' }, 'Change [95 %]'), el('th', { scope: 'col', class: 'num' }, 'n'),
        el('th', { scope: 'col' }, 'Verdict'))),
      el('tbody', {}, list.map((c) => {
        const v = c.family_verdict || c.verdict;
        const words = undecidedWords(c);
        return el('tr', { class: ui.verdictClass(v), 'data-factor': c.factor, 'data-level': c.level, 'data-metric': c.metric },
          el('td', {}, el('code', {}, c.factor + '=' + c.level), el('span', { class: 'muted' }, ' vs ' + c.default)),
          el('td', {}, c.workload + (c.side ? ' (' + c.side + ')' : '')),
          el('td', {}, el('code', {}, c.metric), ' ', direction(c.higher_is_better)),
          el('td', { class: 'num change' }, fmt.changeOrNote(c.pct, c.lo_pct, c.hi_pct, c)),
          el('td', { class: 'num' }, Number.isFinite(c.n) ? String(c.n) : '-'),
          el('td', {}, ui.verdictBadge(v), words ? el('div', { class: 'more' }, words) : null));
      })))));
}

/** Verdict of a configuration that is one level against the default, for
 *  the chart's colours. */
function verdictOf(report, workload, metric, configuration) {
  for (const c of Array.isArray(report.comparisons) ? report.comparisons : []) {
    if (c.workload === workload && c.metric === metric && c.cells === 1 &&
        Array.isArray(c.configurations) && c.configurations[0] && c.configurations[0].level === configuration) {
      return c.family_verdict || c.verdict;
    }
  }
  return null;
}

/** The figures every surface prints of one summary (an element of the
 *  report's summaries, or a side of /api/v1/compare's rows), as
 *  lib/report_text.c hv_summary_figures gives them to the CLI: the centre
 *  (the interval's: the geometric mean of a positive metric; else the
 *  mean), the 95 % bounds when the server calls the interval usable, else
 *  null bounds and the server's words why (interval_note). */
export function figures(s) {
  const iv = s.interval !== undefined ? s.interval : (s.scale !== undefined && typeof s.lo === 'number' ? s : null);
  const has = !!iv && typeof iv.lo === 'number' && typeof iv.hi === 'number';
  const usable = typeof s.usable === 'boolean' ? s.usable && has : has;
  const center = has && typeof iv.center === 'number' ? iv.center : s.mean;
  return {
    center,
    lo: usable ? iv.lo : null,
    hi: usable ? iv.hi : null,
    half: usable && iv && typeof iv.rel_half_pct === 'number' ? iv.rel_half_pct : null,
    scale: has ? iv.scale : null,
    note: usable ? null : (s.interval_note || 'no interval'),
  };
}

/** A chart per primary metric: each configuration's centre with its 95 %
 *  interval, from the summaries (their interval is on logs for positive
 *  metrics: the centre is the geometric mean). */
export function charts(report) {
  const groups = new Map();
  const source = Array.isArray(report.summaries) ? report.summaries : [];
  for (const s of source) {
    if (s.primary !== true) continue;
    const key = s.workload + '\u0000' + s.metric;
    if (!groups.has(key)) groups.set(key, { workload: s.workload, metric: s.metric, unit: s.unit, hib: s.higher_is_better, items: [] });
    groups.get(key).items.push(s);
  }
  if (groups.size === 0) return ui.empty(source.length ? 'No primary metrics in this report.' : 'No results yet.');
  const figs = [];
  for (const g of groups.values()) {
    const targets = new Set(g.items.map((s) => s.target));
    const items = g.items.map((s) => {
      const f = figures(s);
      return {
        label: s.configuration + (targets.size > 1 ? ' @ ' + s.target : ''),
        center: f.center,
        lo: f.lo,
        hi: f.hi,
        note: f.note,
        cls: ui.verdictClass(verdictOf(report, g.workload, g.metric, s.configuration)),
      };
    });
    const scale = g.items.some((s) => s.interval && s.interval.scale === 'log') ? 'geometric mean' : 'mean';
    const fig = intervalChart(g.metric + ' — ' + g.workload + (g.hib === false ? ' (lower is better)' : ''), g.unit, items);
    fig.setAttribute('data-metric', g.metric);
    fig.append(el('p', { class: 'muted small' }, 'Dot: ' + scale + '; whiskers: 95 % interval. ',
      items.map((it, i) => [i ? '; ' : '', it.label + ' ', el('span', { class: 'num' }, fmt.num(it.center)),
        typeof it.lo === 'number' ? ' [' + fmt.num(it.lo) + ', ' + fmt.num(it.hi) + ']' : ' (' + it.note + ')'])));
    figs.push(fig);
  }
  return el('div', { class: 'charts' }, figs);
}

/** Why a plan has no results yet, from its state and what it waits for
 *  (the plan answer's status and waiting). */
function noResultsWords(plan, active) {
  if (!active) return 'No results.';
  const waiting = plan && plan.waiting;
  if (waiting && (waiting.detail || waiting.reason)) return 'No results yet: ' + (waiting.detail || waiting.reason) + '.';
  if (plan && plan.status === 'queued') return 'No results yet: no job has started.';
  return 'No results yet: the first jobs are still running.';
}

/** The table of the report's summaries as `hvbench report` prints them,
 *  sortable and filterable: the primary metrics' rows, every row when all
 *  ("All metrics", all=1 in the URL, as --all). plan (the plan answer,
 *  when there is one) says why there are none yet. */
export function fullTable(report, active, plan, all) {
  const every = Array.isArray(report.summaries) ? report.summaries : [];
  if (every.length === 0) {
    return ui.empty(noResultsWords(plan, active));
  }
  const rows = all ? every : every.filter(shownByDefault);
  if (rows.length === 0) return ui.empty('No primary metrics in this report: "All metrics" lists its ' + every.length + ' rows.');
  return dataTable({
    id: 'report-table', param: 't', rows,
    caption: 'Centre (the geometric mean of a positive metric) with its 95 % interval (on logs), then the arithmetic mean and sample standard deviation, per ' +
      (all ? 'metric' : 'primary metric') + (active ? ' — partial, the plan is still ' + report.status : ''),
    rowProps: (r) => ({ 'data-metric': r.metric, 'data-configuration': r.configuration, 'data-target': r.target,
      'data-primary': String(shownByDefault(r)) }),
    columns: [
      { key: 'configuration', label: 'Configuration', value: (r) => r.configuration },
      { key: 'workload', label: 'Workload', value: (r) => r.workload },
      { key: 'target', label: 'Target', value: (r) => r.target },
      { key: 'metric', label: 'Metric', value: (r) => r.metric, cell: (r) => [r.metric || '-', ' ', direction(r.higher_is_better)] },
      { key: 'n', label: 'n', title: 'rounds', num: true, value: (r) => r.n },
      { key: 'centre', label: 'Centre', title: 'the geometric mean of a positive metric, else the mean', num: true,
        value: (r) => figures(r).center, cell: (r) => el('span', { class: 'centre' }, fmt.num(figures(r).center)) },
      { key: 'ci', label: '95% interval', title: '95 % interval of the centre: half width and bounds', num: true,
        value: (r) => figures(r).half, cell: (r) => ciCell(figures(r)) },
      { key: 'mean', label: 'Arith. mean', title: 'arithmetic mean', num: true, value: (r) => r.mean, cell: (r) => fmt.num(r.mean) },
      { key: 'sd', label: 'SD', title: 'sample standard deviation', num: true, value: (r) => r.sd, cell: (r) => (r.n >= 2 ? fmt.num(r.sd) : '-') },
      { key: 'unit', label: 'Unit', value: (r) => r.unit || '' },
    ],
  });
}

function ciCell(f) {
  if (f.note) return el('span', { class: 'ci-note' }, f.note);
  const half = typeof f.half === 'number' ? '±' + fmt.pct(f.half) + '%' : '-';
  return [el('span', { class: 'ci-pct' }, half),
    el('span', { class: 'ci-range' }, '[' + fmt.num(f.lo) + ', ' + fmt.num(f.hi) + ']')];
}

/** The rounds: what adaptive repetitions decided, per configuration. */
export function repetitions(report) {
  const r = report && report.repetitions;
  if (!r || !Array.isArray(r.configurations) || r.configurations.length === 0) return null;
  return el('ul', { class: 'rounds' }, r.configurations.map((c) =>
    el('li', { class: c.reached ? 'reached' : 'not-reached' }, c.sentence || (c.configuration + ': ' + c.rounds + ' rounds'))));
}
