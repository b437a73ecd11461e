//! End-to-end tests of `skills run`: the real binary, real processes.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::{Command, Output};

fn examples() -> String {
    concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/skills").to_owned()
}

fn skills(args: &[&str], path_prefix: Option<&Path>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_skills"));
    cmd.args(args)
        .env_remove("SKILLS_ROOT")
        .env_remove("SKILLS_RUN_ALLOWED_COMMANDS")
        .env_remove("SKILLS_RUN_DENIED_COMMANDS");
    if let Some(prefix) = path_prefix {
        let path = std::env::var("PATH").unwrap_or_default();
        cmd.env("PATH", format!("{}:{path}", prefix.display()));
    }
    cmd.output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn runs_a_script_and_lists_its_files() {
    let ex = examples();
    let out = skills(
        &[
            "run",
            "--output-files",
            "out/*",
            "csv-insights",
            &ex,
            "--",
            "python3 scripts/profile_csv.py assets/sample-orders.csv > $OUTPUT_DIR/profile.txt; echo done; printf '\\x89PNG\\r\\n\\x1a\\n' > out/a.png",
        ],
        None,
    );
    let stdout = text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        text(&out.stderr)
    );
    let mut lines = stdout.lines();
    assert_eq!(lines.next(), Some("done"));
    assert_eq!(lines.next(), Some("--- files"));
    assert_eq!(lines.next(), Some("out/a.png\t8\timage/png"));
    let profile = lines.next().unwrap();
    assert!(
        profile.starts_with("out/profile.txt\t") && profile.ends_with("\ttext/plain"),
        "{profile}"
    );
}

#[test]
fn exit_codes_json_and_timeouts() {
    let ex = examples();
    let out = skills(&["run", "commit-message", &ex, "--", "exit", "7"], None);
    assert_eq!(out.status.code(), Some(7));
    let out = skills(
        &[
            "run",
            "--timeout",
            "1",
            "commit-message",
            &ex,
            "--",
            "sleep 30",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(124));
    let out = skills(
        &["run", "--json", "commit-message", &ex, "--", "echo hi"],
        None,
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["stdout"], "hi\n");
    assert_eq!(v["exit_code"], 0);
    let out = skills(&["run", "no-such-skill", &ex, "--", "true"], None);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn sandbox_ignores_a_fake_bwrap_on_path() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let marker = dir.path().join("fake-bwrap-ran");
    std::fs::write(
        bin.join("bwrap"),
        format!("#!/bin/sh\ntouch {}\nexec \"$@\"\n", marker.display()),
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(bin.join("bwrap"), std::fs::Permissions::from_mode(0o755))
            .unwrap();
    }
    let ex = examples();
    let out = skills(
        &[
            "run",
            "--sandbox",
            "commit-message",
            &ex,
            "--",
            "hostname; echo ok > out/x.txt",
        ],
        Some(&bin),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "skills-sandbox\n--- files\nout/x.txt\t3\ttext/plain\n"
    );
    assert!(!marker.exists(), "the fake bwrap on PATH was run");
}

/// Makes files in `out/` (nested, binary, an empty folder) and one outside.
const MAKES_FILES: &str = "mkdir -p out/sub/deeper out/empty; echo hi > out/a.txt; \
     printf 'x,y\\n' > out/sub/deeper/b.csv; printf '\\x89PNG\\r\\n\\x1a\\n' > out/sub/c.png; \
     echo not listed > scratch.txt; echo done";

#[test]
fn lists_what_the_run_left_in_out_by_default() {
    let ex = examples();
    let out = skills(&["run", "commit-message", &ex, "--", MAKES_FILES], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "done\n--- files\n\
         out/a.txt\t3\ttext/plain\n\
         out/sub/c.png\t8\timage/png\n\
         out/sub/deeper/b.csv\t4\ttext/csv\n"
    );
}

#[test]
fn json_lists_out_by_default_without_contents() {
    let ex = examples();
    let out = skills(
        &["run", "--json", "commit-message", &ex, "--", MAKES_FILES],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let files: Vec<(String, u64, String)> = v["output_files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            assert!(f.get("content").is_none(), "{f}");
            (
                f["name"].as_str().unwrap().to_owned(),
                f["size_bytes"].as_u64().unwrap(),
                f["mime_type"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let expected = [
        ("out/a.txt", 3, "text/plain"),
        ("out/sub/c.png", 8, "image/png"),
        ("out/sub/deeper/b.csv", 4, "text/csv"),
    ]
    .map(|(n, s, m)| (n.to_owned(), s, m.to_owned()));
    assert_eq!(files, expected);
}

#[test]
fn nothing_is_listed_when_out_is_empty() {
    let ex = examples();
    let out = skills(&["run", "commit-message", &ex, "--", "echo hi"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "hi\n");
}

#[test]
fn output_files_chooses_the_files_and_json_inlines_their_text() {
    let ex = examples();
    let out = skills(
        &[
            "run",
            "--json",
            "--output-files",
            "out/sub/**/*.csv",
            "commit-message",
            &ex,
            "--",
            MAKES_FILES,
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let files = v["output_files"].as_array().unwrap();
    assert_eq!(files.len(), 1, "{v}");
    assert_eq!(files[0]["name"], "out/sub/deeper/b.csv");
    assert_eq!(files[0]["content"], "x,y\n");
}
