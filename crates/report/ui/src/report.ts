// The run report: an overview page, then one page per workload (and iteration) with
// its charts, statistics, access map and transaction list. Pages are built the first
// time they are opened and kept.
import { accessMap } from './accessmap';
import { iopsChart, latencyHistChart, latencyTimeChart, sizeHistChart, throughputChart } from './charts';
import { h, nextFrame } from './dom';
import { duration } from './format';
import { clientsTable, environmentTable, fileStatsTable, iterationFacts, layoutTable, opStatsTable, suiteTable, warningsList } from './tables';
import { sweepSection } from './sweep';
import { transactionList } from './txlist';
import type { FileView, IterationPage, IterationResult, ReportPage } from './types';

export function renderReport(page: ReportPage, app: HTMLElement): void {
  const nav = h('nav', { class: 'tabs' });
  const main = h('main');
  app.replaceChildren(
    h('header', {}, h('h1', {}, page.title), h('span', { class: 'by' }, `made by ${page.generated_by}`)),
    nav, main);
  const tabs: [string, string][] = [['overview', 'Overview'], ...page.workloads.map((w, i): [string, string] => [`w${i}`, w.name])];
  for (const [id, label] of tabs) nav.append(h('a', { href: `#${id}`, 'data-tab': id }, label));

  const views = new Map<string, HTMLElement>();
  let current = '';

  async function show(): Promise<void> {
    const want = location.hash.replace(/^#/, '') || 'overview';
    const m = /^w(\d+)(?:\/i(\d+))?$/.exec(want);
    const wi = m ? Number(m[1]) : -1;
    const key = m && page.workloads[wi] ? want : 'overview';
    if (key === current) return;
    current = key;
    document.body.dataset.ready = '';
    for (const a of nav.querySelectorAll('a')) a.classList.toggle('active', a.dataset.tab === (key === 'overview' ? 'overview' : `w${wi}`));
    for (const v of views.values()) v.hidden = true;
    let view = views.get(key);
    if (!view) {
      view = h('section', { class: 'view', 'data-view': key });
      views.set(key, view);
      main.append(view);
      try {
        if (key === 'overview') overview(page, view);
        else await workload(page, wi, m?.[2] ? Number(m[2]) : null, view);
      } catch (e) {
        view.append(h('p', { class: 'err' }, `This part of the report could not be shown: ${String(e)}`));
        console.error(e);
      }
    }
    view.hidden = false;
    if (current === key) {
      document.body.dataset.ready = key;
      performance.mark(`naslab-ready:${key}`);
    }
  }
  window.addEventListener('hashchange', () => void show());
  void show();
}

function overview(page: ReportPage, view: HTMLElement): void {
  const warnings = warningsList(page);
  view.append(
    h('h2', {}, 'Suite'),
    page.run.workloads.length ? suiteTable(page) : h('p', {}, 'This run has no finished workload.'),
    h('p', { class: 'note' }, 'Throughput is the median iteration’s (1 MB = 10^6 bytes); latencies are means in µs. Open a workload for its charts, access map and every transaction.'));
  if (page.run.sweep) {
    const sweep = page.run.sweep;
    sweepSection(view, sweep, (name) => {
      const i = page.workloads.findIndex((w) => w.name === name);
      return i < 0 ? null : `#w${i}`;
    });
  }
  if (warnings) view.append(h('h2', {}, 'Warnings'), warnings);
  view.append(h('h2', {}, 'Environment'), environmentTable(page.run, page.run_dir, page.settings));
}

/** What the figures of an iteration (or of one client's share of it) are drawn from. */
type ViewData = Pick<IterationPage, 'series' | 'latency' | 'sizes' | 'file_stats'>;

/** The facts, charts and per-op and per-file tables of an iteration, or of one client. */
function figures(view: HTMLElement, it: ViewData, res: IterationResult, files: FileView[]): void {
  view.append(iterationFacts(res));
  const charts = h('div', { class: 'charts' });
  view.append(charts);
  if (it.series) {
    throughputChart(charts, it.series);
    iopsChart(charts, it.series);
    latencyTimeChart(charts, it.series);
  }
  if (it.latency) {
    // Every op's mean and standard deviation, pooled exactly from the per-type figures.
    let n = 0, sum = 0;
    for (const st of Object.values(res.op_stats)) { n += st.latency.count; sum += st.latency.avg_ns * st.latency.count; }
    const mean = n > 0 ? sum / n : 0;
    let sq = 0;
    for (const st of Object.values(res.op_stats)) {
      const c = st.latency.count;
      sq += c * (st.latency.stddev_ns * st.latency.stddev_ns + (st.latency.avg_ns - mean) * (st.latency.avg_ns - mean));
    }
    latencyHistChart(charts, it.latency, 'Latency histogram', undefined, n > 0 ? [mean, Math.sqrt(sq / n)] : undefined);
  }
  if (it.sizes) sizeHistChart(charts, it.sizes);
  view.append(h('h3', {}, 'Latency by op type'), opStatsTable(res),
    h('p', { class: 'note' }, 'From run.json: percentiles within 0.1 % (HDR histograms), mean exact.'));
  if (res.layout) view.append(h('h3', {}, 'File layout'), layoutTable(res.layout));
  if (it.file_stats.length) {
    view.append(h('h3', {}, 'Per file'), fileStatsTable(it.file_stats, files),
      h('p', { class: 'note' }, 'Latency of every op on the file; percentiles within about 1 %.'));
  }
}

/** A multi-client run's picker: the aggregate, or one client's own figures and charts
 * (drawn into `shown`). */
function clientPicker(page: ReportPage, wi: number, it: IterationPage, res: IterationResult, view: HTMLElement, shown: HTMLElement): HTMLElement[] {
  const clients = page.run.multi_client?.clients ?? [];
  if (!clients.length || !it.clients.length) return [];
  const name = page.workloads[wi].name;
  const pick = h('select', { 'aria-label': 'client', 'data-role': 'client' },
    h('option', { value: '' }, `all ${clients.length} clients (aggregate)`)) as HTMLSelectElement;
  for (const c of clients) {
    const link = c.link?.emulated ? ` (${c.link.emulated.profile}, rtt ${duration(c.link.emulated.rtt_ns)})` : '';
    pick.append(h('option', { value: String(c.rank) }, `client ${c.rank} on ${c.host}${link}`));
  }
  const note = h('p', { class: 'note' });
  pick.addEventListener('change', () => {
    const rank = pick.value === '' ? null : Number(pick.value);
    const own = it.clients.find((c) => c.rank === rank);
    const facts = clients.find((c) => c.rank === rank)
      ?.workloads.find((x) => x.name === name)?.iterations.find((x) => x.iteration === it.iteration);
    shown.replaceChildren();
    if (rank !== null && own && facts) {
      figures(shown, own.data, facts, it.files);
      note.textContent = `Client ${rank}'s own figures and charts, from its ops alone. The access map and the transaction list below hold every client's ops.`;
    } else {
      figures(shown, it, res, it.files);
      note.textContent = rank === null ? '' : `Client ${rank} has no results for this iteration.`;
    }
    view.dataset.client = rank === null ? '' : String(rank);
  });
  return [h('h3', {}, 'Clients'), clientsTable(page.run, name, it.iteration),
    h('div', { class: 'iterations' }, 'clients: ', pick), note];
}

async function workload(page: ReportPage, wi: number, iterNo: number | null, view: HTMLElement): Promise<void> {
  const w = page.workloads[wi];
  const result = page.run.workloads[wi];
  const chosen = iterNo ?? w.median ?? w.iterations[0]?.iteration;
  const idx = Math.max(0, w.iterations.findIndex((i) => i.iteration === chosen));
  const it = w.iterations[idx];
  const res = result.iterations[idx];
  view.append(h('h2', {}, w.name), h('p', { class: 'source' }, result.source));
  if (w.iterations.length > 1) {
    const pick = h('div', { class: 'iterations' }, 'iteration: ');
    for (const other of w.iterations) {
      const label = `${other.iteration}${other.iteration === w.median ? ' (median)' : ''}`;
      pick.append(other.iteration === it.iteration ? h('strong', {}, label) : h('a', { href: `#w${wi}/i${other.iteration}` }, label));
    }
    view.append(pick);
  }
  if (!it || !res) {
    view.append(h('p', {}, 'This workload has no finished iteration.'));
    return;
  }
  for (const note of it.notes ?? []) view.append(h('p', { class: 'note warn' }, note));
  const shown = h('div', { class: 'shown' });
  view.append(...clientPicker(page, wi, it, res, view, shown), shown);
  figures(shown, it, res, it.files);
  await nextFrame();
  if (it.access) {
    view.append(h('h3', {}, 'File access map'));
    await accessMap(view, it, page.kinds);
  }
  if (it.rows) {
    view.append(h('h3', {}, 'Every transaction'));
    await transactionList(view, it, page.kinds);
  }
}
