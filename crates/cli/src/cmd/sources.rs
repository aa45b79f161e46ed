//! Where workloads come from: trace files, built-in generators, and the user's trace
//! directory, resolved by name.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use naslab_trace::Trace;
use naslab_workload::synthetic::iometer;
use naslab_workload::{GenParams, NASPT, catalog, generate, suite};

use crate::args::{GenArgs, TraceDirArg};

/// A workload named on the command line, resolved.
pub enum Source {
    /// A trace file.
    File(PathBuf),
    /// A built-in generator.
    Builtin(&'static str),
}

/// The trace directory: the one given, or the user's config directory's `naslab/traces`.
pub fn trace_dir(arg: &TraceDirArg) -> Option<PathBuf> {
    if let Some(d) = &arg.trace_dir {
        return Some(d.clone());
    }
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(config.join("naslab").join("traces"))
}

/// The endings of trace files, JSON Lines or binary, plain or zstd-compressed.
const TRACE_SUFFIXES: [&str; 4] = [".jsonl.zst", ".jsonl", ".nbt.zst", ".nbt"];

/// The workload name a trace file runs under when picked by name: its file name
/// without its trace ending (`TRACE_SUFFIXES`).
pub fn trace_name(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    TRACE_SUFFIXES
        .iter()
        .find_map(|suffix| name.strip_suffix(suffix))
        .filter(|stem| !stem.is_empty())
        .map(str::to_string)
}

/// The traces in the trace directory, by name, sorted.
pub fn user_traces(dir: &Path) -> anyhow::Result<Vec<(String, PathBuf)>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(e)
                .with_context(|| format!("cannot list the trace directory '{}'", dir.display()));
        }
    };
    let mut out = Vec::new();
    for e in entries {
        let path = e
            .with_context(|| format!("cannot list '{}'", dir.display()))?
            .path();
        if let Some(name) = trace_name(&path)
            && path.is_file()
        {
            out.push((name, path));
        }
    }
    out.sort();
    Ok(out)
}

/// Resolves one name: a built-in workload, then a trace in the trace directory, then a path.
pub fn resolve(name: &str, dir: Option<&Path>) -> anyhow::Result<Source> {
    if let Some(w) = builtin(name) {
        return Ok(Source::Builtin(w));
    }
    if let Some(t) = naslab_workload::synthetic::iometer::lookup(name) {
        return Ok(Source::Builtin(t.name));
    }
    if let Some(dir) = dir
        && let Some((_, path)) = user_traces(dir)?.into_iter().find(|(n, _)| n == name)
    {
        return Ok(Source::File(path));
    }
    let as_path = Path::new(name);
    // Any path that is not a directory is read as a trace (a pipe too), and refused by
    // the reader if it is not one.
    if as_path.exists() && !as_path.is_dir() {
        return Ok(Source::File(as_path.to_path_buf()));
    }
    let known = builtin_names();
    let dir_note = match dir {
        Some(d) => format!(" or a trace in '{}'", d.display()),
        None => String::new(),
    };
    bail!(
        "no workload '{name}': give a built-in one ({}){dir_note}, or a trace file's path; `naslab list` shows them all",
        known.join(", ")
    )
}

/// Every built-in workload's name: the NAS suite's, then the IOMeter-style set's.
pub fn builtin_names() -> Vec<&'static str> {
    catalog()
        .iter()
        .map(|w| w.name)
        .chain(iometer::TESTS.iter().map(|t| t.name))
        .collect()
}

/// The built-in workload named `name` (case ignored), spelled as naslab spells it.
pub fn builtin(name: &str) -> Option<&'static str> {
    builtin_names()
        .into_iter()
        .find(|w| w.eq_ignore_ascii_case(name))
}

/// The suite a built-in workload belongs to.
pub fn builtin_suite(name: &str) -> &'static str {
    if iometer::lookup(name).is_some() {
        iometer::SUITE
    } else {
        NASPT
    }
}

/// Resolves a suite's name into its workloads.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub fn resolve_suite(name: &str) -> anyhow::Result<Vec<Source>> {
    pick_from_suite(name, &[])
}

/// Resolves a suite's name into its workloads; with `pick` (names given with
/// `--workload`), only those, in the order given. A name not in the suite is an error.
pub fn pick_from_suite(name: &str, pick: &[String]) -> anyhow::Result<Vec<Source>> {
    let Some(names) = suite(name) else {
        // clap has checked the flag already; a caller that did not gets the same refusal.
        bail!("{}", crate::values::unknown_suite(name))
    };
    if pick.is_empty() {
        return Ok(names.into_iter().map(Source::Builtin).collect());
    }
    let mut out = Vec::new();
    for p in pick {
        match names.iter().find(|n| n.eq_ignore_ascii_case(p)) {
            Some(n) => out.push(Source::Builtin(n)),
            None => bail!(
                "--workload {p} is not in the {name} suite, whose workloads are: {}; leave out --suite to run workloads from anywhere",
                names.join(", ")
            ),
        }
    }
    Ok(out)
}

/// The generator parameters from the command line.
pub fn gen_params(g: &GenArgs) -> anyhow::Result<GenParams> {
    let p = GenParams {
        seed: g.seed,
        scale: g.scale,
    };
    p.validate().context("--scale")?;
    Ok(p)
}

/// Generates a built-in workload.
pub fn build(name: &str, params: &GenParams) -> anyhow::Result<Trace> {
    Ok(generate(name, params)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trace_is_named_by_its_file_name_without_its_ending() {
        for (file, name) in [
            ("a/Save.jsonl", Some("Save")),
            ("Save.jsonl.zst", Some("Save")),
            ("Save.nbt", Some("Save")),
            ("x/Save.v2.nbt.zst", Some("Save.v2")),
            ("Save.json", None),
            ("Save.zst", None),
            (".nbt", None),
        ] {
            assert_eq!(trace_name(Path::new(file)).as_deref(), name, "{file}");
        }
    }
}
