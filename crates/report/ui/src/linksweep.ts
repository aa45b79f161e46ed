// A link sweep on the comparison page: runs made behind different emulated links (lab
// matrix --links), per workload the throughput and the mean response time against the
// round trip each link added, one line per configuration, and the points as a table.
import uPlot from 'uplot';
import { chartBox } from './charts';
import { h, table } from './dom';
import { colour, count, sig } from './format';
import type { LinkLine, LinkSweep } from './types';

const ms = (ns: number) => ns / 1e6;

/** One chart over a workload's lines: `y` of each point against its round trip (ms). */
function lineChart(parent: HTMLElement, title: string, note: string, lines: LinkLine[], yLabel: string, y: (p: LinkLine['points'][number]) => number, log: boolean): void {
  // One x for all: every round trip of every line, each line present at its own.
  const xs = [...new Set(lines.flatMap((l) => l.points.map((p) => ms(p.rtt_ns))))].sort((a, b) => a - b);
  const data: (number | null)[][] = [xs];
  const series: uPlot.Series[] = [{ label: 'rtt ms', value: (_u, v) => (v == null ? '-' : sig(v)) }];
  let points = 0;
  lines.forEach((l, i) => {
    const at = new Map(l.points.map((p) => [ms(p.rtt_ns), y(p)]));
    data.push(xs.map((x) => at.get(x) ?? null));
    points += l.points.length;
    series.push({ label: l.configuration, stroke: colour(i), width: 2, spanGaps: true, points: { show: true, size: 6 }, value: (_u, v) => (v == null ? '-' : sig(v)) });
  });
  chartBox(parent, title, points, note, (target, width) => new uPlot({
    width, height: 280,
    scales: { x: { time: false }, y: log ? { distr: 3 } : {} },
    axes: [{ label: 'round trip added (ms)', size: 40 }, { label: yLabel, size: 70, values: (_u, v) => v.map((x) => (x == null ? '' : sig(x, 3))) }],
    series,
  }, data as uPlot.AlignedData, target));
}

/** The link sweep's section: a table of every point, then per workload its two charts. */
export function linkSweepSection(parent: HTMLElement, s: LinkSweep, letterOf: (run: number) => string): void {
  const rows = s.lines.flatMap((l) => l.points.map((p) => [l.workload, l.configuration, letterOf(p.run), p.link,
    p.link === 'none' && p.rtt_ns === 0 ? 'none' : `${sig(ms(p.rtt_ns))} ms`,
    p.rtt_probed_ns != null ? `${sig(ms(p.rtt_probed_ns))} ms` : '-',
    sig(p.mb_s), count(p.ops), `${sig(ms(p.mean_op_ns))} ms`, `${sig(p.wall_ns / 1e9)} s`]));
  const section = h('section', { class: 'view link-sweep' }, h('h2', {}, 'Link sweep'),
    h('p', { class: 'note' }, 'The runs behind different emulated links, by the round trip each link added: the median iteration of each run. A configuration is the runs alike in every setting but the link.'),
    table(['workload', 'configuration', 'run', 'link', 'rtt set', 'rtt probed', 'MB/s', 'ops', 'mean op', 'phase'], rows, 'grid num link-points'));
  const uneven = s.lines.filter((l) => !l.same_ops);
  if (uneven.length) section.append(h('p', { class: 'note warn' }, `Points that ran different numbers of ops do not compare: ${uneven.map((l) => `${l.workload} (${l.configuration})`).join(', ')}.`));
  if (s.capacity.length) {
    const load = (k: number, unit: string) => `${Number.isInteger(k) ? k : sig(k)} ${unit}`;
    const capRows = s.capacity.flatMap((l) => l.points.map((p) => [l.configuration, p.column, p.link, `${sig(ms(p.rtt_ns))} ms`,
      p.rtt_probed_ns != null ? `${sig(ms(p.rtt_probed_ns))} ms` : '-', String(p.points),
      p.knee != null ? load(p.knee, p.unit) : 'none', sig(p.peak_achieved_ops_s), `${sig(ms(p.overall_response_ns))} ms`]));
    section.append(h('h3', {}, 'Capacity by link'),
      h('p', { class: 'note' }, 'Each capacity sweep (naslab sweep) behind its link: the knee (the highest load every point up to met the cap and kept up), the peak achieved rate and the overall response time.'),
      table(['configuration', 'run', 'link', 'rtt set', 'rtt probed', 'points', 'knee', 'peak ops/s', 'overall response'], capRows, 'grid num link-capacity'));
  }
  parent.append(section);
  const workloads = [...new Set(s.lines.map((l) => l.workload))];
  for (const w of workloads) {
    const lines = s.lines.filter((l) => l.workload === w);
    const charts = h('div', { class: 'charts', 'data-workload': w });
    section.append(h('h3', {}, w), charts);
    lineChart(charts, `${w}: throughput against round trip (MB/s)`, 'Each dot is one run; a flatter line loses less to the network.', lines, 'MB/s', (p) => p.mb_s, false);
    lineChart(charts, `${w}: mean response time against round trip (ms, log)`, 'The mean issue-to-completion time of the workload\'s ops: an op that needs one round trip grows by about the round trip added.', lines, 'ms', (p) => Math.max(ms(p.mean_op_ns), 1e-6), true);
  }
}
