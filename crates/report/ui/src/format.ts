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

/** Bytes in binary units (4 KiB, 1.5 MiB). */
export function bytes(n: number): string {
  if (!isFinite(n)) return '-';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let i = 0;
  let v = n;
  while (Math.abs(v) >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return i === 0 ? `${v.toFixed(0)} B` : `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
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
