//! Histograms the report draws: latency in logarithmic buckets (so a long tail shows),
//! transfer sizes in powers of two, and the per-file statistics built on them.

use std::collections::BTreeMap;

use serde::Serialize;
use ts_rs::TS;

/// Latency chart resolution: buckets per power of ten.
pub const CHART_PER_DECADE: u32 = 10;
/// Per-file percentile resolution: buckets per power of ten (each bucket 2.3 % wide).
const FINE_PER_DECADE: u32 = 100;
/// Latencies up to 10^13 ns (almost three hours) get their own buckets; longer ones share the last.
const DECADES: u32 = 13;

/// The logarithmic bucket of `ns` at `per_decade` buckets per power of ten (values below
/// 1 ns share bucket 0).
#[cfg(test)]
fn log_bucket(ns: u64, per_decade: u32) -> u32 {
    if ns <= 1 {
        return 0;
    }
    bucket_of_log((ns as f64).log10(), per_decade)
}

#[inline]
fn bucket_of_log(log10: f64, per_decade: u32) -> u32 {
    let b = (log10 * per_decade as f64).floor() as u32;
    b.min(DECADES * per_decade - 1)
}

/// One latency's buckets, the chart's and the per-file statistics', from one logarithm
/// (each equal to [`log_bucket`] at its resolution).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bucketed {
    pub ns: u64,
    chart: u32,
    fine: u16,
}

impl Bucketed {
    /// The per-file statistics' bucket (100 per power of ten).
    #[inline]
    pub fn fine(&self) -> u16 {
        self.fine
    }

    #[inline]
    pub fn new(ns: u64) -> Bucketed {
        if ns <= 1 {
            return Bucketed {
                ns,
                chart: 0,
                fine: 0,
            };
        }
        let l = (ns as f64).log10();
        Bucketed {
            ns,
            chart: bucket_of_log(l, CHART_PER_DECADE),
            fine: bucket_of_log(l, FINE_PER_DECADE) as u16,
        }
    }
}

/// What a percentile taken from fine bucket `b` reports: the bucket's geometric middle,
/// ns, within 1.2 % of every value in the bucket.
pub fn fine_middle(b: u16) -> u64 {
    let mid =
        log_bucket_floor(b as u32, FINE_PER_DECADE) * 10f64.powf(0.5 / FINE_PER_DECADE as f64);
    mid.round() as u64
}

/// The lower edge, in ns, of logarithmic bucket `b`.
pub fn log_bucket_floor(b: u32, per_decade: u32) -> f64 {
    10f64.powf(b as f64 / per_decade as f64)
}

/// Counts per logarithmic latency bucket (dense, `CHART_PER_DECADE` per decade).
#[derive(Debug, Clone)]
pub struct LatencyBuckets {
    counts: Vec<u64>,
}

impl Default for LatencyBuckets {
    fn default() -> Self {
        LatencyBuckets {
            counts: vec![0; (DECADES * CHART_PER_DECADE) as usize],
        }
    }
}

impl LatencyBuckets {
    /// Counts one latency.
    #[inline]
    pub fn record(&mut self, b: Bucketed) {
        self.counts[b.chart as usize] += 1;
    }

    /// The first and last bucket holding anything.
    pub fn range(&self) -> Option<(usize, usize)> {
        let first = self.counts.iter().position(|&c| c > 0)?;
        let last = self.counts.iter().rposition(|&c| c > 0)?;
        Some((first, last))
    }

    /// The counts of buckets `first..=last`.
    pub fn slice(&self, first: usize, last: usize) -> Vec<u64> {
        self.counts[first..=last].to_vec()
    }
}

/// The power-of-two bucket of a transfer size: 0 for 0 bytes, else `b` such that
/// `2^(b-1) <= len < 2^b`.
pub fn size_bucket(len: u64) -> usize {
    (64 - len.leading_zeros()) as usize
}

/// Counts per power-of-two transfer-size bucket.
#[derive(Debug, Clone)]
pub struct SizeBuckets {
    counts: [u64; 65],
}

impl Default for SizeBuckets {
    fn default() -> Self {
        SizeBuckets { counts: [0; 65] }
    }
}

impl SizeBuckets {
    /// Counts one transfer.
    pub fn record(&mut self, len: u64) {
        self.counts[size_bucket(len)] += 1;
    }

    /// The first and last bucket holding anything.
    pub fn range(&self) -> Option<(usize, usize)> {
        let first = self.counts.iter().position(|&c| c > 0)?;
        let last = self.counts.iter().rposition(|&c| c > 0)?;
        Some((first, last))
    }

    /// The counts of buckets `first..=last`.
    pub fn slice(&self, first: usize, last: usize) -> Vec<u64> {
        self.counts[first..=last].to_vec()
    }
}

/// Mean, spread and percentiles of one set of latencies, built one value at a time in
/// little memory: exact count, mean, standard deviation, min and max; percentiles from
/// sparse logarithmic buckets (within 1.2 %).
#[derive(Debug, Clone, Default)]
pub struct LatencyStats {
    count: u64,
    mean: f64,
    m2: f64,
    min: u64,
    max: u64,
    buckets: BTreeMap<u16, u32>,
}

/// What [`LatencyStats`] reports, in ns.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, TS)]
pub struct StatsSummary {
    /// Values seen.
    pub count: u64,
    /// Exact mean.
    pub mean_ns: f64,
    /// Population standard deviation.
    pub stddev_ns: f64,
    /// Smallest value.
    pub min_ns: u64,
    /// Median (bucketed).
    pub p50_ns: u64,
    /// 90th percentile (bucketed).
    pub p90_ns: u64,
    /// 99th percentile (bucketed).
    pub p99_ns: u64,
    /// Largest value.
    pub max_ns: u64,
}

impl LatencyStats {
    /// Adds one latency.
    #[inline]
    pub fn record(&mut self, b: Bucketed) {
        let ns = b.ns;
        self.count += 1;
        // Welford's update keeps the variance exact enough over millions of values.
        let x = ns as f64;
        let delta = x - self.mean;
        self.mean += delta / self.count as f64;
        self.m2 += delta * (x - self.mean);
        if self.count == 1 || ns < self.min {
            self.min = ns;
        }
        self.max = self.max.max(ns);
        let slot = self.buckets.entry(b.fine).or_insert(0);
        *slot = slot.saturating_add(1);
    }

    /// The value below which a fraction `q` of the values lie: the geometric middle of its
    /// bucket, kept within the exact min and max.
    fn quantile(&self, q: f64) -> u64 {
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count.max(1));
        let mut seen = 0u64;
        for (&b, &n) in &self.buckets {
            seen += n as u64;
            if seen >= rank {
                return fine_middle(b).clamp(self.min, self.max);
            }
        }
        self.max
    }

    /// The figures of everything recorded so far.
    pub fn summary(&self) -> StatsSummary {
        if self.count == 0 {
            return StatsSummary::default();
        }
        StatsSummary {
            count: self.count,
            mean_ns: self.mean,
            stddev_ns: (self.m2 / self.count as f64).sqrt(),
            min_ns: self.min,
            p50_ns: self.quantile(0.50),
            p90_ns: self.quantile(0.90),
            p99_ns: self.quantile(0.99),
            max_ns: self.max,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_buckets_split_each_decade_evenly() {
        assert_eq!(log_bucket(0, 10), 0);
        assert_eq!(log_bucket(1, 10), 0);
        assert_eq!(log_bucket(10, 10), 10);
        assert_eq!(log_bucket(999, 10), 29);
        assert_eq!(log_bucket(1000, 10), 30);
        assert_eq!(log_bucket(u64::MAX, 10), DECADES * 10 - 1);
        assert!((log_bucket_floor(30, 10) - 1000.0).abs() < 1e-6);
    }

    #[test]
    fn one_logarithm_gives_both_resolutions_buckets() {
        let mut ns = 0u64;
        while ns < u64::MAX / 3 {
            let b = Bucketed::new(ns);
            assert_eq!(b.chart, log_bucket(ns, CHART_PER_DECADE), "{ns}");
            assert_eq!(b.fine as u32, log_bucket(ns, FINE_PER_DECADE), "{ns}");
            ns = ns * 3 / 2 + 1;
        }
        for ns in [0, 1, 2, 9, 10, 99, 100, 1000, 10_000, u64::MAX] {
            assert_eq!(Bucketed::new(ns).chart, log_bucket(ns, CHART_PER_DECADE));
        }
    }

    #[test]
    fn size_buckets_are_powers_of_two() {
        assert_eq!(size_bucket(0), 0);
        assert_eq!(size_bucket(1), 1);
        assert_eq!(size_bucket(4095), 12);
        assert_eq!(size_bucket(4096), 13);
        assert_eq!(size_bucket(u64::MAX), 64);
    }

    #[test]
    fn stats_are_exact_where_they_can_be_and_close_elsewhere() {
        let mut s = LatencyStats::default();
        for v in 1..=10_000u64 {
            s.record(Bucketed::new(v * 100));
        }
        let r = s.summary();
        assert_eq!(r.count, 10_000);
        assert!((r.mean_ns - 500_050.0).abs() < 1e-6);
        let exact_sd = ((10_000f64 * 10_000.0 - 1.0) / 12.0).sqrt() * 100.0;
        assert!((r.stddev_ns - exact_sd).abs() / exact_sd < 1e-9);
        assert_eq!((r.min_ns, r.max_ns), (100, 1_000_000));
        for (got, want) in [
            (r.p50_ns, 500_000.0),
            (r.p90_ns, 900_000.0),
            (r.p99_ns, 990_000.0),
        ] {
            assert!((got as f64 - want).abs() / want < 0.012, "{got} vs {want}");
        }
    }

    #[test]
    fn one_value_is_its_own_percentiles() {
        let mut s = LatencyStats::default();
        s.record(Bucketed::new(1234));
        let r = s.summary();
        assert_eq!(
            (r.p50_ns, r.p99_ns, r.min_ns, r.max_ns),
            (1234, 1234, 1234, 1234)
        );
        assert_eq!(r.stddev_ns, 0.0);
    }
}
