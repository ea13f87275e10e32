// charts.js — the page's charts. Time series (a job's samples, a metric's
// history) are drawn by uPlot (web/vendor, loaded before the modules as the
// global uPlot) on a canvas: 100,000 points draw in milliseconds. The
// interval charts of a report are small SVGs, one row per configuration.
//
// Every chart reads the same way: numeric axes tick on 1-2-5 steps (ticks),
// an axis of values that are all >= 0 never goes below 0 (valueRange), the
// value axis is labelled with the unit the API gave, axes are as wide as
// their widest label and the plot keeps room for the last x label, and an
// interval too wide to draw is drawn clipped and marked as such instead of
// setting the scale. A zoom is the chart's view, kept apart from its data:
// new data for the view (a refetch at full resolution) keeps it, and only
// "whole range" (or a double-click) returns to the full range, which the
// page gives the chart apart from the points it shows.
//
// What a chart shows is also on its <figure> for tests and tools (a canvas
// has no text): data-from/data-to (the visible x range), data-xmin/data-xmax
// (the full range), data-yticks/data-xticks (tick values, comma separated),
// data-ymin/data-ymax (the value axis' range) and data-ylabel.

import { el, svg } from './dom.js';
import * as fmt from './fmt.js';

/** A colour of the stylesheet (canvas needs real colours, not var()). */
function cssColor(name, fallback) {
  const v = getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  return v || fallback;
}

/** uPlot, or null when web/vendor/uPlot.iife.min.js did not load. */
function lib() {
  return typeof window.uPlot === 'function' ? window.uPlot : null;
}

/** How many values a chart as wide as box should ask for: about one per
 *  pixel (100 to 4,000). */
export function chartPoints(box) {
  const w = Math.round((box && box.clientWidth) || document.documentElement.clientWidth || 1000);
  return Math.max(100, Math.min(4000, w));
}

/** The step of ticks on 1-2-5 steps (1, 2, 5, 10, 20 …) that puts at most
 *  max ticks in [lo, hi], never smaller than minStep (1 for whole seconds:
 *  a 2-sample run gets two ticks, not twenty). */
export function tickStep(lo, hi, max = 5, minStep = 0) {
  const raw = Math.max((hi - lo) / Math.max(1, max), minStep, Number.MIN_VALUE);
  const p = Math.pow(10, Math.floor(Math.log10(raw)));
  for (const m of [1, 2, 5, 10]) if (m * p >= raw * (1 - 1e-9)) return m * p;
  return 10 * p;
}

/** The one tick function of every chart: the multiples of tickStep(lo,
 *  hi, max, minStep) within [lo, hi], written without float noise (0.3,
 *  not 0.30000000000000004). A range of nothing is its one value. */
export function ticks(lo, hi, max = 5, minStep = 0) {
  if (!isFinite(lo) || !isFinite(hi)) return [];
  if (!(hi > lo)) return [lo];
  const step = tickStep(lo, hi, max, minStep);
  const out = [];
  const first = Math.ceil(lo / step - 1e-9);
  for (let i = first; i * step <= hi + step * 1e-9; i++) out.push(Number((i * step).toPrecision(12)));
  return out;
}

/** The range of a value axis over values dmin..dmax: 5 % room either
 *  side, widened to whole tick steps; never below 0 when no value is (a
 *  quantity that cannot be negative: a rate, a time, a score). */
export function valueRange(dmin, dmax, max = 5) {
  if (dmin == null || dmax == null || !isFinite(dmin) || !isFinite(dmax)) return [0, 1];
  const pad = dmax > dmin ? (dmax - dmin) * 0.05 : Math.abs(dmin) * 0.05 || 1;
  let lo = dmin - pad;
  let hi = dmax + pad;
  if (dmin >= 0 && lo < 0) lo = 0;
  const step = tickStep(lo, hi, max);
  lo = Math.floor(lo / step + 1e-9) * step;
  hi = Math.ceil(hi / step - 1e-9) * step;
  return [Number(lo.toPrecision(12)), Number(hi.toPrecision(12))];
}

const AXIS_FONT = '12px system-ui, sans-serif';
const LABEL_FONT = '600 12px system-ui, sans-serif';
let measurer = null;

/** Width in CSS pixels of the widest of texts in the axes' font. */
function textWidth(texts) {
  if (!measurer) measurer = document.createElement('canvas').getContext('2d');
  measurer.font = AXIS_FONT;
  let w = 0;
  for (const t of texts || []) for (const line of String(t ?? '').split('\n')) w = Math.max(w, measurer.measureText(line).width);
  return Math.ceil(w);
}

/** A uPlot value axis: 1-2-5 ticks about one per 40 px of height, labels
 *  as fmt.num writes them, the unit as its label, as wide as its widest
 *  tick label (none is clipped); the ticks go to fig's data-yticks. */
function valueAxis(fig, unit, height) {
  return {
    stroke: cssColor('--muted', '#555'), grid: { stroke: cssColor('--line', '#ddd') }, font: AXIS_FONT,
    label: unit || 'no unit given', labelFont: LABEL_FONT, labelSize: 18,
    splits: (u, i, lo, hi) => {
      const t = ticks(lo, hi, Math.max(2, Math.floor(height / 40)));
      fig.dataset.yticks = t.join(',');
      return t;
    },
    values: (u, splits) => splits.map((x) => fmt.num(x)),
    size: (u, values) => textWidth(values || ['0000']) + 18,
  };
}

/** The plot's padding: room on the right for half the last x label. */
function padding(widest) {
  return [10, () => Math.max(12, Math.ceil(widest() / 2) + 4), 0, 0];
}

/** Writes a uPlot chart's scales onto fig (see the header). */
function markScales(fig, u) {
  const x = u.scales.x;
  const y = u.scales.y;
  if (x && x.min != null) {
    fig.dataset.from = String(x.min);
    fig.dataset.to = String(x.max);
  }
  if (y && y.min != null) {
    fig.dataset.ymin = String(y.min);
    fig.dataset.ymax = String(y.max);
  }
}

/** Keeps a chart as wide as its box: uPlot draws at a fixed size. */
function followWidth(u, box, height) {
  const ro = new ResizeObserver(() => {
    const w = Math.floor(box.clientWidth);
    if (w > 0 && w !== u.width) u.setSize({ width: w, height });
  });
  ro.observe(box);
  return ro;
}

/** The caption's count: samples, and how the chart shows them. */
function sampleCount(d) {
  const n = d.n ?? d.t.length;
  return ' · ' + n + (n === 1 ? ' sample' : ' samples') +
    (d.downsampled ? ' shown as ' + d.t.length + ' time buckets (line: mean; band: min to max)' : '');
}

/** A zoom: the view of a chart apart from its data. full is the whole
 *  range [lo, hi] (the page knows it apart from the points it shows),
 *  view the window shown or null (the whole range), u the chart once
 *  drawn. Gives fig .setView(range | null), which moves the view; the
 *  reset button asks onZoom for the whole range. */
function zoomState(fig, reset, full, view, onZoom) {
  const z = {
    full, view, u: null,
    shown: () => z.view || z.full,
    mark: () => {
      if (reset) reset.hidden = !z.view;
      if (z.full) {
        fig.dataset.xmin = String(z.full[0]);
        fig.dataset.xmax = String(z.full[1]);
      }
      fig.classList.toggle('zoomed', Boolean(z.view));
    },
  };
  z.mark();
  if (reset) reset.addEventListener('click', () => onZoom(null));
  fig.setView = (range) => {
    z.view = range;
    z.mark();
    const s = z.shown();
    if (z.u && s) z.u.setScale('x', { min: s[0], max: s[1] });
  };
  return z;
}

/** A chart's columns: x, the values, and the bucket bounds (series of
 *  nulls when the values are the samples themselves: no band). */
function withBand(x, d) {
  const none = d.min && d.max ? null : new Array(x.length).fill(null);
  return [x, d.v, d.min || none, d.max || none];
}

/** The local time zone as the time axis names it: "UTC+01:00". */
function zoneName() {
  const m = -new Date().getTimezoneOffset();
  const a = Math.abs(m);
  return 'UTC' + (m < 0 ? '-' : '+') + String(Math.floor(a / 60)).padStart(2, '0') + ':' + String(a % 60).padStart(2, '0');
}

/** A uPlot chart in box: the options every time series shares (a value
 *  axis labelled with the unit, 1-2-5 ticks, a y range never below 0 for
 *  values that are not, room for the last x label, drag to select a range
 *  that goes to z and onZoom, double-click for the whole range) with
 *  spec's x axis, series, bands and hooks; columns are its data. */
function timeSeries(fig, box, z, spec, onZoom, columns) {
  const uPlot = lib();
  if (!uPlot) {
    box.append(el('p', { class: 'state state-error' }, 'The chart library did not load.'));
    return null;
  }
  const height = spec.height;
  let xWidest = 30;
  const x = {
    stroke: cssColor('--muted', '#555'), grid: { stroke: cssColor('--line', '#ddd') }, font: AXIS_FONT,
    label: spec.xLabel, labelFont: LABEL_FONT, labelSize: 18,
    size: (u, values) => {
      xWidest = textWidth(values);
      const lines = Math.max(1, ...(values || ['']).map((v) => String(v ?? '').split('\n').length));
      return 18 + 14 * lines;
    },
  };
  // uPlot's time ticks (whole minutes, hours, days) at least 90 px apart.
  if (spec.time) x.space = 90;
  else {
    x.splits = (u, i, lo, hi) => {
      const t = ticks(lo, hi, Math.max(2, Math.floor(u.bbox.width / (window.devicePixelRatio || 1) / 90)), spec.xMinStep || 0);
      fig.dataset.xticks = t.join(',');
      return t;
    };
    x.values = (u, splits) => splits.map((v) => fmt.num(v));
  }
  const opts = {
    width: Math.max(200, Math.floor(box.clientWidth) || 600),
    height,
    padding: padding(() => xWidest),
    legend: { show: spec.legend !== false, live: true },
    cursor: {
      ...(spec.sync ? { sync: { key: spec.sync, setSeries: false } } : {}),
      drag: { x: Boolean(onZoom), y: false, setScale: false },
      bind: onZoom ? { dblclick: () => () => { onZoom(null); return null; } } : {},
    },
    scales: {
      // The view, whatever the data: new data for a window keeps it.
      x: { time: Boolean(spec.time), range: (u, lo, hi) => z.shown() || [lo, hi] },
      y: { range: (u, lo, hi) => valueRange(lo, hi, Math.max(2, Math.floor(height / 40))) },
    },
    axes: [x, valueAxis(fig, spec.unit, height)],
    series: spec.series,
    bands: spec.bands,
    hooks: {
      draw: [(u) => markScales(fig, u), ...(spec.draw ? [spec.draw] : [])],
      // Beneath the series: drawn after the axes, before any series.
      drawAxes: spec.under ? [spec.under] : [],
      // A drag selects a range: the view, and onZoom asks its data.
      setSelect: [(u) => {
        if (!onZoom || u.select.width < 2) return;
        const lo = u.posToVal(u.select.left, 'x');
        const hi = u.posToVal(u.select.left + u.select.width, 'x');
        u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
        if (hi > lo) onZoom(spec.round ? spec.round([lo, hi]) : [lo, hi]);
      }],
    },
  };
  const u = new uPlot(opts, columns, box);
  fig.dataset.ylabel = spec.unit || '';
  followWidth(u, box, height);
  box.dataset.drawn = '1';
  return u;
}

/** A zoom rounded outwards to what the URL holds: whole seconds of a
 *  history, milliseconds of a run (a run may last two seconds). */
const wholeSeconds = (r) => [Math.floor(r[0]), Math.ceil(r[1])];
const milliseconds = (r) => [Math.floor(r[0] * 1000) / 1000, Math.ceil(r[1] * 1000) / 1000];

/** A time series chart of one metric. spec: {label, unit, t (seconds,
 *  Float64Array), v (Float64Array), min, max (per-bucket bounds, or null
 *  when the values are the samples themselves), n (the samples they stand
 *  for), downsampled, points (how many the page asked for), full [min,
 *  max] (the whole run), view [from, to] or null, sync (cursor group
 *  key), height, color, onZoom(range | null) (a drag selects a view, in
 *  milliseconds; double-click or "Whole run" returns null)}. Returns a
 *  <figure>; the chart is drawn once the figure is in the document (call
 *  .draw()); .update(d) swaps its data ({t, v, min, max, n, downsampled})
 *  and keeps the view; .setView(range | null) moves the view. */
export function seriesChart(spec) {
  const box = el('div', { class: 'chart-box' });
  const count = el('span', { class: 'muted' }, sampleCount(spec));
  const reset = spec.onZoom ? el('button', { type: 'button', class: 'small zoom-reset', hidden: true }, 'Whole run') : null;
  const fig = el('figure', { class: 'chart', 'aria-label': spec.label + ': ' + (spec.n ?? spec.t.length) + ' samples' },
    el('figcaption', {}, spec.label, spec.unit ? el('span', { class: 'unit' }, ' (' + spec.unit + ')') : null, count, ' ', reset), box);
  const z = zoomState(fig, reset, spec.full || null, spec.view || null, spec.onZoom);
  const mark = (d) => {
    fig.dataset.points = String(d.t.length);
    fig.dataset.samples = String(d.n ?? d.t.length);
    if (spec.points) fig.dataset.requested = String(spec.points);
    fig.dataset.downsampled = d.downsampled ? '1' : '0';
    // No bucket bounds in the legend when the values are the samples.
    box.classList.toggle('samples-whole', !d.downsampled);
  };
  mark(spec);
  fig.update = (d) => {
    mark(d);
    count.textContent = sampleCount(d);
    if (z.u) z.u.setData(withBand(d.t, d));
  };
  fig.draw = () => {
    const stroke = cssColor(spec.color || '--accent', '#1f5fbf');
    const edge = cssColor('--line', '#ccc');
    const num = (uu, x) => (x == null ? '-' : fmt.num(x));
    z.u = timeSeries(fig, box, z, {
      height: spec.height || 200, unit: spec.unit, sync: spec.sync, time: false,
      xLabel: 'seconds since the start', xMinStep: 1, round: milliseconds,
      series: [
        { label: 't (s)', value: num },
        { label: spec.label, stroke, width: 1, points: { show: spec.t.length <= 300 }, value: num },
        { label: 'bucket min', stroke: edge, width: 1, points: { show: false }, value: num },
        { label: 'bucket max', stroke: edge, width: 1, points: { show: false }, value: num },
      ],
      bands: [{ series: [3, 2], fill: cssColor('--band', 'rgba(31, 95, 191, 0.15)') }],
    }, spec.onZoom, withBand(spec.t, spec));
    return z.u;
  };
  return fig;
}

/** A history chart: values over months, drag to zoom, double-click or
 *  "Whole range" to zoom out, change points as vertical lines. spec:
 *  {label, unit, at (epoch seconds), v, min?, max? (per-point bucket
 *  bounds), n (the points they stand for), changePoints [{at (epoch s),
 *  status}], full [first, last] (the whole series, epoch seconds), view
 *  [from, to] or null, onZoom(range | null)} (the view in whole seconds,
 *  null for the whole range). .update(d) swaps the points ({at, v, min,
 *  max, n}) and keeps the view; .setView(range | null) moves it. */
export function historyChart(spec) {
  const box = el('div', { class: 'chart-box' });
  const reset = spec.onZoom ? el('button', { type: 'button', class: 'small zoom-reset', hidden: true }, 'Whole range') : null;
  const count = el('span', { class: 'muted' });
  const fig = el('figure', { class: 'chart history-chart',
    'aria-label': spec.label + ': history of ' + spec.at.length + ' points' + (spec.onZoom ? ', drag to zoom' : '') },
  el('figcaption', {}, spec.label, spec.unit ? el('span', { class: 'unit' }, ' (' + spec.unit + ')') : null, count, reset),
  box);
  const z = zoomState(fig, reset, spec.full || (spec.at.length ? [spec.at[0], spec.at[spec.at.length - 1]] : null),
    spec.view || null, spec.onZoom);
  const mark = (d) => {
    fig.dataset.points = String(d.at.length);
    count.textContent = ' · ' + d.at.length + ' points' + (spec.onZoom ? ' · drag across the chart to zoom ' : ' ');
    box.classList.toggle('samples-whole', !(d.min && d.max));
  };
  mark(spec);
  fig.update = (d) => {
    mark(d);
    if (z.u) z.u.setData(withBand(d.at, d));
  };
  fig.draw = () => {
    const accent = cssColor('--accent', '#1f5fbf');
    const cpNew = cssColor('--failed', '#c62828');
    const cpAck = cssColor('--muted', '#5b6475');
    const band = cssColor('--line', '#ccc');
    const num = (uu, x) => (x == null ? '-' : fmt.num(x));
    z.u = timeSeries(fig, box, z, {
      height: 280, unit: spec.unit, time: true, xLabel: 'time (local, ' + zoneName() + ')', round: wholeSeconds,
      series: [
        { label: 'time' },
        { label: spec.label, stroke: accent, width: 1, points: { show: true, size: 4, fill: accent }, value: num },
        { label: 'bucket min', stroke: band, width: 1, points: { show: false }, value: num },
        { label: 'bucket max', stroke: band, width: 1, points: { show: false }, value: num },
      ],
      draw: (uu) => {
        const ctx = uu.ctx;
        ctx.save();
        ctx.lineWidth = 2 * (window.devicePixelRatio || 1);
        for (const cp of spec.changePoints || []) {
          const x = Math.round(uu.valToPos(cp.at, 'x', true));
          if (x < uu.bbox.left || x > uu.bbox.left + uu.bbox.width) continue;
          ctx.strokeStyle = cp.status === 'new' ? cpNew : cpAck;
          ctx.setLineDash(cp.status === 'new' ? [] : [6, 4]);
          ctx.beginPath();
          ctx.moveTo(x, uu.bbox.top);
          ctx.lineTo(x, uu.bbox.top + uu.bbox.height);
          ctx.stroke();
        }
        ctx.restore();
      },
    }, spec.onZoom, withBand(spec.at, spec));
    return z.u;
  };
  return fig;
}

/** The hosts of a fleet over time on one chart (the fleet history): each
 *  host's series thin and grey, outliers in colour, the fleet's median
 *  thick over the band of its middle half, change points as ticks on top.
 *  spec: {label, unit, from, to (the window asked for, epoch seconds:
 *  the x axis whatever part of it has points), at (the buckets' times),
 *  median, p25, p75 (per bucket), hosts [{name, v (per bucket, null where
 *  none), outlier, below (an outlier on the worse side)}], changePoints
 *  [{at (epoch s), status}]}. The axes are every time chart's (timeSeries:
 *  1-2-5 value ticks, never below 0 for values that are not, the unit as
 *  label, local time with its zone); no legend (hundreds of hosts), no
 *  zoom (the page's range picker sets the window). .draw() once the
 *  figure is in the document. */
export function fleetChart(spec) {
  const box = el('div', { class: 'chart-box' });
  const fig = el('figure', { class: 'chart fleet-history-chart', id: spec.id || null,
    'aria-label': spec.label + ' of ' + spec.hosts.length + ' hosts over time' },
  el('figcaption', {}, spec.label, spec.unit ? el('span', { class: 'unit' }, ' (' + spec.unit + ')') : null,
    el('span', { class: 'muted' }, ' · thick: the fleet median, shaded: its middle half, coloured: outliers, ticks on top: change points (red: new)')),
  box);
  const z = zoomState(fig, null, [spec.from, spec.to], null, null);
  fig.draw = () => {
    const grey = cssColor('--line', '#c8ccd4');
    const worse = cssColor('--failed', '#c62828');
    const accent = cssColor('--accent', '#1f5fbf');
    const muted = cssColor('--muted', '#5b6475');
    // Few buckets (a fleet plan that ran in minutes): draw the points too.
    const dots = spec.at.length < 40;
    const num = (uu, x) => (x == null ? '-' : fmt.num(x));
    const series = [{ label: 'time' },
      { label: 'upper quartile', stroke: 'transparent', points: { show: false }, value: num },
      { label: 'lower quartile', stroke: 'transparent', points: { show: false }, value: num }];
    const data = [spec.at, spec.p75, spec.p25];
    // The outliers are series of their own; the crowd (hundreds of hosts)
    // is one grey path drawn beneath every series: a uPlot series per host
    // cost 0.3 s to draw at 500 hosts, the one path milliseconds.
    const crowd = spec.hosts.filter((h) => !h.outlier);
    // The crowd's lowest and highest value per bucket, as invisible series:
    // the value axis takes its range from the series, and holds the crowd.
    const lo = spec.at.map(() => null);
    const hi = spec.at.map(() => null);
    for (const h of crowd) {
      for (let i = 0; i < spec.at.length; i++) {
        const v = h.v[i];
        if (v == null) continue;
        if (lo[i] == null || v < lo[i]) lo[i] = v;
        if (hi[i] == null || v > hi[i]) hi[i] = v;
      }
    }
    series.push({ label: 'lowest host', stroke: 'transparent', points: { show: false }, value: num },
      { label: 'highest host', stroke: 'transparent', points: { show: false }, value: num });
    data.push(lo, hi);
    for (const h of spec.hosts.filter((x) => x.outlier)) {
      const stroke = h.below ? worse : accent;
      series.push({ label: h.name, stroke, width: 2, spanGaps: true, value: num,
        points: { show: dots, size: 7, fill: stroke } });
      data.push(h.v);
    }
    series.push({ label: 'median', stroke: cssColor('--text', '#1b1f27'), width: 3, spanGaps: true, value: num,
      points: { show: dots, size: 9 } });
    data.push(spec.median);
    z.u = timeSeries(fig, box, z, {
      height: 320, unit: spec.unit, time: true, legend: false, xLabel: 'time (local, ' + zoneName() + ')',
      series, bands: [{ series: [1, 2], fill: 'rgba(120, 130, 150, 0.25)' }],
      under: (uu) => {
        const c = uu.ctx;
        const dpr = window.devicePixelRatio || 1;
        const b = uu.bbox;
        c.save();
        c.beginPath();
        c.rect(b.left, b.top, b.width, b.height);
        c.clip();
        c.strokeStyle = grey;
        c.fillStyle = grey;
        c.lineWidth = dpr;
        c.beginPath();
        const xs = spec.at.map((t) => uu.valToPos(t, 'x', true));
        for (const h of crowd) {
          let on = false;
          for (let i = 0; i < xs.length; i++) {
            if (h.v[i] == null) continue;
            const y = uu.valToPos(h.v[i], 'y', true);
            if (on) c.lineTo(xs[i], y);
            else c.moveTo(xs[i], y);
            on = true;
          }
        }
        c.stroke();
        if (dots) {
          for (const h of crowd) {
            for (let i = 0; i < xs.length; i++) {
              if (h.v[i] == null) continue;
              c.beginPath();
              c.arc(xs[i], uu.valToPos(h.v[i], 'y', true), 2.5 * dpr, 0, 2 * Math.PI);
              c.fill();
            }
          }
        }
        c.restore();
      },
      draw: (uu) => {
        const c = uu.ctx;
        const dpr = window.devicePixelRatio || 1;
        c.save();
        for (const cp of spec.changePoints || []) {
          const x = Math.round(uu.valToPos(cp.at, 'x', true));
          if (x < uu.bbox.left || x > uu.bbox.left + uu.bbox.width) continue;
          c.fillStyle = cp.status === 'new' ? worse : muted;
          c.fillRect(x - dpr, uu.bbox.top, 2 * dpr, 8 * dpr);
        }
        c.restore();
      },
    }, null, data);
    if (z.u) box.dataset.series = String(spec.hosts.length);
    return z.u;
  };
  return fig;
}

/** A compact strip of ratios: every host a dot at its ratio to the fleet
 *  median on one axis (1-2-5 ticks), the 1.0 line, the ±margin band,
 *  outliers larger and named (the first six). Hundreds of hosts fit in
 *  one row. rows: [{name, ratio, outlier, cls (the dot's class)}]. The
 *  ticks and the band are on the svg as data-xticks and data-band. */
export function ratioStrip(title, rows, margin) {
  const W = 640;
  const left = 12;
  const right = 12;
  const H = 70;
  const y0 = 18;
  const vals = [1 - margin / 100, 1 + margin / 100];
  for (const r of rows) if (typeof r.ratio === 'number' && isFinite(r.ratio)) vals.push(r.ratio);
  let lo = Math.min(...vals);
  let hi = Math.max(...vals);
  const pad = (hi - lo) * 0.05 || 0.01;
  lo -= pad;
  hi += pad;
  const x = (v) => left + ((v - lo) / (hi - lo)) * (W - left - right);
  const kids = [svg('title', {}, title + ': each host\'s ratio to the fleet median')];
  kids.push(svg('rect', { class: 'margin-band', x: x(1 - margin / 100), y: y0 - 10, width: Math.max(1, x(1 + margin / 100) - x(1 - margin / 100)), height: 24 }));
  kids.push(svg('line', { class: 'one-line', x1: x(1), x2: x(1), y1: y0 - 12, y2: y0 + 16 }));
  kids.push(svg('line', { class: 'axis', x1: left, x2: W - right, y1: y0 + 18, y2: y0 + 18 }));
  // The first and last tick labels anchored inside the strip.
  const tv = ticks(lo, hi, 5);
  tv.forEach((v, i) => {
    kids.push(svg('text', { class: 'tick', x: x(v), y: y0 + 32, 'text-anchor': i === 0 ? 'start' : i === tv.length - 1 ? 'end' : 'middle' }, fmt.num(v)));
  });
  let labelled = 0;
  for (const r of rows) {
    if (typeof r.ratio !== 'number') continue;
    kids.push(svg('circle', { class: 'dot ' + (r.cls || ''), cx: x(r.ratio), cy: y0 + 2, r: r.outlier ? 4 : 2.5, 'data-host': r.name },
      svg('title', {}, r.name + ': ' + fmt.num(r.ratio))));
    if (r.outlier && labelled < 6) {
      kids.push(svg('text', { class: 'label', x: x(r.ratio), y: y0 + 46 + (labelled % 2) * 12, 'text-anchor': 'middle' }, r.name));
      labelled++;
    }
  }
  return svg('svg', { class: 'host-strip', 'data-xticks': tv.join(','), 'data-band': vals[0] + ',' + vals[1], viewBox: '0 0 ' + W + ' ' + (H + 12), role: 'img', preserveAspectRatio: 'xMinYMin meet',
    'aria-label': title + ': ' + rows.length + ' hosts\' ratios to the median, band ±' + margin + ' %' }, kids);
}

/** The median of a list of numbers (0 for none). */
function median(xs) {
  if (xs.length === 0) return 0;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** A dot-and-whisker chart of one metric: per item (a configuration, or
 *  what per names) its centre and 95 % interval on a shared axis. items:
 *  [{label, center, lo, hi, cls}] (lo/hi null: the dot alone). Values are
 *  the API's. The axis spans the centres and the intervals it can draw on
 *  1-2-5 ticks, never below 0 when no centre is, labelled with unit (or
 *  opts.axisLabel). An interval too wide to draw — wider than ten times
 *  the median width, or (opts.ratio) reaching 0 or below — does not set
 *  the axis: it is cut at the axis' end with an arrow and says "interval
 *  too wide to draw"; any other end beyond the axis is cut with an arrow
 *  too. opts: {ratio (the values are ratios), ref (a value drawn as a
 *  line: 1 on a ratio chart), band [lo, hi] (drawn as a shaded band: the
 *  ±margin), axisLabel}. */
export function intervalChart(title, unit, items, per = 'configuration', opts = {}) {
  const rowH = 26;
  const left = 170;
  const width = 640;
  const top = 8;
  const axisH = 44;
  const height = top + items.length * rowH + axisH;
  const has = (it) => typeof it.lo === 'number' && typeof it.hi === 'number' && isFinite(it.lo) && isFinite(it.hi);
  const mid = median(items.filter(has).map((it) => it.hi - it.lo));
  const tooWide = (it) => has(it) && ((opts.ratio && it.lo <= 0) || (mid > 0 && it.hi - it.lo > 10 * mid));
  const centres = items.map((it) => it.center).filter((v) => typeof v === 'number' && isFinite(v));
  const vals = [...centres];
  for (const it of items) if (has(it) && !tooWide(it)) vals.push(it.lo, it.hi);
  for (const v of [opts.ref, ...(opts.band || [])]) if (typeof v === 'number' && isFinite(v)) vals.push(v);
  const nonNeg = centres.every((v) => v >= 0);
  let dmin = Math.min(...vals);
  if (nonNeg && dmin < 0) dmin = 0;
  const [lo, hi] = valueRange(dmin, Math.max(...vals), 5);
  const tickVals = ticks(lo, hi, 5);
  const tickText = tickVals.map((v) => fmt.num(v));
  // Room on the right for half the last tick label: none is clipped.
  const right = Math.max(16, Math.ceil(textWidth(tickText.slice(-1)) / 2) + 4);
  const x = (v) => left + ((v - lo) / (hi - lo)) * (width - left - right);
  const clip = (v) => Math.max(lo, Math.min(hi, v));
  const kids = [svg('title', {}, title + ': centre and 95 % interval per ' + per)];
  const axisY = top + items.length * rowH + 4;
  if (opts.band && opts.band.length === 2) {
    const b0 = x(clip(opts.band[0]));
    const b1 = x(clip(opts.band[1]));
    kids.push(svg('rect', { class: 'margin-band', x: b0, y: top, width: Math.max(0, b1 - b0), height: axisY - top },
      svg('title', {}, 'margin: ' + fmt.num(opts.band[0]) + ' to ' + fmt.num(opts.band[1]))));
  }
  kids.push(svg('line', { class: 'axis', x1: left, x2: width - right, y1: axisY, y2: axisY }));
  tickVals.forEach((v, i) => {
    kids.push(svg('line', { class: 'grid', x1: x(v), x2: x(v), y1: top, y2: axisY }));
    kids.push(svg('text', { class: 'tick', x: x(v), y: axisY + 16, 'text-anchor': 'middle' }, tickText[i]));
  });
  if (typeof opts.ref === 'number' && opts.ref >= lo && opts.ref <= hi) {
    kids.push(svg('line', { class: 'ref-line', x1: x(opts.ref), x2: x(opts.ref), y1: top, y2: axisY },
      svg('title', {}, fmt.num(opts.ref))));
  }
  const axisLabel = opts.axisLabel || unit || 'no unit given';
  kids.push(svg('text', { class: 'axis-label', x: left + (width - left - right) / 2, y: axisY + 34, 'text-anchor': 'middle' }, axisLabel));
  let wide = 0;
  items.forEach((it, i) => {
    const y = top + i * rowH + rowH / 2;
    const label = it.label.length > 26 ? it.label.slice(0, 25) + '…' : it.label;
    kids.push(svg('text', { class: 'label', x: left - 8, y: y + 4, 'text-anchor': 'end' }, svg('title', {}, it.label), label));
    const g = svg('g', { class: 'mark ' + (it.cls || '') });
    if (has(it)) {
      const a = clip(it.lo);
      const b = clip(it.hi);
      g.append(svg('line', { class: 'whisker', x1: x(a), x2: x(b), y1: y, y2: y }));
      // A cap at a bound drawn, an arrow where the interval goes on.
      for (const [v, end, dir] of [[it.lo, a, -1], [it.hi, b, 1]]) {
        g.append(v === end ? svg('line', { class: 'whisker', x1: x(end), x2: x(end), y1: y - 6, y2: y + 6 })
          : svg('path', { class: 'clipped', d: 'M' + (x(end) - dir * 7) + ' ' + (y - 5) + ' L' + x(end) + ' ' + y + ' L' + (x(end) - dir * 7) + ' ' + (y + 5) }));
      }
      if (tooWide(it)) {
        wide++;
        g.classList.add('too-wide');
        g.append(svg('text', { class: 'too-wide-note', x: x(typeof it.center === 'number' ? clip(it.center) : a) + 8, y: y - 6 },
          'interval too wide to draw'),
        svg('title', {}, it.label + ': interval [' + fmt.num(it.lo) + ', ' + fmt.num(it.hi) + '] too wide to draw'));
      }
    }
    if (typeof it.center === 'number' && isFinite(it.center)) g.append(svg('circle', { class: 'dot', cx: x(clip(it.center)), cy: y, r: 5 }));
    kids.push(g);
  });
  const fig = el('figure', { class: 'interval-chart' },
    el('figcaption', {}, title, unit ? el('span', { class: 'unit' }, ' (' + unit + ')') : null),
    svg('svg', { viewBox: '0 0 ' + width + ' ' + height, role: 'img', 'aria-label': title + ' per ' + per + ' with 95 % intervals', preserveAspectRatio: 'xMinYMin meet' }, kids));
  fig.dataset.xticks = tickVals.join(',');
  fig.dataset.xmin = String(lo);
  fig.dataset.xmax = String(hi);
  fig.dataset.xlabel = axisLabel;
  fig.dataset.tooWide = String(wide);
  if (typeof opts.ref === 'number') fig.dataset.ref = String(opts.ref);
  if (opts.band) fig.dataset.band = opts.band.join(',');
  return fig;
}
