//! Reading the files a user names on the command line (`--attach`,
//! `--queries`, `--baseline`, an `evals.json`): each must be a regular file
//! under a size cap, and every refusal is a usage error naming the flag and
//! the path, before anything runs.

use std::io::Read as _;
use std::path::Path;

use crate::failure::Failure;
use crate::text;

/// Reads the regular file at `path`, at most `cap` bytes; `what` names it in
/// errors (a flag such as `--attach`).
///
/// The size is checked before the read, and again on the bytes read, so a
/// file that grows meanwhile is refused rather than read past the cap.
pub(crate) fn read_file(path: &Path, cap: u64, what: &str) -> Result<Vec<u8>, Failure> {
    let bad = |why: String| {
        Failure::usage(format!(
            "{what} {}: {why}",
            text::line(&path.display().to_string())
        ))
    };
    let meta = std::fs::metadata(path).map_err(|err| bad(err.to_string()))?;
    if !meta.is_file() {
        return Err(bad("not a regular file".to_owned()));
    }
    if meta.len() > cap {
        return Err(bad(format!(
            "{} bytes; at most {} are read",
            meta.len(),
            amount(cap)
        )));
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|file| file.take(cap.saturating_add(1)).read_to_end(&mut bytes))
        .map_err(|err| bad(err.to_string()))?;
    if bytes.len() as u64 > cap {
        return Err(bad(format!("grew past {} while read", amount(cap))));
    }
    Ok(bytes)
}

/// `bytes` as a person reads it: in MiB or KiB when it is a whole number of
/// them (caps are), else in bytes.
fn amount(bytes: u64) -> String {
    const MIB: u64 = 1 << 20;
    const KIB: u64 = 1 << 10;
    match bytes {
        0 => "0 bytes".to_owned(),
        b if b % MIB == 0 => format!("{} MiB", b / MIB),
        b if b % KIB == 0 => format!("{} KiB", b / KIB),
        b => format!("{b} bytes"),
    }
}

/// [`read_file`] for a text file: the bytes must be UTF-8.
pub(crate) fn read_text(path: &Path, cap: u64, what: &str) -> Result<String, Failure> {
    String::from_utf8(read_file(path, cap, what)?).map_err(|_| {
        Failure::usage(format!(
            "{what} {}: not UTF-8",
            text::line(&path.display().to_string())
        ))
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn refuses_folders_oversized_files_and_non_utf8_text() {
        let dir = tempfile::tempdir().unwrap();
        let err = read_file(dir.path(), 10, "--attach").err().unwrap();
        assert!(err.message.starts_with("--attach "), "{}", err.message);
        assert!(
            err.message.contains("not a regular file"),
            "{}",
            err.message
        );
        assert_eq!(err.code, 2);

        let big = dir.path().join("big.bin");
        std::fs::write(&big, [0u8; 11]).unwrap();
        let err = read_file(&big, 10, "--attach").err().unwrap();
        assert!(
            err.message.contains("11 bytes; at most 10 bytes"),
            "{}",
            err.message
        );
        assert_eq!(read_file(&big, 11, "--attach").ok().unwrap().len(), 11);

        let missing = dir.path().join("missing");
        assert!(read_file(&missing, 10, "--attach").is_err());

        let latin1 = dir.path().join("latin1.json");
        std::fs::write(&latin1, b"[\"caf\xe9\"]").unwrap();
        let err = read_text(&latin1, 100, "--queries").err().unwrap();
        assert!(err.message.contains("not UTF-8"), "{}", err.message);
        let ok = dir.path().join("ok.json");
        std::fs::write(&ok, "[]").unwrap();
        assert_eq!(read_text(&ok, 100, "--queries").ok().unwrap(), "[]");
    }
}
