// The report's charts, drawn by uPlot: throughput and latency over time, latency and
// transfer-size histograms. Each chart's box carries data-points (how many data points
// it holds) so a reader, or a test, can tell an empty chart from a drawn one.
import uPlot from 'uplot';
import { h } from './dom';
import { bytes, colour, duration, durations } from './format';
import type { LatencyHist, SizeHist, TimeSeries } from './types';

const charts = new Set<{ u: uPlot; box: HTMLElement }>();
let resizeTimer = 0;
window.addEventListener('resize', () => {
  clearTimeout(resizeTimer);
  resizeTimer = window.setTimeout(() => {
    for (const c of charts) {
      if (!c.box.isConnected) { charts.delete(c); continue; }
      const w = chartWidth(c.box);
      if (w > 0 && Math.abs(w - c.u.width) > 4) c.u.setSize({ width: w, height: c.u.height });
    }
  }, 150);
});

function chartWidth(box: HTMLElement): number {
  // The box's own width (a grid cell), less its padding and border.
  return Math.max(300, Math.min(box.clientWidth - 18, 1400));
}

/** A titled chart box (with optional controls above the plot): `plot` receives its
 * width and returns the uPlot it drew. */
export function chartBox(parent: HTMLElement, title: string, points: number, note: string, plot: (target: HTMLElement, width: number) => uPlot, controls?: HTMLElement): { box: HTMLElement; u: uPlot } {
  const target = h('div', { class: 'plot' });
  const box = h('div', { class: 'chart', 'data-points': points, 'data-title': title },
    h('h4', {}, title), controls ?? null, target, note ? h('p', { class: 'note' }, note) : null);
  parent.append(box);
  const u = plot(target, chartWidth(box));
  charts.add({ u, box });
  // The axes' labels and tick labels as last drawn (the canvas holds only pixels), for a
  // reader's script and the browser tests; uPlot keeps the drawn tick labels in _values.
  (box as HTMLElement & { naslabAxes?: () => { label: string; ticks: string[] }[] }).naslabAxes = () =>
    u.axes.map((a) => ({ label: String(a.label ?? ''), ticks: ((a as { _values?: unknown[] })._values ?? []).map(String) }));
  // For the browser tests: a value's position on the canvas (device px), the plot's box on
  // it, and for each axis the least room (CSS px) any of its tick labels leaves to the
  // canvas's edge (negative: cut off).
  (box as HTMLElement & { naslabPos?: (v: number, scale: string) => number }).naslabPos = (v, scale) => u.valToPos(v, scale, true);
  (box as HTMLElement & { naslabPlot?: () => uPlot.BBox }).naslabPlot = () => ({ ...u.bbox });
  (box as HTMLElement & { naslabTickRoom?: () => number[] }).naslabTickRoom = () => u.axes.map((a) => {
    const ax = a as { _splits?: number[]; _values?: unknown[]; font?: [string, number]; side?: number; scale?: string };
    const splits = ax._splits ?? [];
    const ctx = u.ctx;
    ctx.save();
    if (ax.font) ctx.font = ax.font[0];
    const dpr = devicePixelRatio || 1;
    let room = Infinity;
    splits.forEach((v, k) => {
      const text = String(ax._values?.[k] ?? '');
      if (!text) return;
      const horizontal = (ax.side ?? 2) % 2 === 0;
      const pos = u.valToPos(v, ax.scale ?? (horizontal ? 'x' : 'y'));
      if (horizontal) {
        const half = ctx.measureText(text).width / dpr / 2;
        const at = u.bbox.left / dpr + pos;
        room = Math.min(room, at - half, u.width - (at + half));
      } else {
        const half = (ax.font?.[1] ?? 12) / dpr / 2;
        const at = u.bbox.top / dpr + pos;
        room = Math.min(room, at - half, u.height - (at + half));
      }
    });
    ctx.restore();
    return room;
  });
  return { box, u };
}

/** Sets how many data points a chart box now holds. */
export function setPoints(box: HTMLElement, points: number): void {
  box.dataset.points = String(points);
}

/** The time unit that suits a phase `totalNs` long: ns per unit and its name. */
export function timeUnit(totalNs: number): { ns: number; name: string } {
  if (totalNs < 2e6) return { ns: 1e3, name: 'µs' };
  if (totalNs < 2e9) return { ns: 1e6, name: 'ms' };
  return { ns: 1e9, name: 's' };
}

const timeAxis = (unit: { name: string }): uPlot.Axis => ({ label: `${unit.name} into the measured phase`, size: 40 });

function series(label: string, i: number, extra: Partial<uPlot.Series> = {}): uPlot.Series {
  return { label, stroke: colour(i), width: 1.5, points: { show: false }, ...extra };
}

/** Merges `k` neighbouring bins of `v`. */
function merge(v: number[], k: number, f: (a: number, b: number) => number): number[] {
  const out: number[] = [];
  for (let i = 0; i < v.length; i += k) {
    let acc = v[i];
    for (let j = i + 1; j < Math.min(i + k, v.length); j++) acc = f(acc, v[j]);
    out.push(acc);
  }
  return out;
}

const add = (a: number, b: number) => a + b;

/** The periods a reader may choose, in bins (the report offers only whole numbers of
 * bins whose length is 1, 2 or 5 × 10^k ns). */
function periods(s: TimeSeries): number[] {
  return s.periods?.length ? s.periods : [1];
}

/** The automatic period: the finest that gives at most 100 periods, so one busy bin
 * among idle ones does not make the spread meaningless (std dev 594 MB/s on a mean of 239). */
function defaultPeriod(s: TimeSeries): number {
  return periods(s).find((k) => Math.ceil(s.ops.length / k) <= 100) ?? periods(s).at(-1)!;
}

/** A period selector: "auto" (the default period, named) first, then every round period. */
function periodSelect(s: TimeSeries): { select: HTMLSelectElement; k: () => number } {
  const auto = defaultPeriod(s);
  const select = h('select', { 'aria-label': 'period' },
    h('option', { value: 'auto', selected: true }, `auto: period ${duration(auto * s.bin_ns)}`),
    ...periods(s).map((k) => h('option', { value: k }, `period ${duration(k * s.bin_ns)}`))) as HTMLSelectElement;
  select.value = 'auto';
  return { select, k: () => (select.value === 'auto' ? auto : Number(select.value)) };
}

function meanSd(v: number[]): [number, number] {
  if (v.length === 0) return [0, 0];
  const m = v.reduce(add, 0) / v.length;
  const sd = Math.sqrt(v.reduce((a, x) => a + (x - m) * (x - m), 0) / v.length);
  return [m, sd];
}

/** Throughput over time (total, read, write MB/s), with a period selector and its mean and spread. */
export function throughputChart(parent: HTMLElement, s: TimeSeries): void {
  const unit = timeUnit(s.bin_ns * s.ops.length);
  const { select, k: chosen } = periodSelect(s);
  const k0 = chosen();
  const stats = h('span', { class: 'stats' });
  const controls = h('div', { class: 'controls' }, select, stats);
  const build = (k: number): uPlot.AlignedData => {
    const secs = (k * s.bin_ns) / 1e9;
    const r = merge(s.read_bytes, k, add).map((b) => b / secs / 1e6);
    const w = merge(s.write_bytes, k, add).map((b) => b / secs / 1e6);
    const x = r.map((_, i) => ((i + 0.5) * k * s.bin_ns) / unit.ns);
    return [x, r.map((v, i) => v + w[i]), r, w];
  };
  const describe = (d: uPlot.AlignedData, k: number) => {
    const total = d[1] as number[];
    const [m, sd] = meanSd(total);
    stats.textContent = `total over ${total.length} periods of ${duration(k * s.bin_ns)}: mean ${m.toFixed(2)} MB/s, standard deviation ${sd.toFixed(2)} MB/s, peak ${Math.max(...total).toFixed(2)} MB/s`;
  };
  const first = build(k0);
  describe(first, k0);
  // The total is drawn first, dashed, so a read-only or write-only line on top of it stays visible.
  const { box, u } = chartBox(parent, 'Throughput over time (MB/s)', s.ops.filter((n) => n > 0).length, 'Bytes are counted when their op completes; 1 MB = 10^6 bytes. The total is dashed, under the read and write lines.', (target, width) =>
    new uPlot({
      width, height: 260,
      scales: { x: { time: false } },
      axes: [timeAxis(unit), { label: 'MB/s', size: 60 }],
      series: [{ label: unit.name, value: (_u, v) => (v == null ? '-' : v.toPrecision(4)) }, series('total MB/s', 2, { width: 2.5, dash: [6, 4] }), series('read MB/s', 0), series('write MB/s', 1)],
    }, first, target), controls);
  exposeDrawn(box, u, s, chosen);
  select.addEventListener('change', () => {
    const k = chosen();
    const d = build(k);
    describe(d, k);
    box.dataset.period = String(k);
    u.setData(d);
  });
}

/** Ops per second over time (by completion), with its own period selector. */
export function iopsChart(parent: HTMLElement, s: TimeSeries): void {
  const unit = timeUnit(s.bin_ns * s.ops.length);
  const { select, k: chosen } = periodSelect(s);
  const stats = h('span', { class: 'stats' });
  const build = (k: number): uPlot.AlignedData => {
    const secs = (k * s.bin_ns) / 1e9;
    const v = merge(s.ops, k, add).map((n) => n / secs);
    const [m, sd] = meanSd(v);
    stats.textContent = `over ${v.length} periods of ${duration(k * s.bin_ns)}: mean ${m.toFixed(0)} ops/s, standard deviation ${sd.toFixed(0)} ops/s, peak ${Math.max(...v).toFixed(0)} ops/s`;
    return [v.map((_, i) => ((i + 0.5) * k * s.bin_ns) / unit.ns), v];
  };
  const { box, u } = chartBox(parent, 'IOPS over time (ops/s)', s.ops.filter((n) => n > 0).length, 'Every op (not only reads and writes), counted when it completes.', (target, width) =>
    new uPlot({
      width, height: 220,
      scales: { x: { time: false } },
      axes: [timeAxis(unit), { label: 'ops/s', size: 70 }],
      series: [{ label: unit.name, value: (_u, v) => (v == null ? '-' : v.toPrecision(4)) }, series('ops/s', 3)],
    }, build(chosen()), target), h('div', { class: 'controls' }, select, stats));
  exposeDrawn(box, u, s, chosen);
  select.addEventListener('change', () => {
    box.dataset.period = String(chosen());
    u.setData(build(chosen()));
  });
}

/** Latency over time, on a log scale so tails stand out: per period the slowest op, the
 * 99th percentile, the median and the mean, each from the ops completing in that period
 * (the percentiles worked out by the report for every period it offers: exact, or from
 * logarithmic buckets for an iteration of very many ops). */
export function latencyTimeChart(parent: HTMLElement, s: TimeSeries): void {
  const unit = timeUnit(s.bin_ns * s.ops.length);
  const { select, k: chosen } = periodSelect(s);
  const pct = (k: number) => s.latency_percentiles?.find((p) => p.bins === k);
  // Latencies in µs; a log scale has no zero, so a 0 ns latency is drawn at 1 ns.
  const toUs = (v: number | null | undefined) => (v == null ? null : Math.max(v, 1) / 1e3);
  const build = (k: number): uPlot.AlignedData => {
    const ops = merge(s.ops, k, add);
    const mx = merge(s.latency_max_ns, k, Math.max);
    const sum = merge(s.latency_sum_ns, k, add);
    const p = pct(k);
    const x = ops.map((_, i) => ((i + 0.5) * k * s.bin_ns) / unit.ns);
    const has = (i: number) => ops[i] > 0;
    return [
      x,
      mx.map((v, i) => (has(i) ? toUs(v) : null)),
      ops.map((_, i) => (has(i) ? toUs(p?.p99_ns[i]) : null)),
      ops.map((_, i) => (has(i) ? toUs(p?.p50_ns[i]) : null)),
      sum.map((v, i) => (has(i) ? toUs(v / ops[i]) : null)),
    ] as uPlot.AlignedData;
  };
  const note = !s.latency_percentiles
    ? 'Per period, by completion time: the slowest op and the mean (the percentiles were not worked out for this run; see the notes above).'
    : s.percentiles_from_buckets
      ? 'Per period, by completion time: the slowest op, the 99th percentile and the median (from logarithmic buckets, within 1.2 %, as this iteration has too many ops to keep every latency; see the notes above), and the mean.'
      : 'Per period, by completion time: the slowest op, the 99th percentile and the median (exact: nearest rank among the period\'s ops), and the mean.';
  const { box, u } = chartBox(parent, 'Latency over time (µs)', s.ops.filter((n) => n > 0).length, note, (target, width) =>
    new uPlot({
      width, height: 240,
      scales: { x: { time: false }, y: { distr: 3 } },
      axes: [timeAxis(unit), { label: 'µs (log scale)', size: 60 }],
      series: [
        { label: unit.name, value: (_u, v) => (v == null ? '-' : v.toPrecision(4)) },
        series('max µs', 1, { spanGaps: false, points: { show: true, size: 3 } }),
        series('p99 µs', 3, { spanGaps: false }),
        series('p50 µs', 2, { spanGaps: false }),
        series('mean µs', 0, { spanGaps: false, dash: [4, 3] }),
      ],
    }, build(chosen()), target), h('div', { class: 'controls' }, select));
  exposeDrawn(box, u, s, chosen);
  select.addEventListener('change', () => {
    box.dataset.period = String(chosen());
    u.setData(build(chosen()));
  });
}

/** For a reader's script (and the browser tests): a time chart's period (in bins), the
 * number of bins, the bin width and the values drawn (x first, then each series). */
function exposeDrawn(box: HTMLElement, u: uPlot, s: TimeSeries, chosen: () => number): void {
  box.dataset.period = String(chosen());
  (box as HTMLElement & { naslabDrawn?: () => { period: number; bin_ns: number; bins: number; data: uPlot.AlignedData } }).naslabDrawn =
    () => ({ period: chosen(), bin_ns: s.bin_ns, bins: s.ops.length, data: u.data });
}

/** Lower bucket edges in µs of a latency histogram starting at `first`, `n` buckets, plus the end. */
function latencyEdges(perDecade: number, first: number, n: number): number[] {
  const x: number[] = [];
  for (let i = 0; i <= n; i++) x.push(Math.pow(10, (first + i) / perDecade) / 1e3);
  return x;
}

/** A latency histogram: ops per logarithmic latency bucket, one line per op type. */
export function latencyHistChart(parent: HTMLElement, hist: LatencyHist, title = 'Latency histogram', labelOf: (name: string) => string = (n) => n, meanSdNs?: [number, number], logY = false): HTMLElement {
  const n = hist.by_op[0]?.[1].length ?? 0;
  const x = latencyEdges(hist.per_decade, hist.first, n);
  const data: (number | null)[][] = [x];
  const ser: uPlot.Series[] = [{ label: 'µs ≥', value: (_u, v) => (v == null ? '-' : v < 10 ? v.toPrecision(2) : v.toFixed(0)) }];
  hist.by_op.forEach(([name, counts], i) => {
    const v = [...counts, counts[counts.length - 1] ?? 0];
    // A log scale has no zero: empty buckets are left out of the line.
    data.push(logY ? v.map((c) => (c > 0 ? c : null)) : v);
    ser.push(series(labelOf(name), i, { paths: uPlot.paths.stepped!({ align: 1 }), width: name === 'all' ? 2.5 : 1.5 }));
  });
  const points = hist.by_op.reduce((a, [, c]) => a + c.filter((v) => v > 0).length, 0);
  // The mean and mean ± one standard deviation of every op, as vertical lines (exact, from run.json).
  const marks = meanSdNs ? [meanSdNs[0] - meanSdNs[1], meanSdNs[0], meanSdNs[0] + meanSdNs[1]].map((v) => v / 1e3) : [];
  const stats = meanSdNs ? h('span', { class: 'stats', 'data-role': 'latency-mean' }, `all ops: mean ${durations(meanSdNs)[0]}, standard deviation ${durations(meanSdNs)[1]} (solid line: mean; dashed: mean ± 1 standard deviation)`) : null;
  const logBox = h('input', { type: 'checkbox', 'aria-label': 'log scale for ops', 'data-role': 'latency-logy', ...(logY ? { checked: true } : {}) }) as HTMLInputElement;
  const { box, u: plot } = chartBox(parent, title, points, `Ops per latency bucket; ${hist.per_decade} buckets per power of ten. Click a legend entry to hide a line; drag to zoom, double-click to reset.`, (target, width) =>
    new uPlot({
      width, height: 260,
      // Room on the right for the last latency tick's label, centred on the plot's edge
      // ("10,000,000" is about 60 px wide).
      padding: [null, 40, null, null],
      scales: { x: { time: false, distr: 3 }, y: logY ? { distr: 3 } : { range: (_u, _min, mx) => [0, Math.max(1, mx * 1.05)] } },
      axes: [{ label: 'latency, µs (log scale)', size: 40 }, { label: logY ? 'ops (log scale)' : 'ops', size: 60 }],
      series: ser,
      hooks: {
        draw: [(u) => {
          if (!marks.length) return;
          const ctx = u.ctx;
          const { top, height } = u.bbox;
          ctx.save();
          ctx.strokeStyle = '#444';
          ctx.lineWidth = Math.max(1, devicePixelRatio);
          marks.forEach((v, i) => {
            if (!(v > 0)) return;
            const x = u.valToPos(v, 'x', true);
            if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) return;
            ctx.setLineDash(i === 1 ? [] : [5 * devicePixelRatio, 4 * devicePixelRatio]);
            ctx.beginPath();
            ctx.moveTo(x, top);
            ctx.lineTo(x, top + height);
            ctx.stroke();
          });
          ctx.restore();
        }],
      },
    }, data as uPlot.AlignedData, target), h('div', { class: 'controls' }, h('label', {}, logBox, ' log scale for ops'), stats));
  box.dataset.logY = String(logY);
  logBox.addEventListener('change', () => {
    // The scale's kind is fixed when a chart is made: the chart is made again in place.
    const tmp = h('div', {});
    box.after(tmp);
    const fresh = latencyHistChart(tmp, hist, title, labelOf, meanSdNs, logBox.checked);
    tmp.replaceWith(fresh);
    plot.destroy();
    box.remove();
  });
  return box;
}

function sizeLabel(b: number): string {
  return b === 0 ? '0' : bytes(Math.pow(2, b - 1));
}

/** A transfer-size histogram: reads and writes per power-of-two size bucket. */
export function sizeHistChart(parent: HTMLElement, hist: SizeHist, title = 'Transfer-size histogram', labelOf: (name: string) => string = (n) => n): void {
  const n = hist.by_op[0]?.[1].length ?? 0;
  const x = Array.from({ length: n }, (_, i) => hist.first + i);
  const data: number[][] = [x];
  const m = hist.by_op.length;
  // Drawn as steps, a bucket's x is its left edge, half a bucket before its label.
  const bucketAt = (v: number) => (steps ? Math.round(v + 0.5) : v);
  const ser: uPlot.Series[] = [{ label: 'size ≥', value: (_u, v) => (v == null ? '-' : bucketAt(v) === 0 ? '0 B' : `${Math.pow(2, bucketAt(v) - 1)} B (${sizeLabel(bucketAt(v))})`) }];
  // Bars side by side only read well in pairs; more series (runs) are drawn as steps:
  // flat across each bucket's width (half a bucket either side of its label) and
  // vertical between buckets, never sloped, since no size lies between two buckets' counts.
  const steps = m > 2;
  if (steps) x.push(hist.first + n);
  hist.by_op.forEach(([name, counts], i) => {
    if (steps) {
      data.push([...counts, 0]);
      ser.push(series(labelOf(name), i, { paths: uPlot.paths.stepped!({ align: 1 }), points: { show: false } }));
      return;
    }
    data.push(counts);
    ser.push({
      label: labelOf(name), stroke: colour(i), fill: colour(i, 0.55), width: 1, points: { show: false },
      paths: uPlot.paths.bars!({ size: [0.4, 60], align: m === 1 ? 0 : i === 0 ? -1 : 1 }),
    });
  });
  if (steps) data[0] = x.map((b) => b - 0.5);
  const buckets = x.slice(0, n);
  const points = hist.by_op.reduce((a, [, c]) => a + c.filter((v) => v > 0).length, 0);
  const sizeBox = chartBox(parent, title, points, 'Ops per requested size; each bar covers sizes from a power of two (its label, in decimal units to 3 significant digits; pointing at it gives the exact bytes) up to twice that.', (target, width) =>
    new uPlot({
      width, height: 240,
      scales: { x: { time: false, range: (_u, lo, hi) => [lo - 0.7, hi + 0.7] }, y: { range: (_u, _min, mx) => [0, Math.max(1, mx * 1.08)] } },
      axes: [{ label: 'transfer size', size: 40, splits: (u) => {
        // One label per bucket when they fit, else every second, fourth ...
        const step = Math.max(1, Math.ceil((buckets.length * 48) / Math.max(1, u.bbox.width / devicePixelRatio)));
        return buckets.filter((b) => (b - buckets[0]) % step === 0);
      }, values: (_u, v) => v.map((b) => sizeLabel(b)) }, { label: 'ops', size: 60 }],
      series: ser,
    }, data as uPlot.AlignedData, target)).box;
  sizeBox.dataset.drawn = steps ? 'steps' : 'bars';
}

/** Several runs' throughput over time on one axis (the comparison page). */
export function overlayThroughput(parent: HTMLElement, runs: { label: string; s: TimeSeries | null; wallNs: number }[]): void {
  // Each run against its own measured phase: x is the percentage of that run's phase, so
  // a 138 ms run and an 18.6 s run both span the chart; each bin's MB/s uses its own width.
  const n = Math.max(1, ...runs.map((r) => r.s?.ops.length ?? 0));
  const x = Array.from({ length: n }, (_, i) => ((i + 0.5) / n) * 100);
  const data: (number | null)[][] = [x];
  const ser: uPlot.Series[] = [{ label: '% of phase', value: (_u, v) => (v == null ? '-' : `${v.toFixed(1)} %`) }];
  let points = 0;
  runs.forEach((r, i) => {
    const s = r.s;
    const v = x.map((pct) => {
      if (!s || s.ops.length === 0 || r.wallNs <= 0) return null;
      const j = Math.floor(((pct / 100) * r.wallNs) / s.bin_ns);
      if (j >= s.ops.length) return null;
      return (s.read_bytes[j] + s.write_bytes[j]) / (s.bin_ns / 1e9) / 1e6;
    });
    points += v.filter((y) => y !== null).length;
    data.push(v);
    ser.push(series(`${r.label} (${duration(r.wallNs)})`, i));
  });
  chartBox(parent, 'Throughput over time (MB/s, read + write), each run over its own measured phase', points,
    'x: percentage of each run\'s own measured phase (its length in the legend), so runs of different lengths are drawn over the same width', (target, width) =>
    new uPlot({ width, height: 240, scales: { x: { time: false } }, axes: [{ label: '% of each run\'s measured phase', size: 40 }, { label: 'MB/s', size: 60 }], series: ser }, data as uPlot.AlignedData, target));
}

/** Several runs' latency histograms (all ops) on one axis. */
export function overlayLatency(parent: HTMLElement, runs: { label: string; hist: LatencyHist | null }[]): void {
  const present = runs.filter((r) => r.hist);
  if (present.length === 0) return;
  const per = present[0].hist!.per_decade;
  const lo = Math.min(...present.map((r) => r.hist!.first));
  const hi = Math.max(...present.map((r) => r.hist!.first + (r.hist!.by_op[0]?.[1].length ?? 0)));
  const merged: LatencyHist = {
    per_decade: per, first: lo,
    by_op: runs.map((r) => {
      const v = new Array<number>(hi - lo).fill(0);
      const all = r.hist?.by_op.find(([n]) => n === 'all')?.[1] ?? [];
      all.forEach((c, i) => { v[r.hist!.first - lo + i] = c; });
      return [r.label, v] as [string, number[]];
    }),
  };
  latencyHistChart(parent, merged, 'Latency histogram (all ops)');
}

/** Several runs' transfer-size histograms (reads and writes together) on one axis. */
export function overlaySizes(parent: HTMLElement, runs: { label: string; hist: SizeHist | null }[]): void {
  const present = runs.filter((r) => r.hist);
  if (present.length === 0) return;
  const lo = Math.min(...present.map((r) => r.hist!.first));
  const hi = Math.max(...present.map((r) => r.hist!.first + (r.hist!.by_op[0]?.[1].length ?? 0)));
  const merged: SizeHist = {
    first: lo,
    by_op: runs.map((r) => {
      const v = new Array<number>(hi - lo).fill(0);
      for (const [, counts] of r.hist?.by_op ?? []) counts.forEach((c, i) => { v[r.hist!.first - lo + i] += c; });
      return [r.label, v] as [string, number[]];
    }),
  };
  sizeHistChart(parent, merged, 'Transfer-size histogram (reads and writes)');
}
