// Opens the report of each run directory given in Chromium and checks it as a user would
// see it: the overview is drawn offline and without errors, its suite table lists the
// workloads run.json holds, in order, and each workload's page draws its charts. Used
// for runs made by another build (naslab.exe under Wine, scripts/test-windows.sh).
//
// usage: node tests/open-report.mjs RUN_DIR...   (needs chromium)
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { launch, open } from './browser.mjs';

const dirs = process.argv.slice(2);
if (!dirs.length) {
  console.error('usage: node tests/open-report.mjs RUN_DIR...');
  process.exit(2);
}
const browser = await launch();
try {
  for (const dir of dirs) {
    const run = JSON.parse(readFileSync(path.join(dir, 'run.json'), 'utf8'));
    const { page, problems, requests } = await open(browser.context, path.join(dir, 'report.html'));
    await page.waitForFunction(() => document.body.dataset.ready === 'overview', null, { timeout: 60000 });
    const rows = await page.$$eval('table.suite tbody tr', (r) => r.map((x) => x.children[0].textContent));
    assert.deepEqual(rows, run.workloads.map((w) => w.name), `${dir}: the suite table`);
    let charts = 0;
    for (let i = 0; i < run.workloads.length; i++) {
      await page.click(`table.suite tbody tr:nth-child(${i + 1}) a`);
      const key = await page.evaluate(() => location.hash.slice(1));
      await page.waitForFunction((k) => document.body.dataset.ready === k, key, { timeout: 60000 });
      const drawn = await page.$$eval(`section[data-view="${key}"] .chart`, (els) => els.map((e) => Number(e.dataset.points)));
      assert.ok(drawn.length > 0 && drawn.every((n) => n > 0), `${dir}: ${run.workloads[i].name}'s charts hold ${JSON.stringify(drawn)} points`);
      charts += drawn.length;
      await page.goBack();
      await page.waitForFunction(() => document.body.dataset.ready === 'overview', null, { timeout: 60000 });
    }
    assert.deepEqual(problems, [], `${dir}: the page's errors`);
    assert.deepEqual(requests, [], `${dir}: the page asked the network`);
    console.log(`report of ${dir}: ${rows.length} workloads, ${charts} charts drawn, no error, offline`);
    await page.close();
  }
} finally {
  await browser.close();
}
