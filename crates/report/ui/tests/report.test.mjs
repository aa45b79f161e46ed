// Opens naslab's generated reports in headless Chromium and checks them as a reader
// would: no console errors, no network, every chart holding data points, the access map
// responding, and the transaction list filtering and sorting correctly. Screenshots go
// to $NASLAB_SCREENSHOTS (default $TMPDIR/naslab-report-screenshots) for CI artifacts.
//
// usage: node --test tests/   (NASLAB_BIN: the naslab binary; default target/debug/naslab)
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launch, open } from './browser.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..', '..', '..', '..');
const bin = process.env.NASLAB_BIN ?? path.join(repo, 'target', 'debug', 'naslab');
const shots = process.env.NASLAB_SCREENSHOTS ?? path.join(tmpdir(), 'naslab-report-screenshots');

let work;
let browser;
const runs = {};

function naslab(...args) {
  return execFileSync(bin, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

function runDir(out, label) {
  const base = path.join(out, label);
  return path.join(base, readdirSync(base).sort().at(-1));
}

async function shot(page, name) {
  mkdirSync(shots, { recursive: true });
  await page.screenshot({ path: path.join(shots, `${name}.png`), fullPage: true });
}

/** Everything the view in sight shows a reader: its text (tables, notes, legends),
 * its selectors' options and every chart's axis labels and tick labels. */
async function shownText(page) {
  return page.evaluate(() => {
    const view = document.querySelector('section.view:not([hidden])') ?? document.body;
    const parts = [document.querySelector('header')?.innerText ?? '', view.innerText];
    for (const o of view.querySelectorAll('option')) parts.push(o.textContent);
    for (const c of view.querySelectorAll('.chart')) {
      for (const a of c.naslabAxes?.() ?? []) parts.push(a.label, ...a.ticks);
    }
    return parts.join('\n');
  });
}

/** Which systems of size units a text uses: decimal (kB, MB, GB ...), binary (KiB, MiB ...). */
function unitSystems(text) {
  const found = new Set();
  if (/\d\s*(kB|MB|GB|TB|PB)\b|\b(kB|MB|GB|TB|PB)(\/s)?\b/.test(text)) found.add('decimal');
  if (/\b(KiB|MiB|GiB|TiB|PiB|KB)\b/.test(text)) found.add('binary');
  return [...found];
}

function duration(ns) {
  return ns < 1e6 ? `${ns / 1e3} µs` : `${ns / 1e6} ms`;
}

async function ready(page, key) {
  await page.waitForFunction((k) => document.body.dataset.ready === k, key, { timeout: 60000 });
}

async function txState(page) {
  return page.evaluate(() => {
    const box = document.querySelector('section.view:not([hidden]) .txlist');
    const rows = [...box.querySelectorAll('[data-role=tx-row]')].filter((r) => r.style.visibility !== 'hidden');
    const cells = rows.map((r) => [...r.children].map((c) => c.textContent));
    return { rows: Number(box.dataset.rows), sort: box.dataset.sort, busy: box.classList.contains('busy'), cells };
  });
}

async function settled(page) {
  await page.waitForFunction(() => {
    const b = document.querySelector('section.view:not([hidden]) .txlist');
    return b && !b.classList.contains('busy');
  }, null, { timeout: 60000 });
  // Filters apply after a short pause in typing.
  await page.waitForTimeout(300);
  await page.waitForFunction(() => !document.querySelector('section.view:not([hidden]) .txlist.busy'), null, { timeout: 60000 });
}

// A run's op records as JSON Lines (`naslab records` writes the binary records out).
function recordsText(dir, records) {
  return execFileSync(bin, ['records', path.join(dir, records)], { encoding: 'utf8', maxBuffer: 1 << 30 });
}

// The largest done_ns - issued_ns of the write ops in a run's op records.
function slowestWriteNs(dir, records) {
  const text = recordsText(dir, records);
  let max = 0;
  for (const line of text.split('\n')) {
    if (!line.includes('"op":"write"')) continue;
    const r = JSON.parse(line);
    if (r.type === 'op' && r.op === 'write' && r.done_ns !== undefined) max = Math.max(max, r.done_ns - r.issued_ns);
  }
  return max;
}

// Every measured op's completion time (ns into the measured phase) and latency, from a
// run's op records; only client `client`'s, when given.
function measuredOps(dir, records, clockStartNs, client) {
  const text = recordsText(dir, records);
  const ops = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('{"type":"op"')) continue;
    const r = JSON.parse(line);
    if (r.done_ns === undefined) continue;
    if (client !== undefined && r.client !== client) continue;
    ops.push({ done: Math.max(0, r.done_ns - clockStartNs), latency: r.done_ns - r.issued_ns, op: r.op, moved: Math.max(0, r.result ?? 0) });
  }
  return ops;
}

/** The first workload's page of suite-a's report, opened, and the measured ops of the
 * iteration it shows, from the op records. */
async function firstWorkloadOps() {
  const dir = runs['suite-a'];
  const run = JSON.parse(readFileSync(path.join(dir, 'run.json'), 'utf8'));
  const { page, problems } = await open(browser.context, path.join(dir, 'report.html'), '#w0');
  await ready(page, 'w0');
  const shown = await page.$eval('section[data-view=w0] .iterations strong', (e) => Number(e.textContent.split(' ')[0]));
  const it = run.workloads[0].iterations.find((x) => x.iteration === shown);
  const ops = measuredOps(dir, it.records, it.clock_start_ns);
  assert.equal(ops.length, it.ops, 'every op of the iteration has its measurements');
  return { page, problems, ops };
}

/** The nearest-rank percentile `pct` of `v`: the value at rank ceil(pct/100 * n), ascending. */
function nearestRank(v, pct) {
  const s = [...v].sort((a, b) => a - b);
  return s[Math.max(1, Math.ceil((pct / 100) * s.length)) - 1];
}

before(async () => {
  work = mkdtempSync(path.join(tmpdir(), 'naslab-report-test-'));
  const out = path.join(work, 'out');
  naslab('run', path.join(repo, 'examples', 'document-save.jsonl'), '--backend', 'null', '--out', out, '--label', 'example');
  runs.example = runDir(out, 'example');
  for (const [label, device, seed] of [['suite-a', 'Acme Box A', '1'], ['suite-b', 'Other NAS B', '2']]) {
    naslab('run', '--workload', 'OfficeProductivity,HDVideo_1Play,DirectoryCopyToNAS', '--scale', '0.01',
      '--backend', 'null', '--batch', '2', '--out', out, '--label', label, '--device', device, '--seed', seed);
    runs[label] = runDir(out, label);
  }
  naslab('compare', runs['suite-a'], runs['suite-b'], '--format', 'html', '-o', path.join(work, 'compare.html'));
  // A two-client job (the binary built with the `mpi` feature, as scripts/test.sh builds it).
  execFileSync('mpirun', ['--allow-run-as-root', '--oversubscribe', '--timeout', '300', '-n', '2', bin, 'run', '--workload', 'PhotoAlbum',
    '--scale', '0.005', '--backend', 'null', '--out', out, '--label', 'multi'], { stdio: ['ignore', 'pipe', 'pipe'] });
  runs.multi = runDir(out, 'multi');
  browser = await launch();
});

after(async () => {
  await browser?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('the run report', () => {
  test('opens on the overview with the suite and environment, offline and without errors', async () => {
    const { page, problems, requests } = await open(browser.context, path.join(runs['suite-a'], 'report.html'));
    await ready(page, 'overview');
    const rows = await page.$$eval('table.suite tbody tr', (r) => r.map((x) => x.children[0].textContent));
    assert.deepEqual(rows, ['OfficeProductivity', 'HDVideo_1Play', 'DirectoryCopyToNAS']);
    const env = await page.textContent('table.kv');
    for (const want of ['backend', 'null', 'cache', 'pacing', 'afap']) assert.ok(env.includes(want), `environment lacks ${want}`);
    await shot(page, 'overview');
    assert.deepEqual(problems, []);
    assert.deepEqual(requests, []);
    await page.close();
  });

  test('every workload page has every chart drawn with its data points', async () => {
    const run = JSON.parse(readFileSync(path.join(runs['suite-a'], 'run.json'), 'utf8'));
    const { page, problems, requests } = await open(browser.context, path.join(runs['suite-a'], 'report.html'));
    await ready(page, 'overview');
    for (const [i, w] of run.workloads.entries()) {
      await page.click(`nav.tabs a[data-tab=w${i}]`);
      await ready(page, `w${i}`);
      const charts = await page.$$eval(`section[data-view=w${i}] .chart`, (els) =>
        els.map((e) => ({ title: e.dataset.title, points: Number(e.dataset.points), canvas: !!e.querySelector('canvas') })));
      const titles = charts.map((c) => c.title);
      for (const want of ['Throughput over time (MB/s)', 'IOPS over time (ops/s)', 'Latency over time (µs)', 'Latency histogram', 'Transfer-size histogram', 'File access map']) {
        assert.ok(titles.includes(want), `${w.name} lacks ${want}: ${titles}`);
      }
      // Periods are round durations, and the default gives at most 100 of them.
      const sel = await page.$eval(`section[data-view=w${i}] .chart[data-title="Throughput over time (MB/s)"] select`, (e) => ({
        value: e.value, options: [...e.options].map((o) => [o.value, o.textContent]),
      }));
      assert.equal(sel.value, 'auto');
      assert.match(sel.options[0][1], /^auto: period /);
      for (const [, label] of sel.options) {
        const m = label.match(/^(?:auto: )?period ([\d.]+) (ns|µs|ms|s)$/);
        assert.ok(m, label);
        const mant = Number(m[1]) / Math.pow(10, Math.floor(Math.log10(Number(m[1]))));
        assert.ok([1, 2, 5].some((r) => Math.abs(mant - r) < 1e-9), `${label} is not a round period`);
      }
      const stats = await page.textContent(`section[data-view=w${i}] .chart[data-title="Throughput over time (MB/s)"] .stats`);
      const periods = Number(stats.match(/over (\d+) periods/)[1]);
      assert.ok(periods <= 100 && periods >= 10, stats);
      for (const c of charts) {
        assert.ok(c.canvas, `${w.name}: ${c.title} has no canvas`);
        assert.ok(c.points > 0, `${w.name}: ${c.title} has no data points`);
      }
      const median = w.iterations.find((it) => it.throughput_mb_s === w.throughput_mb_s) ?? w.iterations[0];
      // The latency histogram states every op's mean, pooled from run.json's per-type means.
      const shownIt = await page.$eval(`section[data-view=w${i}] .iterations strong`, (e) => Number(e.textContent.split(' ')[0])).catch(() => median.iteration);
      const res = w.iterations.find((x) => x.iteration === shownIt);
      let cnt = 0, sum = 0;
      for (const st of Object.values(res.op_stats)) { cnt += st.latency.count; sum += st.latency.avg_ns * st.latency.count; }
      const meanText = await page.textContent(`section[data-view=w${i}] [data-role=latency-mean]`);
      const mm = meanText.match(/mean ([\d.]+) (ns|µs|ms|s), standard deviation ([\d.]+) (ns|µs|ms|s)/);
      assert.ok(mm, meanText);
      const shownNs = Number(mm[1]) * { ns: 1, 'µs': 1e3, ms: 1e6, s: 1e9 }[mm[2]];
      assert.ok(Math.abs(shownNs - sum / cnt) <= Math.max(1, 0.01 * sum / cnt), `${meanText} vs ${sum / cnt} ns`);
      if (i === 0) {
        // The ops axis can be switched to a log scale, and back.
        const hist = `section[data-view=w${i}] .chart[data-title="Latency histogram"]`;
        const before = await page.$eval(hist, (e) => Number(e.dataset.points));
        await page.check(`${hist} [data-role=latency-logy]`);
        assert.equal(await page.$eval(hist, (e) => e.dataset.logY), 'true');
        assert.equal(await page.$eval(hist, (e) => Number(e.dataset.points)), before);
        assert.ok(await page.$eval(hist, (e) => !!e.querySelector('canvas')));
        await page.uncheck(`${hist} [data-role=latency-logy]`);
        assert.equal(await page.$eval(hist, (e) => e.dataset.logY), 'false');
        assert.equal(await page.$$eval(hist, (els) => els.length), 1, 'one histogram, rebuilt in place');
      }
      const listed = await page.$eval(`section[data-view=w${i}] .txlist`, (e) => Number(e.dataset.rows));
      assert.equal(listed, median.ops, `${w.name}: the list holds every op`);
      await shot(page, `workload-${w.name}`);
    }
    assert.deepEqual(problems, []);
    assert.deepEqual(requests, []);
    await page.close();
  });

  test('latency over time draws each period\'s max, p99 and p50 from the ops completing in it', async () => {
    const { page, problems, ops } = await firstWorkloadOps();
    const chart = 'section[data-view=w0] .chart[data-title="Latency over time (µs)"]';
    const options = await page.$$eval(`${chart} select option`, (o) => o.map((x) => [x.value, x.textContent]));
    assert.equal(options[0][0], 'auto');
    assert.match(options[0][1], /^auto: period [\d.]+ (ns|µs|ms|s)$/);
    assert.ok(options.length >= 4, `periods offered: ${options.map((o) => o[1])}`);
    // The automatic period, the finest bin and the coarsest period offered.
    for (const value of ['auto', options[1][0], options.at(-1)[0]]) {
      await page.selectOption(`${chart} select`, value);
      const d = await page.$eval(chart, (e) => { const r = e.naslabDrawn(); return { ...r, data: r.data.map((c) => [...c]) }; });
      const width = d.period * d.bin_ns;
      const byPeriod = new Map();
      for (const op of ops) {
        const j = Math.floor(Math.min(Math.floor(op.done / d.bin_ns), d.bins - 1) / d.period);
        if (!byPeriod.has(j)) byPeriod.set(j, []);
        byPeriod.get(j).push(op.latency);
      }
      const [, max, p99, p50] = d.data;
      assert.equal(max.length, Math.ceil(d.bins / d.period), `${value}: one value per period`);
      assert.equal(max.filter((v) => v !== null).length, byPeriod.size, `${value}: a value for every period with ops, and only those`);
      const us = (ns) => Math.max(ns, 1) / 1e3;
      let spread = 0;
      for (const [j, lat] of byPeriod) {
        const where = `${value}, period ${j} of ${duration(width)} (${lat.length} ops)`;
        assert.equal(max[j], us(Math.max(...lat)), `${where}: max`);
        assert.equal(p99[j], us(nearestRank(lat, 99)), `${where}: p99`);
        assert.equal(p50[j], us(nearestRank(lat, 50)), `${where}: p50`);
        if (p50[j] < p99[j]) spread++;
      }
      // Percentiles that are not all the maximum: the check above can tell them apart.
      assert.ok(spread > 0, `${value}: some period has p50 below p99`);
    }
    assert.deepEqual(problems, []);
    await page.close();
  });

  test('IOPS and throughput over time count the ops and bytes completing in each period', async () => {
    const { page, problems, ops } = await firstWorkloadOps();
    const close = (a, b, where) => assert.ok(Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b)), `${where}: drawn ${a}, records say ${b}`);
    for (const title of ['IOPS over time (ops/s)', 'Throughput over time (MB/s)']) {
      const chart = `section[data-view=w0] .chart[data-title="${title}"]`;
      const options = await page.$$eval(`${chart} select option`, (o) => o.map((x) => x.value));
      for (const value of ['auto', options[1], options.at(-1)]) {
        await page.selectOption(`${chart} select`, value);
        const d = await page.$eval(chart, (e) => { const r = e.naslabDrawn(); return { ...r, data: r.data.map((c) => [...c]) }; });
        const periods = Math.ceil(d.bins / d.period);
        const secs = (d.period * d.bin_ns) / 1e9;
        const count = new Array(periods).fill(0), read = new Array(periods).fill(0), written = new Array(periods).fill(0);
        for (const op of ops) {
          const j = Math.floor(Math.min(Math.floor(op.done / d.bin_ns), d.bins - 1) / d.period);
          count[j] += 1;
          if (op.op === 'read') read[j] += op.moved;
          if (op.op === 'write') written[j] += op.moved;
        }
        assert.equal(d.data[1].length, periods, `${title}, ${value}: one value per period`);
        for (let j = 0; j < periods; j++) {
          const where = `${title}, ${value}, period ${j}`;
          if (title.startsWith('IOPS')) {
            close(d.data[1][j], count[j] / secs, where);
          } else {
            close(d.data[2][j], read[j] / secs / 1e6, `${where}, read`);
            close(d.data[3][j], written[j] / secs / 1e6, `${where}, write`);
            close(d.data[1][j], (read[j] + written[j]) / secs / 1e6, `${where}, total`);
          }
        }
        // Periods that differ: the check above can tell a wrong period from a right one.
        const values = new Set(d.data[1].map((v) => v.toPrecision(6)));
        assert.ok(values.size > 1, `${title}, ${value}: every period drawn alike`);
      }
    }
    assert.deepEqual(problems, []);
    await page.close();
  });

  test('every view shows sizes and rates in one unit system, the decimal one', async () => {
    const run = JSON.parse(readFileSync(path.join(runs['suite-a'], 'run.json'), 'utf8'));
    const { page, problems } = await open(browser.context, path.join(runs['suite-a'], 'report.html'));
    await ready(page, 'overview');
    const views = [['overview', await shownText(page)]];
    for (const [i, w] of run.workloads.entries()) {
      await page.click(`nav.tabs a[data-tab=w${i}]`);
      await ready(page, `w${i}`);
      views.push([w.name, await shownText(page)]);
    }
    for (const [name, text] of views) {
      assert.deepEqual(unitSystems(text), ['decimal'], `${name} shows ${unitSystems(text).join(' and ')} units:\n${text.split('\n').filter((l) => /[KMGTP]i?B|kB/.test(l)).join('\n')}`);
    }
    // A workload page shows sizes in its tables, its facts and its axes, all decimal.
    const wl = views[1][1];
    assert.match(wl, /\d kB|\d MB/, 'the workload page shows some size');
    assert.ok(unitSystems('1 MiB and 2 MB').length === 2 && unitSystems('3 KiB').includes('binary'), 'the check tells the systems apart');
    assert.deepEqual(problems, []);
    await page.close();
  });

  test('another iteration of a batch opens on its own page', async () => {
    const { page, problems } = await open(browser.context, path.join(runs['suite-a'], 'report.html'), '#w1');
    await ready(page, 'w1');
    const links = await page.$$eval('section[data-view=w1] .iterations a', (a) => a.map((x) => x.getAttribute('href')));
    assert.equal(links.length, 1);
    await page.click(`section[data-view=w1] .iterations a`);
    const key = links[0].slice(1);
    await ready(page, key);
    const points = await page.$$eval(`section[data-view="${key}"] .chart`, (els) => els.map((e) => Number(e.dataset.points)));
    assert.ok(points.length >= 5 && points.every((p) => p > 0), String(points));
    assert.deepEqual(problems, []);
    await page.close();
  });

  test('the transaction list filters and sorts', async () => {
    const dir = runs['suite-a'];
    const run = JSON.parse(readFileSync(path.join(dir, 'run.json'), 'utf8'));
    const wl = run.workloads[0];
    const { page, problems } = await open(browser.context, path.join(dir, 'report.html'), '#w0');
    await ready(page, 'w0');
    // The iteration the page shows (the median; with two iterations the median figure is
    // their mean, which neither iteration has).
    const shown = await page.$eval('section[data-view=w0] .iterations strong', (e) => Number(e.textContent.split(' ')[0]));
    const it = wl.iterations.find((x) => x.iteration === shown);
    let s = await txState(page);
    assert.equal(s.rows, it.ops);
    assert.equal(s.cells[0][0], '1', 'issue order first');

    await page.selectOption('section[data-view=w0] [data-role=tx-op]', { label: 'write' });
    await settled(page);
    s = await txState(page);
    assert.equal(s.rows, it.op_stats.write.count, 'as many rows as writes');
    assert.ok(s.cells.length > 0 && s.cells.every((c) => c[4] === 'write'), 'only writes shown');

    await page.click('section[data-view=w0] .tx-head [data-key=latency]');
    await settled(page);
    s = await txState(page);
    assert.equal(s.sort, 'latency:asc');
    const lat = s.cells.map((c) => Number(c[3]));
    assert.ok(lat.every((v, i) => i === 0 || lat[i - 1] <= v), `ascending: ${lat}`);
    await page.click('section[data-view=w0] .tx-head [data-key=latency]');
    await settled(page);
    s = await txState(page);
    assert.equal(s.sort, 'latency:desc');
    const down = s.cells.map((c) => Number(c[3]));
    assert.ok(down.every((v, i) => i === 0 || down[i - 1] >= v), `descending: ${down}`);
    // The list shows each op's exact latency; run.json's maximum is a histogram bucket's
    // edge, so the slowest write is found in the op records themselves.
    const slowest = slowestWriteNs(dir, it.records);
    assert.ok(slowest > 0, 'the records hold measured writes');
    assert.equal(down[0], Math.round(slowest / 100) / 10, 'the slowest write first');

    await page.selectOption('section[data-view=w0] [data-role=tx-op]', { label: 'every op' });
    await page.click('section[data-view=w0] .tx-head [data-key=file]');
    await settled(page);
    s = await txState(page);
    const files = s.cells.map((c) => c[5]);
    assert.deepEqual(files, [...files].sort(), 'sorted by file');

    await page.fill('section[data-view=w0] [data-role=tx-file]', 'Inventory.mdb');
    await settled(page);
    s = await txState(page);
    assert.ok(s.rows > 0 && s.rows < it.ops);
    assert.ok(s.cells.every((c) => c[5].includes('Inventory.mdb')));

    await page.fill('section[data-view=w0] [data-role=tx-minlat]', '1000000');
    await settled(page);
    s = await txState(page);
    assert.equal(s.rows, 0, 'nothing took a second on the null backend');
    const status = await page.textContent('section[data-view=w0] [data-role=tx-count]');
    assert.match(status, /^0 of /);
    await page.fill('section[data-view=w0] [data-role=tx-minlat]', '');
    await page.fill('section[data-view=w0] [data-role=tx-file]', '');
    await page.click('section[data-view=w0] .tx-head [data-key=row]');
    await settled(page);
    s = await txState(page);
    assert.equal(s.rows, it.ops);

    // Scrolled to the end, the last op is in view.
    await page.$eval('section[data-view=w0] .tx-scroll', (el) => { el.scrollTop = el.scrollHeight; });
    // The rows in view are redrawn on the next frames.
    await page.waitForFunction((last) => {
      const rows = [...document.querySelectorAll('section[data-view=w0] .txlist [data-role=tx-row]')].filter((r) => r.style.visibility !== 'hidden');
      return rows.some((r) => r.children[0]?.textContent === last);
    }, String(it.ops), { timeout: 10000 }).catch(() => {});
    s = await txState(page);
    assert.equal(s.cells.at(-1)[0], String(it.ops));
    await shot(page, 'transactions');
    assert.deepEqual(problems, []);
    await page.close();
  });

  test('the access map zooms and selects files', async () => {
    const { page, problems } = await open(browser.context, path.join(runs['suite-a'], 'report.html'), '#w0');
    await ready(page, 'w0');
    const map = 'section[data-view=w0] .chart[data-title="File access map"]';
    const points = () => page.$eval(map, (e) => Number(e.dataset.points));
    const all = await points();
    assert.ok(all > 0);
    // Redrawn when the count changes; a loaded machine may take its time.
    const drawn = (cmp, n) => page.waitForFunction(({ sel, cmp, n }) => {
      const p = Number(document.querySelector(sel).dataset.points);
      return cmp === 'lt' ? p < n : p === n;
    }, { sel: map, cmp, n }, { timeout: 10000 });
    await page.click(`section[data-view=w0] .access button:text("none")`);
    await drawn('eq', 0).catch(() => {});
    assert.equal(await points(), 0, 'no file selected, nothing drawn');
    await page.click(`section[data-view=w0] .access button:text("all shown")`);
    await drawn('eq', all).catch(() => {});
    assert.equal(await points(), all);
    const box = await page.$eval(`${map} .u-over`, (e) => { const r = e.getBoundingClientRect(); return { x: r.x, y: r.y, w: r.width, h: r.height }; });
    await page.mouse.move(box.x + box.w * 0.1, box.y + box.h * 0.6);
    await page.mouse.down();
    await page.mouse.move(box.x + box.w * 0.3, box.y + box.h * 0.95, { steps: 5 });
    await page.mouse.up();
    await drawn('lt', all).catch(() => {});
    const zoomed = await points();
    assert.ok(zoomed < all, `zooming in draws fewer points (${zoomed} of ${all})`);
    // The offset axis ticks at round decimal steps (1, 2 or 5 × 10^k bytes), each label
    // a whole number of the step's unit.
    const ticks = await page.$eval(map, (e) => JSON.parse(e.dataset.offsetTicks));
    const unit = { B: 1, kB: 1e3, MB: 1e6, GB: 1e9 };
    const vals = ticks.map((t) => { const [n, u] = t.split(' '); assert.ok(Number.isInteger(Number(n)) && unit[u], t); return Number(n) * unit[u]; }).sort((a, b) => a - b);
    assert.ok(vals.length >= 2, `ticks ${ticks}`);
    const step = vals[1] - vals[0];
    const mant = step / Math.pow(10, Math.floor(Math.log10(step) + 1e-9));
    assert.ok([1, 2, 5].some((r) => Math.abs(mant - r) < 1e-9), `step ${step} B is 1, 2 or 5 × 10^k: ${ticks}`);
    assert.ok(vals.every((v) => v % step === 0), `${ticks}`);
    await page.dblclick(`${map} .u-over`);
    await drawn('eq', all).catch(() => {});
    assert.equal(await points(), all, 'double-click shows everything again');
    assert.deepEqual(problems, []);
    await page.close();
  });

  test('hovering the access map names the op, and a click shows it in the transaction list', async () => {
    const { page, problems } = await open(browser.context, path.join(runs['suite-a'], 'report.html'), '#w0');
    await ready(page, 'w0');
    const map = 'section[data-view=w0] .chart[data-title="File access map"]';
    await page.$eval(map, (e) => e.scrollIntoView({ block: 'center' }));
    const over = await page.$eval(`${map} .u-over`, (e) => { const r = e.getBoundingClientRect(); return { x: r.x, y: r.y, w: r.width, h: r.height }; });
    // The painted squares (each names its latest op) and the long ops' bars.
    const n = await page.$eval(map, (e) => Number(e.dataset.cells));
    // A drawn square well inside the plot (not on its edges, where the axes are).
    const p = await page.$eval(map, (e, [n, w, h]) => {
      for (let k = Math.floor(n / 2), j = 0; j < n; j++, k = (k + 1) % n) {
        const q = e.naslabPoint(k);
        if (q.x > 10 && q.x < w - 10 && q.y > 10 && q.y < h - 10) return q;
      }
      return null;
    }, [n, over.w, over.h]);
    assert.ok(p, 'a drawn point inside the plot');
    await page.mouse.move(over.x + p.x, over.y + p.y);
    const readout = await page.textContent(`${map} [data-role=access-readout]`);
    const row = Number(await page.$eval(`${map} [data-role=access-readout]`, (e) => e.dataset.row));
    assert.match(readout, /^\S.* · (read|write) · issued [\d.]+ (ns|µs|ms|s) into the phase · offset \d+ B \(.*\) · length \d+ B · op #\d+/, readout);
    await page.mouse.click(over.x + p.x, over.y + p.y);
    await page.waitForFunction((r) => document.querySelector('section[data-view=w0] .txlist').dataset.highlight === String(r), row, { timeout: 10000 });
    await page.waitForTimeout(100);
    const s = await txState(page);
    const hit = s.cells.find((c) => c[0] === String(row + 1));
    assert.ok(hit, `op #${row + 1} in view after the click`);
    // The readout and the list's row are the same op.
    assert.ok(readout.startsWith(`${hit[5]} · ${hit[4]} · `), `${readout} / ${hit}`);
    assert.ok(readout.includes(`offset ${hit[6]} B`) && readout.includes(`length ${hit[7]} B`), `${readout} / ${hit}`);
    assert.ok(readout.includes(`op #${hit[0]} `), readout);
    // Its issue time, in µs in the list, is the readout's time.
    const m = readout.match(/issued ([\d.]+) (ns|µs|ms|s) into/);
    const ns = Number(m[1]) * { ns: 1, 'µs': 1e3, ms: 1e6, s: 1e9 }[m[2]];
    assert.ok(Math.abs(ns / 1e3 - Number(hit[1])) <= Math.max(0.1, Number(hit[1]) * 0.01), `${ns} ns vs ${hit[1]} µs`);
    assert.deepEqual(problems, []);
    await page.close();
  });

  test('the rows shown download as CSV, and the time filter is in µs', async () => {
    const { page, problems } = await open(browser.context, path.join(runs['suite-a'], 'report.html'), '#w0');
    await ready(page, 'w0');
    await page.selectOption('section[data-view=w0] [data-role=tx-op]', { label: 'write' });
    await settled(page);
    let s = await txState(page);
    const starts = s.cells.map((c) => Number(c[1]));
    // A window in µs around the first writes shown: only those inside remain.
    // The list shows µs to 0.1: widen by half a digit so the rows shown stay in.
    const from = starts[2] - 0.05, to = starts[8] + 0.05;
    await page.fill('section[data-view=w0] [data-role=tx-from]', String(from));
    await page.fill('section[data-view=w0] [data-role=tx-to]', String(to));
    await settled(page);
    s = await txState(page);
    assert.ok(s.rows >= 7, `rows ${s.rows}`);
    assert.ok(s.cells.every((c) => Number(c[1]) >= from && Number(c[1]) <= to), 'every start within the µs window');
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.click('section[data-view=w0] [data-role=tx-csv]'),
    ]);
    const file = path.join(work, 'shown.csv');
    await download.saveAs(file);
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    assert.equal(lines[0], 'row,start_us,finish_us,latency_us,op,file,offset_bytes,length_bytes,result,stream');
    assert.equal(lines.length - 1, s.rows, 'one line per row shown');
    const shown = s.cells.slice(0, Math.min(s.cells.length, lines.length - 1));
    shown.forEach((c, i) => assert.equal(lines[i + 1], c.map((v, j) => (j === 5 && /[",]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v)).join(','), `line ${i + 1}`));
    assert.ok(lines.slice(1).every((l) => l.split(',')[4] === 'write'));
    assert.deepEqual(problems, []);
    await page.close();
  });

  test('a small trace with two streams reports too', async () => {
    const { page, problems } = await open(browser.context, path.join(runs.example, 'report.html'), '#w0');
    await ready(page, 'w0');
    const points = await page.$$eval('section[data-view=w0] .chart', (els) => els.map((e) => Number(e.dataset.points)));
    assert.ok(points.length >= 4 && points.every((p) => p > 0), String(points));
    await shot(page, 'example');
    assert.deepEqual(problems, []);
    await page.close();
  });
});

describe('a multi-client run\'s report', () => {
  test('shows the aggregate, or one client\'s own figures and charts', async () => {
    const dir = runs.multi;
    const run = JSON.parse(readFileSync(path.join(dir, 'run.json'), 'utf8'));
    assert.equal(run.multi_client?.clients?.length, 2, 'a two-client job (naslab built with --features mpi)');
    const it = run.workloads[0].iterations[0];
    const { page, problems } = await open(browser.context, path.join(dir, 'report.html'), '#w0');
    await ready(page, 'w0');
    const pick = 'section[data-view=w0] [data-role=client]';
    const options = await page.$$eval(`${pick} option`, (o) => o.map((x) => x.textContent));
    assert.deepEqual(options, ['all 2 clients (aggregate)', `client 0 on ${run.multi_client.clients[0].host}`, `client 1 on ${run.multi_client.clients[1].host}`]);
    // Each client's own figures side by side, with the path it crossed.
    const clientRows = await page.$$eval('section[data-view=w0] table[data-role=clients] tbody tr',
      (rs) => rs.map((r) => [...r.children].map((c) => c.textContent)));
    assert.deepEqual(clientRows.map((r) => [r[0], r[1], r[5]]), run.multi_client.clients.map((c) =>
      [String(c.rank), c.host, c.workloads[0].iterations[0].ops.toLocaleString('en-US')]));
    // The first table shown is the latency by op type.
    const counts = () => page.$eval('section[data-view=w0] .shown table.grid.num',
      (t) => Object.fromEntries([...t.querySelectorAll('tbody tr')].map((r) => [r.children[0].textContent, Number(r.children[1].textContent.replace(/,/g, ''))])));
    const expect = (stats) => Object.fromEntries(Object.entries(stats).map(([op, s]) => [op, s.count]));
    assert.deepEqual(await counts(), expect(it.op_stats), 'the aggregate first');
    const chart = 'section[data-view=w0] .shown .chart[data-title="Latency over time (µs)"]';
    for (const rank of [1, 0]) {
      await page.selectOption(pick, String(rank));
      const own = run.multi_client.clients[rank].workloads[0].iterations[0];
      assert.deepEqual(await counts(), expect(own.op_stats), `client ${rank}'s op counts`);
      assert.notDeepEqual(expect(own.op_stats), expect(it.op_stats));
      const facts = await page.$eval('section[data-view=w0] .shown dl.facts', (e) => e.textContent);
      assert.ok(facts.includes(`ops${own.ops.toLocaleString('en-US')}`), facts);
      // The latency over time is drawn from this client's ops alone (its records, by
      // their client field), each period's max among them.
      const ops = measuredOps(dir, it.records, it.clock_start_ns, rank);
      assert.equal(ops.length, own.ops);
      const d = await page.$eval(chart, (e) => { const r = e.naslabDrawn(); return { ...r, data: r.data.map((c) => [...c]) }; });
      const byPeriod = new Map();
      for (const op of ops) {
        const j = Math.floor(Math.min(Math.floor(op.done / d.bin_ns), d.bins - 1) / d.period);
        byPeriod.set(j, Math.max(byPeriod.get(j) ?? 0, op.latency));
      }
      const max = d.data[1];
      assert.equal(max.filter((v) => v !== null).length, byPeriod.size, `client ${rank}: a value for every period with its ops, and only those`);
      for (const [j, lat] of byPeriod) assert.equal(max[j], Math.max(lat, 1) / 1e3, `client ${rank}, period ${j}`);
    }
    await page.selectOption(pick, '');
    assert.deepEqual(await counts(), expect(it.op_stats), 'back to the aggregate');
    await shot(page, 'multi-client');
    assert.deepEqual(problems, []);
    await page.close();
  });
});

describe('the comparison page', () => {
  test('shows the table and overlays each workload\'s charts', async () => {
    const { page, problems, requests } = await open(browser.context, path.join(work, 'compare.html'));
    await ready(page, 'compare');
    const rows = await page.$$eval('table.compare tbody tr', (r) => r.map((x) => x.children[0].textContent));
    assert.deepEqual(rows, ['OfficeProductivity', 'HDVideo_1Play', 'DirectoryCopyToNAS']);
    const foot = await page.textContent('table.compare tfoot');
    assert.match(foot, /geometric mean/);
    // The devices name the columns.
    const heads = await page.$$eval('table.compare thead th', (t) => t.map((x) => x.textContent));
    assert.deepEqual(heads, ['workload', 'Acme Box A ratio', 'Acme Box A MB/s', 'Other NAS B ratio', 'Other NAS B MB/s']);
    // Ratios to 3 significant digits.
    const ratios = await page.$$eval('table.compare tbody tr', (r) => r.map((x) => x.children[3].textContent));
    for (const r of ratios) assert.match(r, /^(0\.\d{3}|[1-9]\.\d{2}|[1-9]\d\.\d|[1-9]\d{2,})$/, r);
    assert.match(await page.textContent('.mean-over'), /over the 3 workloads every run has: OfficeProductivity, HDVideo_1Play, DirectoryCopyToNAS/);
    const diffs = await page.$$eval('ul.differences li', (l) => l.map((x) => x.textContent));
    assert.ok(diffs.some((d) => /differ in seed: Acme Box A 1, Other NAS B 2/.test(d)), diffs.join('\n'));
    const spreads = await page.$$eval('ul.spreads li', (l) => l.map((x) => x.textContent));
    assert.equal(spreads.length, 3, spreads.join('\n'));
    for (const s of spreads) assert.match(s, /: Other NAS B is \d\.\d{2} ± [\d.]+× (faster|slower) than Acme Box A \(2 and 2 iterations; the ranges (do not )?overlap/, s);
    // Each run over its own measured phase.
    const tp = await page.$eval('.chart[data-title^="Throughput over time"]', (e) => e.dataset.title);
    assert.match(tp, /each run over its own measured phase/);
    const charts = await page.$$eval('.chart', (els) => els.map((e) => ({ title: e.dataset.title, points: Number(e.dataset.points) })));
    assert.equal(charts.length, 9);
    const text = await shownText(page);
    assert.deepEqual(unitSystems(text), ['decimal'], `the comparison shows ${unitSystems(text).join(' and ')} units`);
    for (const c of charts) assert.ok(c.points > 0, `${c.title} has no data points`);
    await shot(page, 'compare');
    assert.deepEqual(problems, []);
    assert.deepEqual(requests, []);
    await page.close();
  });
});
