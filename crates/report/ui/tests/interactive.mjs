// Measures a report in headless Chromium (bench/report-1m.sh): how long until the first
// workload's page is interactive, and how long sorting and filtering its transaction
// list take. usage: node interactive.mjs REPORT.html
import { launch, open } from './browser.mjs';

const file = process.argv[2];
if (!file) {
  console.error('usage: node interactive.mjs REPORT.html');
  process.exit(2);
}
const browser = await launch();
try {
  const t0 = Date.now();
  const { page, problems } = await open(browser.context, file, '#w0');
  await page.waitForFunction(() => document.body.dataset.ready === 'w0', null, { timeout: 120000 });
  const wall = (Date.now() - t0) / 1000;
  const inPage = await page.evaluate(() => performance.getEntriesByName('naslab-ready:w0')[0]?.startTime ?? NaN);
  const rows = await page.$eval('.txlist', (el) => Number(el.dataset.rows));
  console.log(`interactive in ${(inPage / 1000).toFixed(2)} s after navigation (${wall.toFixed(2)} s including the browser's start; goal <= 3 s), ${rows} rows in the list`);
  const timed = async (what, act, done) => {
    const start = await page.evaluate(() => performance.now());
    await act();
    await page.waitForFunction(done, null, { timeout: 120000 });
    const end = await page.evaluate(() => performance.now());
    console.log(`${what}: ${((end - start) / 1000).toFixed(2)} s`);
  };
  await timed('sort the list by latency', () => page.click('.tx-head [data-key=latency]'),
    () => document.querySelector('.txlist')?.dataset.sort === 'latency:asc' && !document.querySelector('.txlist.busy'));
  await timed('sort it by file', () => page.click('.tx-head [data-key=file]'),
    () => document.querySelector('.txlist')?.dataset.sort === 'file:asc' && !document.querySelector('.txlist.busy'));
  await timed('filter it to writes', async () => { await page.selectOption('[data-role=tx-op]', { label: 'write' }); },
    () => Number(document.querySelector('.txlist')?.dataset.rows) < Number(document.querySelector('.txlist')?.dataset.points) && !document.querySelector('.txlist.busy'));
  const memory = await page.evaluate(() => (performance).memory?.usedJSHeapSize ?? 0);
  if (memory) console.log(`JavaScript heap in use: ${(memory / 1e6).toFixed(0)} MB`);
  if (problems.length) console.log(`problems: ${problems.join('; ')}`);
} finally {
  await browser.close();
}
