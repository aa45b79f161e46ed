// The file access map: each read and write as a short bar at (issue time, offset span),
// coloured by file. uPlot draws the axes and handles zooming (drag a box; double-click
// resets); the points are drawn straight onto its canvas for speed.
//
// Density-true: the ops in the window are taken in time order and every k-th is drawn,
// k the smallest step that keeps the drawing under POINT_BUDGET, so the points drawn per
// stretch of time follow the ops there. Zooming in lowers k, down to every op, from the
// transaction list's rows when they hold every op (otherwise from the report's even
// sample, one in `stride`). The note under the chart says exactly what is drawn.
// Hovering names the nearest op; clicking it shows it in the transaction list.
import uPlot from 'uplot';
import { loadColumns } from './blob';
import { chartBox, setPoints, timeUnit } from './charts';
import { h } from './dom';
import { bytes, colour, count, decimalSplits, decimalTickLabels, duration } from './format';
import type { IterationPage } from './types';

/** At most this many points are drawn at once. */
const POINT_BUDGET = 120_000;
/** Buckets of the drawn-points histogram the chart exposes (data-drawn-per-bucket). */
const BUCKETS = 20;
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

  function draw(self: uPlot): void {
    const ctx = self.ctx;
    const { left, top, width, height } = self.bbox;
    const dpr = devicePixelRatio || 1;
    const x0 = self.scales.x.min ?? 0, x1 = self.scales.x.max ?? 1;
    const y0 = self.scales.y.min ?? 0, y1 = self.scales.y.max ?? 1;
    const sx = width / (x1 - x0 || 1), sy = height / (y1 - y0 || 1);
    const dot = Math.max(2, Math.round(2 * dpr));
    const lo = lowerBound(x0 * unit.ns);
    const hi = lowerBound(x1 * unit.ns + 1);
    const inWindow = Math.max(0, hi - lo);
    const step = Math.max(1, Math.ceil(inWindow / POINT_BUDGET));
    // Pass 1: pick every step-th op of the window (aligned, so panning is steady), keep
    // those the filters let through, grouped by file for one fill colour each.
    const cap = Math.ceil(inWindow / step) + 1;
    if (dIdx.length < cap) { dIdx = new Uint32Array(cap); dX = new Float32Array(cap); dY = new Float32Array(cap); }
    const byFile = new Uint32Array(nfiles + 1);
    const pick = new Uint32Array(cap);
    let m = 0;
    const hist = new Array<number>(BUCKETS).fill(0);
    const span = (x1 - x0) * unit.ns || 1;
    for (let j = Math.ceil(lo / step) * step; j < hi; j += step) {
      const i = sel[j];
      if (!selected[file[i]]) continue;
      const isRead = kind[i] === readIdx;
      if ((isRead && !showReads) || (!isRead && !showWrites)) continue;
      if (off[i] + len[i] < y0 || off[i] > y1) continue;
      pick[m++] = i;
      byFile[file[i] + 1]++;
      hist[Math.min(BUCKETS - 1, Math.floor(((t[i] - x0 * unit.ns) / span) * BUCKETS))]++;
    }
    for (let f = 0; f < nfiles; f++) byFile[f + 1] += byFile[f];
    const slot = byFile.slice(0, nfiles);
    for (let k = 0; k < m; k++) dIdx[slot[file[pick[k]]]++] = pick[k];
    ctx.save();
    ctx.beginPath();
    ctx.rect(left, top, width, height);
    ctx.clip();
    let cur = -1;
    for (let k = 0; k < m; k++) {
      const i = dIdx[k];
      if (file[i] !== cur) { cur = file[i]; ctx.fillStyle = colour(cur); }
      const px = left + (t[i] / unit.ns - x0) * sx;
      const yEnd = off[i] + len[i];
      const pyTop = top + height - (Math.min(yEnd, y1) - y0) * sy;
      const pyBot = top + height - (Math.max(off[i], y0) - y0) * sy;
      // A transfer is a short vertical bar spanning its bytes (at least a dot).
      ctx.fillRect(px - dot / 2, Math.min(pyTop, pyBot - dot), dot, Math.max(dot, pyBot - pyTop));
      dX[k] = (px - left) / dpr;
      dY[k] = ((pyTop + pyBot) / 2 - top) / dpr;
    }
    ctx.restore();
    dN = m;
    // The first drawing happens while the chart is made, before chartBox returns.
    const b = boxEl ?? (self.root.closest('.chart') as HTMLElement | null);
    if (b) {
      setPoints(b, m);
      b.dataset.step = String(step * (fromRows ? 1 : access!.stride));
      b.dataset.drawnPerBucket = JSON.stringify(hist);
      b.dataset.window = JSON.stringify([x0 * unit.ns, x1 * unit.ns]);
      const note = noteEl ?? b.querySelector('p.note');
      if (note) note.textContent = describe(inWindow, step, m);
    }
  }

  function describe(inWindow: number, step: number, drawn: number): string {
    const every = step * (fromRows ? 1 : access!.stride);
    const what = every === 1
      ? `every one of the ${count(inWindow)} reads and writes in this window`
      : `1 in every ${count(every)} of the ${count(fromRows ? inWindow : inWindow * access!.stride)}${fromRows ? '' : ' (about)'} reads and writes in this window, evenly in time, so density follows the records`;
    const filtered = drawn < Math.ceil(inWindow / step) ? `; ${count(drawn)} pass the file, op and offset filters` : '';
    const zoom = every > 1 ? ' Zoom in (drag a box) to draw more of them; double-click to see everything.' : ' Drag a box to zoom, double-click to see everything.';
    return `Offset against issue time, one colour per file. Drawn: ${what}${filtered}.${zoom}`;
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

  // Exposed for the browser tests: the k-th drawn point's CSS position over the plot.
  (boxEl as HTMLElement & { naslabPoint?: (k: number) => { x: number; y: number; row: number } | null }).naslabPoint = (k) =>
    (k < dN ? { x: dX[k], y: dY[k], row: row ? row[dIdx[k]] : dIdx[k] } : null);

  const rows: { f: number; row: HTMLElement; cb: HTMLInputElement }[] = [];
  for (const f of used) {
    const cb = h('input', { type: 'checkbox', checked: true }) as HTMLInputElement;
    cb.addEventListener('change', () => { selected[f] = cb.checked ? 1 : 0; u.redraw(false); });
    const rowEl = h('label', { class: 'file', title: it.files[f].path }, cb, h('span', { class: 'swatch', style: `background:${colour(f)}` }), `${it.files[f].path} (${count(perFile[f])})`);
    rows.push({ f, row: rowEl, cb });
    list.append(rowEl);
  }
  filterBox.addEventListener('input', () => {
    const q = filterBox.value.toLowerCase();
    for (const r of rows) {
      const match = it.files[r.f].path.toLowerCase().includes(q);
      r.row.style.display = match ? '' : 'none';
      selected[r.f] = match && r.cb.checked ? 1 : 0;
    }
    u.redraw(false);
  });
  const setAll = (on: boolean) => {
    for (const r of rows) {
      if (r.row.style.display === 'none') continue;
      r.cb.checked = on;
      selected[r.f] = on ? 1 : 0;
    }
    u.redraw(false);
  };
  allBtn.addEventListener('click', () => setAll(true));
  noneBtn.addEventListener('click', () => setAll(false));
  reads.addEventListener('change', () => { showReads = reads.checked; u!.redraw(false); });
  writes.addEventListener('change', () => { showWrites = writes.checked; u!.redraw(false); });
  controls.append(h('label', {}, reads, ' reads'), h('label', {}, writes, ' writes'), filterBox, allBtn, noneBtn,
    h('span', { class: 'stats' }, `${used.length} files accessed; untick a file to hide it`));
  wrap.append(list);
}
