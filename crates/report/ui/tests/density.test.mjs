// The access map against the records, cell by cell: a cell of the drawn grid must be
// painted if and only if it holds an op, and hold as many as the records put there. The
// records are written here, adversarially: runs of ops repeating with every period from
// 2 to 16 ("read A" p - 1 times, then "write B" far away in offset), a rare file among
// busy ones, and a few reads long enough to span many cells. The truth is what this file
// wrote, worked out with the same cell arithmetic the map states in data-grid, not what
// the report read.
//
// usage: node --test tests/   (NASLAB_BIN: the naslab binary; needs zstd and chromium)
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launch, open } from './browser.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..', '..', '..', '..');
const bin = process.env.NASLAB_BIN ?? path.join(repo, 'target', 'debug', 'naslab');
const MB = 1e6;
const FILE_BYTES = 1_000 * MB;
/** Ops per run of one period. */
const PER_PERIOD = 40_000;
/** Every this many ops, one goes to the rare file instead of A. */
const RARE_EVERY = 2_000;
/** Every this many ops, a read of A 200 MB long. */
const LONG_EVERY = 50_000;
const FILES = ['data/a.bin', 'data/b.bin', 'data/rare.bin'];

let work;
let browser;
let runDir;
/** Every read and write written: issue time (ns into the phase), offset, length, file. */
const ops = [];

function naslab(...args) {
  return execFileSync(bin, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 26 });
}

before(async () => {
  work = mkdtempSync(path.join(tmpdir(), 'naslab-density-test-'));
  const header = '{"type":"header","format":"naslab-trace","version":1,"workload":"Periodic"}';
  const fileLines = FILES.map((p, id) => `{"type":"file","id":${id},"path":"${p}","size":${FILE_BYTES},"exists":true}`);
  // A small real run gives the run directory its run.json; its records are then replaced.
  const trace = path.join(work, 'Periodic.jsonl');
  writeFileSync(trace, [
    header, ...fileLines,
    '{"type":"op","op":"open","stream":0,"t_us":0,"file":0,"flags":"read|write"}',
    '{"type":"op","op":"read","stream":0,"t_us":1,"file":0,"offset":0,"len":4096}',
    '{"type":"op","op":"close","stream":0,"t_us":2,"file":0}',
  ].join('\n') + '\n');
  const out = path.join(work, 'out');
  naslab('run', trace, '--backend', 'null', '--out', out, '--label', 'd');
  runDir = path.join(out, 'd', readdirSync(path.join(out, 'd'))[0]);
  const run = JSON.parse(readFileSync(path.join(runDir, 'run.json'), 'utf8'));
  const it = run.workloads[0].iterations[0];
  const c0 = it.clock_start_ns;
  const lines = [header, ...fileLines];
  for (let f = 0; f < FILES.length; f++) {
    lines.push(`{"type":"op","op":"open","stream":0,"t_us":0,"file":${f},"flags":"read|write","sched_ns":${c0},"issued_ns":${c0},"done_ns":${c0 + 500},"result":0}`);
  }
  let x = 12345;
  const rand = (n) => { x = (x * 1103515245 + 12345) % 2147483648; return x % n; };
  let k = 0;
  for (let p = 2; p <= 16; p++) {
    for (let j = 0; j < PER_PERIOD; j++, k++) {
      // One op a microsecond, a little uneven.
      const t = 1000 + k * 1000 + (k % 7) * 37;
      let op = 'read', file = 0, offset = rand(100 * MB / 4096) * 4096, len = 4096;
      if (j % p === p - 1) { op = 'write'; file = 1; offset = 900 * MB + rand(100 * MB / 4096) * 4096; }
      else if (k % RARE_EVERY === RARE_EVERY / 2) { file = 2; offset = 400 * MB + rand(100 * MB / 4096) * 4096; }
      else if (k % LONG_EVERY === 7) { offset = 0; len = 200 * MB; }
      lines.push(`{"type":"op","op":"${op}","stream":0,"t_us":${Math.floor(t / 1000)},"file":${file},"offset":${offset},"len":${len},"sched_ns":${c0 + t},"issued_ns":${c0 + t},"done_ns":${c0 + t + 300},"result":${len}}`);
      ops.push({ t, offset, len, file });
    }
  }
  const end = 1000 + k * 1000 + 1000;
  lines.push(`{"type":"op","op":"close","stream":0,"t_us":${Math.floor(end / 1000)},"file":0,"sched_ns":${c0 + end},"issued_ns":${c0 + end},"done_ns":${c0 + end + 200},"result":0}`);
  const records = path.join(runDir, it.records);
  rmSync(records);
  execFileSync('zstd', ['-q', '-1', '-o', records], { input: lines.join('\n') + '\n', maxBuffer: 1 << 30 });
  it.wall_ns = end + 200;
  it.ops = lines.length - 1 - FILES.length;
  writeFileSync(path.join(runDir, 'run.json'), JSON.stringify(run, null, 2));
  naslab('report', runDir);
  browser = await launch();
});

after(async () => {
  await browser?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

/** The map's cell of `v` on an axis from v0 to v1, `px` device pixels long: the
 * arithmetic the map states it uses. */
function cellOf(v, v0, v1, px, cell, cells) {
  return Math.min(cells - 1, Math.max(0, Math.floor(((v - v0) / (v1 - v0)) * px / cell)));
}

/** The ops per cell the records put in the map's grid `g`, for the files in `files`. */
function truthGrid(g, files) {
  const count = new Array(g.cols * g.rows).fill(0);
  for (const o of ops) {
    if (!files.has(o.file) || o.t < g.t0 || o.t > g.t1) continue;
    const end = o.offset + o.len;
    if (end < g.y0 || o.offset > g.y1) continue;
    const c = cellOf(o.t, g.t0, g.t1, g.width, g.cell, g.cols);
    const r0 = cellOf(Math.max(o.offset, g.y0), g.y0, g.y1, g.height, g.cell, g.rows);
    const r1 = cellOf(Math.min(end, g.y1), g.y0, g.y1, g.height, g.cell, g.rows);
    for (let r = r0; r <= r1; r++) count[c * g.rows + r]++;
  }
  return count;
}

/** Checks the drawn grid against the records' grid, cell by cell: the counts the map
 * keeps, and the pixels it painted. Returns how many cells hold ops. */
async function compareGrid(page, map, files, what) {
  const d = await page.$eval(map, (e) => {
    const g = JSON.parse(e.dataset.grid);
    const canvas = e.querySelector('canvas');
    const img = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
    // The alpha of each cell's middle pixel.
    const alpha = [];
    for (let c = 0; c < g.cols; c++) {
      for (let r = 0; r < g.rows; r++) {
        const px = Math.floor(g.left + c * g.cell + g.cell / 2);
        const py = Math.floor(g.top + g.height - (r + 0.5) * g.cell);
        alpha.push(img.data[(py * img.width + px) * 4 + 3]);
      }
    }
    return { g, counts: e.naslabGrid(), alpha, points: Number(e.dataset.points) };
  });
  const truth = truthGrid(d.g, files);
  assert.equal(d.counts.length, truth.length, `${what}: grid size`);
  let holding = 0;
  for (let k = 0; k < truth.length; k++) {
    const where = `${what}: cell ${Math.floor(k / d.g.rows)},${k % d.g.rows}`;
    assert.equal(d.counts[k], truth[k], `${where} counts ${d.counts[k]} ops, the records put ${truth[k]} there`);
    // Painted cells are at least 45 % opaque; the plot's grid lines far fainter.
    if (truth[k] > 0) {
      holding++;
      assert.ok(d.alpha[k] >= 100, `${where} holds ${truth[k]} ops but is drawn empty (alpha ${d.alpha[k]})`);
    } else {
      assert.ok(d.alpha[k] < 100, `${where} holds no op but is painted (alpha ${d.alpha[k]})`);
    }
  }
  const inWindow = ops.filter((o) => files.has(o.file) && o.t >= d.g.t0 && o.t <= d.g.t1 && o.offset + o.len >= d.g.y0 && o.offset <= d.g.y1).length;
  assert.equal(d.points, inWindow, `${what}: ops counted`);
  return { holding, g: d.g };
}

test('the access map paints every cell that holds an op, and no other, at every zoom and filter', async () => {
  assert.equal(ops.length, 15 * PER_PERIOD);
  const { page, problems } = await open(browser.context, path.join(runDir, 'report.html'), '#w0');
  await page.waitForFunction(() => document.body.dataset.ready === 'w0', null, { timeout: 180000 });
  const map = 'section[data-view=w0] .chart[data-title="File access map"]';
  await page.$eval(map, (e) => e.scrollIntoView({ block: 'center' }));
  const all = new Set([0, 1, 2]);
  const whole = await compareGrid(page, map, all, 'whole run');
  // The writes to B (900-1000 MB) are there in every period's stretch of time.
  const bRows = truthGrid(whole.g, new Set([1])).filter((n) => n > 0).length;
  assert.ok(bRows > whole.g.cols / 2, `B's writes fill ${bRows} cells`);
  const note = await page.textContent(`${map} p.note`);
  assert.match(note, /painted if it holds an op: counted are all 600,0\d\d reads and writes in this window/, note);

  // Zoom about 3× (a third of the time, most of the offsets), then right into one period.
  const over = await page.$eval(`${map} .u-over`, (e) => { const r = e.getBoundingClientRect(); return { x: r.x, y: r.y, w: r.width, h: r.height }; });
  const drag = async (fx0, fx1, fy0, fy1) => {
    const before = await page.$eval(map, (e) => e.dataset.grid);
    await page.mouse.move(over.x + over.w * fx0, over.y + over.h * fy0);
    await page.mouse.down();
    await page.mouse.move(over.x + over.w * fx1, over.y + over.h * fy1, { steps: 5 });
    await page.mouse.up();
    await page.waitForFunction(([sel, b]) => document.querySelector(sel).dataset.grid !== b, [map, before], { timeout: 10000 });
  };
  await drag(0.33, 0.66, 0.02, 0.98);
  await compareGrid(page, map, all, 'zoomed 3×');
  await drag(0.1, 0.2, 0.02, 0.98);
  await compareGrid(page, map, all, 'zoomed 30×');
  await page.dblclick(`${map} .u-over`);
  await page.waitForFunction(([sel, t1]) => JSON.parse(document.querySelector(sel).dataset.grid).t1 === t1, [map, whole.g.t1], { timeout: 10000 });

  // The rare file alone: every one of its ops counted.
  await page.fill('section[data-view=w0] .access input[type=search]', 'rare');
  await page.waitForFunction((sel) => Number(document.querySelector(sel).dataset.points) < 1000, map, { timeout: 10000 });
  const rare = await compareGrid(page, map, new Set([2]), 'the rare file alone');
  assert.ok(rare.holding > 100, `the rare file's ${rare.holding} cells`);
  const rareOps = ops.filter((o) => o.file === 2).length;
  assert.ok(rareOps > 200, `${rareOps} ops of the rare file`);
  assert.equal(await page.$eval(map, (e) => Number(e.dataset.points)), rareOps);
  assert.deepEqual(problems, []);
  await page.close();
});
