// The transaction list: every op (up to the report's cap) with start, finish, latency,
// op, file, offset, size, result and stream; sortable by any column and filterable,
// smooth at millions of rows: the columns are typed arrays, the order is an index array,
// and only the rows in view exist in the page.
import { loadColumns } from './blob';
import { h } from './dom';
import { count, durations, result, us } from './format';
import type { IterationPage } from './types';

const ROW_PX = 22;
const VIEW_ROWS = 22;
/** Browsers cap an element's height; past this the scrollbar maps proportionally to rows. */
const MAX_SCROLL_PX = 8_000_000;

type Key = 'row' | 'start' | 'finish' | 'latency' | 'op' | 'file' | 'offset' | 'len' | 'result' | 'stream';

const HEADERS: [Key, string][] = [
  ['row', '#'], ['start', 'start µs'], ['finish', 'finish µs'], ['latency', 'latency µs'], ['op', 'op'],
  ['file', 'file'], ['offset', 'offset B'], ['len', 'length B'], ['result', 'result'], ['stream', 'stream'],
];

export async function transactionList(parent: HTMLElement, it: IterationPage, kinds: string[]): Promise<void> {
  const rowsInfo = it.rows;
  if (!rowsInfo) return;
  const c = await loadColumns(rowsInfo.blob);
  const start = c.start_ns as Float64Array;
  const lat = c.latency_ns as Float64Array;
  const offset = c.offset as Float64Array;
  const len = c.len as Float64Array;
  const res = c.result as Float64Array;
  const file = c.file as Uint32Array;
  const stream = c.stream as Uint32Array;
  const kind = c.kind as Uint8Array;
  const n = start.length;
  const paths = it.files.map((f) => f.path);

  // Ranks make the text columns sortable as numbers.
  const fileRank = new Uint32Array(paths.length);
  paths.map((p, i) => [p, i] as [string, number]).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] - b[1])).forEach(([, i], r) => { fileRank[i] = r; });
  const kindRank = new Uint32Array(kinds.length);
  kinds.map((k, i) => [k, i] as [string, number]).sort((a, b) => (a[0] < b[0] ? -1 : 1)).forEach(([, i], r) => { kindRank[i] = r; });
  const keyOf: Record<Key, (i: number) => number> = {
    row: (i) => i, start: (i) => start[i], finish: (i) => start[i] + lat[i], latency: (i) => lat[i],
    op: (i) => kindRank[kind[i]], file: (i) => fileRank[file[i]], offset: (i) => offset[i], len: (i) => len[i],
    result: (i) => res[i], stream: (i) => stream[i],
  };

  let order: Uint32Array = new Uint32Array(0);
  let sortKey: Key = 'row';
  let sortDesc = false;

  // Controls.
  const present = new Set<number>();
  for (let i = 0; i < n; i++) present.add(kind[i]);
  const opSel = h('select', { 'aria-label': 'op filter', 'data-role': 'tx-op' }, h('option', { value: '' }, 'every op')) as HTMLSelectElement;
  for (const k of [...present].sort((a, b) => a - b)) opSel.append(h('option', { value: String(k) }, kinds[k]));
  const fileIn = h('input', { type: 'search', placeholder: 'file path contains', 'aria-label': 'file filter', 'data-role': 'tx-file' }) as HTMLInputElement;
  const minLat = h('input', { type: 'number', min: 0, step: 'any', placeholder: 'latency ≥ µs', 'aria-label': 'minimum latency in µs', 'data-role': 'tx-minlat' }) as HTMLInputElement;
  const fromS = h('input', { type: 'number', min: 0, step: 'any', placeholder: 'start ≥ µs', 'aria-label': 'issued from, µs into the phase', 'data-role': 'tx-from' }) as HTMLInputElement;
  const toS = h('input', { type: 'number', min: 0, step: 'any', placeholder: 'start ≤ µs', 'aria-label': 'issued until, µs into the phase', 'data-role': 'tx-to' }) as HTMLInputElement;
  const streamIn = h('input', { type: 'number', min: 0, step: 1, placeholder: 'stream', 'aria-label': 'stream filter', 'data-role': 'tx-stream' }) as HTMLInputElement;
  const errOnly = h('input', { type: 'checkbox', 'aria-label': 'failed ops only', 'data-role': 'tx-errors' }) as HTMLInputElement;
  const status = h('div', { class: 'stats', 'data-role': 'tx-count' });
  const csvBtn = h('button', { type: 'button', 'data-role': 'tx-csv', title: 'download the rows shown (filtered and sorted) as CSV' }, 'download shown rows (CSV)');
  const controls = h('div', { class: 'controls' }, opSel, fileIn, minLat, fromS, toS, streamIn, h('label', {}, errOnly, ' failed only'), csvBtn);

  // The table: a fixed header, then a scroller whose sticky block holds the visible rows.
  const headRow = h('div', { class: 'tx-row tx-head' });
  const headCells = HEADERS.map(([key, label]) => {
    const cell = h('button', { type: 'button', class: `tx-cell c-${key}`, 'data-key': key, title: `sort by ${label}` }, label);
    cell.addEventListener('click', () => {
      if (sortKey === key) sortDesc = !sortDesc; else { sortKey = key; sortDesc = false; }
      void refresh();
    });
    headRow.append(cell);
    return cell;
  });
  const inner = h('div', { class: 'tx-inner' });
  const body = h('div', { class: 'tx-body', style: `height:${VIEW_ROWS * ROW_PX}px` }, inner);
  const pool: HTMLElement[][] = [];
  for (let r = 0; r < VIEW_ROWS + 1; r++) {
    const row = h('div', { class: 'tx-row', 'data-role': 'tx-row' });
    const cells = HEADERS.map(([key]) => h('span', { class: `tx-cell c-${key}` }));
    row.append(...cells);
    inner.append(row);
    pool.push(cells);
  }
  const spacer = h('div', { class: 'tx-spacer' });
  const scroller = h('div', { class: 'tx-scroll', style: `height:${VIEW_ROWS * ROW_PX}px`, tabindex: 0 }, body, spacer);
  const box = h('div', { class: 'txlist', 'data-points': n, 'data-rows': n },
    h('h4', {}, 'Transactions'), controls, status,
    h('div', { class: 'tx-table' }, headRow, scroller),
    rowsInfo.shown < rowsInfo.total ? h('p', { class: 'note' }, `The list holds the first ${count(rowsInfo.shown)} of ${count(rowsInfo.total)} ops (the report's cap); every op is in the records file and counted in the charts.`) : null);
  parent.append(box);

  let virtualPx = 0;
  let highlight = -1;
  function render(): void {
    const m = order.length;
    const top = scroller.scrollTop;
    let first: number;
    let shift = 0;
    if (m * ROW_PX <= MAX_SCROLL_PX) {
      first = Math.floor(top / ROW_PX);
      shift = top % ROW_PX;
    } else {
      const span = virtualPx - VIEW_ROWS * ROW_PX;
      first = Math.round((top / Math.max(1, span)) * Math.max(0, m - VIEW_ROWS));
    }
    inner.style.transform = `translateY(${-shift}px)`;
    for (let r = 0; r < pool.length; r++) {
      const cells = pool[r];
      const k = first + r;
      const row = cells[0].parentElement!;
      if (k >= m) { row.style.visibility = 'hidden'; continue; }
      row.style.visibility = '';
      const i = order[k];
      row.classList.toggle('hl', i === highlight);
      cells[0].textContent = String(i + 1);
      cells[1].textContent = us(start[i]);
      cells[2].textContent = us(start[i] + lat[i]);
      cells[3].textContent = us(lat[i]);
      cells[4].textContent = kinds[kind[i]] ?? '?';
      cells[5].textContent = paths[file[i]] ?? '?';
      cells[5].title = paths[file[i]] ?? '';
      cells[6].textContent = String(offset[i]);
      cells[7].textContent = String(len[i]);
      cells[8].textContent = result(res[i]);
      cells[8].className = `tx-cell c-result${res[i] < 0 ? ' err' : ''}`;
      cells[9].textContent = String(stream[i]);
    }
  }
  scroller.addEventListener('scroll', () => requestAnimationFrame(render), { passive: true });

  function filtered(): Uint32Array {
    const op = opSel.value === '' ? -1 : Number(opSel.value);
    const q = fileIn.value.trim().toLowerCase();
    const fileOk = q ? new Uint8Array(paths.map((p) => (p.toLowerCase().includes(q) ? 1 : 0))) : null;
    const minNs = minLat.value === '' ? -Infinity : Number(minLat.value) * 1e3;
    const from = fromS.value === '' ? -Infinity : Number(fromS.value) * 1e3;
    const to = toS.value === '' ? Infinity : Number(toS.value) * 1e3;
    const st = streamIn.value === '' ? -1 : Number(streamIn.value);
    const errs = errOnly.checked;
    const all = op < 0 && !fileOk && minNs === -Infinity && from === -Infinity && to === Infinity && st < 0 && !errs;
    const out = new Uint32Array(n);
    let m = 0;
    for (let i = 0; i < n; i++) {
      if (!all) {
        if (op >= 0 && kind[i] !== op) continue;
        if (fileOk && !fileOk[file[i]]) continue;
        if (lat[i] < minNs) continue;
        if (start[i] < from || start[i] > to) continue;
        if (st >= 0 && stream[i] !== st) continue;
        if (errs && res[i] >= 0) continue;
      }
      out[m++] = i;
    }
    return out.slice(0, m);
  }

  function sortOrder(idx: Uint32Array): Uint32Array {
    if (sortKey === 'row') return sortDesc ? idx.reverse() : idx;
    const key = keyOf[sortKey];
    const m = idx.length;
    const k = new Float64Array(m);
    for (let j = 0; j < m; j++) k[j] = key(idx[j]);
    const perm = new Uint32Array(m);
    for (let j = 0; j < m; j++) perm[j] = j;
    // Ties keep issue order, so a sort is stable and repeatable.
    if (sortDesc) perm.sort((a, b) => k[b] - k[a] || a - b);
    else perm.sort((a, b) => k[a] - k[b] || a - b);
    const out = new Uint32Array(m);
    for (let j = 0; j < m; j++) out[j] = idx[perm[j]];
    return out;
  }

  function describe(): void {
    const m = order.length;
    let text = `${count(m)} of ${count(n)} ops`;
    if (m > 0) {
      const v = new Float64Array(m);
      let sum = 0;
      for (let j = 0; j < m; j++) { v[j] = lat[order[j]]; sum += v[j]; }
      const mean = sum / m;
      let sq = 0;
      for (let j = 0; j < m; j++) sq += (v[j] - mean) * (v[j] - mean);
      v.sort();
      const q = (p: number) => v[Math.min(m - 1, Math.max(0, Math.ceil(p * m) - 1))];
      const [mn, sd, p50, p99, max] = durations([mean, Math.sqrt(sq / m), q(0.5), q(0.99), v[m - 1]]);
      text += ` · latency mean ${mn}, standard deviation ${sd}, p50 ${p50}, p99 ${p99}, max ${max}`;
    }
    status.textContent = text;
    status.dataset.count = String(m);
  }

  let pending = 0;
  async function refresh(): Promise<void> {
    const ticket = ++pending;
    box.classList.add('busy');
    await new Promise((r) => setTimeout(r, 0));
    if (ticket !== pending) return;
    order = sortOrder(filtered());
    for (const cell of headCells) {
      const key = cell.dataset.key as Key;
      cell.classList.toggle('sorted', key === sortKey);
      cell.dataset.dir = key === sortKey ? (sortDesc ? 'desc' : 'asc') : '';
    }
    virtualPx = Math.min(order.length * ROW_PX, MAX_SCROLL_PX);
    spacer.style.height = `${Math.max(0, virtualPx - VIEW_ROWS * ROW_PX)}px`;
    scroller.scrollTop = 0;
    describe();
    render();
    box.classList.remove('busy');
    box.dataset.rows = String(order.length);
    box.dataset.sort = `${sortKey}:${sortDesc ? 'desc' : 'asc'}`;
  }
  let timer = 0;
  const later = () => { clearTimeout(timer); timer = window.setTimeout(() => void refresh(), 200); };
  for (const el of [fileIn, minLat, fromS, toS, streamIn]) el.addEventListener('input', later);
  opSel.addEventListener('change', () => void refresh());
  errOnly.addEventListener('change', () => void refresh());
  // The rows shown, filtered and sorted, as CSV (times in µs, sizes in bytes).
  csvBtn.addEventListener('click', () => {
    const q = (s: string) => (/[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);
    const lines = ['row,start_us,finish_us,latency_us,op,file,offset_bytes,length_bytes,result,stream'];
    for (let k = 0; k < order.length; k++) {
      const i = order[k];
      lines.push(`${i + 1},${us(start[i])},${us(start[i] + lat[i])},${us(lat[i])},${kinds[kind[i]] ?? '?'},${q(paths[file[i]] ?? '?')},${offset[i]},${len[i]},${result(res[i])},${stream[i]}`);
    }
    const a = h('a', { href: URL.createObjectURL(new Blob([lines.join('\n') + '\n'], { type: 'text/csv' })), download: `transactions-${order.length}-rows.csv` }) as HTMLAnchorElement;
    document.body.append(a);
    a.click();
    a.remove();
  });

  // The access map's click: show that op here, clearing filters that hide it.
  parent.addEventListener('naslab-reveal', (e) => {
    const r = (e as CustomEvent<{ row: number }>).detail.row;
    if (r < 0 || r >= n) {
      status.textContent = `op #${r + 1} is past the list's ${count(n)} rows (the report's cap)`;
      return;
    }
    void (async () => {
      let k = order.indexOf(r);
      if (k < 0) {
        opSel.value = ''; fileIn.value = ''; minLat.value = ''; fromS.value = ''; toS.value = ''; streamIn.value = ''; errOnly.checked = false;
        await refresh();
        k = order.indexOf(r);
      }
      highlight = r;
      const m = order.length;
      scroller.scrollTop = m * ROW_PX <= MAX_SCROLL_PX
        ? k * ROW_PX
        : (k / Math.max(1, m - VIEW_ROWS)) * Math.max(1, virtualPx - VIEW_ROWS * ROW_PX);
      render();
      box.dataset.highlight = String(r);
      box.scrollIntoView({ block: 'nearest' });
    })();
  });
  await refresh();
}
