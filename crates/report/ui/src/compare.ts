// The comparison page: the runs, Table 2 (throughput per workload relative to the
// baseline, with the raw MB/s), what the mean covers and which settings differ, the
// batch spreads, then per workload the runs' charts overlaid.
import { overlayLatency, overlaySizes, overlayThroughput } from './charts';
import { h } from './dom';
import { sig } from './format';
import { linkSweepSection } from './linksweep';
import { overlaySweeps } from './sweep';
import type { ComparePage, Spread } from './types';

/** "1.31 ± 0.04× faster" or, below 1, the inverse ratio "slower". */
function spreadText(s: Spread): string {
  const faster = s.ratio >= 1;
  const r = faster ? s.ratio : 1 / s.ratio;
  const pm = faster ? s.plus_minus : s.plus_minus / (s.ratio * s.ratio);
  return `${sig(r)} ± ${sig(pm, 2)}× ${faster ? 'faster' : 'slower'}`;
}

export function renderCompare(page: ComparePage, app: HTMLElement): void {
  const c = page.comparison;
  const label = (i: number) => c.runs[i].column;
  const base = label(c.baseline);
  const legend = h('ul', { class: 'runs' }, ...c.runs.map((r, i) =>
    h('li', {}, h('strong', {}, r.column), ` ${r.device && r.device !== r.column ? `${r.device} · ` : ''}${r.name}${i === c.baseline ? ' (baseline)' : ''} · ${r.target} · ${r.options} · started ${r.started_at}`)));
  const head = h('tr', {}, h('th', {}, 'workload'), ...c.runs.flatMap((r) => [h('th', {}, `${r.column} ratio`), h('th', {}, `${r.column} MB/s`)]));
  const body = h('tbody', {}, ...c.workloads.map((w, wi) => h('tr', { class: w.in_mean ? '' : 'not-in-mean' },
    h('td', {}, h('a', { href: `#cw${wi}` }, w.name), w.in_mean ? null : h('span', { class: 'note', title: 'not in the geometric mean' }, ' *')),
    ...w.ratio.flatMap((r, i) => [
      h('td', { class: r === null ? '' : r >= 1 ? 'up' : 'down' }, r === null ? '-' : sig(r)),
      h('td', {}, w.mb_s[i] === null ? '-' : sig(w.mb_s[i]!)),
    ]))));
  const foot = h('tfoot', {}, h('tr', {}, h('th', {}, 'geometric mean'),
    ...c.mean_ratio.flatMap((m) => [h('th', {}, m === null ? '-' : sig(m)), h('th', {}, '')])));
  const notes: HTMLElement[] = [];
  notes.push(h('p', { class: 'note mean-over' }, c.mean_workloads.length
    ? `Geometric mean over the ${c.mean_workloads.length} workload${c.mean_workloads.length === 1 ? '' : 's'} every run has: ${c.mean_workloads.join(', ')}.`
    : 'The runs share no workload: there is no geometric mean.'));
  if (c.workloads.some((w) => !w.in_mean)) notes.push(h('p', { class: 'note' }, '* not in the geometric mean: not every run has it.'));
  const diffs = c.differences.map((d) => h('li', {}, `The runs differ in ${d.setting}: ${d.values.map((v, i) => `${label(i)} ${v}`).join(', ')}; their figures may not be comparable.`));
  const spreads: HTMLElement[] = [];
  for (const w of c.workloads) {
    w.spread.forEach((s, i) => {
      if (!s || i === c.baseline) return;
      spreads.push(h('li', { class: s.beyond_spread ? 'beyond' : 'within' },
        `${w.name}: ${label(i)} is ${spreadText(s)} than ${base} (${s.iterations[0]} and ${s.iterations[1]} iterations; ${s.beyond_spread ? 'the ranges do not overlap: the difference is larger than the spread' : 'the ranges overlap: the difference is within the spread'})`));
    });
  }
  const main = h('main', {},
    h('h2', {}, 'Runs'), legend,
    h('h2', {}, `Throughput relative to ${base}`),
    h('p', { class: 'note' }, `Each run's throughput (its median iteration) divided by the baseline's, per workload, to 3 significant digits; the average is the ${c.mean}.`),
    h('table', { class: 'grid num compare' }, h('thead', {}, head), body, foot),
    ...notes,
    diffs.length ? h('ul', { class: 'warnings differences' }, ...diffs) : null,
    spreads.length ? h('h3', {}, 'Batch spread') : null,
    spreads.length ? h('p', { class: 'note' }, 'Median ratio ± the iterations\' min..max ranges, halved and added in quadrature (as hyperfine reports a ratio with its uncertainty).') : null,
    spreads.length ? h('ul', { class: 'spreads' }, ...spreads) : null);
  app.replaceChildren(h('header', {}, h('h1', {}, page.title), h('span', { class: 'by' }, `made by ${page.generated_by}`)), main);
  overlaySweeps(main, c.sweeps.map((s, i) => ({ label: label(i), sweep: s ?? null })));
  if (c.links) linkSweepSection(main, c.links, (i) => c.runs[i].letter);
  page.workloads.forEach((w, wi) => {
    const section = h('section', { id: `cw${wi}`, class: 'view' }, h('h2', {}, w.name));
    main.append(section);
    for (const [i, r] of w.runs.entries()) {
      if (!r) section.append(h('p', { class: 'note' }, `${label(i)} does not have this workload.`));
      for (const note of r?.notes ?? []) section.append(h('p', { class: 'note warn' }, `${label(i)}: ${note}`));
    }
    const charts = h('div', { class: 'charts' });
    section.append(charts);
    // Only the runs that have the workload are drawn: a run without it has no line (not
    // a flat zero), as it has no figure in the table.
    const having = w.runs.flatMap((r, i) => (r ? [{ r, i }] : []));
    overlayThroughput(charts, having.map(({ r, i }) => ({ label: label(i), s: r.series ?? null, wallNs: r.wall_ns })));
    overlayLatency(charts, having.map(({ r, i }) => ({ label: label(i), hist: r.latency ?? null })));
    overlaySizes(charts, having.map(({ r, i }) => ({ label: label(i), hist: r.sizes ?? null })));
  });
  document.body.dataset.ready = 'compare';
  performance.mark('naslab-ready:compare');
}
