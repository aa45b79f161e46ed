//! The file access map's sample: every K-th read and write in record order, K doubling
//! whenever the sample outgrows its cap, so memory stays bounded however many ops a run
//! has while the points drawn per stretch of time stay proportional to the ops there (an
//! even sample, not one point per cell, which would thin busy stretches more than quiet
//! ones). The page draws from the transaction list's rows instead when those hold every op.

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

/// An even sample of the accesses: one in every `stride`.
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

    /// Offers one access: kept when its sequence number is a multiple of the stride.
    pub fn add(&mut self, a: Access) {
        let seq = self.seen;
        self.seen += 1;
        if !seq.is_multiple_of(self.stride) {
            return;
        }
        self.kept.push((seq, a));
        if self.kept.len() > self.max_points {
            self.stride *= 2;
            let stride = self.stride;
            self.kept.retain(|(s, _)| s.is_multiple_of(stride));
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
        // Every stretch of 100 ms holds its ops / stride points, to within one.
        for b in 0..30u64 {
            let ops: u64 = per_ms[(b * 100) as usize..((b + 1) * 100) as usize]
                .iter()
                .sum();
            let drawn = points.iter().filter(|p| p.t_ns / 100_000_000 == b).count() as f64;
            let want = ops as f64 / stride as f64;
            assert!((drawn - want).abs() <= 1.0, "bucket {b}: {drawn} vs {want}");
        }
        // The rows say where each point is in the records.
        assert!(points.iter().all(|p| p.row.is_multiple_of(stride)));
    }
}
