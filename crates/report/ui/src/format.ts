// Number formatting shared by the charts and tables.

/**
 * Microseconds with one decimal, from ns, rounded as naslab's other exports round: the
 * whole nanosecond count (a fraction dropped, as their integer means drop it) rounded half
 * up, so 7,250 ns is 7.3 here and in the CSV.
 */
export function us(ns: number): string {
  if (!isFinite(ns)) return '-';
  const n = Math.floor(Math.abs(ns));
  const tenths = Math.floor(n / 100) + (n % 100 >= 50 ? 1 : 0);
  return `${ns < 0 ? '-' : ''}${Math.floor(tenths / 10)}.${tenths % 10}`;
}

/** A duration in the unit that suits it. */
export function duration(ns: number): string {
  if (!isFinite(ns)) return '-';
  if (ns < 1e3) return `${ns.toFixed(0)} ns`;
  if (ns < 1e6) return `${(ns / 1e3).toFixed(1)} µs`;
  if (ns < 1e9) return `${(ns / 1e6).toFixed(2)} ms`;
  return `${(ns / 1e9).toFixed(3)} s`;
}

/** Durations that are read together (one line's mean, p50, p99 and max), all in the one
 * unit that suits the largest, each to 3 significant digits: "0.911 µs" and "51.0 µs",
 * never "911 ns" beside "51.0 µs". */
export function durations(ns: number[]): string[] {
  const top = Math.max(0, ...ns.filter((v) => isFinite(v)).map(Math.abs));
  const [div, unit] = top < 1e3 ? [1, 'ns'] : top < 1e6 ? [1e3, 'µs'] : top < 1e9 ? [1e6, 'ms'] : [1e9, 's'];
  return ns.map((v) => {
    if (!isFinite(v)) return '-';
    const x = v / div;
    if (x === 0) return `0 ${unit}`;
    return `${Math.abs(x) >= 100 || div === 1 ? x.toFixed(0) : x.toPrecision(3)} ${unit}`;
  });
}

/** The report's one unit system for sizes: decimal (SI), as throughput's MB/s is, so
 * 1 kB = 10^3 bytes, 1 MB = 10^6, 1 GB = 10^9 (see docs/report.md, "Units"). */
export const SIZE_UNITS = ['B', 'kB', 'MB', 'GB', 'TB', 'PB'];

/** Bytes in decimal units to 3 significant digits (4096 B is 4.10 kB, 1.5e9 B is 1.50 GB). */
export function bytes(n: number): string {
  if (!isFinite(n)) return '-';
  let i = 0;
  let v = n;
  // Decided on the rounded figure, so 999,500 B is 1.00 MB, not 1000 kB.
  const r3 = (x: number) => Number(x.toPrecision(3));
  while (Math.abs(r3(v)) >= 1000 && i < SIZE_UNITS.length - 1) { v /= 1000; i++; }
  return i === 0 ? `${n.toFixed(0)} B` : `${sig(r3(v), 3)} ${SIZE_UNITS[i]}`;
}

/** Axis ticks for bytes at round decimal steps (1, 2 or 5 × 10^k bytes: 20 MB, 40 MB,
 * 60 MB ..., or 500 MB, 1000 MB ...), about one per `px` pixels. */
export function decimalSplits(min: number, max: number, lengthPx: number, px = 60): number[] {
  const span = max - min;
  if (!(span > 0)) return [min];
  const want = Math.max(2, Math.floor(lengthPx / px));
  const raw = Math.max(1, span / want);
  const decade = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 5, 10].map((m) => m * decade).find((s) => s >= raw) ?? 10 * decade;
  const out: number[] = [];
  for (let v = Math.ceil(min / step) * step; v <= max && out.length < 1000; v += step) out.push(v);
  return out;
}

/** Tick labels for [`decimalSplits`]: every label in the decimal unit of the step, so
 * each is exact (1500 MB, not a rounded 1.5 GB beside 1000 MB). */
export function decimalTickLabels(v: number[]): string[] {
  const step = v.length > 1 ? v[1] - v[0] : Math.abs(v[0] ?? 0) || 1;
  let i = 0;
  while (i < SIZE_UNITS.length - 1 && step >= Math.pow(1000, i + 1)) i++;
  // The step is 1, 2 or 5 × 10^k and at least the unit, so every tick is a whole number of units.
  return v.map((b) => `${b / Math.pow(1000, i)} ${SIZE_UNITS[i]}`);
}

/** A count with thousands separators. */
export function count(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

/** MB/s with two decimals (1 MB = 10^6 bytes). */
export function mbs(v: number): string {
  return v.toFixed(2);
}

/** `v` to `digits` significant digits, without an exponent: 0.00390, 1.31, 41.5, 1230. */
export function sig(v: number, digits = 3): string {
  if (v === 0 || !isFinite(v)) return String(v);
  const decimals = digits - 1 - Math.floor(Math.log10(Math.abs(v)));
  if (decimals >= 0) return v.toFixed(decimals);
  const step = Math.pow(10, -decimals);
  return (Math.round(v / step) * step).toFixed(0);
}

/** The errno name of a negative op result, or the number itself. */
const ERRNO: Record<number, string> = {
  1: 'EPERM', 2: 'ENOENT', 4: 'EINTR', 5: 'EIO', 9: 'EBADF', 11: 'EAGAIN', 12: 'ENOMEM', 13: 'EACCES',
  16: 'EBUSY', 17: 'EEXIST', 18: 'EXDEV', 20: 'ENOTDIR', 21: 'EISDIR', 22: 'EINVAL', 24: 'EMFILE',
  27: 'EFBIG', 28: 'ENOSPC', 30: 'EROFS', 36: 'ENAMETOOLONG', 39: 'ENOTEMPTY', 95: 'EOPNOTSUPP',
  107: 'ENOTCONN', 110: 'ETIMEDOUT', 116: 'ESTALE', 122: 'EDQUOT',
};

export function result(r: number): string {
  if (r >= 0) return String(r);
  return ERRNO[-r] ?? String(r);
}

/** A distinct colour for series or file `i`. */
export function colour(i: number, alpha = 1): string {
  const fixed = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#7f7f7f', '#bcbd22'];
  if (i < fixed.length) {
    if (alpha === 1) return fixed[i];
    const n = parseInt(fixed[i].slice(1), 16);
    return `rgba(${n >> 16}, ${(n >> 8) & 255}, ${n & 255}, ${alpha})`;
  }
  const hue = (i * 137.508) % 360;
  return `hsla(${hue.toFixed(1)}, 70%, 42%, ${alpha})`;
}

/** A count and its noun, singular for one: "1 file", "607 files", "1,000 ops". */
export function plural(n: number, noun: string): string {
  return `${count(n)} ${noun}${n === 1 ? '' : 's'}`;
}
