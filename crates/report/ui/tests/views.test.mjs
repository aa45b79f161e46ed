// Views of the report checked on purpose-made runs: the file picker under the access map
// with thousands of files (every file reachable by scrolling down, never sideways, sorted
// by ops or by path, narrowed by a search; its count worded right for one file as for
// many), and the file layout run.json holds.
//
// usage: node --test tests/   (NASLAB_BIN: the naslab binary; needs chromium)
import { after, before, describe, test } from 'node:test';
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
const FILES = 3000;

let work;
let browser;
const runs = {};

/** A trace reading each of `files` files (i % 5) + 1 times, and the run directory of its replay. */
function runOf(label, files) {
  const lines = [`{"type":"header","format":"naslab-trace","version":1,"workload":"Many${files}"}`];
  for (let f = 0; f < files; f++) {
    lines.push(`{"type":"file","id":${f},"path":"d/f${String(f).padStart(5, '0')}.bin","size":65536,"exists":true}`);
  }
  let t = 0;
  for (let f = 0; f < files; f++) {
    lines.push(`{"type":"op","op":"open","stream":0,"t_us":${t++},"file":${f},"flags":"read"}`);
    for (let k = 0; k <= f % 5; k++) lines.push(`{"type":"op","op":"read","stream":0,"t_us":${t++},"file":${f},"offset":${k * 4096},"len":4096}`);
    lines.push(`{"type":"op","op":"close","stream":0,"t_us":${t++},"file":${f}}`);
  }
  const trace = path.join(work, `${label}.jsonl`);
  writeFileSync(trace, lines.join('\n') + '\n');
  const out = path.join(work, 'out');
  execFileSync(bin, ['run', trace, '--backend', 'null', '--out', out, '--label', label], { stdio: ['ignore', 'pipe', 'pipe'] });
  const base = path.join(out, label);
  return path.join(base, readdirSync(base)[0]);
}

/** A trace of reads, 300 of 4096 bytes then 100 of 65536: two size buckets with three
 * empty ones between them. */
function sizesTrace(name) {
  const lines = [`{"type":"header","format":"naslab-trace","version":1,"workload":"${name}"}`,
    '{"type":"file","id":0,"path":"s.bin","size":8000000,"exists":true}',
    '{"type":"op","op":"open","stream":0,"t_us":0,"file":0,"flags":"read"}'];
  for (let k = 0; k < 400; k++) {
    const len = k < 300 ? 4096 : 65536;
    lines.push(`{"type":"op","op":"read","stream":0,"t_us":${k + 1},"file":0,"offset":${k * 65536},"len":${len}}`);
  }
  lines.push('{"type":"op","op":"close","stream":0,"t_us":500,"file":0}');
  const file = path.join(work, `${name}.jsonl`);
  writeFileSync(file, lines.join('\n') + '\n');
  return file;
}

/** A run of one file whose op records are replaced by reads taking 1 µs to 2.5 s. */
function slowRun(label) {
  const dir = runOf(label, 1);
  const file = path.join(dir, 'run.json');
  const run = JSON.parse(readFileSync(file, 'utf8'));
  const it = run.workloads[0].iterations[0];
  const c0 = it.clock_start_ns;
  const lines = ['{"type":"header","format":"naslab-trace","version":1,"workload":"Many1"}',
    '{"type":"file","id":0,"path":"d/f00000.bin","size":65536,"exists":true}'];
  let t = 1000;
  for (let k = 0; k <= 64; k++) {
    const lat = Math.round(1000 * Math.pow(10, k / 10));
    lines.push(`{"type":"op","op":"read","stream":0,"t_us":${Math.floor(t / 1000)},"file":0,"offset":0,"len":4096,"sched_ns":${c0 + t},"issued_ns":${c0 + t},"done_ns":${c0 + t + lat},"result":4096}`);
    t += lat + 1000;
  }
  const records = path.join(dir, it.records);
  rmSync(records);
  execFileSync('zstd', ['-q', '-1', '-o', records], { input: lines.join('\n') + '\n' });
  it.wall_ns = t;
  writeFileSync(file, JSON.stringify(run, null, 2));
  return dir;
}

before(async () => {
  work = mkdtempSync(path.join(tmpdir(), 'naslab-views-test-'));
  runs.many = runOf('many', FILES);
  runs.one = runOf('one', 1);
  // Three runs to compare: two with workloads Sizes and Other, one with Sizes alone.
  const sizes = sizesTrace('Sizes');
  const other = sizesTrace('Other');
  const out = path.join(work, 'cmp');
  for (const [label, traces] of [['ca', [sizes, other]], ['cb', [sizes, other]], ['cc', [sizes]]]) {
    execFileSync(bin, ['run', ...traces, '--backend', 'null', '--out', out, '--label', label], { stdio: ['ignore', 'pipe', 'pipe'] });
    runs[label] = path.join(out, label, readdirSync(path.join(out, label))[0]);
  }
  runs.compare = path.join(work, 'compare.html');
  // Two runs whose ops take from 1 µs to about 2.5 s, as a slow server's do.
  runs.slow = [slowRun('sa'), slowRun('sb')];
  runs.compareSlow = path.join(work, 'compare-slow.html');
  execFileSync(bin, ['compare', ...runs.slow, '--format', 'html', '-o', runs.compareSlow], { stdio: ['ignore', 'pipe', 'pipe'] });
  execFileSync(bin, ['compare', runs.ca, runs.cb, runs.cc, '--format', 'html', '-o', runs.compare], { stdio: ['ignore', 'pipe', 'pipe'] });
  browser = await launch();
});

after(async () => {
  await browser?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

const access = 'section[data-view=w0] .access';

test('thousands of files scroll down, sort by ops or path, and narrow by a search', async () => {
  const { page, problems } = await open(browser.context, path.join(runs.many, 'report.html'), '#w0');
  await page.waitForFunction(() => document.body.dataset.ready === 'w0', null, { timeout: 60000 });
  assert.equal(await page.textContent(`${access} [data-role=file-count]`), `3,000 files accessed; untick a file to hide it`);
  const list = `${access} .file-list`;
  const geo = await page.$eval(list, (e) => ({ sh: e.scrollHeight, ch: e.clientHeight, sw: e.scrollWidth, cw: e.clientWidth, rows: e.querySelectorAll('label.file').length }));
  assert.equal(geo.rows, FILES);
  assert.ok(geo.sh > geo.ch && geo.ch > 0 && geo.ch < 400, `scrolls down within a short box: ${JSON.stringify(geo)}`);
  assert.ok(geo.sw <= geo.cw + 1, `never sideways: ${JSON.stringify(geo)}`);
  // Busiest first: ops never increase down the list, and the last line can be scrolled to.
  const ops = await page.$$eval(`${list} label.file`, (els) => els.map((e) => Number(e.querySelector('.ops').textContent.split(' ')[0].replace(/,/g, ''))));
  assert.equal(ops[0], 5);
  assert.equal(ops.at(-1), 1);
  assert.ok(ops.every((v, i) => i === 0 || v <= ops[i - 1]), 'sorted by ops, most first');
  const lastVisible = await page.$eval(list, (e) => {
    e.scrollTop = e.scrollHeight;
    const last = e.querySelector('label.file:last-child').getBoundingClientRect();
    const box = e.getBoundingClientRect();
    return last.top >= box.top - 1 && last.bottom <= box.bottom + 1;
  });
  assert.ok(lastVisible, 'the last file is in view once scrolled down');
  // By path.
  await page.selectOption(`${access} [data-role=file-sort]`, 'path');
  const paths = await page.$$eval(`${list} label.file .path`, (els) => els.map((e) => e.textContent));
  assert.deepEqual(paths, [...paths].sort());
  assert.equal(paths[0], 'd/f00000.bin');
  // A search narrows the list and the map.
  await page.fill(`${access} input[type=search]`, 'f02999');
  const shown = await page.$$eval(`${list} label.file`, (els) => els.filter((e) => e.style.display !== 'none').map((e) => e.title));
  assert.deepEqual(shown, ['d/f02999.bin']);
  assert.equal(await page.textContent(`${access} [data-role=file-count]`), '3,000 files accessed, 1 of them match "f02999"; untick a file to hide it');
  const map = 'section[data-view=w0] .chart[data-title="File access map"]';
  await page.waitForFunction((sel) => document.querySelector(sel).dataset.points === '5', map, { timeout: 10000 });
  assert.deepEqual(problems, []);
  await page.close();
});

test('one file is "1 file accessed"', async () => {
  const { page, problems } = await open(browser.context, path.join(runs.one, 'report.html'), '#w0');
  await page.waitForFunction(() => document.body.dataset.ready === 'w0', null, { timeout: 60000 });
  assert.equal(await page.textContent(`${access} [data-role=file-count]`), '1 file accessed; untick a file to hide it');
  assert.equal(await page.textContent(`${access} label.file .ops`), '1 op');
  assert.deepEqual(problems, []);
  await page.close();
});

test('the file layout run.json holds is shown, prepared and written', async () => {
  // The layout as a posix run on a real file system measures it, written into run.json.
  const file = path.join(runs.one, 'run.json');
  const run = JSON.parse(readFileSync(file, 'utf8'));
  run.workloads[0].iterations[0].layout = {
    prepared: { files: 12, bytes: 48000000, extents: 15, ideal_extents: 12, score: 0.99974, block_pairs: 11700, following_blocks: 11697 },
    written: { files: 3, bytes: 9000000, extents: 40, ideal_extents: 3, score: 0.98174, block_pairs: 2190, following_blocks: 2150 },
  };
  writeFileSync(file, JSON.stringify(run, null, 2));
  execFileSync(bin, ['report', runs.one], { stdio: ['ignore', 'pipe', 'pipe'] });
  const { page, problems } = await open(browser.context, path.join(runs.one, 'report.html'), '#w0');
  await page.waitForFunction(() => document.body.dataset.ready === 'w0', null, { timeout: 60000 });
  const rows = await page.$$eval('section[data-view=w0] [data-role=layout] tbody tr', (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
  assert.deepEqual(rows, [
    ['prepared', '12', '48.0 MB', '15', '12', '1.000'],
    ['written', '3', '9.00 MB', '40', '3', '0.982'],
  ]);
  const head = await page.$$eval('section[data-view=w0] [data-role=layout] thead th', (ths) => ths.map((th) => th.textContent));
  assert.deepEqual(head, ['files', 'count', 'size', 'extents', 'ideal extents', 'score']);
  assert.deepEqual(problems, []);
  await page.close();
});

describe('the comparison page', () => {
  test('a run lacking a workload is not drawn in its charts', async () => {
    const { page, problems } = await open(browser.context, runs.compare);
    await page.waitForFunction(() => document.body.dataset.ready === 'compare', null, { timeout: 60000 });
    const columns = await page.$$eval('ul.runs li strong', (els) => els.map((e) => e.textContent));
    assert.equal(columns.length, 3);
    const sections = await page.$$eval('main section.view', (els) => els.map((e) => ({
      name: e.querySelector('h2').textContent,
      notes: [...e.querySelectorAll('p.note')].map((p) => p.textContent),
      legends: [...e.querySelectorAll('.chart')].map((c) => [...c.querySelectorAll('.u-legend .u-series th')].map((th) => th.textContent.trim()).filter(Boolean)),
    })));
    const other = sections.find((x) => x.name === 'Other');
    const sizes = sections.find((x) => x.name === 'Sizes');
    assert.ok(other && sizes, JSON.stringify(sections));
    assert.ok(other.notes.includes(`${columns[2]} does not have this workload.`), JSON.stringify(other.notes));
    assert.equal(other.legends.length, 3, 'three charts');
    for (const legend of other.legends) {
      const runsDrawn = legend.slice(1);
      assert.equal(runsDrawn.length, 2, JSON.stringify(legend));
      assert.ok(runsDrawn.every((l) => !l.startsWith(columns[2])), `${columns[2]} drawn: ${legend}`);
      assert.ok(legend.every((l) => !l.includes('(0 ns)')), `a zero-length run in ${legend}`);
    }
    for (const legend of sizes.legends) assert.equal(legend.length - 1, 3, JSON.stringify(legend));
    assert.deepEqual(problems, []);
    await page.close();
  });

  test('the transfer sizes of three runs are steps, flat over each bucket, not slopes between buckets', async () => {
    const { page, problems } = await open(browser.context, runs.compare);
    await page.waitForFunction(() => document.body.dataset.ready === 'compare', null, { timeout: 60000 });
    const chart = await page.$$('main section.view .chart[data-title="Transfer-size histogram (reads and writes)"]');
    assert.ok(chart.length >= 1);
    // Sizes 4096 (bucket 13: 2^12 up to 2^13) and 65536 (bucket 17); buckets 14-16 empty.
    const seen = await chart[0].evaluate((e) => {
      const plot = e.naslabPlot();
      const canvas = e.querySelector('canvas');
      const img = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
      const series = [[0x1f, 0x77, 0xb4], [0xd6, 0x27, 0x28], [0x2c, 0xa0, 0x2c]];
      const base = e.naslabPos(0, 'y');
      /** How many pixels of a run's colour the column at bucket position `b` has above the zero line. */
      const coloured = (b) => {
        const x = Math.round(e.naslabPos(b, 'x'));
        let n = 0;
        for (let y = Math.ceil(plot.top); y < base - 4; y++) {
          const i = (y * img.width + x) * 4;
          if (img.data[i + 3] < 128) continue;
          if (series.some(([r, g, b2]) => Math.abs(img.data[i] - r) + Math.abs(img.data[i + 1] - g) + Math.abs(img.data[i + 2] - b2) < 90)) n++;
        }
        return n;
      };
      return { inside: coloured(13.25), between: coloured(13.75), empty: coloured(15) };
    });
    assert.ok(seen.inside > 0, `the line is drawn over bucket 13: ${JSON.stringify(seen)}`);
    assert.equal(seen.between, 0, `nothing drawn above zero over bucket 14, beside bucket 13: ${JSON.stringify(seen)}`);
    assert.equal(seen.empty, 0, JSON.stringify(seen));
    assert.deepEqual(problems, []);
    await page.close();
  });

  test('no tick label of any chart is cut off by its edge, even with latencies of seconds', async () => {
    for (const file of [runs.compare, runs.compareSlow]) await tickRoom(file);
  });
});

async function tickRoom(file) {
  {
    const { page, problems } = await open(browser.context, file);
    await page.waitForFunction(() => document.body.dataset.ready === 'compare', null, { timeout: 60000 });
    const rooms = await page.$$eval('.chart', (els) => els.map((e) => ({ title: e.dataset.title, room: e.naslabTickRoom() })));
    assert.ok(rooms.length >= 3, JSON.stringify(rooms));
    for (const r of rooms) {
      for (const [axis, room] of r.room.entries()) {
        assert.ok(room >= 0, `${path.basename(file)}: ${r.title}, axis ${axis}: a tick label runs ${-room} px past the edge`);
      }
    }
    assert.deepEqual(problems, []);
    await page.close();
  }
}
