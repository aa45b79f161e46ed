//! Throughput and latency over time: the measured phase cut into equal bins.

use serde::Serialize;

/// The finest number of bins a chart gets; the page merges neighbours for a longer period.
pub const DEFAULT_BINS: u64 = 1000;

/// Bytes, ops and latency per time bin, by completion time.
#[derive(Debug, Clone, Serialize)]
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
    /// Bins of `bin_ns` covering `duration_ns`.
    pub fn with_bin(bin_ns: u64, duration_ns: u64) -> Self {
        let bin_ns = bin_ns.max(1);
        let n = duration_ns.div_ceil(bin_ns).clamp(1, 1_000_000) as usize;
        TimeSeries {
            bin_ns,
            read_bytes: vec![0; n],
            write_bytes: vec![0; n],
            ops: vec![0; n],
            latency_max_ns: vec![0; n],
            latency_sum_ns: vec![0.0; n],
        }
    }

    /// At most [`DEFAULT_BINS`] bins of a round width covering `duration_ns`.
    pub fn for_duration(duration_ns: u64) -> Self {
        Self::with_bin(round_bin_ns(duration_ns), duration_ns)
    }

    /// Counts one op completing at `done_ns` (into the measured phase).
    pub fn add(&mut self, done_ns: u64, latency_ns: u64, read: u64, written: u64) {
        // Ops finishing after the last bin (there should be none) count in the last.
        let i = ((done_ns / self.bin_ns) as usize).min(self.ops.len() - 1);
        self.read_bytes[i] += read;
        self.write_bytes[i] += written;
        self.ops[i] += 1;
        self.latency_max_ns[i] = self.latency_max_ns[i].max(latency_ns);
        self.latency_sum_ns[i] += latency_ns as f64;
    }
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
