//! [`SystemProbe`] on a real file system: `PATH` lookups in temporary
//! folders, the process environment and the operating system.

use std::fs;
use std::path::Path;

use skills_core::{Probe, Requirements, describe_missing};
use skills_fs::SystemProbe;

/// Writes `dir/name` with the given mode (Unix) and returns its path.
fn file(dir: &Path, name: &str, executable: bool) -> std::path::PathBuf {
    let path = dir.join(name);
    fs::write(&path, "#!/bin/sh\n").unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = if executable { 0o755 } else { 0o644 };
        fs::set_permissions(&path, fs::Permissions::from_mode(mode))
            .unwrap_or_else(|e| panic!("chmod: {e}"));
    }
    #[cfg(not(unix))]
    let _ = executable;
    path
}

fn temp() -> tempfile::TempDir {
    tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"))
}

#[test]
fn finds_executables_on_its_path_only() {
    let first = temp();
    let second = temp();
    file(first.path(), "tool-a", true);
    let b = file(second.path(), "tool-b", true);
    fs::create_dir(first.path().join("a-dir")).unwrap_or_else(|e| panic!("mkdir: {e}"));
    let path = std::env::join_paths([
        "",
        &*first.path().to_string_lossy(),
        &*second.path().to_string_lossy(),
    ])
    .unwrap_or_else(|e| panic!("join: {e}"));
    let probe = SystemProbe::with_path(path);
    assert!(probe.has_bin("tool-a"));
    assert!(probe.has_bin("tool-b"));
    assert_eq!(probe.find_bin("tool-b"), Some(b));
    assert!(!probe.has_bin("a-dir"), "a folder is not a program");
    assert!(!probe.has_bin("missing-tool"));
    assert!(!probe.has_bin(""));
    // An empty PATH finds nothing.
    assert!(!SystemProbe::with_path("").has_bin("tool-a"));
}

#[cfg(unix)]
#[test]
fn a_file_without_an_execute_bit_is_not_a_program() {
    let dir = temp();
    file(dir.path(), "plain", false);
    let probe = SystemProbe::with_path(dir.path());
    assert!(!probe.has_bin("plain"));
    // A name with a slash is checked as a path.
    let exe = file(dir.path(), "runme", true);
    assert!(probe.has_bin(&exe.to_string_lossy()));
    assert!(!probe.has_bin(&dir.path().join("plain").to_string_lossy()));
}

#[test]
fn answers_are_kept_for_the_life_of_the_probe() {
    let dir = temp();
    let probe = SystemProbe::with_path(dir.path());
    assert!(!probe.has_bin("late"));
    file(dir.path(), "late", true);
    // The first answer stands; a new probe looks again.
    assert!(!probe.has_bin("late"));
    assert!(SystemProbe::with_path(dir.path()).has_bin("late"));
}

#[test]
fn env_and_os_come_from_the_process() {
    let probe = SystemProbe::new();
    assert!(probe.has_env("PATH"));
    assert!(!probe.has_env("SKILLS_PROBE_TEST_SURELY_UNSET_7F3A"));
    assert!(!probe.has_env(""));
    assert!(!probe.has_env("A=B"));
    assert_eq!(probe.os(), std::env::consts::OS);
    assert_eq!(probe.has_tool("anything"), None);
    assert!(std::ptr::eq(SystemProbe::shared(), SystemProbe::shared()));
}

#[test]
fn judges_requirements_with_the_machine() {
    let dir = temp();
    file(dir.path(), "jq", true);
    let probe = SystemProbe::with_path(dir.path());
    let mut req = Requirements::default();
    req.bins = vec!["jq".into(), "surely-not-installed-7f3a".into()];
    req.env = vec!["PATH".into(), "SKILLS_PROBE_TEST_SURELY_UNSET_7F3A".into()];
    req.tools = vec!["github".into()];
    assert_eq!(
        describe_missing(&req.missing(&probe)),
        "bin surely-not-installed-7f3a; env SKILLS_PROBE_TEST_SURELY_UNSET_7F3A"
    );
}
