use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// A latency histogram in nanoseconds that merges exactly across streams, iterations and
/// clients (HDR buckets, 3 significant digits), so percentiles are never averaged. The
/// extremes and the sum are kept exactly beside the buckets, so min, max and mean are the
/// recorded values themselves.
#[derive(Clone)]
pub struct LatencyHistogram {
    inner: Histogram<u64>,
    sum_ns: u128,
    min_ns: u64,
    max_ns: u64,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyHistogram {
    /// An empty histogram that grows to whatever values it is given.
    pub fn new() -> Self {
        LatencyHistogram {
            inner: sized(),
            sum_ns: 0,
            min_ns: u64::MAX,
            max_ns: 0,
        }
    }

    /// Records one latency.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        // auto-resize makes recording infallible for any u64 the histogram can hold.
        let _ = self.inner.record(ns.max(1));
        self.sum_ns += ns as u128;
        self.min_ns = self.min_ns.min(ns);
        self.max_ns = self.max_ns.max(ns);
    }

    /// Adds every value of `other`.
    pub fn merge(&mut self, other: &LatencyHistogram) {
        let _ = self.inner.add(&other.inner);
        self.sum_ns += other.sum_ns;
        self.min_ns = self.min_ns.min(other.min_ns);
        self.max_ns = self.max_ns.max(other.max_ns);
    }

    /// How many values it holds.
    pub fn count(&self) -> u64 {
        self.inner.len()
    }

    /// How many values are at most `ns`: exact but for values within the histogram's
    /// resolution of `ns` (0.1 %), which count as `ns` itself.
    pub fn count_at_most(&self, ns: u64) -> u64 {
        if self.count() == 0 {
            return 0;
        }
        self.inner.count_between(0, ns)
    }

    /// The exact sum of the values, ns.
    pub fn sum_ns(&self) -> u128 {
        self.sum_ns
    }

    /// The value at quantile `q` (0 to 1), within the exact extremes; 0 when empty.
    pub fn quantile(&self, q: f64) -> u64 {
        if self.count() == 0 {
            return 0;
        }
        self.inner
            .value_at_quantile(q)
            .clamp(self.min_ns, self.max_ns)
    }

    /// The summary that results carry.
    pub fn summary(&self) -> LatencySummary {
        let h = &self.inner;
        let count = h.len();
        if count == 0 {
            return LatencySummary::default();
        }
        // A bucket's reported value may lie past the exact extremes: keep them in order.
        let q = |p: f64| h.value_at_quantile(p).clamp(self.min_ns, self.max_ns);
        LatencySummary {
            count,
            avg_ns: (self.sum_ns / count as u128) as u64,
            stddev_ns: h.stdev() as u64,
            min_ns: self.min_ns,
            p50_ns: q(0.50),
            p90_ns: q(0.90),
            p99_ns: q(0.99),
            p999_ns: q(0.999),
            max_ns: self.max_ns,
        }
    }
}

/// A [`LatencyHistogram`] as it travels between processes (a sweep's clients send their
/// points' histograms to rank 0): each bucket that holds values, by a value in it and
/// its count, and the exact sum and extremes. Read back, it is the same histogram.
#[derive(Serialize, Deserialize)]
struct HistogramWire {
    buckets: Vec<(u64, u64)>,
    /// The sum as text: JSON numbers do not carry 128 bits everywhere.
    sum_ns: String,
    min_ns: u64,
    max_ns: u64,
}

impl Serialize for LatencyHistogram {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        HistogramWire {
            buckets: self
                .inner
                .iter_recorded()
                .map(|v| (v.value_iterated_to(), v.count_at_value()))
                .collect(),
            sum_ns: self.sum_ns.to_string(),
            min_ns: self.min_ns,
            max_ns: self.max_ns,
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for LatencyHistogram {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let w = HistogramWire::deserialize(d)?;
        let mut h = LatencyHistogram::new();
        for (value, count) in w.buckets {
            h.inner.record_n(value.max(1), count).map_err(|e| {
                serde::de::Error::custom(format!("histogram bucket {value}: {e:?}"))
            })?;
        }
        h.sum_ns = w
            .sum_ns
            .parse()
            .map_err(|e| serde::de::Error::custom(format!("histogram sum '{}': {e}", w.sum_ns)))?;
        h.min_ns = w.min_ns;
        h.max_ns = w.max_ns;
        Ok(h)
    }
}

/// The latencies of one stream's ops of one kind while the phase runs. Hundreds of
/// streams each hold one per op kind, so it is kept small:
/// - a stream with few ops of the kind (at most [`StreamLatency::FEW`]) keeps their
///   values as they are, in room made for all of them up front: 8 bytes a value rather
///   than the 43 KB of a histogram's buckets;
/// - beyond that, the buckets of a [`LatencyHistogram`] with 32-bit counts, half its
///   memory. No count can overflow: every 2^32 - 1 values, the buckets are added to a
///   [`LatencyHistogram`] kept beside them (made then) and emptied.
///
/// [`Self::merge_into`] adds every value, exactly as recording them into the target
/// would.
pub struct StreamLatency {
    store: Store,
    sum_ns: u128,
    min_ns: u64,
    max_ns: u64,
}

enum Store {
    /// The values themselves, up to [`StreamLatency::FEW`] of them.
    Few(Vec<u64>),
    Many {
        counts: Box<Histogram<u32>>,
        /// How many values `counts` takes before it is emptied into `spilled`.
        limit: u32,
        spilled: Option<Box<LatencyHistogram>>,
    },
}

impl Default for StreamLatency {
    fn default() -> Self {
        Self::new()
    }
}

impl StreamLatency {
    /// The most values kept as they are (32 KiB of them) before they go into buckets.
    pub const FEW: usize = 4096;

    /// Empty, with no room made: it grows as values come (for ops no one planned, such
    /// as the failed ones).
    pub fn new() -> Self {
        Self::with_store(Store::Few(Vec::new()))
    }

    /// Empty, with room for `n` values made now, so recording up to `n` of them does
    /// not allocate (more are taken too).
    pub fn for_values(n: u64) -> Self {
        match usize::try_from(n) {
            Ok(n) if n <= Self::FEW => Self::with_store(Store::Few(Vec::with_capacity(n))),
            _ => Self::with_store(Self::buckets(u32::MAX)),
        }
    }

    fn with_store(store: Store) -> Self {
        StreamLatency {
            store,
            sum_ns: 0,
            min_ns: u64::MAX,
            max_ns: 0,
        }
    }

    fn buckets(limit: u32) -> Store {
        Store::Many {
            counts: Box::new(sized()),
            limit,
            spilled: None,
        }
    }

    /// Records one latency.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        match &mut self.store {
            Store::Few(values) if values.len() < Self::FEW => values.push(ns),
            Store::Few(_) => self.move_to_buckets(ns),
            Store::Many {
                counts,
                limit,
                spilled,
            } => {
                if counts.len() == *limit as u64 {
                    spill(counts, spilled);
                }
                // auto-resize makes recording infallible for any u64 the histogram can hold.
                let _ = counts.record(ns.max(1));
            }
        }
        self.sum_ns += ns as u128;
        self.min_ns = self.min_ns.min(ns);
        self.max_ns = self.max_ns.max(ns);
    }

    /// More than [`Self::FEW`] values: they move into buckets, `ns` with them.
    #[cold]
    fn move_to_buckets(&mut self, ns: u64) {
        let Store::Few(values) = std::mem::replace(&mut self.store, Self::buckets(u32::MAX)) else {
            return;
        };
        if let Store::Many { counts, .. } = &mut self.store {
            for v in values.into_iter().chain([ns]) {
                let _ = counts.record(v.max(1));
            }
        }
    }

    /// Adds every value recorded here to `into`.
    pub fn merge_into(&self, into: &mut LatencyHistogram) {
        match &self.store {
            Store::Few(values) => {
                for &v in values {
                    // auto-resize makes recording infallible.
                    let _ = into.inner.record(v.max(1));
                }
            }
            Store::Many {
                counts, spilled, ..
            } => {
                if let Some(spilled) = spilled {
                    let _ = into.inner.add(&spilled.inner);
                }
                add_counts(&mut into.inner, counts);
            }
        }
        into.sum_ns += self.sum_ns;
        into.min_ns = into.min_ns.min(self.min_ns);
        into.max_ns = into.max_ns.max(self.max_ns);
    }
}

/// Empties `counts` into `spilled`, made at the first time.
#[cold]
fn spill(counts: &mut Histogram<u32>, spilled: &mut Option<Box<LatencyHistogram>>) {
    let into = spilled.get_or_insert_with(Box::default);
    add_counts(&mut into.inner, counts);
    counts.reset();
}

/// An empty histogram at 3 significant digits, which keeps every percentile within
/// 0.1 % of the true value, sized for 1 ns to 1 s up front so the replay loop does not
/// resize it; longer values grow it.
fn sized<T: hdrhistogram::Counter>() -> Histogram<T> {
    let mut h = Histogram::new_with_bounds(1, 1_000_000_000, 3)
        .expect("1 ns to 1 s at 3 significant digits is a valid range");
    h.auto(true);
    h
}

/// Adds the buckets of `from` to `into`, of the same precision: each bucket's count at a
/// value of that bucket.
fn add_counts(into: &mut Histogram<u64>, from: &Histogram<u32>) {
    for v in from.iter_recorded() {
        // auto-resize makes recording infallible.
        let _ = into.record_n(v.value_iterated_to(), v.count_at_value() as u64);
    }
}

/// Latency figures of one op type (or of pacing lag), in nanoseconds. Percentiles come
/// from a [`LatencyHistogram`] (within 0.1 %); `min_ns` and `max_ns` are exact, and
/// `avg_ns` is the exact mean rounded down to the nanosecond.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct LatencySummary {
    pub count: u64,
    pub avg_ns: u64,
    pub stddev_ns: u64,
    pub min_ns: u64,
    pub p50_ns: u64,
    pub p90_ns: u64,
    pub p99_ns: u64,
    pub p999_ns: u64,
    pub max_ns: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_equals_recording_everything_in_one() {
        let mut a = LatencyHistogram::new();
        let mut b = LatencyHistogram::new();
        let mut all = LatencyHistogram::new();
        for i in 1..=10_000u64 {
            let v = i * 37 % 5000 + 100;
            if i % 3 == 0 {
                a.record(v)
            } else {
                b.record(v)
            }
            all.record(v);
        }
        a.merge(&b);
        assert_eq!(a.summary(), all.summary());
    }

    #[test]
    fn a_histogram_sent_as_json_comes_back_the_same() {
        let mut h = LatencyHistogram::new();
        for i in 1..=20_000u64 {
            h.record(i * i % 7_000_003 + 1_000);
        }
        h.record(0);
        h.record(90_000_000_000);
        let back: LatencyHistogram =
            serde_json::from_str(&serde_json::to_string(&h).unwrap()).unwrap();
        assert_eq!(back.summary(), h.summary());
        assert_eq!(back.sum_ns(), h.sum_ns());
        for b in [1_000, 50_000, 1_000_000, 7_000_000] {
            assert_eq!(back.count_at_most(b), h.count_at_most(b), "{b}");
        }
        // Merged after the trip, as rank 0 merges what the clients sent.
        let mut twice = back.clone();
        twice.merge(&h);
        assert_eq!(twice.count(), 2 * h.count());
        assert_eq!(twice.quantile(0.99), h.quantile(0.99));
        let empty: LatencyHistogram =
            serde_json::from_str(&serde_json::to_string(&LatencyHistogram::new()).unwrap())
                .unwrap();
        assert_eq!(empty.summary(), LatencySummary::default());
    }

    #[test]
    fn percentiles_are_within_a_tenth_of_a_percent() {
        let mut h = LatencyHistogram::new();
        for v in 1..=100_000u64 {
            h.record(v * 10);
        }
        let s = h.summary();
        assert_eq!(s.count, 100_000);
        assert_eq!(s.avg_ns, 500_005);
        assert!(
            (s.p50_ns as f64 - 500_000.0).abs() / 500_000.0 < 0.001,
            "{s:?}"
        );
        assert!(
            (s.p99_ns as f64 - 990_000.0).abs() / 990_000.0 < 0.001,
            "{s:?}"
        );
        assert_eq!(s.min_ns, 10);
        assert_eq!(s.max_ns, 1_000_000);
    }

    #[test]
    fn extremes_are_exact_where_buckets_are_not() {
        // One fsync of 15,523,877 ns: a bucket is 8 ns wide there.
        let mut h = LatencyHistogram::new();
        h.record(15_523_877);
        let s = h.summary();
        assert_eq!(
            (s.min_ns, s.avg_ns, s.p50_ns, s.p999_ns, s.max_ns),
            (15_523_877, 15_523_877, 15_523_877, 15_523_877, 15_523_877)
        );
        let mut a = LatencyHistogram::new();
        a.record(665_075_123);
        a.record(7_250);
        let mut b = LatencyHistogram::new();
        b.record(7_251);
        b.merge(&a);
        let s = b.summary();
        assert_eq!((s.min_ns, s.max_ns, s.count), (7_250, 665_075_123, 3));
        b.merge(&LatencyHistogram::new());
        assert_eq!(b.summary(), s, "merging an empty histogram changes nothing");
    }

    /// Values kept as they are; how many held; buckets ever emptied.
    type Shape = (bool, u64, bool);

    impl StreamLatency {
        /// In buckets from the first value, emptied every `limit` values.
        fn emptied_every(limit: u32) -> Self {
            Self::with_store(Self::buckets(limit))
        }

        /// Whether it keeps the values as they are, and how many values its buckets
        /// hold and whether they were ever emptied.
        fn shape(&self) -> Shape {
            match &self.store {
                Store::Few(v) => (true, v.len() as u64, false),
                Store::Many {
                    counts, spilled, ..
                } => (false, counts.len(), spilled.is_some()),
            }
        }
    }

    #[test]
    fn a_stream_latency_merges_as_recording_into_the_target_would() {
        // Values over nine decades, some past the first sizing (1 s), recorded straight
        // into one histogram and through stream latencies: kept as they are (room made
        // for all, or for none and moved into buckets past FEW), and in buckets emptied
        // every 3, 97 and 1000 values, or never.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let values: Vec<u64> = (0..5_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x % 10u64.pow(1 + (x % 10) as u32)
            })
            .collect();
        assert!(values.len() > StreamLatency::FEW);
        let few = &values[..StreamLatency::FEW];
        let cases: Vec<(&str, StreamLatency, &[u64], Shape)> = vec![
            (
                "room for all",
                StreamLatency::for_values(few.len() as u64),
                few,
                (true, few.len() as u64, false),
            ),
            (
                "room for none",
                StreamLatency::new(),
                few,
                (true, few.len() as u64, false),
            ),
            (
                "past FEW",
                StreamLatency::new(),
                &values,
                (false, values.len() as u64, false),
            ),
            (
                "planned past FEW",
                StreamLatency::for_values(values.len() as u64),
                &values,
                (false, values.len() as u64, false),
            ),
            (
                "every 3",
                StreamLatency::emptied_every(3),
                &values,
                (false, 2, true),
            ),
            (
                "every 97",
                StreamLatency::emptied_every(97),
                &values,
                (false, 5_000 % 97, true),
            ),
            (
                "every 1000",
                StreamLatency::emptied_every(1000),
                &values,
                (false, 1000, true),
            ),
        ];
        for (name, mut stream, values, shape) in cases {
            let mut direct = LatencyHistogram::new();
            values.iter().for_each(|&v| direct.record(v));
            let mut target = LatencyHistogram::new();
            target.record(3);
            let mut reference = target.clone();
            reference.merge(&direct);
            values.iter().for_each(|&v| stream.record(v));
            assert_eq!(stream.shape(), shape, "{name}");
            stream.merge_into(&mut target);
            assert_eq!(target.summary(), reference.summary(), "{name}");
            assert_eq!(target.inner, reference.inner, "the same buckets, {name}");
        }
        // An empty one adds nothing, whatever room it was given.
        let mut direct = LatencyHistogram::new();
        values.iter().for_each(|&v| direct.record(v));
        for empty in [StreamLatency::new(), StreamLatency::for_values(1 << 20)] {
            let mut target = direct.clone();
            empty.merge_into(&mut target);
            assert_eq!(target.summary(), direct.summary());
        }
    }

    #[test]
    fn room_made_for_the_planned_values_is_not_outgrown() {
        let mut s = StreamLatency::for_values(100);
        let Store::Few(v) = &s.store else {
            panic!("100 values are few")
        };
        let (room, at) = (v.capacity(), v.as_ptr());
        (0..100).for_each(|i| s.record(i * 1000));
        let Store::Few(v) = &s.store else {
            panic!("still few")
        };
        assert_eq!(
            (v.capacity(), v.as_ptr()),
            (room, at),
            "no allocation while recording"
        );
    }

    #[test]
    fn empty_histogram_summarises_to_zero() {
        assert_eq!(LatencyHistogram::new().summary(), LatencySummary::default());
    }
}
