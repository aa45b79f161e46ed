// The report's number formatting rounds as the Rust exporters do (crates/results,
// export::Us): microseconds to one decimal, half up on the whole nanosecond count.
//
// usage: node --test tests/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { transformSync } from 'esbuild';

const here = path.dirname(fileURLToPath(import.meta.url));
const source = readFileSync(path.join(here, '..', 'src', 'format.ts'), 'utf8');
const { code } = transformSync(source, { loader: 'ts', format: 'esm' });
const format = await import(`data:text/javascript;base64,${Buffer.from(code).toString('base64')}`);

test('microseconds round half up on the exact nanosecond count, as the CSV does', () => {
  // The same cases as the Rust exporters' test (crates/results/src/export/mod.rs).
  const cases = [
    [0, '0.0'], [49, '0.0'], [50, '0.1'], [7249, '7.2'], [7250, '7.3'], [7251, '7.3'],
    [15523877, '15523.9'], [999950, '1000.0'],
  ];
  for (const [ns, shown] of cases) assert.equal(format.us(ns), shown, `${ns} ns`);
  // A mean computed in the browser drops its fraction, as the exporters' integer means do.
  assert.equal(format.us(7249.9), '7.2');
});

test('sizes are in decimal units, to 3 significant digits', () => {
  const cases = [
    [0, '0 B'], [999, '999 B'], [1000, '1.00 kB'], [4096, '4.10 kB'], [65536, '65.5 kB'],
    [131072, '131 kB'], [999_499, '999 kB'], [999_500, '1.00 MB'], [1 << 20, '1.05 MB'], [1.5e9, '1.50 GB'],
  ];
  for (const [n, shown] of cases) assert.equal(format.bytes(n), shown, `${n} B`);
});

test('size axis ticks fall at 1, 2 or 5 × 10^k bytes, each a whole number of the step\'s unit', () => {
  assert.deepEqual(format.decimalSplits(0, 100e6, 300, 60), [0, 20e6, 40e6, 60e6, 80e6, 100e6]);
  assert.deepEqual(format.decimalTickLabels([0, 20e6, 40e6]), ['0 MB', '20 MB', '40 MB']);
  assert.deepEqual(format.decimalTickLabels([1e9, 1.5e9, 2e9]), ['1000 MB', '1500 MB', '2000 MB']);
  assert.deepEqual(format.decimalTickLabels([0, 2000, 4000]), ['0 kB', '2 kB', '4 kB']);
  assert.deepEqual(format.decimalTickLabels([0, 500]), ['0 B', '500 B']);
  // Not the binary steps the report once drew (20/39/59/78 KiB), nor binary labels.
  for (const [lo, hi, px] of [[0, 1 << 30, 400], [12345, 80000, 300], [0, 7, 200], [3e12, 3.7e12, 500]]) {
    const v = format.decimalSplits(lo, hi, px, 40);
    const step = v[1] - v[0];
    const mant = step / Math.pow(10, Math.floor(Math.log10(step) + 1e-9));
    assert.ok([1, 2, 5].some((r) => Math.abs(mant - r) < 1e-9), `${lo}..${hi}: step ${step}`);
    for (const label of format.decimalTickLabels(v)) assert.match(label, /^\d+ (B|kB|MB|GB|TB)$/, label);
  }
});

test('durations read together share one unit, the one that suits the largest', () => {
  assert.deepEqual(format.durations([911, 51_000]), ['0.911 µs', '51.0 µs']);
  assert.deepEqual(format.durations([911, 999]), ['911 ns', '999 ns']);
  assert.deepEqual(format.durations([45_300, 2_500_000, 812_000_000]), ['0.0453 ms', '2.50 ms', '812 ms']);
  assert.deepEqual(format.durations([0, 3e9]), ['0 s', '3.00 s']);
  for (const line of [[911, 51_000], [12, 7_000_000_000], [5e5, 5e6]]) {
    const units = new Set(format.durations(line).map((d) => d.split(' ')[1]));
    assert.equal(units.size, 1, `${line}: ${[...units]}`);
  }
});
