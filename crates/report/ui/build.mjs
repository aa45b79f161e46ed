// Bundles the report UI (src/main.ts, uPlot and the styles) into the two files the
// naslab binary embeds, report.js and report.css, and records the sources' fingerprint
// beside them in report.stamp (see fingerprint.mjs). `npm run build` writes ../assets;
// cargo never runs this.
// usage: node build.mjs [OUTDIR]   (default ../assets; the bundle test builds elsewhere)
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { readFileSync, writeFileSync } from 'node:fs';
import { uiFingerprint } from './fingerprint.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const outdir = path.resolve(process.argv[2] ?? path.join(here, '..', 'assets'));
const uplot = JSON.parse(readFileSync(path.join(here, 'node_modules', 'uplot', 'package.json'), 'utf8'));

await build({
  entryPoints: { report: path.join(here, 'src', 'main.ts') },
  bundle: true,
  minify: true,
  format: 'iife',
  target: ['chrome100', 'firefox100', 'safari16'],
  charset: 'ascii',
  legalComments: 'eof',
  banner: {
    js: `/*! naslab report UI. Includes uPlot ${uplot.version}, (c) Leon Sorokin, MIT license, https://github.com/leeoniya/uPlot */`,
  },
  outdir,
  logLevel: 'warning',
});
writeFileSync(path.join(outdir, 'report.stamp'), `${uiFingerprint(here)}\n`);
