// The fingerprint of the report UI's sources, written to report.stamp beside the bundle.
// crates/report/tests/bundle.rs computes the same value in Rust, so a test can tell,
// without node, that the sources changed since the bundle was built. Content, not
// modification times, decides: a fresh clone has arbitrary times.
import path from 'node:path';
import { readdirSync, readFileSync, statSync } from 'node:fs';

// The files, relative to ui/, whose content decides the bundle besides src/.
const INPUTS = ['package.json', 'package-lock.json', 'build.mjs', 'fingerprint.mjs', 'tsconfig.json'];

// Every source, as a path relative to ui/ with '/' separators, in byte order.
function sources(ui) {
  const files = [...INPUTS];
  const dirs = ['src'];
  while (dirs.length > 0) {
    const dir = dirs.pop();
    for (const name of readdirSync(path.join(ui, dir))) {
      const rel = `${dir}/${name}`;
      if (statSync(path.join(ui, rel)).isDirectory()) {
        dirs.push(rel);
      } else {
        files.push(rel);
      }
    }
  }
  return files.sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
}

// FNV-1a (64-bit) over each source's relative path and content (carriage returns
// dropped, so a CRLF checkout gives the same value), each followed by a zero byte;
// 16 hex digits.
export function uiFingerprint(ui) {
  const MASK = (1n << 64n) - 1n;
  let h = 0xcbf29ce484222325n;
  const feed = (bytes) => {
    for (const b of bytes) {
      h ^= BigInt(b);
      h = (h * 0x100000001b3n) & MASK;
    }
  };
  for (const rel of sources(ui)) {
    feed(Buffer.from(rel));
    feed([0]);
    feed(readFileSync(path.join(ui, rel)).filter((b) => b !== 13));
    feed([0]);
  }
  return h.toString(16).padStart(16, '0');
}
