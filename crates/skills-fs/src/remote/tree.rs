//! The digest of a folder, for lockfiles that cover local skill folders.

use std::fs;
use std::path::Path;

use sha2::{Digest as _, Sha256};
use skills_core::Error;

use super::io_error;

/// `sha256:<64 lowercase hex>` over the files beneath `dir`, so that any change
/// of a file's content, name or place changes it, and nothing else does (no
/// times, owners or modes).
///
/// The algorithm, exactly:
/// 1. Walk `dir` recursively, without following symbolic links, skipping
///    folders named `.git`. Collect each regular file and each symbolic link
///    with its path relative to `dir`, components joined by `/` (a name that is
///    not UTF-8 is taken lossily, U+FFFD for bad bytes).
/// 2. Sort them by that path, comparing its UTF-8 bytes.
/// 3. Feed SHA-256, for each: the path, a NUL byte, then for a regular file
///    `f`, a NUL, its length in bytes as decimal ASCII, a NUL and its bytes; for a
///    symbolic link `l`, a NUL, its target as text, and a NUL.
///
/// An empty folder gives the SHA-256 of nothing. Folders themselves are not
/// fed, so an empty subfolder changes nothing.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let dir = tempfile::tempdir()?;
/// std::fs::write(dir.path().join("SKILL.md"), "hi")?;
/// use sha2::Digest as _;
/// let expected = sha2::Sha256::digest(b"SKILL.md\0f\x002\0hi");
/// let hex: String = expected.iter().map(|b| format!("{b:02x}")).collect();
/// assert_eq!(skills_fs::remote::tree_digest(dir.path())?, format!("sha256:{hex}"));
/// # Ok(()) }
/// ```
///
/// # Errors
/// [`ErrorKind::Io`](skills_core::ErrorKind::Io) when a folder cannot be
/// listed or a file read.
pub fn tree_digest(dir: &Path) -> Result<String, Error> {
    let mut items = Vec::new();
    walk(dir, "", &mut items)?;
    items.sort_by(|a, b| a.0.cmp(&b.0));
    let mut hasher = Sha256::new();
    for (rel, path, link) in items {
        hasher.update(rel.as_bytes());
        hasher.update(b"\0");
        if link {
            let target = fs::read_link(&path)
                .map_err(|e| io_error(format!("cannot read link {}", path.display()), e))?;
            hasher.update(b"l\0");
            hasher.update(target.to_string_lossy().as_bytes());
            hasher.update(b"\0");
        } else {
            let bytes = fs::read(&path)
                .map_err(|e| io_error(format!("cannot read {}", path.display()), e))?;
            hasher.update(b"f\0");
            hasher.update(bytes.len().to_string().as_bytes());
            hasher.update(b"\0");
            hasher.update(&bytes);
        }
    }
    Ok(format!("sha256:{}", super::cache::hex(&hasher.finalize())))
}

/// Collects `(relative path, path, is link)` beneath `dir`.
fn walk(
    dir: &Path,
    prefix: &str,
    out: &mut Vec<(String, std::path::PathBuf, bool)>,
) -> Result<(), Error> {
    let list =
        fs::read_dir(dir).map_err(|e| io_error(format!("cannot list {}", dir.display()), e))?;
    for item in list {
        let item = item.map_err(|e| io_error(format!("cannot list {}", dir.display()), e))?;
        let name = item.file_name().to_string_lossy().into_owned();
        let rel = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}/{name}")
        };
        let kind = item
            .file_type()
            .map_err(|e| io_error(format!("cannot stat {}", item.path().display()), e))?;
        if kind.is_dir() {
            if name != ".git" {
                walk(&item.path(), &rel, out)?;
            }
        } else if kind.is_symlink() {
            out.push((rel, item.path(), true));
        } else if kind.is_file() {
            out.push((rel, item.path(), false));
        }
    }
    Ok(())
}
