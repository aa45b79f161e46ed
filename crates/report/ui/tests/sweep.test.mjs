// A capacity sweep in the report and in a comparison, checked against run.json: the
// overview's curve charts hold one point per load point, the points table shows each
// point's figures (3 significant digits) and links to its workload page, and the
// comparison draws every run's curve with its knee and overall response time.
//
// usage: node --test tests/   (NASLAB_BIN: the naslab binary; needs chromium)
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launch, open } from './browser.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..', '..', '..', '..');
const bin = process.env.NASLAB_BIN ?? path.join(repo, 'target', 'debug', 'naslab');
const RATES = [400, 800, 1600];

let work;
let browser;
const sweeps = [];

/** A rate sweep on the null backend whose every op takes `service`; `more`: other flags. */
function sweep(label, service, more = []) {
  const out = path.join(work, 'out');
  execFileSync(bin, ['sweep', '--rate', RATES.join(','), '--point-time', '300ms', '--warmup', '100ms',
    '--mix', 'read=50,block=4k,file=1m', '--connections', '2', '--backend', 'null', '--null-service-time', service,
    '--keep-going', '--label', label, '--out', out, ...more], { stdio: ['ignore', 'pipe', 'pipe'] });
  const dir = path.join(out, label, readdirSync(path.join(out, label))[0]);
  return { dir, run: JSON.parse(readFileSync(path.join(dir, 'run.json'), 'utf8')) };
}

/** A duration cell ("0.970 ms", "250 µs") in ns. */
function ns(text) {
  const m = /^([\d.]+) (ns|µs|ms|s)$/.exec(text.trim());
  assert.ok(m, `a duration: ${text}`);
  return Number(m[1]) * { ns: 1, 'µs': 1e3, ms: 1e6, s: 1e9 }[m[2]];
}

/** `v` to 3 significant digits, as the page rounds it. */
const sig3 = (v) => Number(v.toPrecision(3));

before(async () => {
  work = mkdtempSync(path.join(tmpdir(), 'naslab-sweep-report-'));
  sweeps.push(sweep('fast', '100us'), sweep('slow', '300us'));
  browser = await launch();
});

after(async () => {
  await browser?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('a sweep in its report', () => {
  test('the curve charts and the points table show every point as run.json has it', async () => {
    const { dir, run } = sweeps[0];
    const points = run.sweep.points;
    assert.equal(points.length, RATES.length);
    const { page, problems } = await open(browser.context, path.join(dir, 'report.html'));
    await page.waitForFunction(() => document.body.dataset.ready === 'overview', null, { timeout: 60000 });
    const charts = await page.$$eval('.sweep .chart', (els) => els.map((e) => [e.dataset.title, Number(e.dataset.points)]));
    assert.deepEqual(charts.map((c) => c[1]), [points.length, points.length, points.length], JSON.stringify(charts));
    const legends = await page.$$eval('.sweep .chart', (els) => els.map((e) => [...e.querySelectorAll('.u-legend .u-series th')].map((th) => th.textContent.trim()).filter(Boolean)));
    const bands = ['mean response', 'p50 response', 'p90 response', 'p99 response', 'mean service'];
    assert.deepEqual(legends[0], ['offered ops/s asked', ...bands]);
    assert.deepEqual(legends[1], ['achieved ops/s', ...bands]);
    const rows = await page.$$eval('table.sweep-points tbody tr', (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
    const head = await page.$$eval('table.sweep-points thead th', (ths) => ths.map((th) => th.textContent));
    const col = (name) => head.indexOf(name);
    assert.equal(rows.length, points.length);
    points.forEach((p, i) => {
      const r = rows[i];
      assert.equal(Number(r[0]), sig3(p.load));
      assert.equal(Number(r[col('offered ops/s')]), sig3(p.offered_ops_s));
      assert.equal(Number(r[col('achieved ops/s')]), sig3(p.achieved_ops_s));
      assert.equal(Number(r[col('ops')].replace(/,/g, '')), p.all.count);
      for (const [name, want] of [['mean response', p.all.response.avg_ns], ['p99 response', p.all.response.p99_ns], ['mean service', p.all.service.avg_ns]]) {
        const got = ns(r[col(name)]);
        assert.ok(Math.abs(got - want) <= want * 0.005 + 1, `${name} of point ${i}: page ${got} ns, run.json ${want} ns`);
      }
      assert.equal(r.at(-1), p.saturated ? 'saturated' : p.met_cap === false ? 'over the cap' : 'kept up');
    });
    const facts = await page.textContent('.sweep-facts');
    assert.ok(facts.includes(`Peak achieved: ${sig3(run.sweep.peak_achieved_ops_s)} ops/s.`), facts);
    assert.ok(facts.includes(`${RATES.length} load points`), facts);
    // A point's load opens that point's own workload page.
    await page.click('table.sweep-points tbody tr:nth-child(2) a');
    const key = await page.evaluate(() => location.hash.slice(1));
    await page.waitForFunction((k) => document.body.dataset.ready === k, key, { timeout: 60000 });
    assert.equal(await page.textContent(`section[data-view=${key}] h2`), points[1].workload);
    assert.deepEqual(problems, []);
    await page.close();
  });

  test('the cap column shows the figure the cap was held to: a p99.9 cap, each point\'s reads\' p99.9', async () => {
    const { dir, run } = sweep('capped', '100us', ['--cap', 'read:p99.9<=150us']);
    const points = run.sweep.points;
    assert.equal(points.length, RATES.length);
    const { page, problems } = await open(browser.context, path.join(dir, 'report.html'));
    await page.waitForFunction(() => document.body.dataset.ready === 'overview', null, { timeout: 60000 });
    const head = await page.$$eval('table.sweep-points thead th', (ths) => ths.map((th) => th.textContent));
    const col = head.indexOf('read:p99.9 ≤ 150 µs');
    assert.ok(col > 0, JSON.stringify(head));
    const cells = await page.$$eval('table.sweep-points tbody tr', (trs, c) => trs.map((tr) => tr.children[c].textContent), col);
    points.forEach((p, i) => {
      const want = p.ops.read.response.p999_ns;
      const [figure, mark] = [cells[i].slice(0, -2), cells[i].slice(-1)];
      const got = ns(figure);
      assert.ok(Math.abs(got - want) <= want * 0.005 + 1, `point ${i}: page ${got} ns, run.json's reads' p99.9 ${want} ns (p99 ${p.ops.read.response.p99_ns})`);
      assert.equal(mark, want <= 150_000 ? '✓' : '✗', cells[i]);
    });
    assert.deepEqual(problems, []);
    await page.close();
  });

  test('a comparison of two sweeps draws both curves with their knees and overall response times', async () => {
    const html = path.join(work, 'compare.html');
    execFileSync(bin, ['compare', sweeps[0].dir, sweeps[1].dir, '--format', 'html', '-o', html], { stdio: ['ignore', 'pipe', 'pipe'] });
    const { page, problems } = await open(browser.context, html);
    await page.waitForFunction(() => document.body.dataset.ready === 'compare', null, { timeout: 60000 });
    const rows = await page.$$eval('table.sweep-compare tbody tr', (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
    assert.equal(rows.length, 2);
    sweeps.forEach(({ run }, i) => {
      assert.equal(Number(rows[i][2]), run.sweep.points.length);
      assert.equal(rows[i][3], run.sweep.knee == null ? '-' : String(sig3(run.sweep.knee)));
      assert.equal(Number(rows[i][4]), sig3(run.sweep.peak_achieved_ops_s));
      const ort = ns(rows[i][5]);
      assert.ok(Math.abs(ort - run.sweep.overall_response_ns) <= run.sweep.overall_response_ns * 0.005 + 1, `ORT ${ort} vs ${run.sweep.overall_response_ns}`);
    });
    const chart = await page.$eval('section.sweeps .chart', (e) => ({
      points: Number(e.dataset.points),
      legend: [...e.querySelectorAll('.u-legend .u-series th')].map((th) => th.textContent.trim()).filter(Boolean),
    }));
    assert.equal(chart.points, sweeps[0].run.sweep.points.length + sweeps[1].run.sweep.points.length);
    assert.equal(chart.legend.length, 3, JSON.stringify(chart.legend));
    assert.deepEqual(problems, []);
    await page.close();
  });
});
