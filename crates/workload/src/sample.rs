//! Random draws the generators share (the crate has no distribution library).

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

/// The generators' random source.
pub(crate) type Rng8 = ChaCha8Rng;

/// A standard normal draw (Box-Muller).
pub(crate) fn normal(rng: &mut Rng8) -> f64 {
    let u1: f64 = rng.random_range(f64::MIN_POSITIVE..1.0);
    let u2: f64 = rng.random();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// A log-normal draw with the given median and log-space standard deviation.
pub(crate) fn lognormal(rng: &mut Rng8, median: f64, sigma: f64) -> f64 {
    median * (sigma * normal(rng)).exp()
}

/// A draw between `lo` and `hi` (inclusive) whose logarithm is uniform.
pub(crate) fn log_uniform(rng: &mut Rng8, lo: u64, hi: u64) -> u64 {
    let (l, h) = ((lo as f64).ln(), (hi as f64).ln());
    (rng.random_range(l..=h).exp().round() as u64).clamp(lo, hi)
}

/// One of `items`, chosen with probability proportional to its weight.
pub(crate) fn pick<T: Copy>(rng: &mut Rng8, items: &[(T, u32)]) -> T {
    let total: u32 = items.iter().map(|(_, w)| w).sum();
    let mut x = rng.random_range(0..total.max(1));
    for &(item, w) in items {
        if x < w {
            return item;
        }
        x -= w;
    }
    items[items.len() - 1].0
}

/// A uniform draw in `lo..=hi`.
pub(crate) fn between(rng: &mut Rng8, lo: u64, hi: u64) -> u64 {
    rng.random_range(lo..=hi.max(lo))
}

/// An offset in `[0, size - len]` aligned down to `align` (0 when the file is too small).
pub(crate) fn offset_in(rng: &mut Rng8, size: u64, len: u64, align: u64) -> u64 {
    if size <= len {
        return 0;
    }
    let off = rng.random_range(0..=size - len);
    off - off % align.max(1)
}

/// Fisher-Yates shuffle.
pub(crate) fn shuffle<T>(rng: &mut Rng8, items: &mut [T]) {
    for i in (1..items.len()).rev() {
        let j = rng.random_range(0..=i);
        items.swap(i, j);
    }
}
