// charts.js — the page's charts. Time series (a job's samples, a metric's
// history) are drawn by uPlot (web/vendor, loaded before the modules as the
// global uPlot) on a canvas: 100,000 points draw in milliseconds. The
// interval charts of a report are small SVGs, one row per configuration.

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

/** A time series chart of one metric. spec: {label, unit, t (seconds,
 *  Float64Array), v (Float64Array), min, max (per-bucket bounds, or null
 *  when the values are the samples themselves), n (the samples they stand
 *  for), downsampled, points (how many the page asked for), xRange [min,
 *  max], sync (cursor group key), height, onZoom(range | null) (drag to
 *  zoom, double-click or the button to zoom out)}. Returns a <figure>; the
 *  chart is drawn once the figure is in the document (call .draw()), and
 *  .update(d, xRange, zoomed) swaps its data ({t, v, min, max, n,
 *  downsampled}). */
export function seriesChart(spec) {
  const box = el('div', { class: 'chart-box' });
  const count = el('span', { class: 'muted' }, sampleCount(spec));
  const reset = spec.onZoom ? el('button', { type: 'button', class: 'small', hidden: true }, 'Whole run') : null;
  const fig = el('figure', { class: 'chart', 'aria-label': spec.label + ': ' + (spec.n ?? spec.t.length) + ' samples' },
    el('figcaption', {}, spec.label, spec.unit ? el('span', { class: 'unit' }, ' (' + spec.unit + ')') : null, count, ' ', reset), box);
  const mark = (d) => {
    fig.dataset.points = String(d.t.length);
    fig.dataset.samples = String(d.n ?? d.t.length);
    if (spec.points) fig.dataset.requested = String(spec.points);
    fig.dataset.downsampled = d.downsampled ? '1' : '0';
    // No bucket bounds in the legend when the values are the samples.
    box.classList.toggle('samples-whole', !d.downsampled);
  };
  // min/max as series of nulls when the values are the samples: no band.
  const columns = (d) => {
    const none = d.min && d.max ? null : new Array(d.t.length).fill(null);
    return [d.t, d.v, d.min || none, d.max || none];
  };
  mark(spec);
  if (reset) reset.addEventListener('click', () => spec.onZoom(null));
  let u = null;
  let xRange = spec.xRange;
  fig.update = (d, range, zoomed) => {
    xRange = range;
    mark(d);
    count.textContent = sampleCount(d);
    if (reset) reset.hidden = !zoomed;
    if (u) u.setData(columns(d));
  };
  fig.draw = () => {
    const uPlot = lib();
    if (!uPlot) {
      box.append(el('p', { class: 'state state-error' }, 'The chart library did not load.'));
      return null;
    }
    const height = spec.height || 200;
    const stroke = cssColor(spec.color || '--accent', '#1f5fbf');
    const edge = cssColor('--line', '#ccc');
    const num = (uu, x) => (x == null ? '-' : fmt.num(x));
    const opts = {
      width: Math.max(200, Math.floor(box.clientWidth) || 600),
      height,
      legend: { show: true, live: true },
      cursor: {
        ...(spec.sync ? { sync: { key: spec.sync, setSeries: false } } : {}),
        drag: { x: Boolean(spec.onZoom), y: false, setScale: false },
        bind: spec.onZoom ? { dblclick: () => () => { spec.onZoom(null); return null; } } : {},
      },
      scales: { x: { time: false, range: (uu, lo, hi) => xRange || [lo, hi] } },
      axes: [
        { label: 'seconds since the start', stroke: cssColor('--muted', '#555'), grid: { stroke: cssColor('--line', '#ddd') } },
        { stroke: cssColor('--muted', '#555'), grid: { stroke: cssColor('--line', '#ddd') },
          values: (uu, ticks) => ticks.map((x) => fmt.num(x)), size: 60 },
      ],
      series: [
        { label: 't (s)', value: num },
        { label: spec.label, stroke, width: 1, points: { show: spec.t.length <= 300 }, value: num },
        { label: 'bucket min', stroke: edge, width: 1, points: { show: false }, value: num },
        { label: 'bucket max', stroke: edge, width: 1, points: { show: false }, value: num },
      ],
      bands: [{ series: [3, 2], fill: cssColor('--band', 'rgba(31, 95, 191, 0.15)') }],
      hooks: {
        // A drag selects a range: ask for it (the chart does not zoom on
        // the coarse data it has).
        setSelect: [(uu) => {
          if (!spec.onZoom || uu.select.width < 2) return;
          const lo = uu.posToVal(uu.select.left, 'x');
          const hi = uu.posToVal(uu.select.left + uu.select.width, 'x');
          uu.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
          if (hi > lo) spec.onZoom([lo, hi]);
        }],
      },
    };
    u = new uPlot(opts, columns(spec), box);
    followWidth(u, box, height);
    box.dataset.drawn = '1';
    return u;
  };
  return fig;
}

/** A history chart: values over months, drag to zoom (the range goes to
 *  onZoom), double-click or the reset button to zoom out, change points
 *  as vertical lines. spec: {label, unit, at (epoch seconds), v, min?, max?
 *  (per-point bucket bounds), changePoints [{at (epoch s), status}],
 *  range [from, to] or null, onZoom(from, to | null)}. */
export function historyChart(spec) {
  const box = el('div', { class: 'chart-box' });
  const reset = el('button', { type: 'button', class: 'small' }, 'Reset zoom');
  const fig = el('figure', { class: 'chart history-chart',
    'aria-label': spec.label + ': history of ' + spec.at.length + ' points, drag to zoom' },
  el('figcaption', {}, spec.label, spec.unit ? el('span', { class: 'unit' }, ' (' + spec.unit + ')') : null,
    el('span', { class: 'muted' }, ' · ' + spec.at.length + ' points · drag across the chart to zoom '), reset),
  box);
  fig.draw = () => {
    const uPlot = lib();
    if (!uPlot) {
      box.append(el('p', { class: 'state state-error' }, 'The chart library did not load.'));
      return null;
    }
    const height = 280;
    const accent = cssColor('--accent', '#1f5fbf');
    const cpNew = cssColor('--failed', '#c62828');
    const cpAck = cssColor('--muted', '#5b6475');
    const series = [
      { label: 'time' },
      { label: spec.label, stroke: accent, width: 1, points: { show: true, size: 4, fill: accent },
        value: (u, x) => (x == null ? '-' : fmt.num(x)) },
    ];
    const data = [spec.at, spec.v];
    if (spec.min && spec.max) {
      const band = cssColor('--line', '#ccc');
      series.push({ label: 'bucket min', stroke: band, width: 1, value: (u, x) => (x == null ? '-' : fmt.num(x)) });
      series.push({ label: 'bucket max', stroke: band, width: 1, value: (u, x) => (x == null ? '-' : fmt.num(x)) });
      data.push(spec.min, spec.max);
    }
    let zooming = false;
    let ready = false; // scales set while the chart is made are not the user's zoom
    const opts = {
      width: Math.max(200, Math.floor(box.clientWidth) || 600),
      height,
      scales: { x: { time: true } },
      cursor: { drag: { x: true, y: false, setScale: true } },
      axes: [
        { stroke: cssColor('--muted', '#555'), grid: { stroke: cssColor('--line', '#ddd') } },
        { stroke: cssColor('--muted', '#555'), grid: { stroke: cssColor('--line', '#ddd') },
          values: (u, ticks) => ticks.map((x) => fmt.num(x)), size: 60 },
      ],
      series,
      hooks: {
        draw: [(u) => {
          const ctx = u.ctx;
          ctx.save();
          ctx.lineWidth = 2 * (window.devicePixelRatio || 1);
          for (const cp of spec.changePoints || []) {
            const x = Math.round(u.valToPos(cp.at, 'x', true));
            if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) continue;
            ctx.strokeStyle = cp.status === 'new' ? cpNew : cpAck;
            ctx.setLineDash(cp.status === 'new' ? [] : [6, 4]);
            ctx.beginPath();
            ctx.moveTo(x, u.bbox.top);
            ctx.lineTo(x, u.bbox.top + u.bbox.height);
            ctx.stroke();
          }
          ctx.restore();
        }],
        setScale: [(u, key) => {
          if (key !== 'x' || zooming || !ready || !spec.onZoom) return;
          const full = u.data[0].length && u.scales.x.min <= u.data[0][0] && u.scales.x.max >= u.data[0][u.data[0].length - 1];
          spec.onZoom(full ? null : [Math.floor(u.scales.x.min), Math.ceil(u.scales.x.max)]);
        }],
      },
    };
    const u = new uPlot(opts, data, box);
    if (spec.range) {
      zooming = true;
      u.setScale('x', { min: spec.range[0], max: spec.range[1] });
      zooming = false;
    }
    ready = true;
    reset.addEventListener('click', () => {
      const xs = u.data[0];
      if (xs.length) u.setScale('x', { min: xs[0], max: xs[xs.length - 1] });
    });
    followWidth(u, box, height);
    box.dataset.drawn = '1';
    return u;
  };
  return fig;
}

/** A dot-and-whisker chart of one metric: per item (a configuration, or
 *  what per names) its centre and 95 % interval on a shared axis. items:
 *  [{label, center, lo, hi, cls}] (lo/hi null: the dot alone). Values are
 *  the API's; the axis spans them. */
export function intervalChart(title, unit, items, per = 'configuration') {
  const rowH = 26;
  const left = 170;
  const right = 16;
  const width = 640;
  const top = 8;
  const axisH = 28;
  const height = top + items.length * rowH + axisH;
  const vals = [];
  for (const it of items) for (const v of [it.center, it.lo, it.hi]) if (typeof v === 'number' && isFinite(v)) vals.push(v);
  let lo = Math.min(...vals);
  let hi = Math.max(...vals);
  if (!(hi > lo)) {
    const pad = Math.abs(lo) * 0.05 || 1;
    lo -= pad;
    hi += pad;
  }
  const pad = (hi - lo) * 0.06;
  lo -= pad;
  hi += pad;
  const x = (v) => left + ((v - lo) / (hi - lo)) * (width - left - right);
  const kids = [svg('title', {}, title + ': centre and 95 % interval per ' + per)];
  // Axis: five ticks.
  const axisY = top + items.length * rowH + 4;
  kids.push(svg('line', { class: 'axis', x1: left, x2: width - right, y1: axisY, y2: axisY }));
  for (let i = 0; i <= 4; i++) {
    const v = lo + ((hi - lo) * i) / 4;
    kids.push(svg('line', { class: 'grid', x1: x(v), x2: x(v), y1: top, y2: axisY }));
    kids.push(svg('text', { class: 'tick', x: x(v), y: axisY + 16, 'text-anchor': 'middle' }, fmt.num(v)));
  }
  items.forEach((it, i) => {
    const y = top + i * rowH + rowH / 2;
    const label = it.label.length > 26 ? it.label.slice(0, 25) + '…' : it.label;
    kids.push(svg('text', { class: 'label', x: left - 8, y: y + 4, 'text-anchor': 'end' }, svg('title', {}, it.label), label));
    const g = svg('g', { class: 'mark ' + (it.cls || '') });
    if (typeof it.lo === 'number' && typeof it.hi === 'number') {
      g.append(svg('line', { class: 'whisker', x1: x(it.lo), x2: x(it.hi), y1: y, y2: y }),
        svg('line', { class: 'whisker', x1: x(it.lo), x2: x(it.lo), y1: y - 6, y2: y + 6 }),
        svg('line', { class: 'whisker', x1: x(it.hi), x2: x(it.hi), y1: y - 6, y2: y + 6 }));
    }
    if (typeof it.center === 'number') g.append(svg('circle', { class: 'dot', cx: x(it.center), cy: y, r: 5 }));
    kids.push(g);
  });
  return el('figure', { class: 'interval-chart' },
    el('figcaption', {}, title, unit ? el('span', { class: 'unit' }, ' (' + unit + ')') : null),
    svg('svg', { viewBox: '0 0 ' + width + ' ' + height, role: 'img', 'aria-label': title + ' per ' + per + ' with 95 % intervals', preserveAspectRatio: 'xMinYMin meet' }, kids));
}
