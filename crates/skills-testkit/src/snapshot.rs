//! Exact-byte snapshot files for the tests.
//!
//! A snapshot is a plain file holding exactly the bytes a test produced:
//! no header, no trimming, trailing newlines included, so a change of one
//! byte anywhere (a dropped final newline, a trailing space) fails the test.
//! Text that reaches a prompt must be byte-stable; comparing it loosely would
//! let exactly the changes that break prompt caches through.
//!
//! Updating: run the tests with `UPDATE_SNAPSHOTS=1`; every snapshot that
//! differs (or is missing) is rewritten and the test passes. Review the
//! result with `git diff` before committing: the files are the expected
//! output. CI never sets the variable.

use std::fmt::Write as _;
use std::path::Path;

/// The environment variable that turns comparisons into rewrites.
pub const UPDATE_VAR: &str = "UPDATE_SNAPSHOTS";

/// Compares `expected` with `actual` byte for byte.
///
/// # Errors
/// A readable description of the first difference: both lengths, the byte
/// offset and line of the first differing byte, and the two texts around it
/// with escapes (so `\n`, `\r`, tabs and trailing spaces are visible).
pub fn compare(expected: &[u8], actual: &[u8]) -> Result<(), String> {
    if expected == actual {
        return Ok(());
    }
    let at = expected
        .iter()
        .zip(actual)
        .position(|(e, a)| e != a)
        .unwrap_or_else(|| expected.len().min(actual.len()));
    let line = 1 + expected[..at].iter().filter(|&&b| b == b'\n').count();
    let from = at.saturating_sub(60);
    let window = |bytes: &[u8]| {
        let end = bytes.len().min(at + 60);
        let start = from.min(end);
        format!("{:?}", String::from_utf8_lossy(&bytes[start..end]))
    };
    let mut message = format!(
        "expected {} bytes, got {} bytes; first difference at byte {at} (line {line})\n",
        expected.len(),
        actual.len()
    );
    // Writing to a String cannot fail.
    let _ = writeln!(message, "  expected …{}", window(expected));
    let _ = writeln!(message, "  actual   …{}", window(actual));
    if expected.len() != actual.len() && expected.starts_with(actual) {
        let _ = writeln!(
            message,
            "  actual is the expected text without its last {} byte(s) {:?}",
            expected.len() - actual.len(),
            String::from_utf8_lossy(&expected[actual.len()..])
        );
    } else if actual.starts_with(expected) {
        let _ = writeln!(
            message,
            "  actual has {} extra byte(s) at the end: {:?}",
            actual.len() - expected.len(),
            String::from_utf8_lossy(&actual[expected.len()..])
        );
    }
    Err(message)
}

/// Asserts that the file `dir/name` holds exactly `actual`.
///
/// With `UPDATE_SNAPSHOTS=1` (any non-empty value but `0`) the file is
/// written instead when it is missing or differs.
///
/// # Panics
/// When the file is missing or differs (and updating is off), or cannot be
/// read or written.
pub fn assert_snapshot(dir: &Path, name: &str, actual: impl AsRef<[u8]>) {
    let actual = actual.as_ref();
    let path = dir.join(name);
    let update = std::env::var(UPDATE_VAR).is_ok_and(|v| !v.is_empty() && v != "0");
    let stored = match std::fs::read(&path) {
        Ok(bytes) => Some(bytes),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => None,
        Err(err) => panic!("cannot read snapshot {}: {err}", path.display()),
    };
    if update {
        if stored.as_deref() != Some(actual) {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)
                    .unwrap_or_else(|e| panic!("cannot create {}: {e}", parent.display()));
            }
            std::fs::write(&path, actual)
                .unwrap_or_else(|e| panic!("cannot write snapshot {}: {e}", path.display()));
            eprintln!(
                "snapshot updated: {} (review with git diff)",
                path.display()
            );
        }
        return;
    }
    let Some(expected) = stored else {
        panic!(
            "snapshot {} does not exist; create it with {UPDATE_VAR}=1 and review it",
            path.display()
        );
    };
    if let Err(difference) = compare(&expected, actual) {
        panic!(
            "snapshot {} differs (rewrite with {UPDATE_VAR}=1 if the change is intended):\n{difference}",
            path.display()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::compare;

    #[test]
    fn equal_bytes_pass() {
        assert_eq!(compare(b"a\nb\n", b"a\nb\n"), Ok(()));
    }

    #[test]
    fn a_dropped_final_newline_fails() {
        let err = compare(b"a\nb\n", b"a\nb").expect_err("must differ");
        assert!(err.contains("without its last 1 byte(s) \"\\n\""), "{err}");
    }

    #[test]
    fn an_extra_final_newline_fails() {
        let err = compare(b"a\n", b"a\n\n").expect_err("must differ");
        assert!(err.contains("1 extra byte(s)"), "{err}");
    }

    #[test]
    fn trailing_spaces_and_crlf_fail() {
        assert!(compare(b"a\nb\n", b"a \nb\n").is_err());
        assert!(compare(b"a\nb\n", b"a\r\nb\n").is_err());
        let err = compare(b"x\ny\n", b"x\nz\n").expect_err("must differ");
        assert!(err.contains("byte 2 (line 2)"), "{err}");
    }
}
