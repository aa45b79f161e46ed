//! The file access map, decimated: at most one point per file per cell of a time ×
//! offset grid, the grid coarsening as offsets grow or as points pile up, so memory
//! stays bounded however many ops a run has. The raw records stay in the run directory.

use std::collections::HashMap;

/// Time columns of the grid before any coarsening.
const TIME_CELLS: u64 = 4096;
/// Offset rows of the grid.
const OFFSET_CELLS: u64 = 2048;

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
}

/// Accesses kept one per grid cell.
pub struct AccessMap {
    duration_ns: u64,
    cell_ns: u64,
    coarsen_time_next: bool,
    offset_shift: u32,
    max_points: usize,
    cells: HashMap<(u32, u32, u32), Access>,
    /// Accesses offered, kept or not.
    pub seen: u64,
}

impl AccessMap {
    /// A map of a measured phase `duration_ns` long that keeps about `max_points` points.
    pub fn new(duration_ns: u64, max_points: usize) -> Self {
        AccessMap {
            duration_ns,
            cell_ns: duration_ns.div_ceil(TIME_CELLS).max(1),
            coarsen_time_next: true,
            offset_shift: 0,
            max_points: max_points.max(1),
            cells: HashMap::new(),
            seen: 0,
        }
    }

    fn key(&self, a: &Access) -> (u32, u32, u32) {
        (
            a.file,
            (a.t_ns / self.cell_ns).min(u32::MAX as u64) as u32,
            (a.offset >> self.offset_shift).min(u32::MAX as u64) as u32,
        )
    }

    /// Offers one access; the first in its cell is kept.
    pub fn add(&mut self, a: Access) {
        self.seen += 1;
        // Records may run past the phase run.json measured; the grid must cover them too.
        self.duration_ns = self.duration_ns.max(a.t_ns);
        let mut coarser = false;
        while a.offset >> self.offset_shift >= OFFSET_CELLS && self.offset_shift < 63 {
            self.offset_shift += 1;
            coarser = true;
        }
        if coarser {
            self.rekey();
        }
        let key = self.key(&a);
        self.cells.entry(key).or_insert(a);
        while self.cells.len() > self.max_points {
            // Halve the resolution of time and offsets in turn; once neither can merge
            // anything more, the points left are distinct files and stay.
            let time_can = self.cell_ns < self.duration_ns;
            let offset_can = self.offset_shift < 63;
            if time_can && (self.coarsen_time_next || !offset_can) {
                self.cell_ns = self.cell_ns.saturating_mul(2);
            } else if offset_can {
                self.offset_shift += 1;
            } else {
                self.max_points = self.cells.len().saturating_mul(2);
                break;
            }
            self.coarsen_time_next = !self.coarsen_time_next;
            self.rekey();
        }
    }

    /// Re-files every kept point under the current grid, keeping the earliest per cell.
    fn rekey(&mut self) {
        let old = std::mem::take(&mut self.cells);
        for a in old.into_values() {
            let key = self.key(&a);
            let slot = self.cells.entry(key).or_insert(a);
            if (a.t_ns, a.offset) < (slot.t_ns, slot.offset) {
                *slot = a;
            }
        }
    }

    /// The kept points in time order (then file, then offset), so output is reproducible.
    pub fn into_points(self) -> Vec<Access> {
        let mut v: Vec<Access> = self.cells.into_values().collect();
        v.sort_by_key(|a| (a.t_ns, a.file, a.offset, a.len, a.kind));
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn access(t_ns: u64, offset: u64, file: u32) -> Access {
        Access {
            t_ns,
            offset,
            len: 4096,
            file,
            kind: 3,
        }
    }

    #[test]
    fn few_points_are_all_kept() {
        let mut m = AccessMap::new(1_000_000, 1000);
        for i in 0..100 {
            m.add(access(i * 10_000, i * 4096, (i % 3) as u32));
        }
        assert_eq!(m.seen, 100);
        assert_eq!(m.into_points().len(), 100);
    }

    #[test]
    fn many_points_are_thinned_to_the_cap_and_keep_the_extremes() {
        let mut m = AccessMap::new(1_000_000_000, 5000);
        let n = 200_000u64;
        for i in 0..n {
            let offset = (i * 7919 % 100_000) * 65536;
            m.add(access(i * 5000, offset, (i % 5) as u32));
        }
        let points = m.into_points();
        assert!(
            points.len() <= 5000 && points.len() > 1000,
            "{}",
            points.len()
        );
        assert_eq!(points[0].t_ns, 0);
        assert!(points.windows(2).all(|w| w[0].t_ns <= w[1].t_ns));
        let last = points.last().unwrap().t_ns;
        assert!(last > (n - 1) * 5000 * 9 / 10, "{last}");
    }

    #[test]
    fn more_files_than_the_cap_does_not_stall() {
        let mut m = AccessMap::new(1000, 100);
        for f in 0..10_000u32 {
            m.add(access(f as u64 % 1000, 0, f));
        }
        assert_eq!(m.into_points().len(), 10_000);
    }
}
