//! Whether an MPI launcher started this process, from the variables it sets: what a
//! binary without MPI checks, so that under `mpirun` it says so instead of running as
//! N separate single-client runs on one target.

/// The launcher's variables: (variable, what sets it, whether it holds the job's size).
const VARIABLES: [(&str, &str, bool); 4] = [
    ("OMPI_COMM_WORLD_SIZE", "Open MPI's mpirun", true),
    (
        "PMI_SIZE",
        "a PMI launcher (MPICH's mpiexec, srun --mpi=pmi2)",
        true,
    ),
    (
        "PMIX_RANK",
        "a PMIx launcher (srun --mpi=pmix, prterun)",
        false,
    ),
    ("PMI_RANK", "a PMI launcher", false),
];

/// What launched this process as one of several, if anything did: the launcher and the
/// job's size when it is known. A job of one process is no job: `None`.
pub fn several_processes() -> Option<(&'static str, Option<u32>)> {
    several_processes_in(|name| std::env::var(name).ok())
}

fn several_processes_in(
    var: impl Fn(&str) -> Option<String>,
) -> Option<(&'static str, Option<u32>)> {
    for (name, who, is_size) in VARIABLES {
        let Some(value) = var(name) else {
            continue;
        };
        if !is_size {
            return Some((who, None));
        }
        match value.trim().parse::<u32>() {
            Ok(1) => return None,
            Ok(n) => return Some((who, Some(n))),
            Err(_) => return Some((who, None)),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_launchers_variables_tell_a_job_of_several_processes() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert_eq!(several_processes_in(env(&[])), None);
        assert_eq!(
            several_processes_in(env(&[("OMPI_COMM_WORLD_SIZE", "1")])),
            None
        );
        assert_eq!(
            several_processes_in(env(&[("OMPI_COMM_WORLD_SIZE", "3")])),
            Some(("Open MPI's mpirun", Some(3)))
        );
        assert!(several_processes_in(env(&[("PMIX_RANK", "0")])).is_some());
    }
}
