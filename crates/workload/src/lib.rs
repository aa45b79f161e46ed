//! naslab's workload generators. Each builds a trace ([`naslab_trace::Trace`]) of one of the
//! twelve NAS Performance Toolkit workloads from its published characteristics,
//! deterministically from a seed and at a chosen scale; [`describe`] computes a trace's
//! statistics so they can be checked against the published figures (see `docs/workloads.md`).

#![warn(missing_docs)]

mod builder;
mod catalog;
pub mod describe;
mod error;
mod naspt;
mod params;
mod sample;
pub mod synthetic;

pub use catalog::{DERIVED, NASPT, SUITES, WorkloadInfo, catalog, derived, suite};
pub use error::WorkloadError;
pub use params::{GenParams, MAX_SCALE, MIN_FILE_BYTES};

/// Generates the workload `name` (case is ignored) with `params`: one of the NAS suite's
/// twelve, one built from them ([`derived`]), or one of the IOMeter-style set.
pub fn generate(name: &str, params: &GenParams) -> Result<naslab_trace::Trace, WorkloadError> {
    params.validate()?;
    if let Some(test) = synthetic::iometer::lookup(name) {
        return Ok(synthetic::iometer::generate(test, params));
    }
    let info = catalog::lookup(name).ok_or_else(|| WorkloadError::UnknownWorkload {
        name: name.to_string(),
        known: catalog()
            .iter()
            .chain(derived())
            .map(|w| w.name)
            .chain(synthetic::iometer::TESTS.iter().map(|t| t.name))
            .collect::<Vec<_>>()
            .join(", "),
    })?;
    Ok(info.generate(params))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_names_list_the_known_ones() {
        let err = generate("NoSuchWorkload", &GenParams::default()).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("NoSuchWorkload"));
        assert!(
            text.contains("HDVideo_1Play") && text.contains("PhotoAlbum"),
            "{text}"
        );
    }

    #[test]
    fn bad_scale_is_an_error() {
        let p = GenParams {
            seed: 1,
            scale: f64::NAN,
        };
        assert!(matches!(
            generate("HDVideo_1Play", &p),
            Err(WorkloadError::InvalidScale { .. })
        ));
    }

    #[test]
    fn catalog_and_suite_agree() {
        let names = suite("naspt").expect("naspt suite");
        assert_eq!(names.len(), 12);
        assert_eq!(names, catalog().iter().map(|w| w.name).collect::<Vec<_>>());
        assert!(suite("nope").is_none());
    }
}
