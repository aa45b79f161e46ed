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
