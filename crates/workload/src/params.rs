use crate::WorkloadError;

/// The largest scale a generator accepts (four times the published size).
pub const MAX_SCALE: f64 = 4.0;

/// The smallest size, in bytes, that scaling shrinks a file to (smaller files keep their size).
pub const MIN_FILE_BYTES: u64 = 64;

/// What a generator is asked for: the random seed and the size relative to the published workload.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GenParams {
    /// Seeds the random choices; the same seed and scale give the same trace.
    pub seed: u64,
    /// Multiplies bytes (file sizes and so the number of data ops); 1 = the published size.
    pub scale: f64,
}

impl Default for GenParams {
    fn default() -> Self {
        GenParams {
            seed: 1,
            scale: 1.0,
        }
    }
}

impl GenParams {
    /// Checks that the scale is a finite number in (0, [`MAX_SCALE`]].
    pub fn validate(&self) -> Result<(), WorkloadError> {
        if self.scale.is_finite() && self.scale > 0.0 && self.scale <= MAX_SCALE {
            Ok(())
        } else {
            Err(WorkloadError::InvalidScale {
                scale: self.scale,
                max: MAX_SCALE,
            })
        }
    }
}

/// Applies a validated scale to sizes and counts.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Scale(pub f64);

impl Scale {
    /// A file size at this scale: never below [`MIN_FILE_BYTES`] (or the original size if smaller).
    pub fn bytes(self, full: u64) -> u64 {
        let scaled = (full as f64 * self.0).round() as u64;
        scaled.max(full.min(MIN_FILE_BYTES))
    }

    /// A count of repeated actions at this scale: at least one.
    pub fn count(self, full: u64) -> u64 {
        ((full as f64 * self.0).round() as u64).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validate_rejects_bad_scales() {
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY, MAX_SCALE * 2.0] {
            let p = GenParams {
                seed: 1,
                scale: bad,
            };
            assert!(p.validate().is_err(), "{bad} accepted");
        }
        for good in [0.001, 0.01, 1.0, MAX_SCALE] {
            assert!(
                GenParams {
                    seed: 1,
                    scale: good
                }
                .validate()
                .is_ok()
            );
        }
    }

    #[test]
    fn scale_keeps_a_floor() {
        let s = Scale(0.001);
        assert_eq!(s.bytes(12), 12);
        assert_eq!(s.bytes(1000), MIN_FILE_BYTES);
        assert_eq!(s.bytes(1_000_000), 1000);
        assert_eq!(s.count(10), 1);
        assert_eq!(Scale(2.0).bytes(100), 200);
    }
}
