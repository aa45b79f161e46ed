// The file access map: each read and write counted into the cell of a grid over the plot
// (CELL device pixels square) that its issue time and offset span fall in, the grid's
// cells shaded by how many ops they hold and coloured by the file of the latest of them.
// uPlot draws the axes and handles zooming (drag a box; double-click resets); the cells
// are drawn straight onto its canvas.
//
// Density-true: every op in the window that the file, op and offset filters let through
// is counted (nothing is sampled), and the grid is worked out again for each zoom and
// filter, so a cell is painted if and only if it holds an op. An op spanning many cells
// is drawn as one bar over them. The ops come from the transaction list's rows when they
// hold every op; otherwise from the even sample the report keeps (one in `stride`), and
// the note under the chart says so. Hovering names the latest op of the nearest cell;
// clicking it shows it in the transaction list.
import uPlot from 'uplot';
import { loadColumns } from './blob';
import { chartBox, setPoints, timeUnit } from './charts';
import { h } from './dom';
import { bytes, colour, count, decimalSplits, decimalTickLabels, duration, plural } from './format';
import type { IterationPage } from './types';

/** A grid cell's side, in device pixels. */
const CELL = 2;
/** An op spanning more cells than this in its column is drawn as one bar. */
const LONG = 12;
/** The faintest shade a cell holding one op is drawn at (the busiest is opaque). */
const MIN_ALPHA = 0.45;
/** How near (CSS px) the pointer must be to an op for hover to name it. */
const HOVER_PX = 8;
/** How long a click waits for a second one (a double-click) before it shows its op, ms. */
const DOUBLE_CLICK_MS = 300;

export async function accessMap(parent: HTMLElement, it: IterationPage, kinds: string[]): Promise<void> {
  const access = it.access;
  if (!access) return;
  const readIdx = kinds.indexOf('read');
  const writeIdx = kinds.indexOf('write');
  // The source: every op from the rows, or the even sample.
  let t: Float64Array, off: Float64Array, len: Float64Array, file: Uint32Array, kind: Uint8Array, row: Float64Array | null;
  let sel: Uint32Array;
  const fromRows = !access.blob;
  if (fromRows) {
    if (!it.rows) return;
    const c = await loadColumns(it.rows.blob);
    t = c.start_ns as Float64Array; off = c.offset as Float64Array; len = c.len as Float64Array;
    file = c.file as Uint32Array; kind = c.kind as Uint8Array; row = null;
    const all = new Uint32Array(t.length);
    let m = 0;
    for (let i = 0; i < t.length; i++) if (kind[i] === readIdx || kind[i] === writeIdx) all[m++] = i;
    sel = all.slice(0, m);
  } else {
    const c = await loadColumns(access.blob!);
    t = c.t_ns as Float64Array; off = c.offset as Float64Array; len = c.len as Float64Array;
    file = c.file as Uint32Array; kind = c.kind as Uint8Array; row = c.row as Float64Array;
    sel = new Uint32Array(t.length);
    for (let i = 0; i < t.length; i++) sel[i] = i;
  }
  // Time order (records are in issue order per stream; streams interleave).
  let sorted = true;
  for (let j = 1; j < sel.length && sorted; j++) if (t[sel[j]] < t[sel[j - 1]]) sorted = false;
  if (!sorted) sel = sel.sort((a, b) => t[a] - t[b] || a - b);
  const n = sel.length;
  const nfiles = it.files.length;
  const perFile = new Uint32Array(nfiles);
  let tMax = 0;
  let yMax = 1;
  for (let j = 0; j < n; j++) {
    const i = sel[j];
    perFile[file[i]]++;
    if (t[i] > tMax) tMax = t[i];
    if (off[i] + len[i] > yMax) yMax = off[i] + len[i];
  }
  const used: number[] = [];
  for (let f = 0; f < nfiles; f++) if (perFile[f] > 0) used.push(f);
  const selected = new Uint8Array(nfiles).fill(1);
  let showReads = true;
  let showWrites = true;
  const unit = timeUnit(tMax);
  const full = { x: [0, Math.max(tMax / unit.ns, 1e-6) * 1.01], y: [0, yMax * 1.02] };

  const wrap = h('div', { class: 'access' });
  parent.append(wrap);
  const filterBox = h('input', { type: 'search', placeholder: 'filter files by path', 'aria-label': 'filter files' }) as HTMLInputElement;
  const list = h('div', { class: 'file-list' });
  const reads = h('input', { type: 'checkbox', checked: true, 'aria-label': 'show reads' }) as HTMLInputElement;
  const writes = h('input', { type: 'checkbox', checked: true, 'aria-label': 'show writes' }) as HTMLInputElement;
  const allBtn = h('button', { type: 'button' }, 'all shown');
  const noneBtn = h('button', { type: 'button' }, 'none');
  const readout = h('div', { class: 'access-readout', 'data-role': 'access-readout' }, 'Point at an op to see its file, time, offset and length; click it to show it in the transaction list.');

  const controls = h('div', { class: 'controls' });
  let u: uPlot;
  let boxEl: HTMLElement | null = null;
  let noteEl: HTMLElement | null = null;
  // The points of the last drawing, for hover: source index and CSS-pixel position.
  let dIdx = new Uint32Array(0), dX = new Float32Array(0), dY = new Float32Array(0), dN = 0;
  // The last drawing's grid: ops per cell, column-major (cols × rows), and each cell's
  // latest op (source index + 1; 0 for none), for hover, the tests and the note.
  let grid = { cols: 0, rows: 0, count: new Uint32Array(0), latest: new Uint32Array(0) };
  let longOps: number[] = [];
  let hovered = -1;
  /** The op a click on the map is about to show in the transaction list. */
  let revealing: number | undefined;
  const box = chartBox(wrap, 'File access map', n, ' ', (target, width) => {
    u = new uPlot({
      width, height: 380,
      scales: {
        x: { time: false, auto: false, range: (_u, lo, hi) => [lo, hi] },
        y: { auto: false, range: (_u, lo, hi) => [lo, hi] },
      },
      axes: [{ label: `${unit.name} into the measured phase`, size: 40 }, { label: 'offset', size: 70, splits: (self, _i, lo, hi) => decimalSplits(lo, hi, self.bbox.height / devicePixelRatio, 40), values: (self, v) => {
        const labels = decimalTickLabels(v);
        // The labels drawn, for readers of the DOM (the canvas holds only pixels).
        const b = self.root.closest('.chart') as HTMLElement | null;
        if (b) b.dataset.offsetTicks = JSON.stringify(labels);
        return labels;
      } }],
      series: [{ label: 's' }, { label: 'offset', stroke: 'transparent', points: { show: false } }],
      cursor: { drag: { x: true, y: true, uni: 30 }, points: { show: false }, bind: { dblclick: () => null } },
      legend: { show: false },
      hooks: {
        ready: [(self) => {
          self.over.addEventListener('dblclick', () => {
            window.clearTimeout(revealing);
            self.batch(() => {
              self.setScale('x', { min: full.x[0], max: full.x[1] });
              self.setScale('y', { min: full.y[0], max: full.y[1] });
            });
          });
          self.over.addEventListener('mousemove', (e) => hover(e.offsetX, e.offsetY));
          self.over.addEventListener('mouseleave', () => { hovered = -1; });
          self.over.addEventListener('click', (e) => {
            hover(e.offsetX, e.offsetY);
            window.clearTimeout(revealing);
            if (hovered < 0 || e.detail > 1) return;
            // Shown once no second click makes it a double-click (which resets the zoom
            // and leaves the page where it is).
            const i = hovered;
            revealing = window.setTimeout(() => reveal(i), DOUBLE_CLICK_MS);
          });
        }],
        draw: [(self) => draw(self)],
      },
    }, [full.x, [null, null]] as unknown as uPlot.AlignedData, target);
    u.batch(() => {
      u.setScale('x', { min: full.x[0], max: full.x[1] });
      u.setScale('y', { min: full.y[0], max: full.y[1] });
    });
    return u;
  }, controls);
  boxEl = box.box;
  noteEl = boxEl.querySelector('p.note');
  boxEl.append(readout);

  /** The first position in `sel` whose time is at least `v` (ns). */
  function lowerBound(v: number): number {
    let lo = 0, hi = n;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (t[sel[mid]] < v) lo = mid + 1; else hi = mid; }
    return lo;
  }

  /** The cell (0 to n - 1) of value `v` on an axis from `v0` to `v1` drawn `px` device
   * pixels long; the browser tests work out their grid with this very expression. */
  function cellOf(v: number, v0: number, v1: number, px: number, cells: number): number {
    return Math.min(cells - 1, Math.max(0, Math.floor(((v - v0) / (v1 - v0)) * px / CELL)));
  }

  function draw(self: uPlot): void {
    const ctx = self.ctx;
    const { left, top, width, height } = self.bbox;
    const dpr = devicePixelRatio || 1;
    const x0 = self.scales.x.min ?? 0, x1 = self.scales.x.max ?? 1;
    const y0 = self.scales.y.min ?? 0, y1 = self.scales.y.max ?? 1;
    const t0 = x0 * unit.ns, t1 = x1 * unit.ns;
    const cols = Math.max(1, Math.floor(width / CELL));
    const rows = Math.max(1, Math.floor(height / CELL));
    if (grid.cols !== cols || grid.rows !== rows) {
      grid = { cols, rows, count: new Uint32Array(cols * rows), latest: new Uint32Array(cols * rows) };
    } else {
      grid.count.fill(0);
      grid.latest.fill(0);
    }
    const { count, latest } = grid;
    // Long ops add to their cells through a difference array per column.
    const diff = new Int32Array(cols * (rows + 1));
    longOps = [];
    const lo = lowerBound(t0);
    const hi = lowerBound(t1 + 1);
    const inWindow = Math.max(0, hi - lo);
    let counted = 0;
    for (let j = lo; j < hi; j++) {
      const i = sel[j];
      if (!selected[file[i]]) continue;
      const isRead = kind[i] === readIdx;
      if ((isRead && !showReads) || (!isRead && !showWrites)) continue;
      if (t[i] > t1) continue;
      const end = off[i] + len[i];
      if (end < y0 || off[i] > y1) continue;
      counted++;
      const c = cellOf(t[i], t0, t1, width, cols);
      const r0 = cellOf(Math.max(off[i], y0), y0, y1, height, rows);
      const r1 = cellOf(Math.min(end, y1), y0, y1, height, rows);
      if (r1 - r0 >= LONG) {
        diff[c * (rows + 1) + r0]++;
        diff[c * (rows + 1) + r1 + 1]--;
        longOps.push(i);
        continue;
      }
      for (let r = r0, k = c * rows + r0; r <= r1; r++, k++) {
        count[k]++;
        latest[k] = i + 1;
      }
    }
    let busiest = 0;
    for (let c = 0; c < cols; c++) {
      let run = 0;
      for (let r = 0; r < rows; r++) {
        run += diff[c * (rows + 1) + r];
        const k = c * rows + r;
        count[k] += run;
        if (count[k] > busiest) busiest = count[k];
      }
    }
    // Paint: the long ops' bars first, then every cell with a latest op of its own.
    const shade = (n: number) => (busiest <= 1 ? 1 : MIN_ALPHA + (1 - MIN_ALPHA) * (Math.log(n) / Math.log(busiest)));
    const bottom = top + height;
    ctx.save();
    ctx.beginPath();
    ctx.rect(left, top, width, height);
    ctx.clip();
    for (const i of longOps) {
      const c = cellOf(t[i], t0, t1, width, cols);
      const r0 = cellOf(Math.max(off[i], y0), y0, y1, height, rows);
      const r1 = cellOf(Math.min(off[i] + len[i], y1), y0, y1, height, rows);
      ctx.fillStyle = colour(file[i]);
      ctx.fillRect(left + c * CELL, bottom - (r1 + 1) * CELL, CELL, (r1 - r0 + 1) * CELL);
    }
    const points: number[] = [];
    for (let c = 0; c < cols; c++) {
      for (let r = 0; r < rows; r++) {
        const k = c * rows + r;
        if (!latest[k]) continue;
        ctx.fillStyle = colour(file[latest[k] - 1], shade(count[k]));
        ctx.fillRect(left + c * CELL, bottom - (r + 1) * CELL, CELL, CELL);
        points.push(k);
      }
    }
    ctx.restore();
    // Hover candidates: every painted cell's latest op, and each long op's bar.
    dN = points.length + longOps.length;
    if (dIdx.length < dN) { dIdx = new Uint32Array(dN); dX = new Float32Array(dN); dY = new Float32Array(dN); }
    points.forEach((k, m) => {
      const c = Math.floor(k / rows), r = k % rows;
      dIdx[m] = latest[k] - 1;
      dX[m] = (c * CELL + CELL / 2) / dpr;
      dY[m] = (bottom - top - (r + 0.5) * CELL) / dpr;
    });
    longOps.forEach((i, n) => {
      const m = points.length + n;
      const c = cellOf(t[i], t0, t1, width, cols);
      const r0 = cellOf(Math.max(off[i], y0), y0, y1, height, rows);
      const r1 = cellOf(Math.min(off[i] + len[i], y1), y0, y1, height, rows);
      dIdx[m] = i;
      dX[m] = (c * CELL + CELL / 2) / dpr;
      dY[m] = (bottom - top - ((r0 + r1 + 1) / 2) * CELL) / dpr;
    });
    // The first drawing happens while the chart is made, before chartBox returns.
    const b = boxEl ?? (self.root.closest('.chart') as HTMLElement | null);
    if (b) {
      setPoints(b, counted);
      b.dataset.cells = String(points.length);
      b.dataset.window = JSON.stringify([t0, t1]);
      // What the tests need to work out the same grid from the records.
      b.dataset.grid = JSON.stringify({ t0, t1, y0, y1, width, height, cell: CELL, cols, rows, left, top });
      const note = noteEl ?? b.querySelector('p.note');
      if (note) note.textContent = describe(inWindow, counted, busiest);
    }
  }

  function describe(inWindow: number, counted: number, busiest: number): string {
    const total = fromRows ? inWindow : inWindow * access!.stride;
    const what = fromRows
      ? `all ${count(inWindow)} reads and writes in this window`
      : `a sample of about 1 in every ${count(access!.stride)} of the about ${count(total)} reads and writes in this window (the transaction list does not hold every op, so a square may miss ops the sample left out)`;
    const filtered = counted < inWindow ? `; ${count(counted)} of them pass the file, op and offset filters` : '';
    const shade = busiest > 1 ? `; the more ops a square holds, the darker it is (the darkest holds ${count(busiest)})` : '';
    return `Offset against issue time, one colour per file (the latest op's, where files share a square). Each ${CELL} × ${CELL} pixel square is painted if it holds an op: counted are ${what}${filtered}${shade}. Drag a box to zoom; double-click to see everything.`;
  }

  function hover(cx: number, cy: number): void {
    let best = -1, bestD = HOVER_PX * HOVER_PX;
    for (let k = 0; k < dN; k++) {
      const dx = dX[k] - cx, dy = dY[k] - cy;
      const d = dx * dx + dy * dy;
      if (d < bestD) { bestD = d; best = k; }
    }
    if (best < 0) { hovered = -1; return; }
    const i = dIdx[best];
    hovered = i;
    const r = row ? row[i] : i;
    readout.textContent = `${it.files[file[i]]?.path ?? '?'} · ${kinds[kind[i]]} · issued ${duration(t[i])} into the phase · offset ${off[i]} B (${bytes(off[i])}) · length ${len[i]} B · op #${r + 1} (click to show it in the transaction list)`;
    readout.dataset.row = String(r);
  }

  function reveal(i: number): void {
    const r = row ? row[i] : i;
    parent.dispatchEvent(new CustomEvent('naslab-reveal', { detail: { row: r } }));
  }

  // Exposed for the browser tests: the k-th drawn point's CSS position over the plot, and
  // the ops counted per cell of the last drawing (column-major).
  (boxEl as HTMLElement & { naslabPoint?: (k: number) => { x: number; y: number; row: number } | null }).naslabPoint = (k) =>
    (k < dN ? { x: dX[k], y: dY[k], row: row ? row[dIdx[k]] : dIdx[k] } : null);
  (boxEl as HTMLElement & { naslabGrid?: () => number[] }).naslabGrid = () => Array.from(grid.count);

  // The file picker: one line per file accessed, in a list that scrolls (thousands of
  // files stay usable), sorted by ops (busiest first) or by path, narrowed by a search.
  const sortSel = h('select', { 'aria-label': 'sort files', 'data-role': 'file-sort' },
    h('option', { value: 'ops', selected: true }, 'busiest files first'),
    h('option', { value: 'path' }, 'files by path')) as HTMLSelectElement;
  const fileCount = h('span', { class: 'stats', 'data-role': 'file-count' });
  const rows: { f: number; row: HTMLElement; cb: HTMLInputElement; shown: boolean }[] = [];
  for (const f of used) {
    const cb = h('input', { type: 'checkbox', checked: true }) as HTMLInputElement;
    cb.addEventListener('change', () => { selected[f] = cb.checked ? 1 : 0; u.redraw(false); });
    const rowEl = h('label', { class: 'file', title: it.files[f].path, 'data-file': f }, cb,
      h('span', { class: 'swatch', style: `background:${colour(f)}` }),
      h('span', { class: 'path' }, it.files[f].path),
      h('span', { class: 'ops' }, plural(perFile[f], 'op')));
    rows.push({ f, row: rowEl, cb, shown: true });
  }
  const sortRows = () => {
    const byPath = sortSel.value === 'path';
    rows.sort((a, b) => (byPath
      ? (it.files[a.f].path < it.files[b.f].path ? -1 : it.files[a.f].path > it.files[b.f].path ? 1 : a.f - b.f)
      : perFile[b.f] - perFile[a.f] || a.f - b.f));
    list.replaceChildren(...rows.map((r) => r.row));
  };
  const describeFiles = () => {
    const shown = rows.filter((r) => r.shown).length;
    const narrowed = shown < rows.length ? `, ${count(shown)} of them match "${filterBox.value}"` : '';
    fileCount.textContent = `${plural(used.length, 'file')} accessed${narrowed}; untick a file to hide it`;
  };
  sortRows();
  describeFiles();
  sortSel.addEventListener('change', sortRows);
  filterBox.addEventListener('input', () => {
    const q = filterBox.value.toLowerCase();
    for (const r of rows) {
      r.shown = it.files[r.f].path.toLowerCase().includes(q);
      r.row.style.display = r.shown ? '' : 'none';
      selected[r.f] = r.shown && r.cb.checked ? 1 : 0;
    }
    describeFiles();
    u.redraw(false);
  });
  const setAll = (on: boolean) => {
    for (const r of rows) {
      if (!r.shown) continue;
      r.cb.checked = on;
      selected[r.f] = on ? 1 : 0;
    }
    u.redraw(false);
  };
  allBtn.addEventListener('click', () => setAll(true));
  noneBtn.addEventListener('click', () => setAll(false));
  reads.addEventListener('change', () => { showReads = reads.checked; u!.redraw(false); });
  writes.addEventListener('change', () => { showWrites = writes.checked; u!.redraw(false); });
  controls.append(h('label', {}, reads, ' reads'), h('label', {}, writes, ' writes'));
  wrap.append(h('div', { class: 'file-controls' }, filterBox, sortSel, allBtn, noneBtn, fileCount), list);
}
