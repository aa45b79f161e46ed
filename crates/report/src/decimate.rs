//! The file access map's sample, for runs whose transaction list does not hold every op:
//! about one in every K reads and writes, K doubling whenever the sample outgrows its cap,
//! so memory stays bounded however many ops a run has while the points per stretch of time
//! stay proportional to the ops there. Which ops are kept is decided by a hash of their
//! sequence number, not by the number itself: taking every K-th op would miss every op of
//! a group that recurs with a period dividing K ("read A, read A, write B" and K = 4 keeps
//! no write to B). The page counts every op from the transaction list's rows instead when
//! those hold every op.

/// One access kept for the map.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Access {
    /// Issue time, ns into the measured phase.
    pub t_ns: u64,
    /// First byte.
    pub offset: u64,
    /// Bytes asked for.
    pub len: u64,
    /// The file's index in the report's file table.
    pub file: u32,
    /// The op kind's index (`OpKind::index`).
    pub kind: u8,
    /// The op's position in the records (0-based): its row in the transaction list.
    pub row: u64,
}

/// A sample of the accesses: about one in every `stride`, chosen by [`keeps`].
pub struct AccessMap {
    stride: u64,
    max_points: usize,
    kept: Vec<(u64, Access)>,
    /// Accesses offered, kept or not.
    pub seen: u64,
}

impl AccessMap {
    /// A sample of at most `max_points` points.
    pub fn new(max_points: usize) -> Self {
        AccessMap {
            stride: 1,
            max_points: max_points.max(1),
            kept: Vec::new(),
            seen: 0,
        }
    }

    /// Offers one access: kept when [`keeps`] says so for the current stride.
    pub fn add(&mut self, a: Access) {
        let seq = self.seen;
        self.seen += 1;
        if !keeps(seq, self.stride) {
            return;
        }
        self.kept.push((seq, a));
        if self.kept.len() > self.max_points {
            self.stride *= 2;
            let stride = self.stride;
            self.kept.retain(|(s, _)| keeps(*s, stride));
        }
    }

    /// One point in how many accesses.
    pub fn stride(&self) -> u64 {
        self.stride
    }

    /// The kept points, in record order.
    pub fn into_points(self) -> Vec<Access> {
        self.kept.into_iter().map(|(_, a)| a).collect()
    }
}

/// Whether the access with sequence number `seq` is in the sample at stride `stride` (a
/// power of two): the low bits of a well-mixed hash of `seq` (splitmix64's finaliser)
/// are zero. What a stride keeps, a smaller stride keeps too, so doubling it only drops
/// points; and the hash has no period a trace's ops could share.
fn keeps(seq: u64, stride: u64) -> bool {
    let mut z = seq.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    z & (stride - 1) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn access(t_ns: u64, offset: u64, file: u32, row: u64) -> Access {
        Access {
            t_ns,
            offset,
            len: 4096,
            file,
            kind: 3,
            row,
        }
    }

    #[test]
    fn few_points_are_all_kept() {
        let mut m = AccessMap::new(1000);
        for i in 0..100 {
            m.add(access(i * 10_000, i * 4096, (i % 3) as u32, i));
        }
        assert_eq!(m.seen, 100);
        assert_eq!(m.stride(), 1);
        assert_eq!(m.into_points().len(), 100);
    }

    #[test]
    fn the_sample_follows_the_density_of_the_records() {
        // A busy second (100 ops per ms) then a quiet one (1 per ms), then busy again.
        let mut m = AccessMap::new(5000);
        let mut row = 0;
        let mut per_ms = Vec::new();
        for ms in 0..3000u64 {
            let n = if (1000..2000).contains(&ms) { 1 } else { 100 };
            per_ms.push(n);
            for k in 0..n {
                m.add(access(ms * 1_000_000 + k * 1000, k * 4096, 0, row));
                row += 1;
            }
        }
        let stride = m.stride();
        let points = m.into_points();
        assert!(
            points.len() <= 5000 && points.len() > 2500,
            "{}",
            points.len()
        );
        // Every stretch of 100 ms holds about its ops / stride points: within five
        // standard deviations of the binomial count (and one point).
        for b in 0..30u64 {
            let ops: u64 = per_ms[(b * 100) as usize..((b + 1) * 100) as usize]
                .iter()
                .sum();
            let drawn = points.iter().filter(|p| p.t_ns / 100_000_000 == b).count() as f64;
            let want = ops as f64 / stride as f64;
            let sd = (want * (1.0 - 1.0 / stride as f64)).sqrt();
            assert!(
                (drawn - want).abs() <= 5.0 * sd + 1.0,
                "bucket {b}: {drawn} vs {want}"
            );
        }
        // The rows say where each point is in the records.
        assert!(points.iter().all(|p| keeps(p.row, stride)));
    }

    #[test]
    fn a_group_recurring_with_a_period_is_kept_in_proportion() {
        // "read A, read A, write B" and, separately, every period from 2 to 16 with its
        // last op on file 1: a sample of every K-th op (K a power of two) keeps none of
        // file 1's ops when the period divides K, or all of them when it is K itself.
        for period in 2..=16u64 {
            let mut m = AccessMap::new(2000);
            let n = 200_000u64;
            for i in 0..n {
                let file = u32::from(i % period == period - 1);
                m.add(access(i * 1000, i * 4096, file, i));
            }
            let stride = m.stride();
            assert!(stride >= 64, "{stride}");
            let points = m.into_points();
            let rare = points.iter().filter(|p| p.file == 1).count() as f64;
            let want = points.len() as f64 / period as f64;
            let sd = (want * (1.0 - 1.0 / period as f64)).sqrt();
            assert!(
                (rare - want).abs() <= 5.0 * sd,
                "period {period}: {rare} of {} points on file 1, want about {want:.0}",
                points.len()
            );
        }
    }
}
