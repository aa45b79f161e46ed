// The report's tables: the suite, the run's environment, an iteration's op statistics
// and its per-file statistics (sortable by clicking a header).
import { h, table } from './dom';
import { bytes, count, duration, durations, mbs, us } from './format';
import type { FileStat, FileView, IterationLayout, IterationResult, LayoutSummary, ReportPage, RunResult, Setting } from './types';

function avgUs(it: IterationResult, ops: string[]): string {
  let n = 0;
  let sum = 0;
  for (const op of ops) {
    const s = it.op_stats[op];
    if (s) { n += s.latency.count; sum += s.latency.avg_ns * s.latency.count; }
  }
  return n === 0 ? '-' : us(sum / n);
}

function median(w: RunResult['workloads'][number]): IterationResult | undefined {
  const sorted = [...w.iterations].sort((a, b) => a.throughput_mb_s - b.throughput_mb_s);
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

/** The suite table: one row per workload, linking to its page. */
export function suiteTable(page: ReportPage): HTMLElement {
  const batch = page.run.workloads.some((w) => w.iterations.length > 1);
  const head = ['workload', 'MB/s', ...(batch ? ['min..max MB/s', 'runs'] : []), 'ops', 'errors', 'MB read', 'MB written', 'read mean µs', 'write mean µs', 'open mean µs', 'create mean µs', 'wall s'];
  const rows = page.run.workloads.map((w, i) => {
    const it = median(w);
    const link = h('a', { href: `#w${i}` }, w.name);
    if (!it) return [link, mbs(w.throughput_mb_s)];
    return [link, mbs(w.throughput_mb_s),
      ...(batch ? [`${mbs(w.throughput_min_mb_s)}..${mbs(w.throughput_max_mb_s)}`, String(w.iterations.length)] : []),
      count(it.ops), count(it.errors), (it.bytes_read / 1e6).toFixed(2), (it.bytes_written / 1e6).toFixed(2),
      avgUs(it, ['read']), avgUs(it, ['write']), avgUs(it, ['open']), avgUs(it, ['create']), (it.wall_ns / 1e9).toFixed(3)];
  });
  return table(head, rows, 'grid suite');
}

/** What the run measured and how: target, file system, cache mode, client. */
export function environmentTable(run: RunResult, runDir: string, settings: Setting[]): HTMLElement {
  const e = run.environment;
  const t = run.target;
  const o = run.options;
  const d = run.device ?? {};
  const tags = Object.entries(d.tags ?? {}).map(([k, v]) => `${k}=${v}`).join(', ');
  const rows: [string, string][] = [
    ...(d.name ? [['device', d.name] as [string, string]] : []),
    ...(d.firmware ? [['firmware', d.firmware] as [string, string]] : []),
    ...(d.notes ? [['notes', d.notes] as [string, string]] : []),
    ...(tags ? [['tags', tags] as [string, string]] : []),
    ...(run.label ? [['label', run.label] as [string, string]] : []),
    ['run directory', runDir],
    ['started', run.started_at],
    ['naslab', run.naslab_version],
    ['target', t.path || '(none)'],
    ['backend', t.backend],
    ['file system', t.fs_type ? `${t.fs_type} on ${t.source || '?'}` : '(not known)'],
    ['cache', o.cache === 'drop' ? 'drop: prepared files written back and dropped before measuring' : o.cache === 'keep' ? 'keep: client cache left as preparation left it' : 'direct: client cache bypassed (O_DIRECT)'],
    ['pacing', o.pacing],
    ['iterations per workload', String(o.iterations)],
    ['op records', o.records ? 'kept' : 'not kept (--no-records)'],
    // Every other setting that shaped the measurement, worded by naslab (as compare words them).
    ...settings.map((s) => [s.name, s.value] as [string, string]),
    ['client', `${e.host}: ${e.os}, kernel ${e.kernel}`],
    ['CPU', `${e.cpu} (${e.cpus} usable)`],
    ['memory', `${(e.memory_bytes / 1e9).toFixed(1)} GB`],
  ];
  return h('table', { class: 'kv' }, h('tbody', {}, ...rows.map(([k, v]) => h('tr', {}, h('th', {}, k), h('td', {}, v)))));
}

/** Warnings (with what to do, worded by naslab as on the terminal) and why the run
 * stopped, if it did. */
export function warningsList(page: ReportPage): HTMLElement | null {
  const items = page.warnings.map((w) => h('li', {}, w));
  if (page.run.aborted) items.push(h('li', { class: 'err' }, `the run stopped early: ${page.run.aborted}`));
  return items.length ? h('ul', { class: 'warnings' }, ...items) : null;
}

/** An iteration's op types: count, bytes, errors and latency figures (from run.json). */
export function opStatsTable(it: IterationResult): HTMLElement {
  const head = ['op', 'count', 'bytes', 'errors', 'mean µs', 'std dev µs', 'min µs', 'p50 µs', 'p90 µs', 'p99 µs', 'p99.9 µs', 'max µs'];
  const rows = Object.entries(it.op_stats).map(([op, s]) => {
    const l = s.latency;
    const errs = s.errors > 0 ? `${s.errors} (${Object.entries(s.errors_by_errno ?? {}).map(([e, n]) => `${e} ${n}`).join(', ')})` : '0';
    return [op, count(s.count), count(s.bytes), errs, us(l.avg_ns), us(l.stddev_ns), us(l.min_ns), us(l.p50_ns), us(l.p90_ns), us(l.p99_ns), us(l.p999_ns), us(l.max_ns)];
  });
  return table(head, rows, 'grid num');
}

/** An iteration's headline figures. */
export function iterationFacts(it: IterationResult): HTMLElement {
  const facts: [string, string][] = [
    ['throughput', `${mbs(it.throughput_mb_s)} MB/s`],
    ['measured phase', duration(it.wall_ns)],
    ['ops', count(it.ops)],
    ['errors', count(it.errors)],
    ['read', bytes(it.bytes_read)],
    ['written', bytes(it.bytes_written)],
    ['first / last stream done', durations([it.first_done_ns, it.last_done_ns]).join(' / ')],
    ['prepared', `${count(it.prepare.files)} files, ${count(it.prepare.dirs)} dirs, ${bytes(it.prepare.bytes)} in ${duration(it.prepare.wall_ns)}`],
  ];
  if (it.pacing_lag.count > 0) {
    facts.push(['pacing lag p50 / p99 / max', durations([it.pacing_lag.p50_ns, it.pacing_lag.p99_ns, it.pacing_lag.max_ns]).join(' / ')]);
  }
  if (it.realtime) {
    const r = it.realtime;
    facts.push(['--realtime granted', `${r.fifo_streams}/${r.streams} streams under SCHED_FIFO, ${r.nice_streams} niced, ${r.pinned_streams} pinned, memory ${r.memory_locked ? 'locked' : 'not locked'}`]);
  }
  if (it.aborted) facts.push(['stopped early', it.aborted]);
  return h('dl', { class: 'facts' }, ...facts.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
}

/** The file layout run.json holds for an iteration (when it was measured): the files it
 * prepared and the files it wrote, in extents against the ideal, and the layout score. */
export function layoutTable(l: IterationLayout): HTMLElement {
  const row = (set: string, s: LayoutSummary) => [set, count(s.files), bytes(s.bytes), count(s.extents), count(s.ideal_extents),
    s.score == null ? '-' : s.score.toFixed(3)];
  return h('div', { class: 'layout', 'data-role': 'layout' },
    table(['files', 'count', 'size', 'extents', 'ideal extents', 'score'], [row('prepared', l.prepared), row('written', l.written)], 'grid num'),
    h('p', { class: 'note' }, 'Extents as filefrag counts them; ideal: the fewest the file system\'s longest extent allows for this data; score: the share of blocks right after their predecessor on disk (1 = every file in one run).'));
}

const FILE_LIMIT = 2000;

/** Bytes as MB (10^6 bytes) with three decimals: to the kB. */
const mb3 = (b: number) => (b / 1e6).toFixed(3);

/** Per-file statistics, sortable; the busiest files first. */
export function fileStatsTable(stats: FileStat[], files: FileView[]): HTMLElement {
  type Col = [string, (s: FileStat) => number | string, (s: FileStat) => string];
  const cols: Col[] = [
    ['file', (s) => files[s.file]?.path ?? '?', (s) => files[s.file]?.path ?? '?'],
    ['ops', (s) => s.ops, (s) => count(s.ops)],
    ['reads', (s) => s.reads, (s) => count(s.reads)],
    ['writes', (s) => s.writes, (s) => count(s.writes)],
    ['read MB', (s) => s.bytes_read, (s) => mb3(s.bytes_read)],
    ['written MB', (s) => s.bytes_written, (s) => mb3(s.bytes_written)],
    ['errors', (s) => s.errors, (s) => count(s.errors)],
    ['mean µs', (s) => s.latency.mean_ns, (s) => us(s.latency.mean_ns)],
    ['std dev µs', (s) => s.latency.stddev_ns, (s) => us(s.latency.stddev_ns)],
    ['p50 µs', (s) => s.latency.p50_ns, (s) => us(s.latency.p50_ns)],
    ['p99 µs', (s) => s.latency.p99_ns, (s) => us(s.latency.p99_ns)],
    ['max µs', (s) => s.latency.max_ns, (s) => us(s.latency.max_ns)],
  ];
  let rows = stats.slice();
  let sortCol = -1;
  let desc = true;
  const tbody = h('tbody');
  const headCells = cols.map(([name], c) => h('th', { class: 'sortable', title: `sort by ${name}`, onclick: () => {
    desc = sortCol === c ? !desc : c !== 0;
    sortCol = c;
    const key = cols[c][1];
    rows.sort((a, b) => {
      const x = key(a), y = key(b);
      const d = typeof x === 'string' ? String(x).localeCompare(String(y)) : (x as number) - (y as number);
      return desc ? -d : d;
    });
    fill();
  } }, name));
  const fill = () => {
    tbody.replaceChildren(...rows.slice(0, FILE_LIMIT).map((s) => h('tr', {}, ...cols.map(([, , fmt]) => h('td', {}, fmt(s))))));
  };
  fill();
  const wrap = h('div', { class: 'files-wrap', 'data-files': stats.length },
    h('table', { class: 'grid num files' }, h('thead', {}, h('tr', {}, ...headCells)), tbody));
  if (stats.length > FILE_LIMIT) wrap.append(h('p', { class: 'note' }, `Showing ${FILE_LIMIT} of ${stats.length} files; sort to bring others up.`));
  rows = rows.slice();
  return wrap;
}

/** The mean response time of an iteration's workload ops (not hints, preparation or
 * warm-up), as IterationResult::mean_op_ns computes it. */
function meanOpNs(it: IterationResult): number | null {
  let n = 0;
  let sum = 0;
  for (const [name, s] of Object.entries(it.op_stats)) {
    if (name.startsWith('hint_') || name.startsWith('prepare_') || name.startsWith('warmup_')) continue;
    n += s.latency.count;
    sum += s.latency.avg_ns * s.latency.count;
  }
  return n === 0 ? null : sum / n;
}

/** A multi-client run's clients side by side for one workload (each client's own
 * iteration `iteration`): what each got and over which link. */
export function clientsTable(run: RunResult, workload: string, iteration: number): HTMLElement {
  const clients = run.multi_client?.clients ?? [];
  const rows = clients.map((c) => {
    const it = c.workloads.find((w) => w.name === workload)?.iterations.find((x) => x.iteration === iteration);
    const emulated = c.link?.emulated;
    const link = emulated ? `${emulated.profile}: rtt ${duration(emulated.rtt_ns)}${emulated.rate_bit_s ? `, ${emulated.rate_bit_s / 1e6} Mbit/s` : ''}` : c.link ? 'not emulated' : '-';
    const probed = c.link?.probe ? duration(c.link.probe.median_ns) : '-';
    if (!it) return [String(c.rank), c.host, link, probed, '-', '-', '-', c.aborted ?? 'no results'];
    const mean = meanOpNs(it);
    return [String(c.rank), c.host, link, probed, mbs(it.throughput_mb_s), count(it.ops), mean === null ? '-' : us(mean), c.aborted ?? ''];
  });
  const t = table(['client', 'host', 'link', 'rtt probed', 'MB/s', 'ops', 'mean op µs', 'stopped'], rows);
  t.dataset.role = 'clients';
  return t;
}

