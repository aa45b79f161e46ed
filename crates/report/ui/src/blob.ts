// Unpacking the columns the binary packed (crates/report/src/encode.rs): base64 text
// -> zlib (the browser's own DecompressionStream) -> byte-unshuffle -> typed arrays.
import type { BlobLayout } from './types';

export type Column = Float64Array | Uint32Array | Uint8Array;
export type Columns = Record<string, Column>;

const WIDTH = { f64: 8, u32: 4, u8: 1 } as const;

function base64Bytes(text: string): Uint8Array {
  const bin = atob(text);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

async function inflate(bytes: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([bytes as BlobPart]).stream().pipeThrough(new DecompressionStream('deflate'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

const cache = new Map<string, Promise<Columns>>();

/** The columns of the blob `layout` describes, decoded once and kept. */
export function loadColumns(layout: BlobLayout): Promise<Columns> {
  let p = cache.get(layout.id);
  if (!p) {
    p = decode(layout);
    cache.set(layout.id, p);
  }
  return p;
}

async function decode(layout: BlobLayout): Promise<Columns> {
  const el = document.getElementById(layout.id);
  if (!el) throw new Error(`the report has no data element ${layout.id}`);
  const raw = await inflate(base64Bytes((el.textContent ?? '').trim()));
  if (raw.length !== layout.bytes) {
    throw new Error(`data element ${layout.id} holds ${raw.length} bytes, expected ${layout.bytes}`);
  }
  const n = layout.rows;
  const out: Columns = {};
  for (const c of layout.columns) {
    const w = WIDTH[c.type];
    const bytes = new Uint8Array(n * w);
    const src = raw.subarray(c.offset, c.offset + n * w);
    if (w === 1) {
      bytes.set(src);
    } else {
      for (let b = 0; b < w; b++) {
        const plane = src.subarray(b * n, (b + 1) * n);
        for (let i = 0, j = b; i < n; i++, j += w) bytes[j] = plane[i];
      }
    }
    let col: Column;
    if (c.type === 'f64') col = new Float64Array(bytes.buffer);
    else if (c.type === 'u32') col = new Uint32Array(bytes.buffer);
    else col = bytes;
    if (c.delta) {
      let acc = 0;
      for (let i = 0; i < n; i++) { acc += col[i]; col[i] = acc; }
    }
    out[c.name] = col;
  }
  return out;
}
