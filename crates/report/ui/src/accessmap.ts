// The file access map: each read and write as a point at (issue time, offset), coloured
// by file. uPlot draws the axes and handles zooming (drag a box; double-click resets);
// the points are drawn straight onto its canvas, file by file, for speed.
import uPlot from 'uplot';
import { loadColumns } from './blob';
import { chartBox, setPoints, timeUnit } from './charts';
import { h } from './dom';
import { bytes, colour } from './format';
import type { IterationPage } from './types';

export async function accessMap(parent: HTMLElement, it: IterationPage, kinds: string[]): Promise<void> {
  const access = it.access;
  if (!access) return;
  const cols = await loadColumns(access.blob);
  const t = cols.t_ns as Float64Array;
  const off = cols.offset as Float64Array;
  const len = cols.len as Float64Array;
  const file = cols.file as Uint32Array;
  const kind = cols.kind as Uint8Array;
  const n = t.length;
  const nfiles = it.files.length;
  // Points grouped by file, so each file's colour is set once per redraw.
  const byFile: number[][] = Array.from({ length: nfiles }, () => []);
  let tMax = 0;
  let yMax = 1;
  for (let i = 0; i < n; i++) {
    byFile[file[i]]?.push(i);
    tMax = Math.max(tMax, t[i]);
    yMax = Math.max(yMax, off[i] + len[i]);
  }
  const used = byFile.map((p, f) => [f, p.length]).filter(([, c]) => c > 0).map(([f]) => f);
  const selected = new Uint8Array(nfiles).fill(1);
  const readIdx = kinds.indexOf('read');
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

  const controls = h('div', { class: 'controls' });
  let u: uPlot;
  let drawn = 0;
  let boxEl: HTMLElement | null = null;
  const box = chartBox(wrap, 'File access map', n, `Offset against time, one colour per file; ${access.shown.toLocaleString('en-US')} of ${access.seen.toLocaleString('en-US')} reads and writes drawn. Drag a box to zoom, double-click to see everything.`, (target, width) => {
    u = new uPlot({
      width, height: 380,
      scales: {
        x: { time: false, auto: false, range: (_u, lo, hi) => [lo, hi] },
        y: { auto: false, range: (_u, lo, hi) => [lo, hi] },
      },
      axes: [{ label: `${unit.name} into the measured phase`, size: 40 }, { label: 'offset', size: 70, values: (_u, v) => v.map((b) => bytes(b)) }],
      series: [{ label: 's' }, { label: 'offset', stroke: 'transparent', points: { show: false } }],
      cursor: { drag: { x: true, y: true, uni: 30 }, points: { show: false }, bind: { dblclick: () => null } },
      legend: { show: false },
      hooks: {
        ready: [(self) => {
          self.over.addEventListener('dblclick', () => {
            self.batch(() => {
              self.setScale('x', { min: full.x[0], max: full.x[1] });
              self.setScale('y', { min: full.y[0], max: full.y[1] });
            });
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
  setPoints(boxEl, drawn);

  function draw(self: uPlot): void {
    const ctx = self.ctx;
    const { left, top, width, height } = self.bbox;
    const x0 = self.scales.x.min ?? 0, x1 = self.scales.x.max ?? 1;
    const y0 = self.scales.y.min ?? 0, y1 = self.scales.y.max ?? 1;
    const sx = width / (x1 - x0 || 1), sy = height / (y1 - y0 || 1);
    const dot = Math.max(2, Math.round(2 * devicePixelRatio));
    ctx.save();
    ctx.beginPath();
    ctx.rect(left, top, width, height);
    ctx.clip();
    let count = 0;
    for (const f of used) {
      if (!selected[f]) continue;
      ctx.fillStyle = colour(f);
      for (const i of byFile[f]) {
        const isRead = kind[i] === readIdx;
        if ((isRead && !showReads) || (!isRead && !showWrites)) continue;
        const ts = t[i] / unit.ns;
        if (ts < x0 || ts > x1) continue;
        const yEnd = off[i] + len[i];
        if (yEnd < y0 || off[i] > y1) continue;
        const px = left + (ts - x0) * sx;
        const pyTop = top + height - (Math.min(yEnd, y1) - y0) * sy;
        const pyBot = top + height - (Math.max(off[i], y0) - y0) * sy;
        // A transfer is drawn as a short vertical bar spanning its bytes (at least a dot).
        ctx.fillRect(px - dot / 2, Math.min(pyTop, pyBot - dot), dot, Math.max(dot, pyBot - pyTop));
        count++;
      }
    }
    ctx.restore();
    drawn = count;
    if (boxEl) setPoints(boxEl, drawn);
  }

  const rows: { f: number; row: HTMLElement; cb: HTMLInputElement }[] = [];
  for (const f of used) {
    const cb = h('input', { type: 'checkbox', checked: true }) as HTMLInputElement;
    cb.addEventListener('change', () => { selected[f] = cb.checked ? 1 : 0; u.redraw(false); });
    const row = h('label', { class: 'file', title: it.files[f].path }, cb, h('span', { class: 'swatch', style: `background:${colour(f)}` }), `${it.files[f].path} (${byFile[f].length})`);
    rows.push({ f, row, cb });
    list.append(row);
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
