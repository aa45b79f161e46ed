// A link sweep in a comparison, checked against run.json: runs behind different
// emulated links (as lab matrix --links makes them) are read as one line per
// configuration, every point in the table with its run's own figures, and each
// workload's two charts hold every point.
//
// usage: node --test tests/   (NASLAB_BIN: the naslab binary; needs chromium)
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

let work;
let browser;

/** A run of the null backend whose ops take 20 µs, then given the target kind and the
 * link a lab with `rtt_ms` would have recorded (the figures stay the run's own). */
function linked(label, rtt_ms, kind, sweep) {
  const out = path.join(work, 'out');
  execFileSync(bin, ['run', '--workload', 'PhotoAlbum', '--scale', '0.002', '--backend', 'null',
    '--null-service-time', '20us', '--label', label, '--out', out, '--no-records'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const dir = path.join(out, label, readdirSync(path.join(out, label))[0]);
  const file = path.join(dir, 'run.json');
  const run = JSON.parse(readFileSync(file, 'utf8'));
  run.target.backend = kind;
  run.options.link = {
    ...(rtt_ms > 0 ? { emulated: { profile: 'custom', rtt_ns: rtt_ms * 1e6, jitter_ns: 0, rate_bit_s: 0, emulator: 'toxiproxy', emulator_version: '2.12.0', delay_level: 'stream' } } : {}),
    probe: { method: 'SMB2 ECHO', samples: 5, median_ns: rtt_ms * 1e6 + 50_000, min_ns: rtt_ms * 1e6, max_ns: rtt_ms * 1e6 + 90_000 },
  };
  // A capacity sweep's figures, as `naslab sweep` behind that link would record them.
  if (sweep) run.sweep = { unit: 'users', warmup_ns: 0, saturation_margin: 0.05, points: [], ...sweep };
  writeFileSync(file, JSON.stringify(run));
  return { dir, run };
}

before(async () => {
  work = mkdtempSync(path.join(tmpdir(), 'naslab-link-sweep-'));
  browser = await launch();
});

after(async () => {
  await browser?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

test('runs behind different links are drawn as a sweep, every point as run.json has it', async () => {
  const runs = [linked('a', 0, 'smb', { knee: 4, peak_achieved_ops_s: 1000, overall_response_ns: 700_000 }),
    linked('b', 5, 'smb', { peak_achieved_ops_s: 180, overall_response_ns: 2e9 }), linked('c', 1, 'smb'), linked('d', 0, 'nfs'), linked('e', 5, 'nfs')];
  const html = path.join(work, 'compare.html');
  execFileSync(bin, ['compare', ...runs.map((r) => r.dir), '--format', 'html', '-o', html], { stdio: ['ignore', 'pipe', 'pipe'] });
  const { page, problems } = await open(browser.context, html);
  await page.waitForFunction(() => document.body.dataset.ready === 'compare', null, { timeout: 60000 });
  const rows = await page.$$eval('table.link-points tbody tr', (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
  // smb: A (none), C (1 ms), B (5 ms); nfs: D (none), E (5 ms): in order of round trip.
  assert.deepEqual(rows.map((r) => [r[1], r[2], r[4]]), [
    ['smb: A, B, C', 'A', 'none'], ['smb: A, B, C', 'C', '1.00 ms'], ['smb: A, B, C', 'B', '5.00 ms'],
    ['nfs: D, E', 'D', 'none'], ['nfs: D, E', 'E', '5.00 ms'],
  ]);
  const byLetter = { A: 0, B: 1, C: 2, D: 3, E: 4 };
  for (const r of rows) {
    const w = runs[byLetter[r[2]]].run.workloads[0];
    const it = w.iterations[0];
    assert.equal(r[0], w.name);
    assert.equal(Number(r[6]), Number(w.throughput_mb_s.toPrecision(3)), `MB/s of ${r[2]}`);
    assert.equal(Number(r[7].replace(/,/g, '')), it.ops);
  }
  // The two capacity sweeps, by their link: the knee, peak and overall response as run.json has them.
  const capacity = await page.$$eval('table.link-capacity tbody tr', (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
  assert.deepEqual(capacity.map((r) => [r[0], r[1], r[3], r[6], r[7], r[8]]), [
    ['smb: A, B, C', 'A', '0 ms', '4 users', '1000', '0.700 ms'],
    ['smb: A, B, C', 'B', '5.00 ms', 'none', '180', '2000 ms'],
  ]);
  const charts = await page.$$eval('section.link-sweep .chart', (els) => els.map((e) => ({
    title: e.dataset.title,
    points: Number(e.dataset.points),
    legend: [...e.querySelectorAll('.u-legend .u-series th')].map((th) => th.textContent.trim()).filter(Boolean),
  })));
  assert.equal(charts.length, 2, JSON.stringify(charts));
  for (const c of charts) {
    assert.equal(c.points, 5, c.title);
    assert.deepEqual(c.legend, ['rtt ms', 'smb: A, B, C', 'nfs: D, E'], c.title);
  }
  assert.deepEqual(problems, []);
  await page.close();
});
