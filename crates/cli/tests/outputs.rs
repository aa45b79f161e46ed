//! What naslab writes and prints cannot be turned against the user: a file named with
//! `-o` is written into, never replaced by something else; standard output closed early
//! or full ends the command cleanly; names from a trace reach a spreadsheet as text and a
//! terminal as visible characters.

#![cfg(unix)]
// A test fails on the unwrap of what it did not expect, which is what a test is for.
#![allow(clippy::unwrap_used)]

use std::io::Write;
use std::path::{Path, PathBuf};

mod common;
use common::*;

/// A small trace whose workload is called `name` (which may hold anything JSON can).
fn named_trace(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join("named.jsonl");
    let mut w = std::fs::File::create(&path).unwrap();
    let header = serde_json::json!({
        "type": "header", "format": "naslab-trace", "version": 1, "workload": name,
    });
    writeln!(w, "{header}").unwrap();
    writeln!(
        w,
        r#"{{"type":"file","id":1,"path":"a.dat","size":4096,"exists":true}}"#
    )
    .unwrap();
    writeln!(w, r#"{{"type":"op","op":"open","t_us":0,"file":1}}"#).unwrap();
    writeln!(
        w,
        r#"{{"type":"op","op":"read","t_us":10,"file":1,"offset":0,"len":4096}}"#
    )
    .unwrap();
    writeln!(w, r#"{{"type":"op","op":"close","t_us":20,"file":1}}"#).unwrap();
    path
}

/// Splits CSV text into rows of fields as RFC 4180 reads it (quoted fields may hold
/// commas, quotes and line breaks).
fn csv_rows(text: &str) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    let mut row = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') => quoted = true,
            (false, ',') => row.push(std::mem::take(&mut field)),
            (false, '\n') => {
                row.push(std::mem::take(&mut field));
                rows.push(std::mem::take(&mut row));
            }
            (false, c) => field.push(c),
        }
    }
    assert!(field.is_empty() && row.is_empty(), "CSV ends mid-row");
    rows
}

#[test]
fn naspt_csv_quotes_names_and_never_makes_formulas() {
    let work = tempfile::tempdir().unwrap();
    let name = "=HYPERLINK(\"x\"),1e9,0,0\nEvil,1e9";
    let trace = named_trace(work.path(), name);
    let out = work.path().join("out");
    run_ok(
        naslab()
            .arg("run")
            .arg(&trace)
            .args(["--backend", "null", "--out"])
            .arg(&out),
    );
    let dir = only_run_dir(&out);
    let naspt = std::fs::read_to_string(dir.join("naspt.csv")).unwrap();
    let rows = csv_rows(&naspt);
    assert_eq!(rows.len(), 2, "{naspt}");
    assert!(rows.iter().all(|r| r.len() == 10), "{naspt}");
    // The name, whole, as text: a spreadsheet shows it and evaluates nothing.
    assert_eq!(rows[1][0], format!("'{name}"), "{naspt}");
    let throughput: f64 = rows[1][1].parse().unwrap();
    assert!(throughput < 1e9, "{naspt}");
    // The long CSV of `naslab report` the same way.
    let out = run_ok(naslab().arg("report").arg(&dir).args(["--format", "csv"]));
    let csv = text(&out.stdout);
    let rows = csv_rows(&csv);
    assert!(rows.len() > 1, "{csv}");
    for r in &rows[1..] {
        assert_eq!(r.len(), rows[0].len(), "{csv}");
        assert_eq!(r[0], format!("'{name}"), "{csv}");
    }
}

/// What is at `path` (file type and, for a regular file, its bytes), without following
/// a link.
fn state(path: &Path) -> (String, Option<Vec<u8>>) {
    let m = std::fs::symlink_metadata(path).unwrap();
    let kind = format!("{:?}", m.file_type());
    let bytes = m.is_file().then(|| std::fs::read(path).unwrap());
    (kind, bytes)
}

/// Every command that writes a file at a path it was given, as (name, arguments before
/// the path); each is run with that path last.
fn writers(work: &Path, run: &Path) -> Vec<(&'static str, Vec<std::ffi::OsString>)> {
    let strace = work.join("app.strace");
    std::fs::write(
        &strace,
        "100 1700000000.000000 openat(AT_FDCWD</data>, \"a.txt\", O_RDONLY) = 3</data/a.txt> <0.000010>\n100 1700000000.000100 close(3</data/a.txt>) = 0 <0.000002>\n",
    )
    .unwrap();
    let os = |v: &[&dyn AsRef<std::ffi::OsStr>]| v.iter().map(|a| a.as_ref().to_owned()).collect();
    vec![
        ("report", os(&[&"report", &run, &"-o"])),
        (
            "report --format json",
            os(&[&"report", &run, &"--format", &"json", &"-o"]),
        ),
        (
            "compare",
            os(&[&"compare", &run, &run, &"--format", &"csv", &"-o"]),
        ),
        (
            "compare --format html",
            os(&[&"compare", &run, &run, &"--format", &"html", &"-o"]),
        ),
        (
            "records",
            os(&[&"records", &run.join("DocumentSave.ops.nbt.zst"), &"-o"]),
        ),
        (
            "export-trace",
            os(&[&"export-trace", &"PhotoAlbum", &"--scale", &"0.001", &"-o"]),
        ),
        (
            "import",
            os(&[&"import", &"strace", &strace, &"--root", &"/data", &"-o"]),
        ),
    ]
}

#[test]
fn no_command_writes_over_a_link_a_fifo_a_directory_or_a_run() {
    let work = tempfile::tempdir().unwrap();
    let run = example_run(&work.path().join("out"), "a");
    let keep = |name: &str| {
        let p = work.path().join(name);
        std::fs::write(&p, format!("keep {name}")).unwrap();
        p
    };
    let victim = keep("victim");
    let link = work.path().join("link");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    let fifo = work.path().join("fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let dir = work.path().join("dir");
    std::fs::create_dir(&dir).unwrap();
    let linked = keep("linked");
    std::fs::hard_link(&linked, work.path().join("second-name")).unwrap();
    let mut places = vec![
        ("a symbolic link", link.clone()),
        ("a FIFO", fifo.clone()),
        ("a directory", dir.clone()),
        ("a file with two names", linked.clone()),
        ("run.json", run.join("run.json")),
        ("naspt.csv", run.join("naspt.csv")),
    ];
    if is_root() {
        // A device node like /dev/null (1, 3), made here so nothing real is at stake.
        let null = work.path().join("null");
        let made = std::process::Command::new("mknod")
            .args(["-m", "666"])
            .arg(&null)
            .args(["c", "1", "3"])
            .status()
            .unwrap();
        assert!(made.success());
        places.push(("a character device", null));
    } else {
        cannot_run("making a device node needs root");
    }
    for (what, path) in &places {
        let before = state(path);
        let run_json = std::fs::read(run.join("run.json")).unwrap();
        for (name, args) in writers(work.path(), &run) {
            let out = naslab().args(&args).arg(path).output().unwrap();
            let err = text(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{name} -o {what}: {err}");
            assert!(!err.contains("panicked"), "{err}");
            assert!(
                err.contains(&path.display().to_string()),
                "{name} -o {what}: {err}"
            );
            assert_eq!(state(path), before, "{name} changed {what}");
            assert_eq!(std::fs::read(run.join("run.json")).unwrap(), run_json);
        }
    }
    assert_eq!(std::fs::read(&victim).unwrap(), b"keep victim");
    // A new file, and an existing regular file with one name, are written.
    for (name, args) in writers(work.path(), &run) {
        let fresh = work.path().join(format!("new-{}", name.replace(' ', "_")));
        run_ok(naslab().args(&args).arg(&fresh));
        assert!(std::fs::metadata(&fresh).unwrap().len() > 0, "{name}");
        let old = keep("existing");
        run_ok(naslab().args(&args).arg(&old));
        let written = std::fs::read(&old).unwrap();
        assert!(!written.starts_with(b"keep"), "{name}");
        std::fs::remove_file(&old).unwrap();
    }
}

#[test]
fn a_runs_report_page_is_written_only_by_its_own_report_and_only_as_html() {
    let work = tempfile::tempdir().unwrap();
    let a = example_run(&work.path().join("out"), "a");
    let b = example_run(&work.path().join("out"), "b");
    let b_page = std::fs::read(b.join("report.html")).unwrap();
    // Another run's page.
    let err = run_err(
        naslab()
            .arg("report")
            .arg(&a)
            .arg("-o")
            .arg(b.join("report.html")),
    );
    assert!(err.contains("only `naslab report"), "{err}");
    // JSON under the page's name.
    let err = run_err(
        naslab()
            .arg("report")
            .arg(&b)
            .args(["--format", "json", "-o"])
            .arg(b.join("report.html")),
    );
    assert!(err.contains("only `naslab report"), "{err}");
    // Nor through a path that leaves the directory and comes back.
    let sneaky = a
        .join("../../b")
        .join(b.file_name().unwrap())
        .join("report.html");
    run_err(naslab().arg("report").arg(&a).arg("-o").arg(&sneaky));
    assert_eq!(std::fs::read(b.join("report.html")).unwrap(), b_page);
    // Its own report rewrites it, and a comparison of it may leave compare.html there.
    run_ok(
        naslab()
            .arg("report")
            .arg(&b)
            .arg("-o")
            .arg(b.join("report.html")),
    );
    run_ok(
        naslab()
            .arg("compare")
            .arg(&a)
            .arg(&b)
            .args(["--format", "html", "-o"])
            .arg(b.join("compare.html")),
    );
}

/// Every subcommand that prints to standard output, with its arguments.
fn printers(work: &Path) -> Vec<(&'static str, Vec<std::ffi::OsString>)> {
    let out = work.join("out");
    let run = if out.exists() {
        only_run_under(&out.join("p"))
    } else {
        example_run(&out, "p")
    };
    let example = repo_root().join("examples/document-save.jsonl");
    let os = |v: &[&dyn AsRef<std::ffi::OsStr>]| v.iter().map(|a| a.as_ref().to_owned()).collect();
    let runs = work.join("runs");
    vec![
        ("describe", os(&[&"describe", &example])),
        ("describe --json", os(&[&"describe", &"--json", &example])),
        ("list", os(&[&"list"])),
        ("results", os(&[&"results", &out])),
        ("results --json", os(&[&"results", &"--json", &out])),
        ("frag", os(&[&"frag", &run.join("run.json")])),
        (
            "frag --json",
            os(&[&"frag", &"--json", &run.join("run.json")]),
        ),
        (
            "report --format table",
            os(&[&"report", &run, &"--format", &"table"]),
        ),
        (
            "report --format json",
            os(&[&"report", &run, &"--format", &"json"]),
        ),
        ("compare", os(&[&"compare", &run, &run])),
        ("records", os(&[&"records", &example])),
        ("man", os(&[&"man"])),
        ("completions", os(&[&"completions", &"bash"])),
        (
            "run",
            os(&[
                &"run",
                &example,
                &"--backend",
                &"null",
                &"--label",
                &"t",
                &"--out",
                &runs,
            ]),
        ),
        (
            "run --json",
            os(&[
                &"run",
                &example,
                &"--backend",
                &"null",
                &"--json",
                &"--label",
                &"j",
                &"--out",
                &runs,
            ]),
        ),
    ]
}

/// The run directories under `out` (OUT/LABEL/RUN) that hold a run.json.
fn saved_runs(out: &Path) -> usize {
    let Ok(labels) = std::fs::read_dir(out) else {
        return 0;
    };
    labels
        .flat_map(|l| std::fs::read_dir(l.unwrap().path()).unwrap())
        .filter(|r| r.as_ref().unwrap().path().join("run.json").is_file())
        .count()
}

#[test]
fn a_reader_that_goes_away_ends_every_command_quietly() {
    let work = tempfile::tempdir().unwrap();
    for (name, args) in printers(work.path()) {
        // `naslab ... | true`: the reading end is closed before naslab writes anything.
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = naslab()
            .args(&args)
            .stdout(writer)
            .stderr(std::process::Stdio::piped())
            .output()
            .unwrap();
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{name}: {err}");
        assert!(
            !err.contains("panicked") && !err.contains("error"),
            "{name}: {err}"
        );
    }
    // The runs kept their results.
    let runs = work.path().join("runs");
    assert_eq!(saved_runs(&runs), 2, "{}", runs.display());
}

#[test]
fn a_full_standard_output_is_an_error_that_says_so() {
    let work = tempfile::tempdir().unwrap();
    for (name, args) in printers(work.path()) {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let out = naslab().args(&args).stdout(full).output().unwrap();
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{name}: {err}");
        assert!(!err.contains("panicked"), "{name}: {err}");
        assert!(
            err.contains("cannot write to standard output") && err.contains("No space left"),
            "{name}: {err}"
        );
    }
    let runs = work.path().join("runs");
    assert_eq!(saved_runs(&runs), 2, "{}", runs.display());
}

/// Whether `bytes` hold a control character a terminal acts on (other than a line break).
fn has_control(bytes: &[u8]) -> bool {
    let text = String::from_utf8_lossy(bytes);
    text.chars().any(|c| c.is_control() && c != '\n')
}

#[test]
fn names_from_a_trace_reach_the_terminal_as_visible_text() {
    let work = tempfile::tempdir().unwrap();
    // Retitles the window, clears the screen, and fakes a line of output.
    let name = "\u{1b}]0;owned\u{7}\u{1b}[2J\u{9b}31mFake\nerror: fake";
    let trace = named_trace(work.path(), name);
    let out = work.path().join("out");
    let ran = run_ok(
        naslab()
            .arg("run")
            .arg(&trace)
            .args(["--backend", "null", "--out"])
            .arg(&out),
    );
    assert!(!has_control(&ran.stdout), "{:?}", text(&ran.stdout));
    assert!(!has_control(&ran.stderr), "{:?}", text(&ran.stderr));
    let table = text(&ran.stdout);
    assert!(
        table.contains("\\x1b]0;owned\\x07\\x1b[2J\\u{9b}31mFake\\nerror: fake"),
        "{table}"
    );
    assert!(
        !table.lines().any(|l| l.starts_with("error: fake")),
        "{table}"
    );
    // The name itself is kept as it was in the results.
    let run = json(&only_run_dir(&out).join("run.json"));
    assert_eq!(run["workloads"][0]["name"], name);
    let dir = only_run_dir(&out);
    for args in [
        vec!["describe".into(), trace.clone().into_os_string()],
        vec![
            "report".into(),
            dir.clone().into_os_string(),
            "--format".into(),
            "table".into(),
        ],
        vec![
            "compare".into(),
            dir.clone().into_os_string(),
            dir.clone().into_os_string(),
        ],
        vec!["results".into(), out.clone().into_os_string()],
    ] {
        let shown = run_ok(naslab().args(&args));
        assert!(
            !has_control(&shown.stdout),
            "{args:?}: {:?}",
            text(&shown.stdout)
        );
        assert!(
            text(&shown.stdout).contains("\\x1b"),
            "{args:?}: {}",
            text(&shown.stdout)
        );
    }
    // A path in an error.
    let missing = work.path().join("\u{1b}[2Jgone.jsonl");
    let failed = naslab().arg("describe").arg(&missing).output().unwrap();
    assert_eq!(failed.status.code(), Some(1));
    assert!(!has_control(&failed.stderr), "{:?}", text(&failed.stderr));
    assert!(
        text(&failed.stderr).contains("\\x1b[2Jgone.jsonl"),
        "{}",
        text(&failed.stderr)
    );
}

#[test]
fn man_pages_are_not_written_through_a_planted_link() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().join("man");
    std::fs::create_dir(&dir).unwrap();
    let victim = work.path().join("victim");
    std::fs::write(&victim, b"precious").unwrap();
    std::os::unix::fs::symlink(&victim, dir.join("naslab-run.1")).unwrap();
    let err = run_err(naslab().arg("man").arg("--dir").arg(&dir));
    assert!(
        err.contains("naslab-run.1") && err.contains("symbolic link"),
        "{err}"
    );
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
    // Without the link every page is written.
    std::fs::remove_file(dir.join("naslab-run.1")).unwrap();
    run_ok(naslab().arg("man").arg("--dir").arg(&dir));
    assert!(std::fs::metadata(dir.join("naslab-run.1")).unwrap().len() > 0);
    assert!(dir.join("naslab.1").is_file());
}
