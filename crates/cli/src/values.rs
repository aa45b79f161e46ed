//! Typed command-line values that have no type of their own elsewhere: sizes and
//! durations (each with the one grammar naslab has for it) and the few choices that
//! are plain names. clap parses them, so a bad value is refused before anything runs,
//! naming the flag.

use std::fmt;
use std::str::FromStr;

use naslab_layout::FsKind;
use naslab_workload::synthetic::iozone::Test;

/// A byte count: plain bytes, or with a K, M, G or T suffix (powers of 1024).
pub fn size(text: &str) -> Result<u64, String> {
    naslab_workload::synthetic::parse_size(text)
}

/// A workload scale: a finite number above 0, at most [`naslab_workload::MAX_SCALE`].
pub fn scale(text: &str) -> Result<f64, String> {
    let max = naslab_workload::MAX_SCALE;
    let value: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("'{text}' is not a number; give a scale such as 0.01 or 1"))?;
    if value.is_finite() && value > 0.0 && value <= max {
        Ok(value)
    } else {
        Err(format!(
            "{text} is not a scale: give a number above 0 and at most {max}"
        ))
    }
}

/// A duration as given on the command line (`250ns`, `100us`, `10ms`, `1.5s`, `2m`):
/// its value, and its text, which results record as given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Duration {
    pub ns: u64,
    text: String,
}

impl Duration {
    pub fn as_std(&self) -> std::time::Duration {
        std::time::Duration::from_nanos(self.ns)
    }
}

impl FromStr for Duration {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        Ok(Duration {
            ns: naslab_engine::pacing::parse_duration_ns(text)?,
            text: text.to_string(),
        })
    }
}

impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// A duration of more than zero (`--time-limit`).
/// Parses `DURATION@N` (a stall of the null backend: the Nth op takes DURATION more).
pub fn stall(text: &str) -> Result<(Duration, u64), String> {
    let (d, n) = text
        .split_once('@')
        .ok_or_else(|| format!("'{text}': write DURATION@N, e.g. 1s@2000"))?;
    let n = n
        .parse()
        .map_err(|_| format!("'{n}' is not an op number; write DURATION@N, e.g. 1s@2000"))?;
    Ok((positive_duration(d)?, n))
}

pub fn positive_duration(text: &str) -> Result<Duration, String> {
    let d: Duration = text.parse()?;
    if d.ns == 0 {
        return Err("it must be more than zero".into());
    }
    Ok(d)
}

/// How long a protocol request may wait for its reply (`--io-timeout`): at least 1 ms.
pub fn io_timeout(text: &str) -> Result<Duration, String> {
    let d: Duration = text.parse()?;
    if d.ns < 1_000_000 {
        return Err("it must be at least 1ms".into());
    }
    Ok(d)
}

/// A file system made with mkfs on an image (the allocation matrix's `--fs`): any
/// but `dir`.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub fn made_fs(name: &str) -> Result<FsKind, String> {
    let choices = || format!("the choices are {}", FsKind::names(&FsKind::MADE));
    match name.parse::<FsKind>() {
        Ok(FsKind::Dir) => Err(format!(
            "dir is a directory, not a file system made on an image; {}",
            choices()
        )),
        Ok(fs) => Ok(fs),
        Err(_) => Err(format!("unknown file system '{name}'; {}", choices())),
    }
}

/// An iozone test, by the name iozone gives it.
pub fn iozone_test(name: &str) -> Result<Test, String> {
    Test::parse(name).ok_or_else(|| {
        format!(
            "no iozone test '{name}'; the tests are: {}",
            Test::ALL.map(Test::name).join(", ")
        )
    })
}

/// A suite of built-in workloads, by name (case ignored): the name as the catalog has it.
pub fn suite(name: &str) -> Result<String, String> {
    naslab_workload::SUITES
        .iter()
        .find(|s| s.eq_ignore_ascii_case(name))
        .map(|s| s.to_string())
        .ok_or_else(|| unknown_suite(name))
}

/// The refusal of a suite name the catalog does not have.
pub fn unknown_suite(name: &str) -> String {
    format!(
        "no suite '{name}'; the suites are: {} (see `naslab list`)",
        naslab_workload::SUITES.join(", ")
    )
}

/// A UTC date or time as run.json's timestamps begin (`2026-03-01`, `2026-03-01T12`,
/// `2026-03-01T12:30`, `2026-03-01T12:30:05`, a trailing `Z` allowed), without the `Z`.
pub fn utc_date(text: &str) -> Result<String, String> {
    let t = text.strip_suffix('Z').unwrap_or(text);
    let shape = "dddd-dd-ddTdd:dd:dd";
    let ok = [10, 13, 16, 19].contains(&t.len())
        && t.chars().zip(shape.chars()).all(|(c, p)| match p {
            'd' => c.is_ascii_digit(),
            _ => c == p,
        });
    if !ok {
        return Err("not a UTC date or time; write 2026-03-01 or 2026-03-01T12:30".into());
    }
    Ok(t.to_string())
}

/// `--backend NAME`: the backends a run picks by name, found through the engine's
/// registry: `null`, and the system's own files (`posix`, the default, which on Windows
/// is the `windows` backend, also accepted there by its name). One picked otherwise (by
/// a URL, or only in another build) is refused saying how to get it.
pub fn backend_name(text: &str) -> Result<crate::args::BackendName, String> {
    use crate::args::BackendName;
    use naslab_targets::registry::{BACKENDS, Choice};
    let Some(d) = BACKENDS.iter().find(|d| d.name == text) else {
        let names: Vec<&str> = BACKENDS.iter().map(|d| d.name).collect();
        return Err(format!(
            "'{text}' is no backend naslab knows (it knows {}; `naslab backends` lists them)",
            names.join(", ")
        ));
    };
    match d.choice {
        Choice::Flag(_) => Ok(BackendName::Null),
        // The system's files, whichever backend this build has for them.
        Choice::Directory if d.name == "posix" || d.caps.is_some() => Ok(BackendName::Posix),
        _ if d.caps.is_none() => Err(format!(
            "the {} backend is not in this build ({})",
            d.name, d.missing
        )),
        Choice::Url(scheme) => Err(format!(
            "the {} backend is chosen by its URL, not by --backend: give --target {scheme}://HOST/...",
            d.name
        )),
        Choice::Directory => Ok(BackendName::Posix),
    }
}

/// An NFS version as `lab matrix --nfs-versions` takes it: 3, 4.1 or 4.2.
#[cfg(target_os = "linux")]
pub fn nfs_version(s: &str) -> Result<String, String> {
    match s {
        "3" | "4.1" | "4.2" => Ok(s.to_string()),
        _ => Err(format!(
            "NFS version '{s}' is not offered; the choices are 3, 4.1 and 4.2"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_checked_and_a_trailing_z_dropped() {
        assert_eq!(utc_date("2026-03-01").unwrap(), "2026-03-01");
        assert_eq!(utc_date("2026-03-01T12:30Z").unwrap(), "2026-03-01T12:30");
        for bad in ["2026-3-1", "yesterday", "2026-03-01 12:30", "2026-03-01T1"] {
            assert!(utc_date(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn suites_are_named_as_the_catalog_names_them() {
        assert_eq!(suite("NASPT").unwrap(), "naspt");
        assert_eq!(suite("iometer").unwrap(), "iometer");
        let e = suite("nasbench").unwrap_err();
        assert!(e.contains("naspt, iometer"), "{e}");
    }

    #[test]
    fn durations_keep_their_text_and_bounds_are_said() {
        let d: Duration = "1.5s".parse().unwrap();
        assert_eq!(d.ns, 1_500_000_000);
        assert_eq!(d.to_string(), "1.5s");
        assert_eq!(d.as_std(), std::time::Duration::from_millis(1500));
        assert!(
            positive_duration("0s")
                .unwrap_err()
                .contains("more than zero")
        );
        assert_eq!(positive_duration("10ms").unwrap().ns, 10_000_000);
        assert!(io_timeout("500us").unwrap_err().contains("at least 1ms"));
        assert_eq!(io_timeout("1ms").unwrap().ns, 1_000_000);
        assert!(io_timeout("30").unwrap_err().contains("no unit"));
    }

    #[test]
    fn sizes_and_tests_parse_or_say_what_is_accepted() {
        assert_eq!(size("64k"), Ok(64 << 10));
        assert!(size("12Q").unwrap_err().contains("use k, m, g or t"));
        assert_eq!(iozone_test("read"), Ok(Test::Read));
        assert_eq!(made_fs("xfs"), Ok(FsKind::Xfs));
        assert!(
            made_fs("dir")
                .unwrap_err()
                .contains("not a file system made")
        );
        let e = made_fs("ntfs").unwrap_err();
        assert!(e.contains("ext4-nodelalloc") && !e.contains("dir"), "{e}");
        assert!(iozone_test("readd").unwrap_err().contains("randread"));
    }
}
