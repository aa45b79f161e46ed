/// Why a workload could not be generated.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WorkloadError {
    /// No generator has this name.
    #[error("unknown workload '{name}'; known workloads: {known}")]
    UnknownWorkload {
        /// The name that was asked for.
        name: String,
        /// Every known name, comma-separated.
        known: String,
    },
    /// The scale is not a finite number in (0, max].
    #[error(
        "scale {scale} is not valid: it must be a number greater than 0 and at most {max} (1 = the published size)"
    )]
    InvalidScale {
        /// The scale that was given.
        scale: f64,
        /// The largest scale accepted.
        max: f64,
    },
}
