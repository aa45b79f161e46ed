// A capacity sweep's curve: response time against achieved load, achieved against
// offered, and the table of load points, with the curve's knee, peak and overall
// response time. The comparison page draws several runs' curves on one axis.
import uPlot from 'uplot';
import { chartBox } from './charts';
import { h, table } from './dom';
import { colour, count, durations, sig } from './format';
import type { LoadPoint, Sweep } from './types';

/** How the sweep's unit of load reads in a sentence and a column head. */
function unitName(s: Sweep): { head: string; of: (v: number) => string } {
  return s.unit === 'users'
    ? { head: 'users', of: (v) => `${sig(v)} user${v === 1 ? '' : 's'}` }
    : { head: 'offered ops/s asked', of: (v) => `${sig(v)} ops/s` };
}

/** The cap as the user wrote it: `read:p99<=20 ms`. */
function capText(s: Sweep): string | null {
  if (!s.cap) return null;
  const p = s.cap.percentile < 0 ? 'avg' : `p${Number(s.cap.percentile.toPrecision(6))}`;
  return `${s.cap.op}:${p} ≤ ${durations([s.cap.limit_ns])[0]}`;
}

/** The facts over the whole curve, one sentence each. */
function curveFacts(s: Sweep): HTMLElement {
  const u = unitName(s);
  const cap = capText(s);
  const items = [
    `${s.points.length} load point${s.points.length === 1 ? '' : 's'} by ${s.unit === 'users' ? 'users' : `offered rate (${s.arrivals ?? 'uniform'} arrivals)`}, each after a warm-up of ${durations([s.warmup_ns])[0]} that is not counted.`,
    `Peak achieved: ${sig(s.peak_achieved_ops_s)} ops/s.`,
    s.knee !== null && s.knee !== undefined
      ? `Knee: ${u.of(s.knee)}, the highest load up to which every point ${cap ? `met ${cap} and ` : ''}kept up with its offered rate (within ${sig(s.saturation_margin * 100, 2)} %).`
      : `No knee: ${s.points.length ? 'the first point already ' + (cap ? `missed ${cap} or ` : '') + 'fell behind its offered rate' : 'no point finished'}.`,
    `Overall response time: ${durations([s.overall_response_ns])[0]} (the area under mean response time against achieved ops/s, divided by the peak achieved ops/s).`,
  ];
  if (s.stopped) items.push(`The sweep stopped early: ${s.stopped}.`);
  return h('ul', { class: 'sweep-facts' }, ...items.map((t) => h('li', {}, t)));
}

/** One row per load point; the load links to the point's own workload page. */
function pointsTable(s: Sweep, linkOf: (workload: string) => string | null): HTMLElement {
  const u = unitName(s);
  const head = [u.head, 'offered ops/s', 'achieved ops/s', 'MB/s', 'ops', 'errors', 'mean response', 'p99 response', 'mean service', 'mean lag', ...(s.cap ? [capText(s) ?? 'cap'] : []), 'state'];
  const rows = s.points.map((p) => {
    const href = linkOf(p.workload);
    const load = href ? h('a', { href }, sig(p.load)) : sig(p.load);
    const [mr, pr, ms, lag] = durations([p.all.response.avg_ns, p.all.response.p99_ns, p.all.service.avg_ns, p.lag.avg_ns]);
    const state = p.saturated ? 'saturated' : p.met_cap === false ? 'over the cap' : 'kept up';
    return [load, sig(p.offered_ops_s), sig(p.achieved_ops_s), sig(p.throughput_mb_s), count(p.all.count), count(p.all.errors), mr, pr, ms, lag,
      // The figure the cap was held to, as run.json has it; '-' for a point without ops of its type.
      ...(s.cap ? [`${p.cap_ns != null ? durations([p.cap_ns])[0] : '-'}${p.met_cap ? ' ✓' : ' ✗'}`] : []), state];
  });
  const t = table(head, rows, 'grid num sweep-points');
  s.points.forEach((p, i) => {
    const tr = t.tBodies[0].rows[i];
    tr.dataset.load = String(p.load);
    if (p.saturated || p.met_cap === false) tr.classList.add('over');
  });
  return t;
}

/** A log axis for durations in ms, with its ticks in one unit. */
const msAxis = (label: string): uPlot.Axis => ({ label, size: 70, values: (_u, v) => v.map((x) => (x == null ? '' : `${sig(x, 3)}`)) });

/** The response-time lines of the curve charts: mean, p50, p90, p99, and mean service. */
function responseSeries(pointsOnly: boolean): uPlot.Series[] {
  const dots = (size: number) => ({ show: true, size });
  const line = (label: string, i: number, width: number, size: number, dash?: number[]): uPlot.Series => ({
    label, stroke: colour(i), width, dash, points: dots(size), ...(pointsOnly ? { paths: () => null } : {}),
  });
  return [line('mean response', 0, 2, 6), line('p50 response', 4, 1, 4, [2, 3]), line('p90 response', 3, 1, 4, [4, 3]),
    line('p99 response', 1, 1.5, 5, [6, 4]), line('mean service', 2, 1.5, 5)];
}

function responseData(pts: LoadPoint[], x: (p: LoadPoint) => number): uPlot.AlignedData {
  const ms = (ns: number) => Math.max(ns, 1) / 1e6;
  const r = (p: LoadPoint) => p.all.response;
  return [pts.map(x), pts.map((p) => ms(r(p).avg_ns)), pts.map((p) => ms(r(p).p50_ns)), pts.map((p) => ms(r(p).p90_ns)),
    pts.map((p) => ms(r(p).p99_ns)), pts.map((p) => ms(p.all.service.avg_ns))];
}

/** Response time (mean, p50, p90, p99) and service time (mean) against the load asked
 * for, in the sweep's own unit (so each point follows the one before, even past
 * saturation), then the same against the achieved rate, as dots. */
function responseCharts(parent: HTMLElement, s: Sweep): void {
  const unit = unitName(s).head;
  const byLoad = [...s.points].sort((a, b) => a.load - b.load);
  const note = 'Response time runs from each op\'s scheduled start (what the user waited); service time from its actual issue (what the target took). Each dot is one load point.';
  chartBox(parent, 'Response time against load (ms, log)', byLoad.length, note,
    (target, width) => new uPlot({
      width, height: 280,
      scales: { x: { time: false }, y: { distr: 3 } },
      axes: [{ label: unit, size: 40 }, msAxis('ms')],
      series: [{ label: unit, value: (_u, v) => (v == null ? '-' : sig(v)) }, ...responseSeries(false)],
    }, responseData(byLoad, (p) => p.load), target));
  // Past saturation the achieved rate can fall as the load rises: dots, not lines.
  const byAchieved = [...s.points].sort((a, b) => a.achieved_ops_s - b.achieved_ops_s);
  chartBox(parent, 'Response time against achieved load (ms, log)', byAchieved.length,
    'As SPEC SFS draws its curve: each point at the rate it achieved. Past saturation the achieved rate may fall while response time climbs, so the points are not joined.',
    (target, width) => new uPlot({
      width, height: 280,
      scales: { x: { time: false }, y: { distr: 3 } },
      axes: [{ label: 'achieved ops/s', size: 40 }, msAxis('ms')],
      series: [{ label: 'achieved ops/s', value: (_u, v) => (v == null ? '-' : sig(v)) }, ...responseSeries(true)],
    }, responseData(byAchieved, (p) => p.achieved_ops_s), target));
}

/** Achieved against offered ops/s, with the line where they are equal. */
function achievedChart(parent: HTMLElement, s: Sweep): void {
  const pts = [...s.points].sort((a, b) => a.offered_ops_s - b.offered_ops_s);
  const x = pts.map((p) => p.offered_ops_s);
  const data: uPlot.AlignedData = [x, pts.map((p) => p.achieved_ops_s), x];
  chartBox(parent, 'Achieved against offered load (ops/s)', pts.length,
    'Below the dashed line the target did not keep up: ops were asked for faster than they completed.',
    (target, width) => new uPlot({
      width, height: 280,
      scales: { x: { time: false } },
      axes: [{ label: 'offered ops/s', size: 40 }, { label: 'achieved ops/s', size: 70 }],
      series: [{ label: 'offered ops/s', value: (_u, v) => (v == null ? '-' : sig(v)) },
        { label: 'achieved', stroke: colour(0), width: 2, points: { show: true, size: 6 } },
        { label: 'achieved = offered', stroke: colour(8), width: 1, dash: [4, 4], points: { show: false } }],
    }, data, target));
}

/** The sweep's section of the overview page. */
export function sweepSection(view: HTMLElement, s: Sweep, linkOf: (workload: string) => string | null): void {
  const charts = h('div', { class: 'charts' });
  const box = h('div', { class: 'sweep', 'data-points': s.points.length });
  box.append(curveFacts(s), charts, pointsTable(s, linkOf),
    h('p', { class: 'note' }, 'Each load point is one workload of this run: open it for its charts, access map and every op. Latencies are over the point\'s measured window, warm-up excluded.'));
  view.append(h('h2', {}, 'Capacity sweep'), box);
  if (s.points.length) {
    responseCharts(charts, s);
    achievedChart(charts, s);
  }
}

/** Several runs' sweep curves on one axis (the comparison page): mean response time
 * against load, one line per run whose sweep has the first such run's unit of load. */
export function overlaySweeps(parent: HTMLElement, runs: { label: string; sweep: Sweep | null }[]): void {
  const having = runs.map((r, i) => ({ ...r, i })).filter((r) => r.sweep && r.sweep.points.length);
  if (!having.length) return;
  const unit = having[0].sweep!.unit;
  const drawn = having.filter((r) => r.sweep!.unit === unit);
  // One x for all: every load of every run, each run's line present at its own loads.
  const xs = [...new Set(drawn.flatMap((r) => r.sweep!.points.map((p) => p.load)))].sort((a, b) => a - b);
  const head = unitName(having[0].sweep!).head;
  const data: (number | null)[][] = [xs];
  const series: uPlot.Series[] = [{ label: head, value: (_u, v) => (v == null ? '-' : sig(v)) }];
  let points = 0;
  for (const r of drawn) {
    const at = new Map(r.sweep!.points.map((p) => [p.load, Math.max(p.all.response.avg_ns, 1) / 1e6]));
    data.push(xs.map((x) => at.get(x) ?? null));
    points += at.size;
    const knee = r.sweep!.knee;
    series.push({ label: `${r.label}${knee != null ? ` (knee ${sig(knee)})` : ''}`, stroke: colour(r.i), width: 2, spanGaps: true, points: { show: true, size: 6 } });
  }
  const rows = having.map((r) => {
    const s = r.sweep!;
    return [r.label, unitName(s).head, String(s.points.length), s.knee != null ? sig(s.knee) : '-', sig(s.peak_achieved_ops_s), durations([s.overall_response_ns])[0], s.stopped ?? ''];
  });
  const section = h('section', { class: 'view sweeps' }, h('h2', {}, 'Capacity sweeps'),
    table(['run', 'load unit', 'points', 'knee', 'peak achieved ops/s', 'overall response time', 'stopped early'], rows, 'grid num sweep-compare'));
  const skipped = having.filter((r) => r.sweep!.unit !== unit);
  if (skipped.length) section.append(h('p', { class: 'note warn' }, `Not drawn: ${skipped.map((r) => r.label).join(', ')}, whose load is counted in another unit than ${head}.`));
  const charts = h('div', { class: 'charts' });
  section.append(charts);
  parent.append(section);
  chartBox(charts, `Mean response time against load (ms, log), each run's sweep`, points,
    'Each dot is one load point of that run; a lower line kept its users waiting less at the same load.',
    (target, width) => new uPlot({
      width, height: 300,
      scales: { x: { time: false }, y: { distr: 3 } },
      axes: [{ label: head, size: 40 }, msAxis('ms')],
      series,
    }, data as uPlot.AlignedData, target));
}
