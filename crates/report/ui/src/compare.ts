// The comparison page: the runs, Table 2 (throughput per workload relative to the
// baseline, with the raw MB/s), then per workload the runs' charts overlaid.
import { overlayLatency, overlaySizes, overlayThroughput } from './charts';
import { h } from './dom';
import { mbs } from './format';
import type { ComparePage } from './types';

export function renderCompare(page: ComparePage, app: HTMLElement): void {
  const c = page.comparison;
  const label = (i: number) => `${c.runs[i].letter}: ${c.runs[i].name}`;
  const legend = h('ul', { class: 'runs' }, ...c.runs.map((r, i) =>
    h('li', {}, h('strong', {}, r.letter), ` ${r.name}${i === c.baseline ? ' (baseline)' : ''} · ${r.target} · ${r.options} · started ${r.started_at}`)));
  const head = h('tr', {}, h('th', {}, 'workload'), ...c.runs.flatMap((r) => [h('th', {}, `${r.letter} ratio`), h('th', {}, `${r.letter} MB/s`)]));
  const body = h('tbody', {}, ...c.workloads.map((w, wi) => h('tr', {},
    h('td', {}, h('a', { href: `#cw${wi}` }, w.name)),
    ...w.ratio.flatMap((r, i) => [
      h('td', { class: r === null ? '' : r >= 1 ? 'up' : 'down' }, r === null ? '-' : r.toFixed(2)),
      h('td', {}, w.mb_s[i] === null ? '-' : mbs(w.mb_s[i]!)),
    ]))));
  const foot = h('tfoot', {}, h('tr', {}, h('th', {}, 'geometric mean'),
    ...c.mean_ratio.flatMap((m, i) => [h('th', {}, m === null ? '-' : m.toFixed(2)), h('th', { class: 'note' }, `${c.mean_over[i]} workloads`)])));
  const main = h('main', {},
    h('h2', {}, 'Runs'), legend,
    h('h2', {}, `Throughput relative to ${c.runs[c.baseline].letter}`),
    h('p', { class: 'note' }, `Each run's throughput (its median iteration) divided by the baseline's, per workload; the average is the ${c.mean}.`),
    h('table', { class: 'grid num compare' }, h('thead', {}, head), body, foot));
  app.replaceChildren(h('header', {}, h('h1', {}, page.title), h('span', { class: 'by' }, `made by ${page.generated_by}`)), main);
  page.workloads.forEach((w, wi) => {
    const section = h('section', { id: `cw${wi}`, class: 'view' }, h('h2', {}, w.name));
    main.append(section);
    for (const [i, r] of w.runs.entries()) {
      if (!r) section.append(h('p', { class: 'note' }, `${label(i)} does not have this workload.`));
      for (const note of r?.notes ?? []) section.append(h('p', { class: 'note warn' }, `${label(i)}: ${note}`));
    }
    const charts = h('div', { class: 'charts' });
    section.append(charts);
    overlayThroughput(charts, w.bin_ns, w.runs.map((r, i) => ({ label: label(i), s: r?.series ?? null })));
    overlayLatency(charts, w.runs.map((r, i) => ({ label: label(i), hist: r?.latency ?? null })));
    overlaySizes(charts, w.runs.map((r, i) => ({ label: label(i), hist: r?.sizes ?? null })));
  });
  document.body.dataset.ready = 'compare';
  performance.mark('naslab-ready:compare');
}
