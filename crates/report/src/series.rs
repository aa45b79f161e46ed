//! Throughput and latency over time: the measured phase cut into equal bins, the periods
//! the page offers (whole numbers of bins) and each period's latency percentiles, exact
//! up to [`PERCENTILE_OPS_MAX`] ops and from logarithmic buckets beyond.

use std::collections::BTreeMap;

use serde::Serialize;
use ts_rs::TS;

use crate::hist::{Bucketed, fine_middle};

/// The finest number of bins a chart gets; the page merges neighbours for a longer period.
pub const DEFAULT_BINS: u64 = 1000;

/// Periods offered, in bins; those whose length is not itself 1, 2 or 5 × 10^k ns are
/// left out (a 5 µs bin offers 5, 10, 50, 100 µs ..., not 25 µs).
const PERIOD_BINS: [u64; 9] = [1, 2, 5, 10, 20, 50, 100, 200, 500];

/// The most ops whose latencies are kept for exact per-period percentiles (8 bytes each):
/// beyond it every op counts in its bin's logarithmic buckets instead (percentiles within
/// 1.2 %, memory bounded by the bins, not the ops), with a note.
pub const PERCENTILE_OPS_MAX: u64 = 4_000_000;

/// Bytes, ops and latency per time bin, by completion time.
#[derive(Debug, Clone, Serialize, TS)]
pub struct TimeSeries {
    /// Width of one bin, ns.
    pub bin_ns: u64,
    /// Bytes read that completed in each bin.
    pub read_bytes: Vec<u64>,
    /// Bytes written that completed in each bin.
    pub write_bytes: Vec<u64>,
    /// Ops that completed in each bin.
    pub ops: Vec<u64>,
    /// The slowest op completing in each bin, ns (0 when none did): the outliers survive binning.
    pub latency_max_ns: Vec<u64>,
    /// Sum of the latencies of the ops completing in each bin, ns (mean = sum / ops).
    pub latency_sum_ns: Vec<f64>,
    /// The periods the page offers, in bins (1 first): whole numbers of bins whose length
    /// is 1, 2 or 5 × 10^k ns, at least two periods long.
    pub periods: Vec<u64>,
    /// For each entry of `periods`, the latency percentiles of the ops completing in each
    /// period: exact, or within 1.2 % past [`PERCENTILE_OPS_MAX`] ops; absent when the
    /// latencies were not kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_percentiles: Option<Vec<PeriodPercentiles>>,
    /// Every op's latency, by bin, until [`TimeSeries::finish`] turns them into percentiles.
    #[serde(skip)]
    #[ts(skip)]
    latencies: Latencies,
    /// Whether `latency_percentiles` were taken from logarithmic buckets (within 1.2 %)
    /// rather than exactly, as past [`PERCENTILE_OPS_MAX`] ops.
    pub percentiles_from_buckets: bool,
    /// How the bins are laid while ops come.
    #[serde(skip)]
    #[ts(skip)]
    binning: Binning,
}

/// How a series' bins are laid while ops come.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Binning {
    /// The phase's length is known: the bins are final, and an op completing after the
    /// last counts in the last.
    Closed,
    /// Bins of a width chosen in advance, as many as the ops reach (up to [`MAX_BINS`]),
    /// until [`TimeSeries::close`] gives the phase's length.
    Fixed,
    /// Fine bins of 10^k ns, ten merged into one whenever the ops would need more than
    /// [`FINE_BINS`] of them, until [`TimeSeries::close`] cuts them into the phase's
    /// round width (a whole number of fine bins, as no op completes after the phase).
    Fine,
}

/// The most bins a series has.
const MAX_BINS: u64 = 1_000_000;

/// The most fine bins a series of unknown length keeps. Past it ten bins become one, so a
/// fine width of w above 1 ns means an op completed at 2,000 w or later: with no op after
/// the phase, w is 1 ns or at most half the round width of the phase ([`round_bin_ns`],
/// at least a thousandth of it), and as a power of ten it divides that width.
const FINE_BINS: u64 = 20 * DEFAULT_BINS;

/// Whether a series keeps every op's latency for the per-period percentiles.
#[derive(Debug, Clone, Default)]
enum Latencies {
    /// Not kept (or already turned into percentiles).
    #[default]
    Off,
    /// Kept by bin, with room for `room` more.
    Kept { by_bin: Vec<Vec<u64>>, room: u64 },
    /// Counted by bin in logarithmic buckets (fine bucket: ops), once there were more
    /// than the most that may be kept.
    Bucketed { by_bin: Vec<BTreeMap<u16, u32>> },
}

/// The latency percentiles of each period of one length, from the ops completing in it.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct PeriodPercentiles {
    /// The period's length in bins.
    pub bins: u64,
    /// Median latency per period, ns (`None` when no op completed in it).
    pub p50_ns: Vec<Option<u64>>,
    /// 99th percentile latency per period, ns.
    pub p99_ns: Vec<Option<u64>>,
}

/// The nearest-rank percentile `pct` of `v` (the value at rank ⌈pct/100 · n⌉ in ascending
/// order): always one of the latencies measured, never an interpolation. Reorders `v`.
pub fn nearest_rank(v: &mut [u64], pct: u64) -> Option<u64> {
    if v.is_empty() {
        return None;
    }
    let n = v.len() as u64;
    let rank = (n * pct).div_ceil(100).max(1);
    let (_, x, _) = v.select_nth_unstable((rank - 1) as usize);
    Some(*x)
}

/// The periods (in bins of `bin_ns`) offered over `bins` bins; see [`TimeSeries::periods`].
pub fn periods(bin_ns: u64, bins: usize) -> Vec<u64> {
    let round = |mut ns: u64| {
        while ns >= 10 && ns.is_multiple_of(10) {
            ns /= 10;
        }
        matches!(ns, 1 | 2 | 5)
    };
    PERIOD_BINS
        .into_iter()
        .filter(|&k| k == 1 || (2 * k <= bins as u64 && round(k * bin_ns)))
        .collect()
}

/// The bin width for a phase `duration_ns` long: the smallest 1, 2 or 5 × 10^k ns that
/// cuts it into at most [`DEFAULT_BINS`] bins, so every period the page offers (1, 2, 5,
/// 10 ... bins) is a round duration (1 ms, 2 ms, 5 ms, 10 ms ...), not 861.35 ms.
pub fn round_bin_ns(duration_ns: u64) -> u64 {
    let want = duration_ns.div_ceil(DEFAULT_BINS).max(1);
    let mut decade = 1u64;
    loop {
        for m in [1, 2, 5] {
            let bin = m * decade;
            if bin >= want {
                return bin;
            }
        }
        decade = decade.saturating_mul(10);
    }
}

impl TimeSeries {
    /// Bins of `bin_ns` covering `duration_ns`, a phase of known length (what a growing
    /// series is checked against).
    #[cfg(test)]
    pub fn with_bin(bin_ns: u64, duration_ns: u64) -> Self {
        let bin_ns = bin_ns.max(1);
        let n = duration_ns.div_ceil(bin_ns).clamp(1, MAX_BINS) as usize;
        let mut s = Self::bins(bin_ns, n, Binning::Closed);
        s.periods = periods(bin_ns, n);
        s
    }

    /// A series for a phase whose length is not known yet (it is given to
    /// [`TimeSeries::close`] once the phase has ended): in bins of `bin_ns` when given, else
    /// in at most [`DEFAULT_BINS`] bins of a round width ([`round_bin_ns`]). Once closed it
    /// holds what a series made for the phase's known length would hold, op for op.
    pub fn growing(bin_ns: Option<u64>) -> Self {
        match bin_ns {
            Some(bin) => Self::bins(bin.max(1), 1, Binning::Fixed),
            None => Self::bins(1, 1, Binning::Fine),
        }
    }

    fn bins(bin_ns: u64, n: usize, binning: Binning) -> Self {
        TimeSeries {
            bin_ns,
            read_bytes: vec![0; n],
            write_bytes: vec![0; n],
            ops: vec![0; n],
            latency_max_ns: vec![0; n],
            latency_sum_ns: vec![0.0; n],
            periods: Vec::new(),
            latency_percentiles: None,
            latencies: Latencies::Off,
            percentiles_from_buckets: false,
            binning,
        }
    }

    /// The bin of an op completing at `done_ns`, the bins grown or merged to hold it.
    fn bin_of(&mut self, done_ns: u64) -> usize {
        let last = |s: &Self| s.ops.len() - 1;
        let i = match self.binning {
            Binning::Closed => return ((done_ns / self.bin_ns) as usize).min(last(self)),
            Binning::Fixed => (done_ns / self.bin_ns).min(MAX_BINS - 1),
            Binning::Fine => {
                while done_ns / self.bin_ns >= FINE_BINS {
                    self.regroup(10, self.ops.len().div_ceil(10));
                    self.bin_ns *= 10;
                }
                done_ns / self.bin_ns
            }
        } as usize;
        if i > last(self) {
            self.grow(i + 1);
        }
        i
    }

    fn grow(&mut self, n: usize) {
        self.read_bytes.resize(n, 0);
        self.write_bytes.resize(n, 0);
        self.ops.resize(n, 0);
        self.latency_max_ns.resize(n, 0);
        self.latency_sum_ns.resize(n, 0.0);
        match &mut self.latencies {
            Latencies::Kept { by_bin, .. } => by_bin.resize_with(n, Vec::new),
            Latencies::Bucketed { by_bin } => by_bin.resize_with(n, BTreeMap::new),
            Latencies::Off => {}
        }
    }

    /// Merges every `factor` neighbouring bins into one, making `n` bins; bins past the
    /// last are merged into it.
    fn regroup(&mut self, factor: usize, n: usize) {
        fn fold<T: Default>(
            v: &mut Vec<T>,
            factor: usize,
            n: usize,
            mut add: impl FnMut(&mut T, T),
        ) {
            let old = std::mem::take(v);
            v.resize_with(n, T::default);
            for (i, x) in old.into_iter().enumerate() {
                add(&mut v[(i / factor).min(n - 1)], x);
            }
        }
        fold(&mut self.read_bytes, factor, n, |a, b| *a += b);
        fold(&mut self.write_bytes, factor, n, |a, b| *a += b);
        fold(&mut self.ops, factor, n, |a, b| *a += b);
        fold(&mut self.latency_max_ns, factor, n, |a, b| *a = (*a).max(b));
        fold(&mut self.latency_sum_ns, factor, n, |a, b| *a += b);
        match &mut self.latencies {
            Latencies::Kept { by_bin, .. } => fold(by_bin, factor, n, |a, mut b| a.append(&mut b)),
            Latencies::Bucketed { by_bin } => fold(by_bin, factor, n, |a, b| {
                for (k, c) in b {
                    let n = a.entry(k).or_insert(0);
                    *n = n.saturating_add(c);
                }
            }),
            Latencies::Off => {}
        }
    }

    /// Ends a growing series: the measured phase lasted `duration_ns`. Its bins become
    /// those of that length: `duration_ns` / width of them, at most [`MAX_BINS`], an op
    /// completing after the last counting in the last.
    pub fn close(&mut self, duration_ns: u64) {
        let width = match self.binning {
            Binning::Closed => return,
            Binning::Fixed => self.bin_ns,
            // The fine width divides the round one (see FINE_BINS); should an op have
            // completed after the phase, the fine width stands.
            Binning::Fine => match round_bin_ns(duration_ns) {
                round if round % self.bin_ns == 0 => round,
                _ => self.bin_ns,
            },
        };
        let n = duration_ns.div_ceil(width).clamp(1, MAX_BINS) as usize;
        if self.ops.len() < n {
            self.grow(n);
        }
        self.regroup((width / self.bin_ns) as usize, n);
        self.bin_ns = width;
        self.periods = periods(width, n);
        self.binning = Binning::Closed;
    }

    /// Keeps every op's latency from now on, for the per-period percentiles, up to `max`
    /// ops; past that every op counts in buckets instead (and
    /// [`TimeSeries::percentiles_bucketed`] says so).
    pub fn keep_latencies(mut self, max: u64) -> Self {
        self.latencies = Latencies::Kept {
            by_bin: vec![Vec::new(); self.ops.len()],
            room: max,
        };
        self
    }

    /// At most [`DEFAULT_BINS`] bins of a round width covering `duration_ns`.
    #[cfg(test)]
    pub fn for_duration(duration_ns: u64) -> Self {
        Self::with_bin(round_bin_ns(duration_ns), duration_ns)
    }

    /// Counts one op completing at `done_ns` (into the measured phase).
    pub fn add(&mut self, done_ns: u64, latency_ns: u64, read: u64, written: u64) {
        // Ops finishing after the last bin (there should be none) count in the last.
        let i = self.bin_of(done_ns);
        self.read_bytes[i] += read;
        self.write_bytes[i] += written;
        self.ops[i] += 1;
        self.latency_max_ns[i] = self.latency_max_ns[i].max(latency_ns);
        self.latency_sum_ns[i] += latency_ns as f64;
        if let Latencies::Kept { room: 0, .. } = self.latencies {
            self.latencies = match std::mem::take(&mut self.latencies) {
                Latencies::Kept { by_bin, .. } => {
                    self.percentiles_from_buckets = true;
                    Latencies::Bucketed {
                        by_bin: by_bin.iter().map(|kept| buckets_of(kept)).collect(),
                    }
                }
                other => other,
            };
        }
        match &mut self.latencies {
            Latencies::Kept { by_bin, room } => {
                by_bin[i].push(latency_ns);
                *room -= 1;
            }
            Latencies::Bucketed { by_bin } => {
                let n = by_bin[i]
                    .entry(Bucketed::new(latency_ns).fine())
                    .or_insert(0);
                *n = n.saturating_add(1);
            }
            Latencies::Off => {}
        }
    }

    /// Whether the per-period percentiles come from logarithmic buckets (more ops than
    /// exact ones are kept for).
    pub fn percentiles_bucketed(&self) -> bool {
        self.percentiles_from_buckets
    }

    /// Turns the kept latencies into each offered period's percentiles and frees them
    /// (closing a growing series first, at the time its last op completed).
    pub fn finish(&mut self) {
        if self.binning != Binning::Closed {
            let end = (self.ops.len() as u64) * self.bin_ns;
            self.close(end);
        }
        let lat = match std::mem::take(&mut self.latencies) {
            Latencies::Kept { by_bin, .. } => by_bin,
            Latencies::Bucketed { by_bin } => {
                self.latency_percentiles = Some(self.bucketed_percentiles(&by_bin));
                return;
            }
            Latencies::Off => return,
        };
        let mut scratch = Vec::new();
        let out = self.per_period(|bins| {
            scratch.clear();
            lat[bins].iter().for_each(|b| scratch.extend_from_slice(b));
            (
                nearest_rank(&mut scratch, 50),
                nearest_rank(&mut scratch, 99),
            )
        });
        self.latency_percentiles = Some(out);
    }

    /// Each offered period's percentiles from its bins' buckets: the middle of the bucket
    /// holding the nearest rank, no more than the slowest op of the period.
    fn bucketed_percentiles(&self, by_bin: &[BTreeMap<u16, u32>]) -> Vec<PeriodPercentiles> {
        let mut merged: BTreeMap<u16, u64> = BTreeMap::new();
        self.per_period(|bins| {
            merged.clear();
            for bin in &by_bin[bins.clone()] {
                for (&b, &n) in bin {
                    *merged.entry(b).or_insert(0) += n as u64;
                }
            }
            let max = self.latency_max_ns[bins].iter().copied().max().unwrap_or(0);
            let at = |pct| bucket_rank(&merged, pct).map(|v: u64| v.min(max));
            (at(50), at(99))
        })
    }

    /// Each offered period's p50 and p99, as `of` gives them for the range of bins the
    /// period covers.
    fn per_period(
        &self,
        mut of: impl FnMut(std::ops::Range<usize>) -> (Option<u64>, Option<u64>),
    ) -> Vec<PeriodPercentiles> {
        let n = self.ops.len();
        self.periods
            .iter()
            .map(|&k| {
                let mut p = PeriodPercentiles {
                    bins: k,
                    p50_ns: Vec::new(),
                    p99_ns: Vec::new(),
                };
                for start in (0..n).step_by(k as usize) {
                    let (p50, p99) = of(start..(start + k as usize).min(n));
                    p.p50_ns.push(p50);
                    p.p99_ns.push(p99);
                }
                p
            })
            .collect()
    }
}

/// The kept latencies of one bin, counted in fine buckets.
fn buckets_of(kept: &[u64]) -> BTreeMap<u16, u32> {
    let mut m = BTreeMap::new();
    for &ns in kept {
        let n = m.entry(Bucketed::new(ns).fine()).or_insert(0u32);
        *n = n.saturating_add(1);
    }
    m
}

/// The nearest-rank percentile `pct` of bucketed counts: the middle of its bucket.
fn bucket_rank(counts: &BTreeMap<u16, u64>, pct: u64) -> Option<u64> {
    let n: u64 = counts.values().sum();
    if n == 0 {
        return None;
    }
    let rank = (n * pct).div_ceil(100).max(1);
    let mut seen = 0;
    for (&b, &c) in counts {
        seen += c;
        if seen >= rank {
            return Some(fine_middle(b));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ops_land_in_the_bin_they_complete_in() {
        let mut s = TimeSeries::with_bin(100, 1000);
        assert_eq!(s.ops.len(), 10);
        s.add(0, 5, 10, 0);
        s.add(99, 7, 0, 20);
        s.add(100, 3, 1, 0);
        s.add(5000, 1, 1, 0);
        assert_eq!(&s.ops[..2], &[2, 1]);
        assert_eq!(s.read_bytes[0], 10);
        assert_eq!(s.write_bytes[0], 20);
        assert_eq!(s.latency_max_ns[0], 7);
        assert_eq!(s.latency_sum_ns[0], 12.0);
        assert_eq!(s.ops[9], 1);
    }

    #[test]
    fn an_empty_phase_still_has_one_bin() {
        let s = TimeSeries::for_duration(0);
        assert_eq!(s.ops, [0]);
    }
}

#[cfg(test)]
mod growing_tests {
    use super::*;

    /// Ops (completion time, latency, bytes) spread over a phase `wall` ns long, some of
    /// them past it when `late`.
    fn ops(seed: u64, n: u64, wall: u64, late: bool) -> Vec<(u64, u64, u64)> {
        let mut x = seed;
        (0..n)
            .map(|i| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let span = if late && i % 97 == 0 {
                    3 * wall
                } else {
                    wall + 1
                };
                ((x >> 11) % span.max(1), (x >> 40) % 3_000_000 + 1, i % 4096)
            })
            .collect()
    }

    fn fed(mut s: TimeSeries, ops: &[(u64, u64, u64)]) -> TimeSeries {
        for &(done, latency, bytes) in ops {
            s.add(done, latency, bytes, bytes / 2);
        }
        s
    }

    fn same(a: &TimeSeries, b: &TimeSeries, what: &str) {
        assert_eq!(
            serde_json::to_value(a).unwrap(),
            serde_json::to_value(b).unwrap(),
            "{what}"
        );
    }

    #[test]
    fn a_growing_series_closed_at_the_phase_length_is_the_one_made_for_it() {
        // Phases from a few ns to a minute, kept latencies exact or bucketed past a few.
        for (seed, wall) in [
            (1u64, 0u64),
            (2, 7),
            (3, 999),
            (4, 1_000),
            (5, 123_456),
            (6, 861_350_000),
            (7, 1_723_000_000),
            (8, 60_000_000_000),
        ] {
            for kept in [None, Some(u64::MAX), Some(500)] {
                let ops = ops(seed, 5_000, wall, false);
                let keep = |s: TimeSeries| match kept {
                    Some(k) => s.keep_latencies(k),
                    None => s,
                };
                let mut known = fed(keep(TimeSeries::for_duration(wall)), &ops);
                let mut grown = fed(keep(TimeSeries::growing(None)), &ops);
                grown.close(wall);
                assert_eq!(grown.bin_ns, round_bin_ns(wall), "wall {wall}");
                same(
                    &known,
                    &grown,
                    &format!("wall {wall}, before the percentiles"),
                );
                known.finish();
                grown.finish();
                same(&known, &grown, &format!("wall {wall}, kept {kept:?}"));
            }
        }
    }

    #[test]
    fn a_growing_series_of_a_given_width_folds_late_ops_into_its_last_bin() {
        for (bin, wall) in [
            (1u64, 50u64),
            (10, 1_000),
            (7, 1_000),
            (1_000_000, 3_000_000_000),
        ] {
            let ops = ops(bin, 4_000, wall, true);
            let mut known = fed(TimeSeries::with_bin(bin, wall).keep_latencies(300), &ops);
            let mut grown = fed(TimeSeries::growing(Some(bin)).keep_latencies(300), &ops);
            grown.close(wall);
            known.finish();
            grown.finish();
            same(&known, &grown, &format!("bin {bin}, wall {wall}"));
            assert_eq!(grown.ops.iter().sum::<u64>(), 4_000);
        }
    }

    #[test]
    fn fine_bins_stay_few_however_long_the_phase() {
        let mut s = TimeSeries::growing(None);
        for i in 0..100_000u64 {
            s.add(i * 3_600_000_000, 10, 0, 0);
            assert!(s.ops.len() as u64 <= FINE_BINS, "{} bins", s.ops.len());
        }
        s.close(99_999 * 3_600_000_000);
        assert!(s.ops.len() as u64 <= DEFAULT_BINS);
        assert_eq!(s.ops.iter().sum::<u64>(), 100_000);
    }
}

#[cfg(test)]
mod round_tests {
    use super::*;

    #[test]
    fn bins_are_round_and_at_most_a_thousand() {
        assert_eq!(round_bin_ns(861_350_000), 1_000_000);
        assert_eq!(round_bin_ns(1_723_000_000), 2_000_000);
        assert_eq!(round_bin_ns(18_600_000_000), 20_000_000);
        assert_eq!(round_bin_ns(138_000_000), 200_000);
        assert_eq!(round_bin_ns(500), 1);
        for d in [1u64, 999, 1001, 123_456_789, 9_999_999_999] {
            let b = round_bin_ns(d);
            assert!(d.div_ceil(b) <= DEFAULT_BINS, "{d}: {b}");
        }
    }
}

#[cfg(test)]
mod percentile_tests {
    use super::*;

    /// The nearest-rank percentile by sorting a copy: the definition, written plainly.
    fn by_sorting(v: &[u64], pct: f64) -> Option<u64> {
        let mut s = v.to_vec();
        s.sort_unstable();
        let rank = ((pct / 100.0) * s.len() as f64).ceil().max(1.0) as usize;
        s.get(rank - 1).copied()
    }

    #[test]
    fn nearest_rank_is_a_measured_value() {
        assert_eq!(nearest_rank(&mut [], 50), None);
        assert_eq!(nearest_rank(&mut [7], 99), Some(7));
        assert_eq!(nearest_rank(&mut [4, 1, 3, 2], 50), Some(2));
        assert_eq!(nearest_rank(&mut [4, 1, 3, 2], 99), Some(4));
        let v: Vec<u64> = (1..=100).rev().collect();
        assert_eq!(nearest_rank(&mut v.clone(), 50), Some(50));
        assert_eq!(nearest_rank(&mut v.clone(), 99), Some(99));
        assert_eq!(
            nearest_rank(&mut (1..=200).collect::<Vec<_>>(), 99),
            Some(198)
        );
    }

    #[test]
    fn periods_are_round_lengths() {
        // 1 ms bins over 1000 bins: 1, 2, 5 ... 500 ms.
        assert_eq!(periods(1_000_000, 1000), PERIOD_BINS);
        // 5 µs bins: 5, 10, 50, 100, 500 µs, 1 ms, but not 25 µs, 250 µs or 2.5 ms.
        assert_eq!(periods(5_000, 1000), [1, 2, 10, 20, 100, 200]);
        // At least two periods: 10 bins offer up to 5.
        assert_eq!(periods(1_000_000, 10), [1, 2, 5]);
        assert_eq!(periods(2_000_000, 1000), [1, 5, 10, 50, 100, 500]);
        assert_eq!(periods(1, 1), [1]);
    }

    #[test]
    fn every_period_gets_the_exact_percentiles_of_its_ops() {
        // 40 bins of 10 ns; latencies spread unevenly, one bin left empty.
        let mut s = TimeSeries::with_bin(10, 400).keep_latencies(u64::MAX);
        let mut all: Vec<Vec<u64>> = vec![Vec::new(); 40];
        let mut x = 7u64;
        for op in 0..5000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let bin = (x >> 33) % 40;
            if bin == 13 {
                continue;
            }
            let latency = (x >> 20) % 1_000_000 + op % 3;
            s.add(bin * 10 + 3, latency, 0, 0);
            all[bin as usize].push(latency);
        }
        s.finish();
        assert!(!s.percentiles_bucketed());
        let pct = s.latency_percentiles.as_ref().unwrap();
        assert_eq!(pct.iter().map(|p| p.bins).collect::<Vec<_>>(), s.periods);
        assert_eq!(s.periods, [1, 2, 5, 10, 20]);
        for p in pct {
            let k = p.bins as usize;
            assert_eq!(p.p50_ns.len(), 40usize.div_ceil(k));
            for (j, chunk) in all.chunks(k).enumerate() {
                let ops: Vec<u64> = chunk.concat();
                assert_eq!(p.p50_ns[j], by_sorting(&ops, 50.0), "{k} bins, period {j}");
                assert_eq!(p.p99_ns[j], by_sorting(&ops, 99.0), "{k} bins, period {j}");
            }
        }
        assert_eq!(pct[0].p50_ns[13], None, "an empty bin has no percentile");
    }

    #[test]
    fn past_the_most_kept_the_percentiles_come_from_buckets_within_1_2_percent() {
        let mut exact = TimeSeries::with_bin(10, 100).keep_latencies(u64::MAX);
        let mut bucketed = TimeSeries::with_bin(10, 100).keep_latencies(1000);
        let mut x = 11u64;
        for op in 0..20_000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let latency = 1000 + (x >> 40) % 5_000_000;
            exact.add(op % 100, latency, 0, 0);
            bucketed.add(op % 100, latency, 0, 0);
        }
        exact.finish();
        bucketed.finish();
        assert!(!exact.percentiles_bucketed());
        assert!(bucketed.percentiles_bucketed());
        // The page is told, to word its note.
        let page =
            |s: &TimeSeries| serde_json::to_value(s).unwrap()["percentiles_from_buckets"].clone();
        assert_eq!(page(&exact), serde_json::json!(false));
        assert_eq!(page(&bucketed), serde_json::json!(true));
        let (e, b) = (
            exact.latency_percentiles.unwrap(),
            bucketed.latency_percentiles.unwrap(),
        );
        assert_eq!(e.len(), b.len());
        for (e, b) in e.iter().zip(&b) {
            assert_eq!(e.bins, b.bins);
            for (ev, bv) in e
                .p50_ns
                .iter()
                .chain(&e.p99_ns)
                .zip(b.p50_ns.iter().chain(&b.p99_ns))
            {
                let (ev, bv) = (ev.unwrap() as f64, bv.unwrap() as f64);
                assert!((bv - ev).abs() / ev <= 0.012, "{ev} vs {bv}");
            }
        }
        assert_eq!(
            bucketed.ops[0], 2000,
            "the other figures still count every op"
        );
        // A period's percentile is never above its slowest op.
        let mut one = TimeSeries::with_bin(10, 100).keep_latencies(0);
        one.add(0, 1234, 0, 0);
        one.finish();
        assert_eq!(one.latency_percentiles.unwrap()[0].p99_ns[0], Some(1234));
    }
}
