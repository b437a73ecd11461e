//! `skills index DIR --out OUT`: the published index parses, follows schema
//! 0.2.0, its digests match the files written, archives are laid out as the
//! schema wants, and publishing twice gives identical bytes.

use std::fs;
use std::io::Read as _;
use std::path::Path;
use std::process::Command;

use serde_json::Value;
use sha2::{Digest as _, Sha256};

fn skills(args: &[&str]) -> (i32, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_skills"))
        .args(args)
        .env_remove("SKILLS_ROOT")
        .output()
        .expect("the skills binary runs");
    (
        output.status.code().expect("exited normally"),
        String::from_utf8(output.stdout).expect("UTF-8"),
        String::from_utf8(output.stderr).expect("UTF-8"),
    )
}

fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
    fs::write(path, text).expect("write");
}

/// `plain` (only its SKILL.md), `tooling` (with a script, a reference, a
/// hidden file and a nested skill `inner`), and a broken one.
fn skills_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    write(
        &root.join("plain/SKILL.md"),
        "---\nname: plain\ndescription: Only a SKILL.md. Use it for tests.\nmetadata:\n  version: 1.2.0\n---\nBody.\n",
    );
    write(
        &root.join("tooling/SKILL.md"),
        "---\nname: tooling\ndescription: Has files. Use it for tests.\n---\nRun scripts/run.sh.\n",
    );
    write(&root.join("tooling/scripts/run.sh"), "#!/bin/sh\necho hi\n");
    write(&root.join("tooling/references/guide.md"), "# Guide\n");
    write(&root.join("tooling/.DS_Store"), "junk");
    write(
        &root.join("tooling/inner/SKILL.md"),
        "---\nname: inner\ndescription: Nested. Use it for tests.\n---\nInner.\n",
    );
    write(&root.join("broken/SKILL.md"), "no frontmatter\n");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        fs::set_permissions(
            root.join("tooling/scripts/run.sh"),
            fs::Permissions::from_mode(0o755),
        )
        .expect("chmod");
    }
    dir
}

fn sha256(bytes: &[u8]) -> String {
    let hex: String = Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("sha256:{hex}")
}

/// Every file below `dir`, by relative path, with its bytes.
fn tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(folder) = pending.pop() {
        for entry in fs::read_dir(&folder).expect("read_dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                pending.push(path);
            } else {
                let rel = path.strip_prefix(dir).expect("below").display().to_string();
                out.push((rel, fs::read(&path).expect("read")));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn index_publishes_a_valid_reproducible_index() {
    let dir = skills_dir();
    let out = tempfile::tempdir().expect("temp out");
    let (dir_arg, out_arg) = (
        dir.path().display().to_string(),
        out.path().display().to_string(),
    );

    let (code, stdout, stderr) = skills(&["index", &dir_arg, "--out", &out_arg]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(
        stdout.contains("tooling  archive  tooling.tar.gz"),
        "{stdout}"
    );
    assert!(stderr.contains("1 skill not published"), "{stderr}");

    let base = out.path().join(".well-known/agent-skills");
    let index: Value =
        serde_json::from_slice(&fs::read(base.join("index.json")).expect("index")).expect("JSON");
    assert_eq!(
        index["$schema"],
        "https://schemas.agentskills.io/discovery/0.2.0/schema.json"
    );
    let entries = index["skills"].as_array().expect("skills");
    let names: Vec<&str> = entries.iter().filter_map(|e| e["name"].as_str()).collect();
    assert_eq!(names, ["inner", "plain", "tooling"]);
    let by_name = |name: &str| {
        entries
            .iter()
            .find(|e| e["name"] == name)
            .expect("an entry")
    };
    let plain = by_name("plain");
    assert_eq!(plain["type"], "skill-md");
    assert_eq!(plain["url"], "plain/SKILL.md");
    assert_eq!(plain["version"], "1.2.0");
    assert_eq!(plain["description"], "Only a SKILL.md. Use it for tests.");
    assert_eq!(
        fs::read(base.join("plain/SKILL.md")).expect("copy"),
        fs::read(dir.path().join("plain/SKILL.md")).expect("source")
    );
    let tooling = by_name("tooling");
    assert_eq!(tooling["type"], "archive");
    assert!(tooling.get("version").is_none());
    for entry in entries {
        let url = entry["url"].as_str().expect("url");
        assert!(!url.starts_with('/') && !url.contains("://"), "{url}");
        let bytes = fs::read(base.join(url)).expect("artifact");
        assert_eq!(entry["digest"], sha256(&bytes), "{url}");
    }

    // The archive: SKILL.md at the root, no wrapper folder, no hidden file,
    // no nested skill, sorted, normalized headers.
    let bytes = fs::read(base.join("tooling.tar.gz")).expect("archive");
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(bytes.as_slice()));
    let mut members = Vec::new();
    for entry in archive.entries().expect("entries") {
        let mut entry = entry.expect("entry");
        let header = entry.header();
        assert_eq!(header.mtime().expect("mtime"), 0);
        assert_eq!(header.uid().expect("uid"), 0);
        assert_eq!(header.gid().expect("gid"), 0);
        let path = entry.path().expect("path").display().to_string();
        let mode = header.mode().expect("mode");
        let mut text = String::new();
        entry.read_to_string(&mut text).expect("read member");
        members.push((path, mode));
        if members.last().is_some_and(|(p, _)| p == "SKILL.md") {
            assert!(text.starts_with("---\nname: tooling"), "{text}");
        }
    }
    let expected_run_mode = if cfg!(unix) { 0o755 } else { 0o644 };
    assert_eq!(
        members,
        [
            ("SKILL.md".to_owned(), 0o644),
            ("references/guide.md".to_owned(), 0o644),
            ("scripts/run.sh".to_owned(), expected_run_mode),
        ]
    );

    // Twice, and into another folder: the same bytes.
    let first = tree(out.path());
    let (code, _, stderr) = skills(&["index", &dir_arg, "--out", &out_arg]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(tree(out.path()), first);
    let other = tempfile::tempdir().expect("temp out");
    let other_arg = other.path().display().to_string();
    let (code, _, stderr) = skills(&["index", &dir_arg, "--out", &other_arg]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(tree(other.path()), first);
}

#[test]
fn index_refuses_an_out_folder_inside_the_skills() {
    let dir = skills_dir();
    let inside = dir.path().join("public");
    let (code, _, stderr) = skills(&[
        "index",
        &dir.path().display().to_string(),
        "--out",
        &inside.display().to_string(),
    ]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("lies inside"), "{stderr}");
    let (code, _, stderr) = skills(&["index", "/surely/not/here-7f3a", "--out", "/tmp/x"]);
    assert_eq!(code, 2, "{stderr}");
}
