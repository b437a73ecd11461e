//! Output collection (F-EXE-4): globs over the workspace, limits, MIME
//! sniffing, and files opened beneath the workspace by handle, never through
//! a link leading out (threat model: H3, H8).

use std::collections::BTreeSet;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use rustix::fs::FileType;
use skills_core::{guess_mime, looks_binary};
use skills_workspace::{OutputFile, WorkspaceError, WorkspaceErrorKind};

use crate::fsutil::{DirHandle, Opened};

/// Most directory entries one collection looks at.
const MAX_VISITED: usize = 200_000;

/// What to collect.
#[derive(Debug, Clone)]
pub(crate) struct CollectSpec {
    /// Normalized globs relative to the workspace root.
    pub(crate) globs: Vec<String>,
    pub(crate) inline: bool,
    pub(crate) max_files: usize,
    pub(crate) max_file_bytes: u64,
    pub(crate) max_total_bytes: u64,
    /// The command failed: zero-byte files are dropped.
    pub(crate) failed: bool,
    /// Whose hard-linked files may be read (H3).
    pub(crate) owners: Vec<u32>,
}

/// A collected file and the bytes read (at most the per-file cap).
#[derive(Debug)]
pub(crate) struct CollectedFile {
    pub(crate) file: OutputFile,
    pub(crate) bytes: Vec<u8>,
    pub(crate) is_text: bool,
}

/// Collected files and warnings.
#[derive(Debug, Default)]
pub(crate) struct Collected {
    pub(crate) files: Vec<CollectedFile>,
    pub(crate) warnings: Vec<String>,
}

/// The MIME type of a file: magic bytes first, then the extension, then
/// `text/plain` for text without a known extension.
pub(crate) fn sniff(name: &str, bytes: &[u8]) -> String {
    if let Some(kind) = infer::get(bytes) {
        return kind.mime_type().to_owned();
    }
    let guess = guess_mime(name);
    if guess == "application/octet-stream" && !looks_binary(bytes) {
        "text/plain".to_owned()
    } else {
        guess.to_owned()
    }
}

/// `bytes` without a UTF-8 sequence cut at the end (a cap may cut one).
fn trim_partial_char(bytes: &[u8]) -> &[u8] {
    match std::str::from_utf8(bytes) {
        Ok(_) => bytes,
        Err(e) if e.error_len().is_none() => &bytes[..e.valid_up_to()],
        Err(_) => bytes,
    }
}

/// The folder part of a glob before its first wildcard.
fn literal_prefix(glob: &str) -> String {
    let mut parts = Vec::new();
    let segments: Vec<&str> = glob.split('/').collect();
    for (i, part) in segments.iter().enumerate() {
        if i + 1 == segments.len() || part.contains(['*', '?', '[', '{']) {
            break;
        }
        parts.push(*part);
    }
    parts.join("/")
}

fn build_set(globs: &[String]) -> Result<GlobSet, WorkspaceError> {
    let mut builder = GlobSetBuilder::new();
    for g in globs {
        let glob = GlobBuilder::new(g)
            .literal_separator(true)
            .build()
            .map_err(|e| {
                WorkspaceError::new(
                    WorkspaceErrorKind::InvalidRequest,
                    format!("bad output glob {g:?}: {e}"),
                )
            })?;
        builder.add(glob);
    }
    builder.build().map_err(|e| {
        WorkspaceError::new(
            WorkspaceErrorKind::InvalidRequest,
            format!("bad output globs: {e}"),
        )
    })
}

/// Collects the files matching `spec` in the session folder `root`
/// (blocking): folders are listed by handle and never descended through a
/// link; files are read beneath `root` (H3), at most the caps (H8).
pub(crate) fn collect(root: &DirHandle, spec: &CollectSpec) -> Result<Collected, WorkspaceError> {
    let mut out = Collected::default();
    if spec.globs.is_empty() {
        return Ok(out);
    }
    let set = build_set(&spec.globs)?;
    let mut matched: BTreeSet<String> = BTreeSet::new();
    let mut visited = 0usize;
    let prefixes: BTreeSet<String> = spec.globs.iter().map(|g| literal_prefix(g)).collect();
    for prefix in &prefixes {
        if prefixes
            .iter()
            .any(|p| p != prefix && (p.is_empty() || prefix.starts_with(&format!("{p}/"))))
        {
            continue;
        }
        walk(
            root,
            prefix,
            &set,
            &mut matched,
            &mut visited,
            &mut out.warnings,
        );
    }
    let mut total = 0u64;
    for rel in matched {
        if out.files.len() >= spec.max_files {
            out.warnings.push(format!(
                "stopped at {} files (max_files); more files matched",
                spec.max_files
            ));
            break;
        }
        let opened = match root.read_beneath(&rel, spec.max_file_bytes, &spec.owners) {
            Ok(o) => o,
            Err(e) => {
                out.warnings.push(format!("could not read `{rel}`: {e}"));
                continue;
            }
        };
        let (size, bytes) = match opened {
            Opened::File { size, bytes } => (size, bytes),
            Opened::Outside => {
                out.warnings.push(format!(
                    "refused `{rel}`: it links outside the workspace (not read)"
                ));
                continue;
            }
            Opened::NotRegular => continue,
            Opened::ForeignLink => {
                out.warnings.push(format!(
                    "refused `{rel}`: a hard link to a file of another user (not read)"
                ));
                continue;
            }
        };
        if size == 0 && spec.failed {
            continue;
        }
        if total + bytes.len() as u64 > spec.max_total_bytes {
            out.warnings.push(format!(
                "stopped before `{rel}`: the collected files would exceed {} bytes (max_total_bytes)",
                spec.max_total_bytes
            ));
            break;
        }
        total += bytes.len() as u64;
        let truncated = (bytes.len() as u64) < size;
        if truncated {
            out.warnings.push(format!(
                "`{rel}` is {size} bytes; only the first {} were read (max_file_bytes)",
                bytes.len()
            ));
        }
        let head = trim_partial_char(&bytes);
        let is_text = !looks_binary(head);
        let mime = sniff(&rel, head);
        let mut file = OutputFile::new(rel, mime, size);
        if spec.inline && is_text {
            let text = String::from_utf8_lossy(head).into_owned();
            file = file.with_content(text, truncated);
        } else {
            file.truncated = truncated;
        }
        out.files.push(CollectedFile {
            file,
            bytes,
            is_text,
        });
    }
    Ok(out)
}

/// Walks `prefix` in the session folder `root` by handle, without following
/// folder links, adding the relative paths of files and links that match.
fn walk(
    root: &DirHandle,
    prefix: &str,
    set: &GlobSet,
    matched: &mut BTreeSet<String>,
    visited: &mut usize,
    warnings: &mut Vec<String>,
) {
    let left = MAX_VISITED.saturating_sub(*visited);
    let mut seen = 0usize;
    let walked = root.walk_tree(prefix, left, &mut |entry| {
        seen += 1;
        let kind = entry.meta.kind;
        if (kind == FileType::RegularFile || kind == FileType::Symlink) && set.is_match(entry.rel) {
            matched.insert(entry.rel.to_owned());
        }
        true
    });
    *visited += seen;
    match walked {
        Ok(end) if end.stopped => warnings.push(format!(
            "stopped looking for outputs after {MAX_VISITED} entries"
        )),
        Ok(end) if end.too_deep => warnings.push(format!(
            "did not look in folders deeper than {} levels",
            crate::fsutil::MAX_WALK_DEPTH
        )),
        Ok(_) => {}
        Err(e) => warnings.push(format!("could not list `{prefix}`: {e}")),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn prefixes() {
        assert_eq!(literal_prefix("out/*.txt"), "out");
        assert_eq!(literal_prefix("out/a/**/x"), "out/a");
        assert_eq!(literal_prefix("**/x"), "");
        assert_eq!(literal_prefix("out/a.txt"), "out");
    }

    #[test]
    fn sniffs() {
        assert_eq!(sniff("a.txt", b"hi"), "text/plain");
        assert_eq!(sniff("noext", b"hello"), "text/plain");
        assert_eq!(
            sniff("x.bin", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"),
            "image/png"
        );
        assert_eq!(sniff("data", b"\0\x01\x02"), "application/octet-stream");
    }

    fn spec(globs: &[&str]) -> CollectSpec {
        CollectSpec {
            globs: globs.iter().map(|s| s.to_string()).collect(),
            inline: true,
            max_files: 100,
            max_file_bytes: 10,
            max_total_bytes: 1000,
            failed: false,
            owners: vec![crate::fsutil::euid()],
        }
    }

    #[test]
    fn collects_once_caps_and_refuses_links_out() {
        use std::fs;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::create_dir_all(root.join("out/sub")).unwrap();
        fs::write(root.join("out/a.txt"), "hello").unwrap();
        fs::write(root.join("out/sub/b.txt"), "0123456789abcdef").unwrap();
        fs::write(root.join("out/empty.txt"), "").unwrap();
        std::os::unix::fs::symlink("/etc/passwd", root.join("out/passwd.txt")).unwrap();
        let root = &DirHandle::open_path(root).unwrap();
        let got = collect(root, &spec(&["out/*.txt", "out/**/*.txt", "out/a.txt"])).unwrap();
        let names: Vec<_> = got.files.iter().map(|f| f.file.name.as_str()).collect();
        assert_eq!(names, ["out/a.txt", "out/empty.txt", "out/sub/b.txt"]);
        let b = &got.files[2].file;
        assert!(b.truncated);
        assert_eq!(b.content.as_deref(), Some("0123456789"));
        assert!(
            got.warnings
                .iter()
                .any(|w| w.contains("refused `out/passwd.txt`")),
            "{:?}",
            got.warnings
        );
        let mut failed = spec(&["out/*.txt"]);
        failed.failed = true;
        let got = collect(root, &failed).unwrap();
        assert!(got.files.iter().all(|f| f.file.name != "out/empty.txt"));
    }
}
