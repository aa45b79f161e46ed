// The access map at a million ops: the points drawn per stretch of time must follow the
// records (within 10 %), over the whole run and zoomed in. The records are written here
// with a known, uneven density (bursts of 2600 ops per ms among stretches of 600), so the
// truth is what this file wrote, not what the report read.
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
const MS = 1000;
const FILE_BYTES = 1 << 30;

let work;
let browser;
let runDir;
/** Issue times (ns into the phase) of every read and write written. */
let times;

function naslab(...args) {
  return execFileSync(bin, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 26 });
}

before(async () => {
  work = mkdtempSync(path.join(tmpdir(), 'naslab-density-test-'));
  // A small real run gives the run directory its run.json; its records are then replaced.
  const trace = path.join(work, 'Density1M.jsonl');
  writeFileSync(trace, [
    '{"type":"header","format":"naslab-trace","version":1,"workload":"Density1M"}',
    `{"type":"file","id":0,"path":"data/big.bin","size":${FILE_BYTES},"exists":true}`,
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
  // 1000 ms: 600 ops in most, 2600 in the first 20 of every 100; evenly spaced in each ms.
  const lines = [
    '{"type":"header","format":"naslab-trace","version":1,"workload":"Density1M"}',
    `{"type":"file","id":0,"path":"data/big.bin","size":${FILE_BYTES},"exists":true}`,
    `{"type":"op","op":"open","stream":0,"t_us":0,"file":0,"flags":"read|write","sched_ns":${c0},"issued_ns":${c0},"done_ns":${c0 + 500},"result":0}`,
  ];
  times = [];
  let x = 12345;
  for (let ms = 0; ms < MS; ms++) {
    const per = ms % 100 < 20 ? 2600 : 600;
    for (let k = 0; k < per; k++) {
      const t = 1000 + ms * 1e6 + Math.floor((k * 1e6) / per);
      x = (x * 1103515245 + 12345) % 2147483648;
      const offset = (x % (FILE_BYTES / 4096)) * 4096;
      const op = k % 3 === 0 ? 'write' : 'read';
      lines.push(`{"type":"op","op":"${op}","stream":0,"t_us":${Math.floor(t / 1000)},"file":0,"offset":${offset},"len":4096,"sched_ns":${c0 + t},"issued_ns":${c0 + t},"done_ns":${c0 + t + 300},"result":4096}`);
      times.push(t);
    }
  }
  const end = 1000 + MS * 1e6;
  lines.push(`{"type":"op","op":"close","stream":0,"t_us":${Math.floor(end / 1000)},"file":0,"sched_ns":${c0 + end},"issued_ns":${c0 + end},"done_ns":${c0 + end + 200},"result":0}`);
  const records = path.join(runDir, it.records);
  rmSync(records);
  execFileSync('zstd', ['-q', '-1', '-o', records], { input: lines.join('\n') + '\n', maxBuffer: 1 << 30 });
  it.wall_ns = end + 200;
  it.ops = lines.length - 3;
  writeFileSync(path.join(runDir, 'run.json'), JSON.stringify(run, null, 2));
  naslab('report', runDir);
  browser = await launch();
});

after(async () => {
  await browser?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

/** The map's drawn points per bucket, and what the records say they should be. */
async function compare(page, map) {
  const d = await page.$eval(map, (e) => ({
    drawn: JSON.parse(e.dataset.drawnPerBucket), window: JSON.parse(e.dataset.window), step: Number(e.dataset.step),
  }));
  const [lo, hi] = d.window;
  const truth = new Array(d.drawn.length).fill(0);
  for (const t of times) {
    if (t < lo || t > hi) continue;
    truth[Math.min(truth.length - 1, Math.floor(((t - lo) / (hi - lo)) * truth.length))]++;
  }
  return { ...d, truth };
}

function assertProportional({ drawn, truth, step }, what) {
  let checked = 0;
  drawn.forEach((got, b) => {
    const want = truth[b] / step;
    if (want < 50) return;
    checked++;
    assert.ok(Math.abs(got - want) <= 0.1 * want, `${what}, bucket ${b}: ${got} drawn for ${truth[b]} ops at 1 in ${step} (want ${want.toFixed(1)})`);
  });
  assert.ok(checked >= 15, `${what}: only ${checked} buckets to check`);
}

test('at a million ops the points drawn per stretch of time follow the records', async () => {
  // 800 ms at 600 and 200 ms at 2600: a million reads and writes.
  assert.equal(times.length, 1_000_000);
  const { page, problems } = await open(browser.context, path.join(runDir, 'report.html'), '#w0');
  await page.waitForFunction(() => document.body.dataset.ready === 'w0', null, { timeout: 180000 });
  const map = 'section[data-view=w0] .chart[data-title="File access map"]';
  await page.$eval(map, (e) => e.scrollIntoView({ block: 'center' }));
  const whole = await compare(page, map);
  assert.ok(whole.step > 1, 'a million ops are thinned');
  assertProportional(whole, 'whole run');
  const note = await page.textContent(`${map} p.note`);
  assert.match(note, new RegExp(`1 in every ${whole.step} of the 1,000,000 reads and writes in this window, evenly in time`), note);

  // Zoom to about 12 ms around a burst's end (as 811-823 ms): every op there is drawn.
  const over = await page.$eval(`${map} .u-over`, (e) => { const r = e.getBoundingClientRect(); return { x: r.x, y: r.y, w: r.width, h: r.height }; });
  const px = (ms) => over.x + (ms / (whole.window[1] / 1e6)) * over.w;
  await page.mouse.move(px(811), over.y + over.h / 2);
  await page.mouse.down();
  await page.mouse.move(px(823), over.y + over.h / 2 + 2, { steps: 5 });
  await page.mouse.up();
  // Redrawn once the window narrows; a loaded machine may take its time.
  await page.waitForFunction((sel) => {
    const [lo, hi] = JSON.parse(document.querySelector(sel).dataset.window);
    return hi - lo < 20e6;
  }, map, { timeout: 10000 }).catch(() => {});
  const zoomed = await compare(page, map);
  assert.ok(zoomed.window[1] - zoomed.window[0] < 20e6, `zoomed to ${zoomed.window}`);
  assert.equal(zoomed.step, 1, 'every op in the zoomed window');
  assertProportional(zoomed, 'zoomed');
  const total = zoomed.truth.reduce((a, b) => a + b, 0);
  assert.equal(zoomed.drawn.reduce((a, b) => a + b, 0), total, 'every op of the window drawn');
  assert.match(await page.textContent(`${map} p.note`), /every one of the [\d,]+ reads and writes in this window/);
  assert.deepEqual(problems, []);
  await page.close();
});
